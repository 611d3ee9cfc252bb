"""The GPT-2 pattern's three character classes as lookup tables, read off the ``regex`` module itself.

The pattern (:data:`bpe.split.patterns.GPT2_PATTERN`) names three classes: ``\\p{L}`` (letters),
``\\p{N}`` (numbers) and ``\\s`` (whitespace); every other code point is "other".  A scanner that
replaces the regex engine (v9's, ``variants/_v9_count.pyx``) must classify every code point exactly
as ``regex`` does, in ``regex``'s own Unicode version, which need not be Python's
(``str.isspace`` says ``\\x1c`` is a space; ``regex``'s ``\\s`` does not).  So nothing here is typed
in by hand: the tables are made by running ``regex`` over every code point once, at first use
(about 0.03 s), and the classes are checked to be disjoint as they are filled in.

The table has two stages, as Unicode's own tables are usually stored: code points in blocks of 256,
``stage1[cp >> 8]`` the number of a block's distinct row, ``stage2[row * 256 + (cp & 255)]`` the
class.  Most blocks are one class throughout (CJK, unassigned planes), so the 4,352 blocks share
135 rows (in regex 2026.11): some 35 KB that stays in the cache, against 1.1 MB for a flat table.

>>> classify("a1 ,\\u00e9\\u0663\\u3000\\x1c")
'LNSOLNSO'
"""

from __future__ import annotations

from array import array
from functools import cache

import regex

#: The class codes, as the scanner reads them.
OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3
#: Each class's pattern in the GPT-2 pattern's own syntax.
CLASS_PATTERNS = {LETTER: r"\p{L}+", NUMBER: r"\p{N}+", SPACE: r"\s+"}
#: One past the last code point.
CODE_POINTS = 0x110000
BLOCK = 256


@cache
def class_of_every_code_point() -> bytes:
    """One byte per code point, 0 to U+10FFFF: its class, as ``regex`` matches it (surrogates included:
    they are "other", and never reach the scanner, which takes only valid UTF-8)."""
    every = every_code_point()
    classes = bytearray(CODE_POINTS)  # OTHER everywhere to start with
    for code, pattern in CLASS_PATTERNS.items():
        for found in regex.finditer(pattern, every):
            start, end = found.span()
            if classes[start:end].count(OTHER) != end - start:  # the classes must not overlap
                raise AssertionError(f"regex's classes overlap at U+{start:04X}-U+{end - 1:04X}")
            classes[start:end] = bytes([code]) * (end - start)
    return bytes(classes)


def every_code_point() -> str:
    """The string of every code point, U+0000 to U+10FFFF, in order: decoded from its UTF-32 (little-endian),
    whose bytes are laid down a byte position at a time (the low byte cycles 0-255, the next counts the
    block of 256, the third the plane), a few milliseconds where ``"".join(map(chr, ...))`` takes a tenth
    of a second.

    >>> text = every_code_point(); len(text), text[0x41], text[0x10FFFF] == chr(0x10FFFF)
    (1114112, 'A', True)
    """
    utf32 = bytearray(4 * CODE_POINTS)
    utf32[0::4] = bytes(range(BLOCK)) * (CODE_POINTS // BLOCK)
    utf32[1::4] = b"".join(bytes([block]) * BLOCK for block in range(BLOCK)) * (CODE_POINTS // BLOCK ** 2)
    utf32[2::4] = b"".join(bytes([plane]) * BLOCK ** 2 for plane in range(CODE_POINTS // BLOCK ** 2))
    return utf32.decode("utf-32-le", "surrogatepass")


@cache
def class_tables() -> tuple[bytes, bytes]:
    """``(stage1, stage2)``: stage1 holds one unsigned 16-bit row number per block of 256 code points
    (native byte order), stage2 the rows, 256 class bytes each."""
    return two_stage(class_of_every_code_point())


def two_stage(per_code_point: bytes) -> tuple[bytes, bytes]:
    """One byte per code point made into two stages (:func:`class_tables`): ``stage1`` one unsigned 16-bit row
    number per block of 256 code points, ``stage2`` the distinct rows, 256 bytes each.  Every pattern's
    tables are made so (cl100k's and o200k's bit flags too: :mod:`bpe.split.pattern_classes`)."""
    rows: dict[bytes, int] = {}
    stage1 = array("H")
    for start in range(0, CODE_POINTS, BLOCK):
        stage1.append(rows.setdefault(per_code_point[start : start + BLOCK], len(rows)))
    return stage1.tobytes(), b"".join(rows)  # a dict keeps its insertion order: row i is the i-th key


def classify(text: str) -> str:
    """Each character's class as a letter (L, N, S or O), through the two-stage tables: a view for tests
    and for the page that teaches the scanner."""
    stage1, stage2 = class_tables()
    rows = array("H", stage1)
    return "".join("OLNS"[stage2[rows[ord(c) >> 8] * BLOCK + (ord(c) & 255)]] for c in text)
