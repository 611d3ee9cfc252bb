r"""cl100k's and o200k's character classes as tables of bit flags, read off ``regex``; and where tiktoken's
own engine classes a code point otherwise.

The classes come as two-stage tables, made the way :mod:`bpe.split.gpt2_classes` makes GPT-2's: by running
``regex`` itself over every code point, once, at first use, so that a scanner (``_cl100k_scanner.pxi``,
``_o200k_scanner.pxi``) classifies each character exactly as ``regex`` does, in ``regex``'s own Unicode
version.  That version is the ``regex`` module's, not Python's: regex 2026.12.2 implements Unicode 18.0.0
(its documentation says so), where Python 3.11's ``unicodedata`` is 14.0.0; a code point assigned in
between is a letter to ``regex`` and unassigned to ``str.isalpha``.  GPT-2's table holds one class per code
point (an enum); these hold bit flags, because o200k's upper and lower classes overlap (on Lm, Lo and M)
and a combining mark is in both but in neither ``\p{L}`` nor ``\p{N}``.

tiktoken's engine (Rust) has an older Unicode than ``regex``: :func:`tiktoken_disagreements` finds, with
the installed tiktoken, every code point that one of a pattern's classes holds for one engine and not the
other.  A pattern of one class run by ``tiktoken.Encoding.encode_ordinary`` keeps exactly that class's
characters (the text between matches is dropped), so the characters it gives back are the class as
tiktoken sees it.  With tiktoken 0.14.0 and regex 2026.12.2: 17,480 code points for ``gpt2`` and
``cl100k`` (17,144 letters and 336 numbers new to ``regex``), 17,560 for ``o200k`` (79 marks besides, and
U+0295, an other letter to ``regex`` and a lower-case letter to tiktoken).  On text without them the ids
are tiktoken's (docs/patterns.md, "Unicode"; tests/io/test_tiktoken_ids.py pins the sizes).

>>> flags_of("o200k", "aA\u01c5\u02b0\u0301 1")  # a, A, Dz (title case), a modifier letter, a combining mark
['LETTER|LOWER', 'LETTER|UPPER', 'LETTER|UPPER', 'LETTER|UPPER|LOWER', 'UPPER|LOWER', 'SPACE', 'NUMBER']
"""

from __future__ import annotations

from array import array
from functools import cache

import regex

from bpe.split.gpt2_classes import BLOCK, CODE_POINTS, class_tables, every_code_point, two_stage
from bpe.split.patterns import CUSTOM, pattern_name

#: The bit flags of cl100k's and o200k's tables, as the scanners read them (``_cl100k_scanner.pxi``).
LETTER, NUMBER, SPACE, UPPER, LOWER = 1, 2, 4, 8, 16
FLAG_NAMES = {LETTER: "LETTER", NUMBER: "NUMBER", SPACE: "SPACE", UPPER: "UPPER", LOWER: "LOWER"}
#: Each pattern's classes in its own syntax, as a flag each.  A character that has none is "other".
CLASSES = {
    "cl100k": {LETTER: r"\p{L}", NUMBER: r"\p{N}", SPACE: r"\s"},
    "o200k": {LETTER: r"\p{L}", NUMBER: r"\p{N}", SPACE: r"\s",
              UPPER: r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", LOWER: r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"},
}
#: The letters of the contractions (``'s``, ``'t``, ``'re``, ``'ve``, ``'m``, ``'ll``, ``'d``), which cl100k and
#: o200k match in any case.
CONTRACTION_LETTERS = "sdmtlvre"


@cache
def flags_of_every_code_point(name: str) -> bytes:
    """One byte per code point, 0 to U+10FFFF: the OR of the flags of the classes ``regex`` puts it in,
    for pattern ``name`` (``cl100k`` or ``o200k``); surrogates have none, and never reach a scanner.

    What the scanners rely on is checked here, so that a ``regex`` with other classes fails at once rather
    than cutting text wrongly: letters, numbers and whitespace never overlap, and (o200k) every letter is
    upper or lower, and nothing upper or lower is a number or whitespace."""
    every = every_code_point()
    flags = bytearray(CODE_POINTS)
    for flag, pattern in CLASSES[name].items():
        set_flag = bytes(value | flag for value in range(256))
        for found in regex.finditer(pattern + "+", every):
            start, end = found.span()
            flags[start:end] = flags[start:end].translate(set_flag)
    for value in set(flags):  # each combination of flags that occurs
        if bin(value & (LETTER | NUMBER | SPACE)).count("1") > 1:
            raise AssertionError(f"regex's letters, numbers and whitespace overlap ({flag_names(value)})")
        if UPPER in CLASSES[name] and value & LETTER and not value & (UPPER | LOWER):
            raise AssertionError("a letter of regex's is neither upper nor lower to o200k's classes")
        if value & (UPPER | LOWER) and value & (NUMBER | SPACE):
            raise AssertionError(f"an upper or lower character is a number or whitespace ({flag_names(value)})")
    return bytes(flags)


@cache
def scanner_tables(name: str) -> tuple[bytes, bytes]:
    """``(stage1, stage2)`` for the named pattern's scanner: GPT-2's classes
    (:func:`bpe.split.gpt2_classes.class_tables`), else the pattern's flags."""
    if name == "gpt2":
        return class_tables()
    return two_stage(flags_of_every_code_point(name))


@cache
def contraction_folds() -> tuple[tuple[int, int], ...]:
    """Every code point that ``(?i:...)`` matches to a letter of the contractions, with that letter (lower
    case, as a byte): ``S`` and ``s`` to ``s``, and so on, and U+017F (long s) to ``s`` as well.  The scanners
    compare the characters after an apostrophe through these, so that ``'S`` and ``'ſ`` are contractions
    as they are to ``regex``."""
    folds = []
    for found in regex.finditer(f"(?i:[{CONTRACTION_LETTERS}])", every_code_point()):
        char = found.group()
        letters = [letter for letter in CONTRACTION_LETTERS if regex.fullmatch(f"(?i:{letter})", char)]
        if len(letters) != 1:
            raise AssertionError(f"U+{ord(char):04X} matches {letters!r} of the contractions' letters")
        folds.append((ord(char), ord(letters[0])))
    return tuple(folds)


def flag_names(value: int) -> str:
    return "|".join(name for flag, name in FLAG_NAMES.items() if value & flag) or "OTHER"


def flags_of(name: str, text: str) -> list[str]:
    """Each character's flags by name, through the two-stage tables: a view for tests and the docs."""
    stage1, stage2 = scanner_tables(name)
    rows = array("H", stage1)
    return [flag_names(stage2[rows[ord(c) >> 8] * BLOCK + (ord(c) & 255)]) for c in text]


# --- Where tiktoken's engine classes a code point otherwise --------------------------------------------------

#: The classes each named pattern reads, as ``regex`` and tiktoken both write them: GPT-2's and cl100k's
#: letters, numbers and whitespace (and the contractions' letters in any case), o200k's upper and lower too.
#: A custom pattern is given o200k's, the most.
TIKTOKEN_CLASSES = {
    "gpt2": (r"\p{L}", r"\p{N}", r"\s"),
    "cl100k": (r"\p{L}", r"\p{N}", r"\s", f"(?i:[{CONTRACTION_LETTERS}])"),
    "o200k": (r"\p{L}", r"\p{N}", r"\s", f"(?i:[{CONTRACTION_LETTERS}])", *CLASSES["o200k"].values()),
}


@cache
def tiktoken_disagreements(pattern: str = "gpt2") -> frozenset[int]:
    """The code points that a class of ``pattern`` (a name, or a regex: o200k's classes) holds for ``regex``
    and not for the installed tiktoken, or the other way round (the module's docstring says how they are
    found).  Raises ``ImportError`` where tiktoken is not installed: the caller decides what that means.

    >>> 0x0295 in tiktoken_disagreements("o200k"), 0x0295 in tiktoken_disagreements("cl100k")  # doctest: +SKIP
    (True, False)
    """
    import tiktoken  # noqa: PLC0415 (an optional dependency: the dev and peers extras)

    name = pattern_name(pattern)
    every = "".join(chr(c) for c in range(CODE_POINTS) if not 0xD800 <= c < 0xE000)
    ranks = {bytes([b]): b for b in range(256)}
    differ: set[int] = set()
    for cls in TIKTOKEN_CLASSES["o200k" if name == CUSTOM else name]:
        probe = tiktoken.Encoding("class-probe", pat_str=cls + "+", mergeable_ranks=ranks, special_tokens={})
        theirs = set(map(ord, probe.decode_bytes(probe.encode_ordinary(every)).decode("utf-8")))
        ours = {ord(c) for found in regex.finditer(cls + "+", every) for c in found.group()}
        differ |= theirs ^ ours
    return frozenset(differ)


def holds_disagreement(tokens, pattern: str = "gpt2") -> int | None:
    """The first code point of :func:`tiktoken_disagreements` that one of ``tokens`` (bytes, decoded as far as
    they are UTF-8) holds, or ``None``; ``None`` too where tiktoken is not installed (nothing to compare)."""
    try:
        differ = tiktoken_disagreements(pattern)
    except ImportError:
        return None
    for token in tokens:
        for char in token.decode("utf-8", "ignore"):
            if ord(char) in differ:
                return ord(char)
    return None
