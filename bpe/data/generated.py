"""What the generators of text share (``webtext-synth``, :mod:`bpe.data.webtext`; ``tinystories-synth``,
:mod:`bpe.data.tinystories`): the draws, the syllables words are built of, the writer of documents and the
statistics kept beside a generated file.

Determinism, the generators' first rule: every draw comes from one ``random.Random(seed)``, in a fixed order,
with integer Zipf weights and only exact float operations (no ``math.log``/``pow``, whose last bit can differ
between C libraries), so the same seed gives the same stream of documents on any machine.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from bpe.counting.parallel import count_file_parallel
from bpe.errors import BPEError
from bpe.running.files import check_free_space, write_text_atomic

#: What ends each document of a generated data set.
SEPARATOR = "<|endoftext|>"
#: The syllables words are built of: onsets, nuclei and codas, drawn with these repetitions as their weights.
# Syllables: onset + nucleus + coda, single letters far more often than clusters (repeats are weights).
ONSETS = tuple("bcdfghklmnprstvwy" * 3 + "jqxz") + ("", "", "", "", "", "", "bl", "br", "ch", "cl", "cr",
           "dr", "fl", "fr", "gr", "pl", "pr", "sh", "sl", "sp", "st", "str", "th", "th", "tr", "wh", "qu")
NUCLEI = tuple("aaaeeeeiiioou") + ("ea", "ee", "ai", "ou", "oo", "io", "y")
CODAS = ("",) * 24 + tuple("nnrrsstldm") + ("ng", "st", "nd", "ck", "ght", "rt", "ss", "ll", "x", "th", "nt")


class Draws(random.Random):
    """``random.Random`` with the two draws the generators make most, ``randrange`` and ``choices`` with
    cumulative weights, made cheaper (two thirds of the generator's time went to them).  They draw exactly
    what the base class draws, by the same calls to ``_randbelow`` and ``random()`` in the same order, and
    pick the same items: the same seed gives the same text, byte for byte (tests/data/test_webtext.py).

    * ``randrange`` skips the checks of its arguments that the base class repeats on every call;
    * ``choices`` finds each ``random() * total`` among integer cumulative weights in a numpy copy of
      them: the base class bisects the list of Python ints, a pointer chase into scattered objects at
      every step (a cache miss each on the 300,000 words' list), and compares each int with a float.
    """

    def __init__(self, seed=None):
        super().__init__(seed)
        self._tables: dict[int, tuple[list, object]] = {}  # id -> (the list, kept alive; its numpy copy)

    def randrange(self, start, stop=None, step=1):
        if stop is None:
            if type(start) is int and start > 0:  # noqa: E721 (a bool, float or index type: the base class)
                return self._randbelow(start)
        elif type(start) is int and type(stop) is int and step == 1 and start < stop:  # noqa: E721
            return start + self._randbelow(stop - start)
        return super().randrange(start, stop, step)  # anything else: the base class's draw or its error

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        table = self._table(cum_weights) if weights is None and cum_weights is not None else None
        if table is None or len(cum_weights) != len(population):
            return super().choices(population, weights, cum_weights=cum_weights, k=k)
        total, random_ = cum_weights[-1] + 0.0, self.random
        # For an integer c and a float x >= 0, c <= x exactly when c <= int(x): the same place as the base
        # class's bisect_right(cum_weights, x, 0, n - 1), which never returns past the last item.
        found = table.searchsorted([int(random_() * total) for _ in range(k)], side="right").tolist()
        last = len(population) - 1
        return [population[i] if i < last else population[last] for i in found]

    def _table(self, cum_weights):
        """The numpy copy of a list of integer cumulative weights (None for anything else)."""
        found = self._tables.get(id(cum_weights))
        if found is None:
            ok = isinstance(cum_weights, list) and cum_weights and all(type(c) is int for c in cum_weights)  # noqa: E721
            table = np.array(cum_weights, dtype=np.int64) if ok and 0 <= cum_weights[-1] < 2**62 else None
            found = self._tables[id(cum_weights)] = (cum_weights, table)
        return found[1]


def zipf_cum_weights(n: int, *, shift: int = 27) -> list[int]:
    """Integer cumulative weights for ranks 0..n-1, weight of rank r = round(1e10 / (r + shift/10)).

    Integers, so every machine draws the same ranks (``random.choices`` multiplies one float by the
    total and bisects: exact IEEE operations).

    >>> zipf_cum_weights(3)
    [3703703704, 6406406407, 8534065981]
    """
    total, out = 0, []
    for r in range(n):
        total += (10**11 + (10 * r + shift) // 2) // (10 * r + shift)  # round(1e10 / (r + shift/10))
        out.append(total)
    return out


def write_documents(path: str | os.PathLike, size: int, documents: Iterator[str], name: str, *,
                    on_bytes: Callable[[int], None] | None = None) -> dict:
    """Write ``documents`` (each with its separator) to ``path`` until ``size`` bytes are reached.

    The generators' shared writer: the free space is checked first, the file is written under a
    temporary name and renamed at the end (removed on any error or signal), and the statistics come
    back as ``{"bytes", "documents", "non_ascii_bytes"}``.
    """
    if size < 1:
        raise BPEError(f"{name} size must be at least 1 byte, got {size}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_free_space(path.parent, size, f"generating {path.name}")
    tmp = path.with_name(path.name + ".tmp")
    written = count = ascii_bytes = 0
    try:
        with open(tmp, "wb") as out:
            while written < size:
                doc = next(documents)
                data = doc.encode("utf-8")
                out.write(data)
                written += len(data)
                ascii_bytes += len(doc.encode("ascii", "ignore"))  # characters below U+0080: one byte each
                count += 1
                if on_bytes is not None:
                    on_bytes(len(data))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {"bytes": written, "documents": count, "non_ascii_bytes": written - ascii_bytes}


def statistics_file(path: str | os.PathLike) -> Path:
    """Where a generated file's statistics are kept: beside it, ``NAME.stats.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".stats.json")


def cached_statistics(path: str | os.PathLike, *, log=None, workers: int | None = None) -> tuple[dict, bool]:
    """``(statistics, True)`` read from beside the file when they are its own (same size and time), else
    measured (a full pass: ``log`` hears so), saved beside it and ``(statistics, False)``."""
    path = Path(path)
    stat = path.stat()
    kept = statistics_file(path)
    try:
        saved = json.loads(kept.read_text(encoding="utf-8"))
        if saved.get("file_bytes") == stat.st_size and saved.get("file_mtime_ns") == stat.st_mtime_ns:
            return saved["statistics"], True
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    if log is not None:
        print(f"computing the statistics of {path.name} (documents, distinct pre-tokens: one pass over the file; "
              f"kept in {kept.name} for next time) ...", file=log, flush=True)
    stats = file_statistics(path, workers=workers)
    try:
        write_text_atomic(kept, json.dumps({"file_bytes": stat.st_size, "file_mtime_ns": stat.st_mtime_ns,
                                            "statistics": stats}, indent=2) + "\n")
    except OSError:
        pass  # read-only data folder: measured again next time
    return stats, False


def file_statistics(path: str | os.PathLike, *, workers: int | None = None) -> dict:
    """What the generator promises, measured on the file: bytes, documents, distinct pre-tokens, non-ASCII."""
    size = documents = non_ascii = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            size += len(block)
            documents += block.count(SEPARATOR.encode())
            non_ascii += len(block.translate(None, _ASCII_BYTES))
    distinct = len(count_file_parallel(path, [SEPARATOR], workers=workers))
    return {"bytes": size, "documents": documents, "distinct_pretokens": distinct,
            "distinct_pretokens_per_mb": distinct / (size / 1e6), "non_ascii_share": non_ascii / size}


_ASCII_BYTES = bytes(range(128))
