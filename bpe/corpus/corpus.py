"""A corpus as it comes: one text file, many files (a directory, a glob, a list), JSON lines, Parquet, an
iterator of strings or a Hugging Face ``datasets`` object, opened as one :class:`Corpus`.

Data set *names* (``--data owt``) are :mod:`bpe.data.datasets`'s, which turns a name into a path and hands
anything else here unchanged.  A corpus goes through three steps, one module each:

1. **Sources** (:func:`open_corpus`, here): what was given becomes a list of files, each with its kind,
   read from its name: ``.txt`` (or any other name) is plain text; ``.jsonl``, ``.json``, ``.ndjson``,
   also compressed (``.gz``, ``.zst``), hold one JSON object a line with the text in a named field
   (``text`` by default); ``.parquet`` holds the text in a named column.  A directory gives its files of
   those kinds, in name order; a glob, what it matches.  An ``s3://``, ``hf://`` or other URL is read
   through fsspec.  An iterator or a dataset is a source of documents in memory.
2. **Pieces** (:meth:`Corpus.pieces`, read by :mod:`bpe.corpus.sources`): texts that may each be counted on
   their own.
3. **Batches** (:mod:`bpe.corpus.batches`): the documents joined, each followed by the separator.

Then the rung's own counter of texts counts the batches as they are read
(:func:`bpe.counting.documents.count_documents`), here or on a cluster's workers
(:mod:`bpe.corpus.cluster`).  Memory holds the counts and a batch per worker, never the corpus.

A single local plain-text file is not read here at all: ``train_bpe`` gives it to the rung's
``count_pretokens`` as it always has (:attr:`Corpus.plain_file`), so its merges are unchanged.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator, Sequence
from os import PathLike
from pathlib import Path

from bpe.corpus.sources import (
    COMPRESSIONS,
    JSON_SUFFIXES,
    PARQUET_SUFFIXES,
    TEXT_COLUMN,
    Source,
    documents_of,
    is_dataset,
    is_dataset_dict,
    kind_of,
    pieces_of,
)
from bpe.corpus.text_file import check_input_file
from bpe.dependencies import optional_module
from bpe.errors import BPEError

#: The files a directory gives: those of a kind read here, compressed JSON lines included.
_DIRECTORY_SUFFIXES = (".txt", ".text", *JSON_SUFFIXES, *PARQUET_SUFFIXES)
_GLOB_MAGIC = re.compile(r"[*?\[]")


class Corpus:
    """What ``train_bpe`` counts: files (``sources``), or documents handed over in memory (``documents``: an
    iterator of strings or of lists of them, or a ``datasets`` object), and the field or column that
    holds the text."""

    def __init__(self, sources: Sequence[Source] = (), documents=None, text_column: str = TEXT_COLUMN,
                 label: str | None = None):
        self.sources, self.documents, self.text_column = list(sources), documents, text_column
        self.label = label or (self.sources[0].location if len(self.sources) == 1 else
                               f"{len(self.sources)} files" if self.sources else "the documents")

    @property
    def plain_file(self) -> Path | None:
        """The file, where the corpus is one local uncompressed text file: the path every rung counts as it
        always has."""
        if self.documents is None and len(self.sources) == 1:
            source = self.sources[0]
            if source.kind == "text" and source.compression is None and not source.remote:
                return Path(source.location)
        return None

    @property
    def plain_files(self) -> list[Path] | None:
        """The files, where every one is a local uncompressed text file (what a reader of files takes as they
        are: ``bpe encode`` encodes them in place, the bench's file peers read them); else ``None``."""
        if self.documents is not None or not self.sources:
            return None
        if any(s.kind != "text" or s.compression is not None or s.remote for s in self.sources):
            return None
        return [Path(source.location) for source in self.sources]

    @property
    def size(self) -> int | None:
        """The files' bytes on disk; ``None`` for documents in memory (their size is known once read)."""
        return None if self.documents is not None else sum(source.size for source in self.sources)

    @property
    def text_size(self) -> int | None:
        """The text's own bytes where the files hold nothing else (plain text, uncompressed): their size;
        ``None`` where they are JSON lines, Parquet or compressed, whose text is counted as it is read."""
        if self.documents is not None or not self.sources:
            return None
        plain = all(source.kind == "text" and source.compression is None for source in self.sources)
        return self.size if plain else None

    def check(self) -> "Corpus":
        """Every package the reading needs is here, else one line saying what to install (before a byte is
        read)."""
        for source in self.sources:
            if source.remote:
                optional_module("fsspec", f"reading {source.location}", "corpora")
            if source.kind == "parquet":
                optional_module("pyarrow.parquet", f"reading Parquet ({source.location})", "corpora", "pyarrow")
            if source.compression == "zstd":
                optional_module("zstandard", f"reading zstd-compressed {source.location}", "corpora")
        return self

    def pieces(self, special_tokens: Sequence[str], *, errors: str = "strict", limit: int | None = None,
               raw: bool = False, pattern: str = "gpt2") -> Iterator[tuple[str | bytes, tuple, int]]:
        """``(text, where, read)`` for each piece in order: a text counted on its own, where it came from
        (for a message), and the bytes of the source read for it (the progress).  ``limit``: stop once the
        pieces hold that many bytes of text, at a document's end (a plain file: at its first safe cut).
        ``raw``: a plain file's chunks as their UTF-8 bytes, checked but not decoded (for a counter of bytes).
        ``pattern``: the pattern the pieces will be split by, whose rule cuts a plain file's chunks."""
        if self.documents is not None:
            readers = [documents_of(self.documents, self.text_column)]
        else:
            readers = (pieces_of(source, special_tokens, self.text_column, errors, raw=raw, pattern=pattern)
                       for source in self.sources)
        used = 0
        for reader in readers:
            for text, where, read in reader:
                yield text, where, read
                if limit is not None:
                    used += len(text) if isinstance(text, bytes) or text.isascii() else \
                        len(text.encode("utf-8", "surrogatepass"))
                    if used >= limit:
                        return

    def describe(self) -> str:
        """A few words for a header line: ``3 files (1,234,567 bytes)``, ``the documents``; files whose size
        is not their text's (Parquet, JSON lines, compressed) are said so: ``a.parquet (52,000 bytes on
        disk; its text's bytes counted as it is read)``."""
        if self.size is None:
            return self.label
        if self.text_size is None:
            return f"{self.label} ({self.size:,} bytes on disk; its text's bytes counted as it is read)"
        return f"{self.label} ({self.size:,} bytes)"


def open_corpus(given, *, text_column: str = TEXT_COLUMN) -> Corpus:
    """The :class:`Corpus` of what ``train_bpe`` was given: a path (a file, a directory, a glob, a URL), a list
    of them, a ``datasets`` object, or a :class:`Corpus` (returned as it is).  Raises one
    :class:`~bpe.errors.BPEError` for a path that is not there, a glob that matches nothing, a
    directory without a file of a known kind, or a package the reading needs and lacks."""
    if isinstance(given, Corpus):
        return given.check()
    if not isinstance(text_column, str) or not text_column:
        raise BPEError(f"text_column must name a field or column, got {text_column!r}")
    if is_dataset(given) or is_dataset_dict(given):
        return Corpus(documents=given, text_column=text_column, label="the dataset")
    if isinstance(given, (str, PathLike)):
        given = [given]
    elif not isinstance(given, (list, tuple)) or not given:
        raise BPEError(f"input_path must be a file path, a directory, a glob, a list of them or a dataset, "
                       f"got {given!r} (documents in memory: bpe.train_bpe_from_iterator)")
    sources = []
    for item in given:
        if not isinstance(item, (str, PathLike)):
            raise BPEError(f"input_path must be a file path, a directory, a glob, a list of them or a dataset, "
                           f"got {item!r} in the list")
        sources += _sources(os.fspath(item))
    return Corpus(sources, text_column=text_column).check()


def _sources(location: str) -> list[Source]:
    """The files one location stands for, each with its kind and size."""
    if "://" in location:
        return _remote_sources(location)
    path = Path(location)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                       and _within(p.name.lower(), _DIRECTORY_SUFFIXES))
        if not found:
            raise BPEError(f"no file of text, JSON lines or Parquet in the directory {path} (names ending "
                           f"{', '.join(_DIRECTORY_SUFFIXES)}, also .gz or .zst)")
        return [_source(str(p), p.stat().st_size) for p in found]
    if not path.exists() and _GLOB_MAGIC.search(location):
        matches = sorted(m for m in glob.glob(location, recursive=True) if Path(m).is_file())
        if not matches:
            raise BPEError(f"no file matches {location!r}")
        return [_source(m, os.path.getsize(m)) for m in matches]
    kind, compression = kind_of(path.name)
    if kind == "text" and compression is None:
        return [_source(location, check_input_file(path).stat().st_size)]
    check_input_file(path)
    return [_source(location, path.stat().st_size)]


def _within(name: str, suffixes: Sequence[str]) -> bool:
    for suffix in COMPRESSIONS:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.endswith(tuple(suffixes))


def _source(location: str, size: int) -> Source:
    kind, compression = kind_of(location.rsplit("/", 1)[-1])
    if kind == "text" and compression is not None:
        raise BPEError(f"{location}: compressed plain text is not read as it is; decompress it first, or give "
                       "the documents as JSON lines (.jsonl.gz, .jsonl.zst)")
    return Source(location, kind, compression, size)


def _remote_sources(url: str) -> list[Source]:
    """The files a URL stands for (one file, a directory, or a glob), listed through fsspec."""
    fsspec = optional_module("fsspec", f"reading {url}", "corpora")
    try:
        fs, path = fsspec.core.url_to_fs(url)
        if _GLOB_MAGIC.search(path):
            paths = sorted(fs.glob(path))
        elif fs.isdir(path):
            paths = sorted(p for p in fs.find(path) if _within(p.lower(), _DIRECTORY_SUFFIXES))
        else:
            paths = [path]
        sizes = [fs.size(p) or 0 for p in paths]
    except ImportError as exc:  # the protocol's own package (s3fs, gcsfs, huggingface_hub)
        raise BPEError(f"reading {url} needs a package this Python lacks: {exc}") from None
    except FileNotFoundError:
        raise BPEError(f"input file not found: {url}") from None
    except OSError as exc:
        raise BPEError(f"cannot read {url}: {exc}") from None
    if not paths:
        raise BPEError(f"no file matches {url!r}")
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return [_source(fs.unstrip_protocol(p) if protocol != "file" else p, size) for p, size in zip(paths, sizes)]
