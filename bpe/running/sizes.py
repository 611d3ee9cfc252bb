"""Byte sizes as people write them (``50MB``, ``64KiB``) and as tables print them.

Used by ``--limit``, the data-set listing and the bench header; :func:`parse_count` reads
``--vocab-size`` the same way (``10k``, ``32,000``).
"""

from __future__ import annotations

import re
from decimal import Decimal

from bpe.errors import ArgumentError, BPEError, flag_of

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
#: Larger sizes are a typo, not a file.
MAX_SIZE = 10**18
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(text: str | int, what: str | None = None) -> int:
    """A byte count from ``"50MB"``, ``"1.5GB"``, ``"64KiB"`` or a plain number (decimal units: MB = 10**6).

    ``what`` is the argument the size was given as, named by an error: a library parameter (``limit``),
    which the command line shows as its flag (:class:`~bpe.errors.ArgumentError`), or a flag (``--chunk-size``).

    >>> parse_size("50MB"), parse_size("64KiB"), parse_size("1.5 GB"), parse_size(1000)
    (50000000, 65536, 1500000000, 1000)
    """
    def refused(sentence) -> BPEError:  # sentence(name): the error naming the argument
        if what is None:
            return BPEError(sentence("size"))
        return ArgumentError(sentence(what), sentence(flag_of(what)))

    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise refused(lambda name: f"cannot read {name} {text!r}: use a number of bytes or e.g. 50MB, 1.5GB, "
                                       "64KiB")
        # Decimal, not float: "1" followed by 400 zeros is a number float() turns into inf
        value = int(Decimal(match.group(1)) * _UNITS[unit])
    if value > MAX_SIZE:
        shown = str(text) if len(str(text)) <= 24 else f"{str(text)[:20]}... ({len(str(text))} characters)"
        raise refused(lambda name: f"{name} {shown} is too large: at most {MAX_SIZE:,} bytes (1 EB); e.g. 50MB, "
                                   "1.5GB")
    if value < 1:
        raise refused(lambda name: f"{name} must be at least 1 byte, got {text!r}")
    return value


_COUNT = re.compile(r"^\s*(\d+(?:[,_]\d{3})*(?:\.\d+)?)\s*([km]?)\s*$", re.IGNORECASE)


def parse_count(text: str | int, what: str = "count") -> int:
    """A whole number from ``"10000"``, ``"10k"``, ``"32,000"``, ``"1.5k"`` (k = 1,000, m = 1,000,000).

    >>> parse_count("10k"), parse_count("32,000"), parse_count("1.5K"), parse_count(300)
    (10000, 32000, 1500, 300)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = _COUNT.match(str(text))
    if match is None:
        raise BPEError(f"cannot read {what} {text!r}: use a whole number such as 10000, 10k or 32,000")
    value = Decimal(match.group(1).replace(",", "").replace("_", "")) * {"": 1, "k": 10**3, "m": 10**6}[
        match.group(2).lower()]
    if value != int(value):
        raise BPEError(f"{what} {text!r} is not a whole number")
    return int(value)


def format_size(n: int) -> str:
    """
    >>> format_size(2_300_000), format_size(512)
    ('2.3 MB', '512 B')
    """
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
