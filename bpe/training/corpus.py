"""A corpus as it comes: one text file, many files (a directory, a glob, a list), JSON lines, Parquet, an
iterator of strings or a Hugging Face ``datasets`` object, read as a stream and counted by the rung.

Why it lives in ``bpe/training``: ``train_bpe`` reads it (a file path is one form of corpus among these), and
this package holds everything ``train_bpe`` runs, so training still needs nothing from ``bpe/lab`` or
``bpe/data``.  Data set *names* (``--data owt``) stay in :mod:`bpe.data.datasets`, which turns a name
into a path and hands anything else here unchanged; ``bpe encode`` (:mod:`bpe.io.encode`) reads the
same forms through :func:`documents_text`.

1. **Sources** (:func:`open_corpus`): what was given becomes a list of files, each with its kind, read from
   its name: ``.txt`` (or any other name) is plain text; ``.jsonl``, ``.json``, ``.ndjson``, also
   compressed (``.gz``, ``.zst``), hold one JSON object a line with the text in a named field (``text``
   by default); ``.parquet`` holds the text in a named column.  A directory gives its files of those
   kinds, in name order; a glob, what it matches.  An ``s3://``, ``hf://`` or other URL is read
   through fsspec.  An iterator or a dataset is a source of documents in memory.
2. **Documents** (:meth:`Corpus.pieces`): each reader yields texts that may be counted each on its own:
   a JSON record's or a Parquet row's text, an iterator's string, or a plain file cut where no
   pre-token spans the cut (:mod:`bpe.training.chunking`, v3's rule), so the pieces' counts sum to the
   file's.  Every bad input is one :class:`~bpe.errors.BPEError` naming the file and the line or row.
3. **Batches** (:func:`batches`): the documents joined, each followed by the document separator (the first
   special token the user names: ``<|endoftext|>`` by default), up to :data:`BATCH_CHARS`.  The counter
   splits on it, so no pre-token and no merge spans two documents, and a plain file's documents given
   as JSON lines, Parquet rows or an iterator's strings count exactly as the file does.
4. **Counting** (:func:`count_documents`): the batches, as they are read, by the rung's own counter of a
   stream of texts (:func:`bpe.training.rung.texts_counter`): the plain counter (v1, v2), the pool
   (v3-v8: each worker takes the next batch), v9's compiled scanner on threads.  Memory holds the
   counts and a batch per worker, never the corpus.

A single local plain-text file is not read here at all: ``train_bpe`` gives it to the rung's
``count_pretokens`` as it always has (:attr:`Corpus.plain_file`), so its merges are unchanged.

Without special tokens the documents are still kept apart, by :data:`~bpe.defaults.SPECIAL_TOKEN` used as
a separator only (the counter splits on it; it is no token of the vocab).
"""

from __future__ import annotations

import glob
import gzip
import io
import json
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

from bpe.defaults import SPECIAL_TOKEN
from bpe.dependencies import optional_module
from bpe.errors import BPEError
from bpe.training.chunking import boundaries_of, chunks_of
from bpe.training.pretokenize import check_input_file, decode_utf8
from bpe.training.rung import texts_counter

#: The text field (JSON) or column (Parquet, a dataset) read when none is named.
TEXT_COLUMN = "text"
#: A batch of documents holds about this many characters: large enough that a batch's fixed costs (a task
#: sent to a worker, a call into the scanner) vanish, small enough that a batch per worker is little memory.
BATCH_CHARS = 4 * 1024 * 1024
#: A dataset or a Parquet row group is read this many rows at a time.
ROWS_AT_ONCE = 1000

_COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
_PARQUET_SUFFIXES = (".parquet", ".pq")
#: The files a directory gives: those of a kind read here, compressed JSON lines included.
_DIRECTORY_SUFFIXES = (".txt", ".text", *_JSON_SUFFIXES, *_PARQUET_SUFFIXES)
_GLOB_MAGIC = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Source:
    """One file of a corpus: where it is (a path, or a URL fsspec reads), its kind (``text``, ``jsonl``,
    ``parquet``), its compression (``gzip``, ``zstd``, or ``None``) and its size on disk."""

    location: str
    kind: str
    compression: str | None = None
    size: int = 0

    @property
    def remote(self) -> bool:
        return "://" in self.location


def kind_of(name: str) -> tuple[str, str | None]:
    """``(kind, compression)`` read off a file's name.

    >>> kind_of("shard-00.jsonl.zst"), kind_of("train.parquet"), kind_of("notes.txt"), kind_of("corpus.en")
    (('jsonl', 'zstd'), ('parquet', None), ('text', None), ('text', None))
    """
    lower = name.lower()
    compression = None
    for suffix, method in _COMPRESSIONS.items():
        if lower.endswith(suffix):
            compression, lower = method, lower[: -len(suffix)]
    if lower.endswith(_PARQUET_SUFFIXES):
        return "parquet", compression
    if lower.endswith(_JSON_SUFFIXES):
        return "jsonl", compression
    return "text", compression


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
    def size(self) -> int | None:
        """The files' bytes on disk; ``None`` for documents in memory (their size is known once read)."""
        return None if self.documents is not None else sum(source.size for source in self.sources)

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
               raw: bool = False) -> Iterator[tuple[str | bytes, tuple, int]]:
        """``(text, where, read)`` for each piece in order: a text counted on its own, where it came from
        (for a message), and the bytes of the source read for it (the progress).  ``limit``: stop once the
        pieces hold that many bytes of text, at a document's end (a plain file: at its first safe cut).
        ``raw``: a plain file's chunks as their UTF-8 bytes, checked but not decoded (for a counter of bytes)."""
        if self.documents is not None:
            readers = [_documents_of(self.documents, self.text_column)]
        else:
            readers = (_pieces_of(source, special_tokens, self.text_column, errors, raw=raw)
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
        """A few words for a header line: ``3 files (1,234,567 bytes)``, ``the documents``."""
        return self.label if self.size is None else f"{self.label} ({self.size:,} bytes)"


def is_dataset(obj) -> bool:
    """Whether ``obj`` looks like a Hugging Face ``datasets`` object (duck-typed: ``datasets`` is not a
    dependency): it names its columns and iterates in batches."""
    return hasattr(obj, "column_names") and callable(getattr(obj, "iter", None))


def open_corpus(given, *, text_column: str = TEXT_COLUMN) -> Corpus:
    """The :class:`Corpus` of what ``train_bpe`` was given: a path (a file, a directory, a glob, a URL), a list
    of them, a ``datasets`` object, or a :class:`Corpus` (returned as it is).  Raises one
    :class:`~bpe.errors.BPEError` for a path that is not there, a glob that matches nothing, a
    directory without a file of a known kind, or a package the reading needs and lacks."""
    if isinstance(given, Corpus):
        return given.check()
    if not isinstance(text_column, str) or not text_column:
        raise BPEError(f"text_column must name a field or column, got {text_column!r}")
    if is_dataset(given) or _is_dataset_dict(given):
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


def _is_dataset_dict(obj) -> bool:
    return isinstance(obj, dict) and isinstance(getattr(obj, "column_names", None), dict)


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
    for suffix in _COMPRESSIONS:
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


# --- reading ------------------------------------------------------------------------------------------


def _opened(source: Source):
    """The source's bytes as a binary file object (seekable): a local file, or fsspec's for a URL."""
    try:
        if source.remote:
            fsspec = optional_module("fsspec", f"reading {source.location}", "corpora")
            return fsspec.open(source.location, "rb").open()
        return open(source.location, "rb")
    except FileNotFoundError:
        raise BPEError(f"input file not found: {source.location}") from None
    except OSError as exc:
        raise BPEError(f"cannot read {source.location}: {exc.strerror or exc}") from None


def _decompressed(raw, source: Source):
    """The file's bytes decompressed as it says (``.gz``, ``.zst``), buffered for reading line by line."""
    if source.compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if source.compression == "zstd":
        zstandard = optional_module("zstandard", f"reading zstd-compressed {source.location}", "corpora")
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True))
    return raw


def _pieces_of(source: Source, special_tokens: Sequence[str], text_column: str, errors: str,
               span: tuple[int, int] | None = None, raw: bool = False) -> Iterator[tuple[str | bytes, tuple, int]]:
    """The pieces of one source; ``span``: only bytes ``start:stop`` of a plain text file (two safe cuts)."""
    if source.kind == "parquet":
        return _parquet_pieces(source, text_column)
    if source.kind == "jsonl":
        return _jsonl_pieces(source, text_column, errors)
    return _text_pieces(source, special_tokens, errors, span or (0, source.size), raw)


def source_pieces(source: Source, special_tokens: Sequence[str], *, text_column: str = TEXT_COLUMN,
                  errors: str = "strict", span: tuple[int, int] | None = None,
                  raw: bool = False) -> Iterator[tuple[str | bytes, tuple, int]]:
    """:meth:`Corpus.pieces` of one source, or of a span of a plain text file cut safely (what a cluster's
    task counts: :mod:`bpe.training.cluster`)."""
    return _pieces_of(source, special_tokens, text_column, errors, span, raw)


def text_spans(source: Source, special_tokens: Sequence[str], spans: int, *,
               errors: str = "strict") -> list[tuple[int, int]]:
    """A plain text file cut safely into up to ``spans`` byte ranges (:func:`bpe.training.chunking.boundaries_of`)."""
    with _opened(source) as f:
        bounds = boundaries_of(f, source.size, special_tokens, spans, errors=errors)
    return [(start, stop) for start, stop in zip(bounds[:-1], bounds[1:]) if stop > start]


def _text_pieces(source: Source, special_tokens: Sequence[str], errors: str, span: tuple[int, int],
                 raw: bool = False) -> Iterator[tuple[str | bytes, tuple, int]]:
    """A plain text file (or a span of it) in safely cut chunks (:func:`bpe.training.chunking.chunks_of`),
    each decoded; or, ``raw``, as bytes, decoded only to be checked where it is not ASCII (with
    ``errors="replace"``, the bytes of what Python's decoder makes of it)."""
    first, end = span
    with _opened(source) as f:
        for start, stop in chunks_of(f, end, special_tokens, errors=errors, start=first):
            f.seek(start)
            data = f.read(stop - start)
            if len(data) != stop - start:
                raise BPEError(f"{source.location} changed while it was read: {len(data):,} bytes at offset "
                               f"{start:,}, {stop - start:,} expected")
            where = (source.location, "byte offset", start)
            if raw and data.isascii():  # ASCII is UTF-8: nothing to check
                yield data, where, stop - start
                continue
            text = decode_utf8(data, offset=start, errors=errors, source=source.location)
            yield (text if not raw else data if errors == "strict" else text.encode("utf-8")), where, stop - start


def _jsonl_pieces(source: Source, field: str, errors: str) -> Iterator[tuple[str, tuple, int]]:
    """One JSON object a line; its ``field`` is a document.  Blank lines are skipped."""
    with _opened(source) as raw:
        stream = _decompressed(raw, source)
        told = 0
        try:
            for number, line in enumerate(stream, 1):
                if not line.strip():
                    continue
                where = (source.location, "line", number)
                try:
                    record = json.loads(line.decode("utf-8", errors))
                except UnicodeDecodeError as exc:
                    raise BPEError(f"{_place(where)}: invalid UTF-8 (byte 0x{line[exc.start]:02x}); fix the file "
                                   "or pass errors='replace' (--errors replace)") from None
                except ValueError as exc:
                    raise BPEError(f"{_place(where)}: not JSON ({exc}); each line must be one JSON "
                                   "object") from None
                if not isinstance(record, dict):
                    raise BPEError(f"{_place(where)}: a JSON {_json_kind(record)}, not an object with a "
                                   f"{field!r} field")
                if field not in record:
                    fields = ", ".join(map(repr, list(record)[:8])) or "none"
                    raise BPEError(f"{_place(where)}: no field {field!r} (its fields: {fields}); name the "
                                   "text's field with --text-column")
                text = record[field]
                if not isinstance(text, str):
                    raise BPEError(f"{_place(where)}: field {field!r} is a JSON {_json_kind(text)}, not a string")
                position = raw.tell()
                yield text, where, position - told
                told = position
        except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt compressed stream
            raise BPEError(f"{source.location}: cannot read it as {source.compression or 'text'}: {exc}") from None
        except _zstd_errors() as exc:
            raise BPEError(f"{source.location}: cannot read it as zstd: {exc}") from None
        if source.size > told:
            yield "", (source.location, "end", 0), source.size - told


def _zstd_errors() -> tuple:
    try:
        import zstandard  # noqa: PLC0415 (an optional dependency)
    except ImportError:
        return ()
    return (zstandard.ZstdError,)


def _json_kind(value) -> str:
    """A JSON value's kind in JSON's words: ``'null'``, ``'number'``, ``'list'``..."""
    kinds = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string", list: "list",
             dict: "object"}
    return kinds.get(type(value), type(value).__name__)


def _parquet_pieces(source: Source, column: str) -> Iterator[tuple[str, tuple, int]]:
    """The ``column`` of a Parquet file, read a row group at a time (only that column)."""
    parquet = optional_module("pyarrow.parquet", f"reading Parquet ({source.location})", "corpora", "pyarrow")
    pyarrow = optional_module("pyarrow", f"reading Parquet ({source.location})", "corpora")
    with _opened(source) as raw:
        try:
            table = parquet.ParquetFile(raw)
        except (pyarrow.ArrowException, OSError) as exc:
            raise BPEError(f"{source.location}: not a Parquet file ({exc})") from None
        schema = table.schema_arrow
        if column not in schema.names:
            names = ", ".join(map(repr, schema.names[:8])) or "none"
            raise BPEError(f"{source.location}: no column {column!r} (its columns: {names}); name the text's "
                           "column with --text-column")
        kind = schema.field(column).type
        # A column of type null is what an empty shard's writer often leaves: no rows, or only nulls (refused
        # at the first row below).
        if not (pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind) or pyarrow.types.is_null(kind)
                or getattr(pyarrow.types, "is_string_view", lambda _: False)(kind)):
            raise BPEError(f"{source.location}: column {column!r} holds {kind}, not strings")
        row, told, groups = 0, 0, table.num_row_groups
        for group in range(groups):
            try:
                values = table.read_row_group(group, columns=[column]).column(0).to_pylist()
            except (pyarrow.ArrowException, OSError) as exc:
                raise BPEError(f"{source.location}: row group {group} cannot be read ({exc})") from None
            read = source.size * (group + 1) // groups - told  # the progress: the file's share of this group
            told += read
            for text in values:
                row += 1
                if text is None:
                    raise BPEError(f"{source.location}, row {row:,}: column {column!r} is null, not a string")
                yield text, (source.location, "row", row), read
                read = 0
        if source.size > told:
            yield "", (source.location, "end", 0), source.size - told


def _documents_of(documents, column: str) -> Iterator[tuple[str, tuple, int]]:
    """Documents in memory: a ``datasets`` object's ``column``, or an iterator's strings (or lists of them,
    as HF's ``train_from_iterator`` takes batches).  ``read`` is 0: no file is read."""
    if _is_dataset_dict(documents):
        raise BPEError(f"a DatasetDict holds splits ({', '.join(documents)}): give one, "
                       f"e.g. dataset[{next(iter(documents))!r}]")
    if is_dataset(documents):
        yield from _dataset_documents(documents, column)
        return
    for number, item in enumerate(documents, 1):
        if isinstance(item, str):
            yield item, ("the iterator", "item", number), 0
        elif isinstance(item, (list, tuple)):
            for position, text in enumerate(item):
                if not isinstance(text, str):
                    raise BPEError(f"item {number:,} of the iterator holds a {type(text).__name__} at position "
                                   f"{position}, not a string")
                yield text, ("the iterator", "item", number), 0
        else:
            raise BPEError(f"item {number:,} of the iterator is a {type(item).__name__}, not a string (or a list of "
                           "strings)")


def _dataset_documents(dataset, column: str) -> Iterator[tuple[str, tuple, int]]:
    names = dataset.column_names
    if names is not None and column not in names:
        shown = ", ".join(map(repr, list(names)[:8])) or "none"
        raise BPEError(f"the dataset has no column {column!r} (its columns: {shown}); name the text's column "
                       "with text_column= (--text-column)")
    if names is not None and hasattr(dataset, "select_columns"):
        dataset = dataset.select_columns([column])  # the other columns are never read
    row = 0
    for batch in dataset.iter(batch_size=ROWS_AT_ONCE):
        if column not in batch:
            raise BPEError(f"the dataset, row {row + 1:,}: no column {column!r}")
        for text in batch[column]:
            row += 1
            if not isinstance(text, str):
                raise BPEError(f"the dataset, row {row:,}: column {column!r} holds a {type(text).__name__}, "
                               "not a string")
            yield text, ("the dataset", "row", row), 0


def _place(where: tuple) -> str:
    """``where`` in words: ``shard.jsonl, line 12``, ``item 3 of the iterator``."""
    source, unit, number = where
    if source == "the iterator":
        return f"item {number:,} of the iterator"
    return f"{source}, {unit} {number:,}"


# --- batches ------------------------------------------------------------------------------------------


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
            raise BPEError(f"{_place(places[at])}: a lone surrogate U+{ord(exc.object[exc.start]):04X}, which UTF-8 "
                           "cannot hold; fix the text or pass errors='replace' (--errors replace)") from None
        text = _SURROGATE.sub("\ufffd", text)
        size = len(text.encode("utf-8"))
    return Batch(text, size - separator_bytes * len(texts), read)


# --- counting -----------------------------------------------------------------------------------------


def count_documents(rung, corpus: Corpus, special_tokens: Sequence[str], *, workers: int | None = None,
                    errors: str = "strict", limit: int | None = None,
                    on_bytes: Callable[[int], None] | None = None):
    """The pre-token counts of ``corpus``'s documents, counted by ``rung``'s counter of a stream of texts as
    they are read; ``(counts, text bytes counted)``.  ``on_bytes(n)`` as each batch is counted: the bytes of
    the sources read for it (of the documents, for documents in memory)."""
    read_for: dict[int, int] = {}  # the batches given to the counter and not yet counted: their bytes read
    used = [0]

    def texts() -> Iterator[str | bytes]:
        pieces = corpus.pieces(counting_tokens(special_tokens), errors=errors, limit=limit, raw=counts_bytes(rung))
        for index, batch in enumerate(batches(pieces, separator_of(special_tokens), errors=errors)):
            # documents in memory: no file is read, the progress is their bytes
            read_for[index] = batch.text_bytes if corpus.documents is not None else batch.read
            used[0] += batch.text_bytes
            yield batch.text

    def on_text(index: int) -> None:
        read = read_for.pop(index, 0)
        if on_bytes is not None and read:
            on_bytes(read)

    counts = texts_counter(rung)(texts(), counting_tokens(special_tokens), workers=workers, on_text=on_text)
    return counts, used[0]


def counts_bytes(rung) -> bool:
    """Whether the rung's counter of texts takes a plain file's chunks as bytes (``COUNTS_BYTES``: v9, whose
    scanner reads UTF-8; a chunk then skips being decoded into a ``str`` and encoded back)."""
    return bool(getattr(rung, "COUNTS_BYTES", False))


def documents_text(corpus: Corpus, special_tokens: Sequence[str], *, errors: str = "strict",
                   batch_chars: int | None = None) -> Iterator[str]:
    """The corpus as one text in order, a batch at a time, each document followed by the separator: what
    ``bpe encode`` encodes (so the ids hold the separator's id between documents)."""
    pieces = corpus.pieces(counting_tokens(special_tokens), errors=errors)
    for batch in batches(pieces, separator_of(special_tokens), errors=errors, batch_chars=batch_chars):
        yield batch.text



@contextmanager
def text_file_of(corpus: Corpus, special_tokens: Sequence[str], folder: str | PathLike, *,
                 errors: str = "strict") -> Iterator[Path]:
    """The corpus written once as one text file in ``folder``, each document followed by the separator, and
    removed when the block ends (also on Ctrl-C): for the commands that work on a file's byte ranges,
    ``bpe bench`` (every candidate's runs read the same file) and ``bpe encode`` (the ids hold the
    separator's id between documents).  Its counts are the corpus's, so are its merges."""
    descriptor, name = tempfile.mkstemp(prefix=".bpe-corpus-", suffix=".txt", dir=folder)
    path = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as f:
            for text in documents_text(corpus, special_tokens, errors=errors):
                f.write(text.encode("utf-8"))
        yield path
    finally:
        path.unlink(missing_ok=True)
