"""Chunking: where a file can be cut so that the pieces pre-tokenize exactly like the whole.

The lesson of v3 in one rule.  A cut at byte ``p`` is *safe* when no special token and no GPT-2
pre-token can continue across it, i.e. when

* no occurrence of any special token starts before ``p`` and ends after it, and
* ``p`` is the start of a special token, **or** the byte at ``p`` is ASCII whitespace and the
  character before it is not whitespace.

Why the second case is safe: every GPT-2 alternative that contains a non-space character
(``'s``, `` ?\\p{L}+``, `` ?\\p{N}+``, `` ?[^\\s\\p{L}\\p{N}]+``) can hold whitespace only as its first
character, so the pre-token holding the character before ``p`` ends at ``p``; the whitespace
alternatives look ahead only from the end of a whitespace run, which the character before ``p`` is
not; and the pattern never looks behind, so the text after ``p`` is cut the same whether or not the
text before it is there.  Newlines after text, ``\\r\\n``, ``。\\n``, ``word \\n`` and the spaces between
words all qualify, so a file without special tokens, or one huge document, is still cut.

Three rules make it cheap and exact:

* the search is in bytes, never decoded (ASCII whitespace bytes cannot sit inside a multi-byte
  character), with one compiled pattern per kind of cut (C-level scanning, so a 4 MB run of a
  self-overlapping special token like ``aa`` costs one pass, not one Python step per occurrence);
* a candidate inside an occurrence is rejected and the search goes on *forward*: a cut is never moved
  back, so a limit's end is at or after the limit and the scan of the file stays linear;
* with ``errors="replace"`` a special token holding U+FFFD can be made by bad bytes, so such
  candidates are also checked on the decoded text.

The preferred cut is a special token's start (a document boundary), then a newline, then any space;
in text with no whitespace at all, a change of class between two ASCII characters (``word1,word2``:
a letter, digit or other character next to one of another class, never after an apostrophe) is safe
for the same reason: no GPT-2 pre-token holds two classes of non-space characters.

Other patterns need other rules (``cuts``; :func:`bpe.split.patterns.cuts_of` names each pattern's).
cl100k's and o200k's pre-tokens may end in newlines (``"!\n"``) and may start with any character that is
not a letter or number (``"(word"``), so neither a newline nor a change of class is safe; what is safe is a
space, tab, vertical tab or form feed after a non-space (``"spaces"``): no pre-token of theirs holds one of
those after a non-space character, and their only look at the end of the text (cl100k's ``\\s++$``) is
at whitespace, which the piece before the cut does not end in.  Of a custom pattern nothing is known, so
only a special token's start is safe (``"special"``): the text is split there before the pattern runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from bpe.errors import BPEError

#: How far past an offset we read at a time while looking for a cut.
SCAN_BLOCK_BYTES = 64 * 1024
#: Streaming consumers (the serial counter) read about this much at a time.
STREAM_CHUNK_BYTES = 4 * 1024 * 1024

# Unicode White_Space as GPT-2's ``\s`` (the ``regex`` module) sees it; tests/split/test_chunking.py checks the list.
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
              + "\u2028\u2029\u202f\u205f\u3000")
_ASCII_SPACE_CLASS = b"[\\t\\n\\x0b\\x0c\\r ]"
# Text without any whitespace (minified code, base64, "a,b,c"): a cut between two ASCII characters of
# different GPT-2 classes (letter, digit, other) is safe too, except after an apostrophe ("'s").
_OTHER = b"\\x00-\\x08\\x0e-\\x1f!-&(-/:-@\\[-`{-\\x7f"  # ASCII, not space, letter, digit or '
_CLASS_CHANGE = (b"(?:(?<=[A-Za-z])(?=[0-9'" + _OTHER + b"])|(?<=[0-9])(?=[A-Za-z'" + _OTHER + b"])"
                 b"|(?<=[" + _OTHER + b"])(?=[A-Za-z0-9]))")


def _not_inside(special_bytes: Sequence[bytes]) -> bytes:
    """A pattern prefix true where no occurrence of a special token starts before and ends after."""
    return b"".join(b"(?!(?<=" + re.escape(t[:k]) + b")" + re.escape(t[k:]) + b")"
                    for t in special_bytes for k in range(1, len(t)))


def _after_non_space() -> bytes:
    """A lookbehind pattern: the character before is not whitespace (and there is one)."""
    multibyte = [c.encode("utf-8") for c in WHITESPACE if not c.isascii()]
    return (b"(?<=[\\s\\S])(?<!" + _ASCII_SPACE_CLASS + b")"
            + b"".join(b"(?<!" + re.escape(e) + b")" for e in multibyte))


class CutFinder:
    """Finds safe cuts in one open file (see the module docstring); ``size`` bytes are the text."""

    def __init__(self, f, size: int, special_tokens: Sequence[str], errors: str = "strict", cuts: str = "gpt2"):
        self.f, self.size = f, size
        self.special_bytes = [t.encode("utf-8") for t in special_tokens]
        self.context = max([4, *map(len, self.special_bytes)])
        inside = _not_inside(self.special_bytes)
        after = _after_non_space()
        # the cheap test first: most positions fail it and the lookbehinds are never tried
        if cuts == "gpt2":
            self.patterns = [re.compile(b"(?=" + cls + b")" + after + inside) for cls in (b"\\n", _ASCII_SPACE_CLASS)]
            self.patterns.append(re.compile(_CLASS_CHANGE + inside))
        elif cuts == "spaces":
            self.patterns = [re.compile(b"(?=[ \\t\\x0b\\x0c])" + after + inside)]
        elif cuts == "special":
            self.patterns = []
        else:
            raise ValueError(f"no rule for cuts named {cuts!r}: gpt2, spaces or special")
        if self.special_bytes:
            alternatives = b"|".join(re.escape(t) for t in sorted(self.special_bytes, key=len, reverse=True))
            self.patterns.insert(0, re.compile(b"(?=" + alternatives + b")" + inside))
        # Decoding with errors="replace" can create a special token holding U+FFFD from bad bytes
        # (and any other lenient handler can create any): check candidates on the decoded text too.
        self.errors = errors
        self.decoded_check = errors != "strict" and (errors != "replace" or any("\ufffd" in t for t in special_tokens))
        self.special_tokens = list(special_tokens)

    def first_cut(self, offset: int) -> int | None:
        """The first safe cut at or after ``offset`` (and after byte 0, before the end), or None."""
        pos = max(offset, 1)
        while pos < self.size:
            start = max(0, pos - self.context)
            self.f.seek(start)
            block = self.f.read(min(pos + SCAN_BLOCK_BYTES + self.context, self.size) - start)
            if len(block) <= pos - start:
                return None
            limit = min(len(block), pos - start + SCAN_BLOCK_BYTES)  # a cut must start in this block
            for pattern in self.patterns:  # not search(..., endpos): the lookarounds must see past the block
                found = pattern.search(block, pos - start)
                while found is not None and found.start() < limit and self.decoded_check \
                        and self._inside_decoded(start + found.start()):
                    found = pattern.search(block, found.start() + 1)
                if found is not None and found.start() < limit and start + found.start() < self.size:
                    return start + found.start()
            pos = start + limit
        return None

    def _inside_decoded(self, cut: int) -> bool:
        """Whether a special token found in the decoded text spans ``cut`` (a cut before an ASCII byte)."""
        width = 4 * self.context + 4
        self.f.seek(max(0, cut - width))
        left = self.f.read(cut - max(0, cut - width)).decode("utf-8", self.errors)
        right = self.f.read(min(width, self.size - cut)).decode("utf-8", self.errors)
        return any(left.endswith(t[:k]) and right.startswith(t[k:])
                   for t in self.special_tokens for k in range(1, len(t)))


def find_chunk_boundaries(
    path: str | Path, special_tokens: Sequence[str], num_chunks: int, *, end: int | None = None,
    errors: str = "strict", cuts: str = "gpt2",
) -> list[int]:
    """Sorted byte offsets ``[0, ..., file_size]``; each neighbouring pair is one chunk.

    ``end`` (a safe cut, see :func:`find_limit_end`) counts only the file's first ``end`` bytes; ``cuts``
    names the rule for the pattern that will cut the chunks (the module's docstring).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as tmp:
    ...     _ = tmp.write(b"one two<|e|>three four<|e|>five")
    >>> find_chunk_boundaries(tmp.name, ["<|e|>"], 3)
    [0, 22, 31]
    >>> os.unlink(tmp.name)
    """
    size = os.path.getsize(path) if end is None else end
    with open(path, "rb") as f:
        return boundaries_of(f, size, special_tokens, num_chunks, errors=errors, cuts=cuts)


def boundaries_of(f, size: int, special_tokens: Sequence[str], num_chunks: int, *,
                  errors: str = "strict", cuts: str = "gpt2") -> list[int]:
    """:func:`find_chunk_boundaries` on a file already open (binary, seekable): its first ``size`` bytes (a
    cluster cuts a corpus's large text file so, through fsspec or locally: :mod:`bpe.corpus.cluster`)."""
    boundaries = [0]
    finder = CutFinder(f, size, special_tokens, errors, cuts)
    for i in range(1, num_chunks):
        offset = size * i // num_chunks
        if offset <= boundaries[-1]:  # the previous cut is already past it: each byte scanned once
            continue
        cut = finder.first_cut(offset)
        if cut is None:
            break
        boundaries.append(cut)
    boundaries.append(size)
    return boundaries


def iter_chunks(
    path: str | Path, special_tokens: Sequence[str], *, end: int | None = None,
    chunk_bytes: int | None = None, errors: str = "strict", cuts: str = "gpt2",
) -> Iterator[tuple[int, int]]:
    """Byte ranges ``(start, stop)`` of about ``chunk_bytes`` (default :data:`STREAM_CHUNK_BYTES`) each, cut
    safely, covering the file (or its first ``end`` bytes) in order: for consumers that stream the file."""
    size = os.path.getsize(path) if end is None else end
    with open(path, "rb") as f:
        yield from chunks_of(f, size, special_tokens, chunk_bytes=chunk_bytes, errors=errors, cuts=cuts)


def chunks_of(f, size: int, special_tokens: Sequence[str], *, chunk_bytes: int | None = None,
              errors: str = "strict", start: int = 0, cuts: str = "gpt2") -> Iterator[tuple[int, int]]:
    """:func:`iter_chunks` on a file already open (binary, seekable): its bytes ``start:size`` (``start``: 0 or
    a safe cut).  A corpus's text files come here opened by the corpus reader, a local file or an fsspec
    URL alike (:mod:`bpe.corpus.corpus`)."""
    chunk_bytes = STREAM_CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    finder = CutFinder(f, size, special_tokens, errors, cuts)
    while start < size:
        cut = finder.first_cut(start + chunk_bytes) if start + chunk_bytes < size else None
        stop = size if cut is None else cut
        yield start, stop
        start = stop


def find_limit_end(path: str | Path, limit: int, special_tokens: Sequence[str], *, errors: str = "strict",
                   cuts: str = "gpt2") -> int:
    """Where a subset of about ``limit`` bytes ends: the first safe cut at or after byte ``limit``.

    The subset is whole documents where it can be: it runs up to the next special-token start (or,
    without one nearby, the next safe newline or space; see the module docstring), so it may be a
    little longer than ``limit``, never shorter.  The whole file when it is not longer than ``limit``
    or has no safe cut after it.  ``cuts``: the pattern's rule (the module's docstring).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as tmp:
    ...     _ = tmp.write(b"one two<|e|>three four<|e|>five")
    >>> find_limit_end(tmp.name, 9, ["<|e|>"]), find_limit_end(tmp.name, 7, ["<|e|>"]), find_limit_end(tmp.name, 99, [])
    (22, 7, 31)
    >>> os.unlink(tmp.name)
    """
    size = os.path.getsize(path)
    if limit >= size:
        if size == 0 and has_hidden_content(path):
            raise BPEError(f"{path} reports a size of 0 but has content (a /proc or device file?): a limit needs "
                           "a regular file; copy it to one first")
        return size
    with open(path, "rb") as f:
        cut = CutFinder(f, size, special_tokens, errors, cuts).first_cut(limit)
    return size if cut is None else cut


def has_hidden_content(path: str | Path) -> bool:
    """Whether a file whose size reads 0 (``/proc/cpuinfo``) still gives bytes when read."""
    with open(path, "rb") as f:
        return bool(f.read(1))
