"""A corpus's files, each a source of pieces of text: its kind read off its name, its bytes opened (a local
file, or a URL through fsspec) and decompressed, and the readers that cut it into pieces.

A piece is a text that may be counted on its own: a JSON record's or a Parquet row's text, a dataset's or an
iterator's document, or a plain file cut where no pre-token spans the cut (:mod:`bpe.split.chunking`, v3's
rule), so the pieces' counts sum to the file's.  Each comes with where it was found (for a message) and
the bytes of the file read for it (for the progress).  Every bad input is one
:class:`~bpe.errors.BPEError` naming the file and the line or row.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bpe.corpus.text_file import decode_utf8
from bpe.dependencies import optional_module
from bpe.errors import BPEError
from bpe.split.chunking import boundaries_of, chunks_of
from bpe.split.patterns import DEFAULT_PATTERN, cuts_of

#: The text field (JSON) or column (Parquet, a dataset) read when none is named.
TEXT_COLUMN = "text"
#: A dataset or a Parquet row group is read this many rows at a time.
ROWS_AT_ONCE = 1000
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd", ".zstd": "zstd"}


JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet", ".pq")


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
    for suffix, method in COMPRESSIONS.items():
        if lower.endswith(suffix):
            compression, lower = method, lower[: -len(suffix)]
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet", compression
    if lower.endswith(JSON_SUFFIXES):
        return "jsonl", compression
    return "text", compression


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
        return io.BufferedReader(_ZstdFrames(raw, zstandard.ZstdDecompressor()))
    return raw


class _ZstdFrames(io.RawIOBase):
    """zstd frames one after another, decompressed; a stream that ends inside a frame is an ``EOFError``, as
    ``gzip`` says of a cut member.  (zstandard's own ``stream_reader`` ends quietly there: a file cut short
    would train on what it held.)  The input is fed a little at a time, so the output of one feed stays
    small."""

    FEED = 1 << 14

    def __init__(self, raw, decompressor):
        self._raw, self._decompressor = raw, decompressor
        self._frame = None  # the frame being read: a decompressobj, None between frames
        self._out = b""
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while self._at == len(self._out):
            data = self._raw.read(self.FEED)
            if not data:
                if self._frame is not None:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
                return 0
            self._out, self._at = self._feed(data), 0
        n = min(len(buffer), len(self._out) - self._at)
        buffer[:n] = self._out[self._at:self._at + n]
        self._at += n
        return n

    def _feed(self, data: bytes) -> bytes:
        parts = []
        while data:
            if self._frame is None:
                self._frame = self._decompressor.decompressobj()
            parts.append(self._frame.decompress(data))
            data = b""
            if self._frame.eof:  # a frame ended: what follows it starts the next
                data, self._frame = self._frame.unused_data, None
        return b"".join(parts)


def pieces_of(source: Source, special_tokens: Sequence[str], text_column: str, errors: str,
              span: tuple[int, int] | None = None, raw: bool = False,
              pattern: str = DEFAULT_PATTERN) -> Iterator[tuple[str | bytes, tuple, int]]:
    """The pieces of one source; ``span``: only bytes ``start:stop`` of a plain text file (two safe cuts);
    ``pattern``: the one the pieces will be split by, whose rule says where a plain text file may be cut."""
    if source.kind == "parquet":
        return _parquet_pieces(source, text_column)
    if source.kind == "jsonl":
        return _jsonl_pieces(source, text_column, errors)
    return _text_pieces(source, special_tokens, errors, span or (0, source.size), raw, cuts_of(pattern))


def source_pieces(source: Source, special_tokens: Sequence[str], *, text_column: str = TEXT_COLUMN,
                  errors: str = "strict", span: tuple[int, int] | None = None,
                  raw: bool = False) -> Iterator[tuple[str | bytes, tuple, int]]:
    """:meth:`Corpus.pieces` of one source, or of a span of a plain text file cut safely (what a cluster's
    task counts: :mod:`bpe.corpus.cluster`)."""
    return pieces_of(source, special_tokens, text_column, errors, span, raw)


def text_spans(source: Source, special_tokens: Sequence[str], spans: int, *,
               errors: str = "strict") -> list[tuple[int, int]]:
    """A plain text file cut safely into up to ``spans`` byte ranges (:func:`bpe.split.chunking.boundaries_of`)."""
    with _opened(source) as f:
        bounds = boundaries_of(f, source.size, special_tokens, spans, errors=errors)
    return [(start, stop) for start, stop in zip(bounds[:-1], bounds[1:]) if stop > start]


def _text_pieces(source: Source, special_tokens: Sequence[str], errors: str, span: tuple[int, int],
                 raw: bool = False, cuts: str = "gpt2") -> Iterator[tuple[str | bytes, tuple, int]]:
    """A plain text file (or a span of it) in safely cut chunks (:func:`bpe.split.chunking.chunks_of`),
    each decoded; or, ``raw``, as bytes, decoded only to be checked where it is not ASCII (with
    ``errors="replace"``, the bytes of what Python's decoder makes of it)."""
    first, end = span
    with _opened(source) as f:
        for start, stop in chunks_of(f, end, special_tokens, errors=errors, start=first, cuts=cuts):
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
                    raise BPEError(f"{place_of(where)}: invalid UTF-8 (byte 0x{line[exc.start]:02x}); fix the file "
                                   "or pass errors='replace' (--errors replace)") from None
                except ValueError as exc:
                    raise BPEError(f"{place_of(where)}: not JSON ({exc}); each line must be one JSON "
                                   "object") from None
                if not isinstance(record, dict):
                    raise BPEError(f"{place_of(where)}: a JSON {_json_kind(record)}, not an object with a "
                                   f"{field!r} field")
                if field not in record:
                    fields = ", ".join(map(repr, list(record)[:8])) or "none"
                    raise BPEError(f"{place_of(where)}: no field {field!r} (its fields: {fields}); name the "
                                   "text's field with --text-column")
                text = record[field]
                if not isinstance(text, str):
                    raise BPEError(f"{place_of(where)}: field {field!r} is a JSON {_json_kind(text)}, not a string")
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


def documents_of(documents, column: str) -> Iterator[tuple[str, tuple, int]]:
    """Documents in memory: a ``datasets`` object's ``column``, or an iterator's strings (or lists of them,
    as HF's ``train_from_iterator`` takes batches).  ``read`` is 0: no file is read."""
    if is_dataset_dict(documents):
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


def place_of(where: tuple) -> str:
    """``where`` in words: ``shard.jsonl, line 12``, ``item 3 of the iterator``."""
    source, unit, number = where
    if source == "the iterator":
        return f"item {number:,} of the iterator"
    return f"{source}, {unit} {number:,}"


def is_dataset(obj) -> bool:
    """Whether ``obj`` looks like a Hugging Face ``datasets`` object (duck-typed: ``datasets`` is not a
    dependency): it names its columns and iterates in batches."""
    return hasattr(obj, "column_names") and callable(getattr(obj, "iter", None))


def is_dataset_dict(obj) -> bool:
    return isinstance(obj, dict) and isinstance(getattr(obj, "column_names", None), dict)
