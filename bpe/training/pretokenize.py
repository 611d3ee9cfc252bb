"""Pre-tokenization: text -> counts of pre-tokens (as UTF-8 bytes), shared by every variant.

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token and the special tokens themselves are dropped
from the counts.  Each piece is then cut by the GPT-2 pattern and every pre-token counted.
:func:`count_text` does this faster, with identical results: an ASCII twin of the pattern, on the
stdlib ``re`` engine, cuts the ASCII text, and only the few words around each non-ASCII character (the
*islands*, cut out at places where no pre-token can continue) take the Unicode pattern;
:func:`count_text_plain` is the plain definition.  :func:`split_pretokens` is the same fast cut for
encoding, which needs the pre-tokens in order rather than counted.

>>> count_text("low low<|endoftext|>lower", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'lower': 1})

Two ways to count a file:

* :func:`count_file_serial` reads and counts the file in this process, one safely cut chunk at a time
  (v1, v2);
* :func:`bpe.training.parallel.count_file_parallel` counts the chunks in a process pool (v3 onward).
"""

from __future__ import annotations

import codecs
import re
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain, zip_longest
from operator import add, itemgetter
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
#: The twin on ``bytes``: counting runs it on the UTF-8 of ASCII text, so its pre-tokens come out as the
#: ``bytes`` the counts are keyed by, with no encoding step per distinct pre-token.
ASCII_TWIN_BYTES_REGEX = re.compile(ASCII_TWIN_REGEX.pattern.encode("ascii"))

# --- Islands: only the words around a non-ASCII character take the Unicode pattern ------------------
#
# A position ``c`` is an *exact cut* when the character before it is not whitespace and the character at
# it is (both as the GPT-2 pattern's ``\s`` sees them).  Every alternative that holds a non-space
# character holds whitespace only as its first character, so the pre-token holding ``text[c - 1]`` ends
# at ``c``; the pattern never looks behind, so the pre-tokens from ``c`` on depend on ``text[c:]`` alone;
# and ``text[:c]`` ends in a non-space, so its whitespace runs see the same lookahead as in the whole
# text.  Hence the pre-tokens of a text are those of its pieces between exact cuts, concatenated.  A
# non-ASCII piece is cut at exact cuts (a space after a non-space) into ASCII parts, for the twin, and
# *islands*: the few words around each non-ASCII character, for the Unicode pattern.  docs/v3.md
# ("Exact cuts") walks through the cases.
_WHITESPACE_SET = frozenset(WHITESPACE)
_ISLANDS = "bpe-pretokenize-islands"  # the codec error handler that finds the islands
#: Cutting islands gives up (the rest takes the Unicode pattern whole) once it has met ISLAND_PROBE
#: non-ASCII stretches yet kept fewer than ISLAND_MIN_GAP ASCII characters per stretch for the twin: on
#: Cyrillic, Greek, CJK or accent-dense text, each cut costs more than the twin saves.  The tally runs
#: over one call of the counter (a chunk), so a chunk of such text stops cutting after its first pieces.
ISLAND_PROBE = 32
ISLAND_MIN_GAP = 48
_island_state = threading.local()


def _island_handler(exc: UnicodeEncodeError) -> tuple[str, int]:
    """Called by ``str.encode("ascii", _ISLANDS)`` at each non-ASCII stretch: records its island.

    The island runs from the exact cut before the stretch to the first exact cut after it, and the
    encoder resumes there, so a word with three accents costs one call.  What the encoder writes is
    thrown away: the ASCII scan in C is the fast way to find the non-ASCII characters.
    """
    text, state = exc.object, _island_state
    spans = state.spans
    lo = spans[-1][1] if spans else 0
    state.calls += 1
    if state.calls >= ISLAND_PROBE and state.kept < ISLAND_MIN_GAP * state.calls:
        stop = len(text)  # not worth cutting: one island to the end
        if spans and spans[-1][1] == lo:
            spans[-1][1] = stop
        else:
            spans.append([lo, stop])
        return "", stop
    start = text.rfind(" ", lo, exc.start)
    while start > lo and text[start - 1] in _WHITESPACE_SET:  # back to the first of a run of spaces
        start -= 1
    start = max(start, lo)
    stop = text.find(" ", exc.end)
    while stop != -1 and text[stop - 1] in _WHITESPACE_SET:  # a space after a space is no exact cut
        stop = text.find(" ", stop + 1)
    if stop == -1:
        stop = len(text)
    if spans and start == lo:
        spans[-1][1] = stop  # touches the previous island: one island
    else:
        spans.append([start, stop])
        state.kept += start - lo
    return "", stop


codecs.register_error(_ISLANDS, _island_handler)


def _start_tally() -> None:
    _island_state.calls = _island_state.kept = 0


def _cut(text: str) -> list[str]:
    """:func:`ascii_parts_and_islands` on a non-ASCII ``text``, keeping the running tally."""
    _island_state.spans = spans = []
    text.encode("ascii", _ISLANDS)
    parts, done = [], 0
    for start, stop in spans:
        parts += (text[done:start], text[start:stop])
        done = stop
    parts.append(text[done:])
    return parts


def ascii_parts_and_islands(text: str) -> list[str]:
    """``text`` cut at exact cuts into ``[ascii, island, ascii, ..., island, ascii]`` (parts may be empty).

    Every even part is ASCII, every odd part holds a non-ASCII character (or, on text dense with them,
    runs to the end), and the pre-tokens of ``text`` are those of its parts in order.  Parts of one
    kind may also be joined: each part but the first starts with whitespace or is empty, and each but
    the last ends in a non-space, so the joins are exact cuts too.

    >>> ascii_parts_and_islands("a plain caf\u00e9 au lait, and more")
    ['a plain', ' caf\u00e9', ' au lait, and more']
    """
    if text.isascii():
        return [text]
    _start_tally()
    return _cut(text)


def split_pretokens(text: str) -> list[str]:
    """The GPT-2 pre-tokens of ``text`` in order: ``GPT2_REGEX.findall(text)``, cut the fast way.

    No special-token handling (split on them first).  ASCII text is cut by the twin; other text is cut
    into ASCII parts and islands (:func:`ascii_parts_and_islands`) and each takes its pattern.  This is
    the entry point for encoding, where the order of the pre-tokens matters.

    >>> split_pretokens("don't stop, caf\u00e9 42x")
    ['don', "'t", ' stop', ',', ' caf\u00e9', ' 42', 'x']
    """
    if text.isascii():
        return ASCII_TWIN_REGEX.findall(text)
    parts = ascii_parts_and_islands(text)
    if len(parts) == 3 and not parts[0] and not parts[2]:
        return GPT2_REGEX.findall(text)
    # each part's pre-tokens, ASCII and island alternating, flattened in C
    pairs = zip_longest(map(ASCII_TWIN_REGEX.findall, parts[0::2]), map(GPT2_REGEX.findall, parts[1::2]), fillvalue=())
    return list(chain.from_iterable(chain.from_iterable(pairs)))


def _pieces(text: str, special_tokens: Sequence[str]) -> list[str]:
    """:func:`split_on_special_tokens`, with ``str.split`` (C, no regex) for the common single token."""
    if len(set(special_tokens)) == 1 and special_tokens[0]:
        return text.split(special_tokens[0])
    return split_on_special_tokens(text, special_tokens)


def _dense() -> bool:
    """Whether the tally says this text is not worth cutting into islands (see :data:`ISLAND_PROBE`)."""
    state = _island_state
    return state.calls >= ISLAND_PROBE and state.kept < ISLAND_MIN_GAP * state.calls


def _count_into(counts: Counter[bytes], island_counts: Counter[str], text: str, special_tokens: Sequence[str]) -> None:
    """Add the counts of ``text``'s pre-tokens to ``counts`` (ASCII parts) and ``island_counts`` (islands).

    The islands' pre-tokens stay ``str`` so that the caller encodes each distinct one once, at the end
    (:func:`_joined`), however many chunks it counts.
    """
    ascii_text, islands = [], []
    _start_tally()
    for piece in _pieces(text, special_tokens):
        if piece.isascii():
            ascii_text.append(piece)
        elif _dense():
            islands.append(piece)  # no cutting: the whole piece takes the Unicode pattern
        else:
            parts = _cut(piece)
            # each kind joined: exact (see ascii_parts_and_islands), and one findall call per piece
            ascii_text.append("".join(parts[0::2]))
            islands.append("".join(parts[1::2]))
    # ASCII text: the twin on its bytes (a copy in C), counted in C by Counter's update
    counts.update(chain.from_iterable(map(ASCII_TWIN_BYTES_REGEX.findall, map(str.encode, ascii_text))))
    del ascii_text
    island_counts.update(chain.from_iterable(map(GPT2_REGEX.findall, islands)))


def _joined(counts: Counter[bytes], island_counts: Counter[str]) -> Counter[bytes]:
    """The two counts of :func:`_count_into` as one ``Counter[bytes]`` (both are used up)."""
    encoded: Counter[bytes] = Counter()
    # each distinct pre-token encoded once, in C; dict.update builds the one dict (Counter(dict(...)) two)
    dict.update(encoded, zip(map(str.encode, island_counts), island_counts.values()))
    island_counts.clear()
    small, large = sorted((counts, encoded), key=len)
    add_counts(large, small)  # the cost is the smaller one's size
    return large


def count_text(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    Equal to :func:`count_text_plain` (tested on every code point and generated text) and faster:
    ASCII stretches take the twin pattern (:data:`ASCII_TWIN_REGEX`), and only the words around
    non-ASCII characters take the Unicode one (:func:`ascii_parts_and_islands`).
    """
    counts: Counter[bytes] = Counter()
    island_counts: Counter[str] = Counter()
    _count_into(counts, island_counts, text, special_tokens)
    return _joined(counts, island_counts)


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
    ignored, so every variant's pre-tokenizer has the same signature.  The path is checked only when no
    ``end`` is given: a caller that found the end (:func:`bpe.training.train.train_bpe`) checked it.
    """
    path = check_input_file(path) if end is None else Path(path)
    # Each chunk's pre-tokens go straight into the one Counter: no per-chunk Counter to sum.
    total: Counter[bytes] = Counter()
    island_total: Counter[str] = Counter()
    if end is None and path.stat().st_size == 0:
        # Files like /proc/cpuinfo report size 0 yet have content: read them to the end (they are small).
        with open(path, "rb") as f:
            data = f.read()
        _count_into(total, island_total, decode_utf8(data, errors=errors, source=str(path)), special_tokens)
        if on_bytes is not None and data:
            on_bytes(len(data))
        return _joined(total, island_total)
    with open(path, "rb") as f:
        for start, stop in iter_chunks(path, special_tokens, end=end, errors=errors):
            f.seek(start)
            data = f.read(stop - start)
            text = decode_utf8(data, offset=start, errors=errors, source=str(path))
            del data
            _count_into(total, island_total, text, special_tokens)
            del text
            if on_bytes is not None:
                on_bytes(stop - start)
    return _joined(total, island_total)
