"""Pre-tokenization: text -> counts of pre-tokens (as UTF-8 bytes), shared by every variant.

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token and the special tokens themselves are dropped
from the counts.  Each piece is then cut by the GPT-2 pattern and every pre-token counted.
:func:`count_text` does this faster, with identical results, by running an ASCII twin of the
pattern on the stdlib ``re`` engine wherever the text is ASCII once a few common punctuation marks
are replaced by same-class ASCII stand-ins; :func:`count_text_plain` is the plain definition.

>>> count_text("low low<|endoftext|>lower", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'lower': 1})

Two ways to count a file:

* :func:`count_file_serial` reads and counts the file in this process, one safely cut chunk at a time
  (v1, v2);
* :func:`bpe.training.parallel.count_file_parallel` counts the chunks in a process pool (v3 onward).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain, compress, repeat
from operator import add, itemgetter, not_
from pathlib import Path

import regex

from bpe.errors import BPEError
from bpe.training.chunking import WHITESPACE, iter_chunks

#: The GPT-2 pre-tokenization pattern (Radford et al. 2019), as given in the CS336 handout.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)


def special_token_regex(special_tokens: Sequence[str]) -> regex.Pattern | None:
    """A pattern matching any special token, longest first so overlapping tokens resolve to the longest."""
    if not special_tokens:
        return None
    alternatives = sorted(set(special_tokens), key=len, reverse=True)
    return regex.compile("|".join(regex.escape(token) for token in alternatives))


def split_on_special_tokens(text: str, special_tokens: Sequence[str]) -> list[str]:
    """The pieces of ``text`` between special tokens (the tokens themselves are dropped).

    >>> split_on_special_tokens("a<|x|>b<|x|><|x|>c", ["<|x|>"])
    ['a', 'b', '', 'c']
    """
    pattern = special_token_regex(special_tokens)
    return [text] if pattern is None else pattern.split(text)


def count_text_plain(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    The definition :func:`count_text` must equal.  ``findall`` + ``Counter`` keep the loop over
    matches in C; strings are encoded once per distinct pre-token rather than once per occurrence.
    """
    counts: Counter[str] = Counter()
    for piece in split_on_special_tokens(text, special_tokens):
        counts.update(GPT2_REGEX.findall(piece))
    return Counter({token.encode("utf-8"): n for token, n in counts.items()})


# --- The fast path: an ASCII twin of the GPT-2 pattern, run by the stdlib ``re`` engine ---------------
#
# On ASCII text the GPT-2 classes are small and exact: \p{L} = [A-Za-z], \p{N} = [0-9], and ``regex``'s
# \s = [\t\n\x0b\x0c\r ] (not \x1c-\x1f, which ``re``'s \s would take: hence the explicit class).
# ``re`` runs this twin about 2x faster than ``regex`` runs the Unicode pattern.
_ASCII_SPACE = "\t\n\x0b\x0c\r "
ASCII_TWIN_REGEX = re.compile(
    rf"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]+| ?[^{_ASCII_SPACE}A-Za-z0-9]+"""
    rf"""|[{_ASCII_SPACE}]+(?![^{_ASCII_SPACE}])|[{_ASCII_SPACE}]+"""
)
#
# Most English "non-ASCII" text is ASCII plus a few punctuation marks (curly quotes, dashes, no-break
# space).  The GPT-2 pattern looks at a character only through its class (space, letter, number,
# other) and through the literals ' s d m t l v e r and the space; so replacing each such mark by an
# unused ASCII control character *of the same class* (none is a literal) moves no token boundary.
# Pieces that become ASCII go to the twin, their tokens are mapped back; the rest use ``regex``.
_STAND_IN_CANDIDATES = "\u201c\u201d\u2019\u2018\u2014\u2013\u2026\u00a0\u00a3\u00ab\u00bb\u00b0\u00a7\u00b7\u2009"
_OTHER_STAND_INS = [chr(c) for c in (*range(0x01, 0x09), *range(0x0E, 0x20), 0x7F)]
_SPACE_STAND_INS = ["\x0b", "\x0c"]


def _gpt2_class(char: str) -> str:
    for name, pattern in (("space", r"\s"), ("letter", r"\p{L}"), ("number", r"\p{N}")):
        if regex.fullmatch(pattern, char):
            return name
    return "other"


def _build_stand_ins() -> list[tuple[str, str]]:
    others, spaces = iter(_OTHER_STAND_INS), iter(_SPACE_STAND_INS)
    pairs = []
    for char in _STAND_IN_CANDIDATES:
        kind = _gpt2_class(char)
        stand_in = next(spaces, None) if kind == "space" else next(others, None) if kind == "other" else None
        if stand_in is not None and _gpt2_class(stand_in) == kind:
            pairs.append((char, stand_in))
    return pairs


#: (non-ASCII character, the ASCII control character of the same GPT-2 class that stands in for it)
STAND_INS = _build_stand_ins()
_STAND_IN_CHARS = frozenset(char for pair in STAND_INS for char in pair)

#: Where a piece is cut into lines: before a newline that follows a non-whitespace character (as GPT-2's
#: ``\s`` sees it, stand-ins included), where no pre-token continues (the rule of bpe/training/chunking.py).
_LINE_CUT = re.compile(f"(?<=[^{re.escape(WHITESPACE)}])(?=\n)")


def count_text(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    Equal to :func:`count_text_plain` (tested on every code point and generated text) and faster
    on English text: see the comments above :data:`ASCII_TWIN_REGEX` for how, docs/v6.md ("The shared
    pre-tokenizer") for how much.
    """
    if any(char in token for token in special_tokens for char in _STAND_IN_CHARS):
        return count_text_plain(text, special_tokens)
    mapped, put_back = text, {}
    for char, stand_in in STAND_INS:
        if char in mapped:
            if stand_in in text:  # the stand-in is taken: mapping back would be ambiguous
                return count_text_plain(text, special_tokens)
            mapped = mapped.replace(char, stand_in)
            put_back[ord(stand_in)] = char  # only the stand-ins used: others may be real text
    # No special token holds a stand-in or the character it replaces, so splitting the mapped text cuts
    # it exactly where the original would be cut; pieces left non-ASCII get their characters back.
    pieces = split_on_special_tokens(mapped, special_tokens)
    del mapped
    is_ascii = list(map(str.isascii, pieces))
    # One accented word must not send a whole multi-MB piece down the slow path: non-ASCII pieces are
    # cut into lines where no pre-token continues (see _LINE_CUT) and only their non-ASCII lines take it.
    lines = list(chain.from_iterable(map(_LINE_CUT.split, compress(pieces, map(not_, is_ascii)))))
    line_is_ascii = list(map(str.isascii, lines))
    ascii_text = chain(compress(pieces, is_ascii), compress(lines, line_is_ascii))
    del pieces
    counts: Counter[str] = Counter(chain.from_iterable(map(ASCII_TWIN_REGEX.findall, ascii_text)))
    if put_back:
        # Only tokens holding a stand-in need their characters back.  Every stand-in is a control
        # character, so those tokens are among the few that are not printable, and `isprintable`
        # finds them in C: translating every token back would cost a Python-level call per token.
        for token in list(compress(counts, map(not_, map(str.isprintable, counts)))):
            n = counts.pop(token)
            original = token.translate(put_back)
            counts[original] = counts.get(original, 0) + n
    originals = compress(lines, map(not_, line_is_ascii))
    if put_back:
        originals = map(str.translate, originals, repeat(put_back))
    counts.update(chain.from_iterable(map(GPT2_REGEX.findall, originals)))  # counted in C, as above
    return Counter(dict(zip(map(str.encode, counts), counts.values())))  # each distinct token encoded once


def add_counts(total: dict, more: dict) -> None:
    """``total += more`` for counts; ``more`` is used up.

    No Python-level step per key (``Counter.update`` takes one for every key): the pre-tokens in both
    are summed with ``itemgetter``/``map`` over C functions, the rest copied by ``dict.update``.  On web
    text about half of a chunk's pre-tokens are new to the running count.

    >>> counts = {b"a": 1, b"b": 2}
    >>> add_counts(counts, {b"a": 3, b"c": 1}); add_counts(counts, {b"a": 1, b"b": 1}); counts
    {b'a': 5, b'b': 3, b'c': 1}
    """
    common = list(more.keys() & total.keys())
    if len(common) > 1:  # itemgetter of one key returns the value, not a tuple
        values = itemgetter(*common)
        dict.update(more, zip(common, map(add, values(more), values(total))))
    elif common:
        more[common[0]] += total[common[0]]
    dict.update(total, more)  # dict's own update: Counter.update would add again


def decode_utf8(data: bytes, *, offset: int = 0, errors: str = "strict", source: str = "input") -> str:
    """Decode ``data`` as UTF-8; a bad byte becomes a :class:`BPEError` naming its file offset."""
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise BPEError(
            f"{source}: invalid UTF-8 at byte offset {offset + exc.start} "
            f"(byte 0x{data[exc.start]:02x}); fix the file or pass errors='replace' (--errors replace)"
        ) from None


def check_input_file(path: str | Path) -> Path:
    """The path as a :class:`Path`, or a :class:`BPEError` saying why it can't be read."""
    path = Path(path)
    if not path.exists():
        raise BPEError(f"input file not found: {path}")
    if path.is_dir():
        raise BPEError(f"input path is a directory, not a file: {path}")
    if not path.is_file():  # a FIFO or device would block or never end
        raise BPEError(f"input path is not a regular file: {path}")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise BPEError(f"cannot read input file {path}: {exc.strerror}") from None
    return path


def count_file_serial(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None,
) -> Counter[bytes]:
    """Count the file's pre-tokens in this process, reading it chunk by chunk (bytes exactly as stored).

    The chunks are cut where :mod:`bpe.training.chunking` says no pre-token can span the cut, so the
    counts are exactly those of the whole text while memory holds one chunk (a few MB), not the file.
    ``end`` (a safe cut from :func:`bpe.training.chunking.find_limit_end`) reads only the first ``end``
    bytes; ``on_bytes(n)`` is called after each chunk of ``n`` bytes.  ``workers`` is accepted and
    ignored, so every variant's pre-tokenizer has the same signature.
    """
    path = check_input_file(path)
    total: Counter[bytes] = Counter()
    if end is None and path.stat().st_size == 0:
        # Files like /proc/cpuinfo report size 0 yet have content: read them to the end (they are small).
        with open(path, "rb") as f:
            data = f.read()
        total = count_text(decode_utf8(data, errors=errors, source=str(path)), special_tokens)
        if on_bytes is not None and data:
            on_bytes(len(data))
        return total
    with open(path, "rb") as f:
        for start, stop in iter_chunks(path, special_tokens, end=end, errors=errors):
            f.seek(start)
            data = f.read(stop - start)
            counts = count_text(decode_utf8(data, offset=start, errors=errors, source=str(path)),
                                     special_tokens)
            del data
            add_counts(total, counts)
            if on_bytes is not None:
                on_bytes(stop - start)
    return total
