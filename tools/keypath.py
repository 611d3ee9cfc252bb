"""A value in a result file named by its key path: the one reading of the figure markers
(:mod:`tools.figures`) and of the articles' own ratios (:mod:`tools.reproduce_steps`).

A key path is dot-separated: an integer part indexes a list, a key holding a dot or a space is quoted
(``a.'v7 shards'.b``); ``min(...)``, ``max(...)`` and ``median(...)`` around a path with a ``*`` part (every
item at that level) give the smallest, largest or middle value; a plain number is that number.

Example: ``lookup({"runs": [{"s": 1.0}, {"s": 3.0}]}, "max(runs.*.s)")`` is ``3.0``.
"""

from __future__ import annotations

import re
import statistics

from bpe.errors import BPEError


def split_keypath(keypath: str) -> list[str | int]:
    """``a.'b c'.0`` -> ``['a', 'b c', 0]``.

    >>> split_keypath("runs.v1.stages.'merge phase'.2")
    ['runs', 'v1', 'stages', 'merge phase', 2]
    """
    return [quoted if quoted is not None else int(plain) if re.fullmatch(r"-?\d+", plain) else plain
            for quoted, plain in (match.groups() for match in re.finditer(r"'([^']*)'|([^.]+)", keypath))]


def lookup(data, keypath: str):
    """The value ``keypath`` names in ``data``, or a :class:`BPEError` naming the first missing part.

    >>> runs = {"runs": [{"total": 2.0}, {"total": 1.5}]}
    >>> lookup(runs, "runs.1.total"), lookup(runs, "min(runs.*.total)"), lookup(runs, "max(runs.*.total)")
    (1.5, 1.5, 2.0)
    >>> lookup({"runs": [3, 1, 2]}, "median(runs.*)")
    2
    >>> lookup(runs, "1e6")
    1000000.0
    """
    if re.fullmatch(r"\d+(?:\.\d*)?(?:e\d+)?", keypath):
        return float(keypath)
    aggregate = re.fullmatch(r"(min|max|median)\((.+)\)", keypath)
    if aggregate:
        values = _lookup_all(data, split_keypath(aggregate.group(2)), keypath)
        return {"min": min, "max": max, "median": statistics.median}[aggregate.group(1)](values)
    value = data
    walked = []
    for part in split_keypath(keypath):
        walked.append(str(part))
        try:
            if isinstance(value, list):
                value = value[int(part)]
            elif isinstance(value, dict):
                value = value[str(part)] if str(part) in value else value[part]
            else:
                raise KeyError(part)
        except (KeyError, IndexError, ValueError, TypeError):
            raise BPEError(f"no {'.'.join(walked)!r} in the result file (key path {keypath!r})") from None
    return value


def _lookup_all(data, parts: list, keypath: str) -> list:
    """Every value the key path names, ``*`` standing for every item at its level."""
    if not parts:
        return [data]
    head, rest = parts[0], parts[1:]
    if head == "*":
        items = data if isinstance(data, list) else list(data.values()) if isinstance(data, dict) else None
        if not items:
            raise BPEError(f"nothing under '*' in the result file (key path {keypath!r})")
        return [value for item in items for value in _lookup_all(item, rest, keypath)]
    return _lookup_all(lookup(data, str(head)), rest, keypath)
