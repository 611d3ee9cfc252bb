"""A corpus's pieces joined into batches of documents, each followed by the separator.

The separator is the first special token the user names (``<|endoftext|>`` by default).  The counter splits
on it, so no pre-token and no merge spans two documents, and a plain file's documents given as JSON lines,
Parquet rows or an iterator's strings count exactly as the file does.  Without special tokens the
documents are still kept apart, by :data:`~bpe.defaults.SPECIAL_TOKEN` used as a separator only (the
counter splits on it; it is no token of the vocab).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from bpe.corpus.corpus import Corpus
from bpe.corpus.sources import place_of
from bpe.defaults import SPECIAL_TOKEN
from bpe.errors import BPEError
from bpe.split.patterns import DEFAULT_PATTERN


@dataclass(frozen=True)
class Batch:
    """Documents joined, each followed by the separator: ``text`` (or a plain file's chunk, alone, as bytes
    where they were asked for: ``raw``); the bytes of the documents' UTF-8 (separators left out, the corpus
    figures); the bytes of the sources read for them (the progress)."""

    text: str | bytes
    text_bytes: int
    read: int


def separator_of(special_tokens: Sequence[str]) -> str:
    """What ends each document: the first special token, or :data:`~bpe.defaults.SPECIAL_TOKEN` where there
    is none (then a separator only, which the counter is told of and the vocab never holds)."""
    return special_tokens[0] if special_tokens else SPECIAL_TOKEN


def counting_tokens(special_tokens: Sequence[str]) -> list[str]:
    """The special tokens the counter splits on: the user's, or the separator alone where there are none."""
    return list(special_tokens) if special_tokens else [SPECIAL_TOKEN]


def batches(pieces: Iterable[tuple[str, tuple, int]], separator: str, *, errors: str = "strict",
            batch_chars: int | None = None) -> Iterator[Batch]:
    """The pieces joined into batches of about ``batch_chars`` characters, each piece followed by
    ``separator``.  A batch is checked to encode to UTF-8 (a string from JSON or an iterator may hold a
    lone surrogate, which no UTF-8 holds): the first such piece is named in one line, or, with
    ``errors="replace"``, its surrogates become U+FFFD, as Python's decoder replaces a bad byte."""
    batch_chars = BATCH_CHARS if batch_chars is None else batch_chars
    separator_bytes = len(separator.encode("utf-8"))
    texts: list[str] = []
    places: list[tuple] = []
    chars = read = 0
    for text, where, piece_read in pieces:
        if isinstance(text, bytes):  # a plain file's chunk, checked: counted on its own, a batch of its own
            if texts or read:
                yield _batch(texts, places, separator, separator_bytes, read, errors)
                texts, places, chars, read = [], [], 0, 0
            yield Batch(text, len(text), piece_read)
            continue
        read += piece_read
        if not text:
            continue
        texts.append(text)
        places.append(where)
        chars += len(text)
        if chars >= batch_chars:
            yield _batch(texts, places, separator, separator_bytes, read, errors)
            texts, places, chars, read = [], [], 0, 0
    if texts or read:
        yield _batch(texts, places, separator, separator_bytes, read, errors)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _batch(texts: list[str], places: list[tuple], separator: str, separator_bytes: int, read: int,
           errors: str) -> Batch:
    text = separator.join(texts) + separator if texts else ""
    if text.isascii():
        return Batch(text, len(text) - separator_bytes * len(texts), read)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        if errors != "replace":
            at, offset = 0, exc.start
            while offset >= len(texts[at]) + len(separator):  # the piece that holds it
                offset -= len(texts[at]) + len(separator)
                at += 1
            raise BPEError(f"{place_of(places[at])}: a lone surrogate U+{ord(exc.object[exc.start]):04X}, which UTF-8 "
                           "cannot hold; fix the text or pass errors='replace' (--errors replace)") from None
        text = _SURROGATE.sub("\ufffd", text)
        size = len(text.encode("utf-8"))
    return Batch(text, size - separator_bytes * len(texts), read)


def documents_text(corpus: Corpus, special_tokens: Sequence[str], *, errors: str = "strict",
                   batch_chars: int | None = None, limit: int | None = None,
                   pattern: str = DEFAULT_PATTERN) -> Iterator[str]:
    """The corpus as one text in order, a batch at a time, each document followed by the separator: what
    ``bpe encode`` encodes (so the ids hold the separator's id between documents, and nowhere else).
    ``limit``: the documents that ``train_bpe`` counts with that limit (:meth:`Corpus.pieces`, whose plain
    files are cut by ``pattern``'s rule), and no more."""
    pieces = corpus.pieces(counting_tokens(special_tokens), errors=errors, limit=limit, pattern=pattern)
    ended = documents_ended(pieces, separator_of(special_tokens))
    for batch in batches(ended, "", errors=errors, batch_chars=batch_chars):
        yield batch.text


def documents_ended(pieces: Iterable[tuple[str, tuple, int]], separator: str) -> Iterator[tuple[str, tuple, int]]:
    """The pieces with the separator written after each document's last one.  A JSON line, a Parquet row or an
    iterator's string is a document; a plain text file is one too, which the reader hands over in pieces of a
    few MB (``where``: its name, ``"byte offset"``): a separator after each piece would put the separator's id
    inside the file's ids.  The counts do not care (the pieces are cut where no pre-token spans the cut), the
    ids do.  A document with no text gets no separator."""
    held: tuple[str, tuple, int] | None = None
    has_text = False
    for text, where, read in pieces:
        if held is not None:
            same = where[1] == held[1][1] == "byte offset" and where[0] == held[1][0]
            end = separator if has_text and not same else ""
            yield held[0] + end, held[1], held[2]
            has_text = has_text and same
        held = (text, where, read)
        has_text = has_text or bool(text)
    if held is not None:
        yield held[0] + (separator if has_text else ""), held[1], held[2]


@contextmanager
def text_file_of(corpus: Corpus, special_tokens: Sequence[str], folder: str | PathLike, *,
                 errors: str = "strict", limit: int | None = None, pattern: str = DEFAULT_PATTERN) -> Iterator[Path]:
    """The corpus written once as one text file in ``folder``, each document followed by the separator, and
    removed when the block ends (also on Ctrl-C): for what reads one file by byte ranges or as a whole,
    ``bpe encode`` of JSON lines or Parquet (the ids hold the separator's id between documents) and, in
    ``bpe bench``, a CS336 ``train_bpe`` function.  Its counts are the corpus's, so are its merges.
    ``limit`` and ``pattern``: :func:`documents_text`'s."""
    descriptor, name = tempfile.mkstemp(prefix=".bpe-corpus-", suffix=".txt", dir=folder)
    path = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as f:
            for text in documents_text(corpus, special_tokens, errors=errors, limit=limit, pattern=pattern):
                f.write(text.encode("utf-8"))
        yield path
    finally:
        path.unlink(missing_ok=True)


#: A batch of documents holds about this many characters: large enough that a batch's fixed costs (a task
#: sent to a worker, a call into the scanner) vanish, small enough that a batch per worker is little memory.
BATCH_CHARS = 4 * 1024 * 1024
