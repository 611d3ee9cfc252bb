"""The fast split: the GPT-2 pattern's exact pre-tokens, cut faster on every kind of text, most on mostly-ASCII.

Counted by v6, v7 and v8 (:mod:`bpe.counting.fast`) and used by encoding (:func:`split_pretokens`, for
:mod:`bpe.io.tokenizer`); v1-v5 cut with the plain definition, ``GPT2_REGEX.findall``
(:mod:`bpe.split.patterns`), which everything here is tested equal to.  Three facts make it work
(docs/v6.md, "The fast pre-tokenizer", walks through them):

* **an ASCII twin** of the GPT-2 pattern (:data:`ASCII_TWIN_REGEX`): on ASCII text the pattern's
  classes are small and exact, and the stdlib ``re`` engine runs the twin about twice as fast as
  ``regex`` runs the Unicode pattern; it runs on the text's bytes, so its pre-tokens come out as the
  ``bytes`` the counts are keyed by;
* **islands** (:func:`ascii_parts_and_islands`): text that is not all ASCII is cut at *exact cuts*
  (places where no pre-token can continue) into ASCII parts, for the twin, and the few words around
  each non-ASCII character, for the Unicode pattern.  The non-ASCII characters are found by the C
  ASCII encoder calling a codec error handler of this module's own; a block of text dense with them
  (other scripts, accents every few words), where the cutting would cost more than it saves, takes the
  Unicode pattern whole;
* **letters first** (:data:`UNICODE_REGEX`): both patterns try the alternative that matches most
  often first, with the same pre-tokens, so even text that takes the Unicode pattern whole is cut
  a little faster than by the plain pattern.

>>> split_pretokens("low low caf\u00e9")
['low', ' low', ' caf\u00e9']
"""

from __future__ import annotations

import codecs
import re
import threading
from collections.abc import Iterator, Sequence
from itertools import chain, zip_longest

import regex

from bpe.split.chunking import WHITESPACE
from bpe.split.patterns import split_on_special_tokens

# --- The two patterns: GPT-2's, its alternatives reordered, and its ASCII twin ------------------------
#
# A regex engine tries the alternatives in order at every pre-token.  GPT-2's order is contraction,
# letters, numbers, other, whitespace; most pre-tokens are words, so letters go first here, then the
# contraction, other characters and numbers.  The pre-tokens are the same: at any position at most one
# of the four can match (after the optional space, letters, numbers and the rest are disjoint classes),
# except that a contraction and "other" both start with an apostrophe, and the contraction stays ahead
# of it ("'s" stays one pre-token); the whitespace alternatives stay last, behind every alternative that
# starts with an optional space.  ``regex`` runs this order a few percent faster.
UNICODE_REGEX = regex.compile(r""" ?\p{L}+|'(?:[sdmt]|ll|ve|re)| ?[^\s\p{L}\p{N}]+| ?\p{N}+|\s+(?!\S)|\s+""")
# On ASCII text the GPT-2 classes are small and exact: \p{L} = [A-Za-z], \p{N} = [0-9], and ``regex``'s
# \s = [\t\n\x0b\x0c\r ] (not \x1c-\x1f, which ``re``'s \s would take: hence the explicit class).
# ``re`` runs this twin, its alternatives in the same order, about 2x faster than ``regex`` runs the
# Unicode pattern.
_ASCII_SPACE = "\t\n\x0b\x0c\r "
ASCII_TWIN_REGEX = re.compile(
    rf""" ?[A-Za-z]+|'(?:[sdmt]|ll|ve|re)| ?[^{_ASCII_SPACE}A-Za-z0-9]+| ?[0-9]+"""
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
# non-ASCII piece is cut at exact cuts (a space after a non-space) into blocks, and each block into
# ASCII parts, for the twin, and *islands*: the few words around each non-ASCII character, for the
# Unicode pattern.  docs/v6.md ("Exact cuts", "Islands") walks through the cases.
_WHITESPACE_SET = frozenset(WHITESPACE)
_ISLANDS = "bpe-pretokenize-islands"  # the codec error handler that finds the islands
#: A block holding more non-ASCII characters than this share of its length takes the Unicode pattern
#: whole.  Each island costs a call of the error handler, worth the twin's saving on about 50 ASCII
#: characters, and each non-ASCII character may start an island: at 1 % or less, islands of a word or
#: two are far enough apart to pay; on Cyrillic, Greek, Arabic, CJK or accent-dense text cutting costs more.
MAX_NON_ASCII_SHARE = 0.01
#: Pieces longer than this many characters are tested and cut in blocks of about this size, so one
#: passage in another script takes the Unicode pattern without its whole book or page.
BLOCK_CHARS = 8192
#: A block above this share takes the Unicode pattern whole: Cyrillic, Greek, Arabic, CJK, accents in
#: every other word.
DENSE_SHARE = 0.1
#: A block between the two shares may still be worth cutting (a run of CJK in English, emoji of five
#: code points): such blocks are cut while a tally over the chunk says it pays.  It gives up for the
#: rest of the chunk once ISLAND_PROBE islands of such blocks have kept fewer than MIN_GAP ASCII
#: characters each for the twin (a call of the handler costs about what the twin saves on that many).
ISLAND_PROBE = 32
MIN_GAP = 48
_island_state = threading.local()


def _next_cut(text: str, i: int) -> int:
    """The first exact cut at or after ``i`` that is a space after a non-space (``len(text)`` if none)."""
    stop = text.find(" ", i)
    while stop > 0 and text[stop - 1] in _WHITESPACE_SET:  # a space after a space is no exact cut
        stop = text.find(" ", stop + 1)
    return len(text) if stop == -1 else stop


def _island_handler(exc: UnicodeEncodeError) -> tuple[str, int]:
    """Called by ``str.encode("ascii", _ISLANDS)`` at each non-ASCII stretch: records its island.

    The island runs from the exact cut before the stretch to the first exact cut after it, and the
    encoder resumes there, so a word with three accents costs one call.  What the encoder writes is
    thrown away: the ASCII scan in C is the fast way to find the non-ASCII characters.
    """
    text, state = exc.object, _island_state
    spans = state.spans
    lo = spans[-1][1] if spans else 0
    start = text.rfind(" ", lo, exc.start)
    while start > lo and text[start - 1] in _WHITESPACE_SET:  # back to the first of a run of spaces
        start -= 1
    start = max(start, lo)
    if state.judged:
        state.calls += 1
    stop = len(text) if state.judged and _not_paying() else _next_cut(text, exc.end)
    if spans and start == lo:
        spans[-1][1] = stop  # touches the previous island: one island
    else:
        spans.append([start, stop])
        state.kept += (start - lo) * state.judged
    return "", stop


codecs.register_error(_ISLANDS, _island_handler)


def _blocks(text: str) -> Iterator[str]:
    """``text`` in blocks of about :data:`BLOCK_CHARS` characters, cut at exact cuts."""
    start, end = 0, len(text)
    while start < end:
        stop = _next_cut(text, start + BLOCK_CHARS) if end - start > BLOCK_CHARS else end
        yield text[start:stop]
        start = stop


def start_tally() -> None:
    _island_state.calls = _island_state.kept = 0


def _not_paying() -> bool:
    """Whether the tally says that cutting blocks above the share costs more than it saves."""
    state = _island_state
    return state.calls >= ISLAND_PROBE and state.kept < MIN_GAP * state.calls


def _non_ascii_share(block: str) -> float:
    """The share of ``block``'s characters that are not ASCII, to decide whether to cut it.

    A long block is judged by 8 runs of 64 characters spread over it (runs, not every n-th character,
    so that a table's columns cannot hide from it); the C ASCII encoder with ``errors="ignore"`` drops
    the non-ASCII characters, and what it drops is their number.
    """
    if len(block) > 1024:
        block = "".join([block[i : i + 64] for i in range(0, len(block), len(block) // 8)])
    return (len(block) - len(block.encode("ascii", "ignore"))) / max(len(block), 1)


def cut_islands(text: str, judged: bool = False) -> list[str]:
    """``text`` cut by the error handler into ``[ascii, island, ascii, ..., island, ascii]``.

    Every even part is ASCII (possibly empty), every odd part holds a non-ASCII character (``judged``:
    or, once the tally says cutting does not pay, runs to the end), and the pre-tokens of ``text`` are
    those of its parts in order.

    >>> cut_islands("The café’s  owner — Zoë — said 42.")
    ['The', ' café’s', '  owner', ' — Zoë —', ' said 42.']
    """
    _island_state.spans = spans = []
    _island_state.judged = judged
    text.encode("ascii", _ISLANDS)
    parts, done = [], 0
    for start, stop in spans:
        parts += (text[done:start], text[start:stop])
        done = stop
    parts.append(text[done:])
    return parts


def ascii_parts_and_islands(text: str) -> list[str]:
    """``text`` cut at exact cuts into ``[ascii, island, ascii, ..., island, ascii]`` (parts may be empty).

    Each block (:func:`_blocks`) is one ASCII part when it is all ASCII, cut by :func:`cut_islands`
    when few of its characters are non-ASCII (:data:`MAX_NON_ASCII_SHARE`), one island when many are
    (:data:`DENSE_SHARE`), and in between cut while the tally says it pays (:data:`ISLAND_PROBE`), then
    taken whole; an empty island stands between two blocks.  Parts of one kind may be joined: each part but the first
    starts with whitespace or is empty, and each but the last ends in a non-space, so the joins are
    exact cuts too.

    >>> ascii_parts_and_islands("one café in a long line " + "of plain words " * 8)[:2]
    ['one', ' café']
    >>> ascii_parts_and_islands("море и the sea")
    ['', 'море и the sea', '']
    """
    if text.isascii():
        return [text]
    start_tally()
    return judged_parts(text)


def judged_parts(text: str) -> list[str]:
    """:func:`ascii_parts_and_islands` on a non-ASCII ``text``, keeping the running tally."""
    parts: list[str] = []
    for block in _blocks(text):
        if parts:
            parts.append("")  # an empty island between two blocks keeps the parts alternating
        if block.isascii():
            parts.append(block)
            continue
        share = _non_ascii_share(block)
        if share <= MAX_NON_ASCII_SHARE:
            parts += cut_islands(block)
        elif share > DENSE_SHARE or _not_paying():
            parts += ("", block, "")
        else:
            parts += cut_islands(block, judged=True)
    return parts


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
        return UNICODE_REGEX.findall(text)
    # each part's pre-tokens, ASCII and island alternating, flattened in C
    pairs = zip_longest(map(ASCII_TWIN_REGEX.findall, parts[0::2]), map(UNICODE_REGEX.findall, parts[1::2]),
                        fillvalue=())
    return list(chain.from_iterable(chain.from_iterable(pairs)))


def special_pieces(text: str, special_tokens: Sequence[str]) -> list[str]:
    """:func:`split_on_special_tokens`, with ``str.split`` (C, no regex) for the common single token."""
    if len(set(special_tokens)) == 1 and special_tokens[0]:
        return text.split(special_tokens[0])
    return split_on_special_tokens(text, special_tokens)


