"""A text file, checked and read: the one check of an input path, the one line for bytes that are not
UTF-8, and the file read one safely cut chunk at a time.

Every way of counting a plain text file reads it through here (the plain counter, the pool's chunks,
v9's threads, ``bpe encode``), so a missing file, a directory, a FIFO or a binary file gets the same one
line from each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from bpe.errors import ArgumentError, BPEError
from bpe.split.chunking import iter_chunks


def decode_utf8(data: bytes, *, offset: int = 0, errors: str = "strict", source: str = "input") -> str:
    """Decode ``data`` as UTF-8; a bad byte becomes a :class:`BPEError` naming its file offset
    (:func:`not_utf8`)."""
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise not_utf8(data, exc.start, offset, source) from None


def not_utf8(data: bytes, start: int, offset: int, source: str) -> BPEError:
    """The error for ``data`` (the file's bytes from ``offset``), which is not UTF-8 at ``data[start]``.

    A NUL byte among these bytes says the file is binary (a gzip, an image: text has none), and decoding it
    with U+FFFD would train on noise, so that error suggests no ``errors="replace"``.  Otherwise the error
    names the option to replace the bad bytes, as a parameter for a library call and as the flag of the
    commands that take it (:class:`~bpe.errors.ArgumentError`).

    >>> print(not_utf8(b"\\x1f\\x8b\\x08\\x00", 1, 0, "a.gz"))  # doctest: +NORMALIZE_WHITESPACE
    a.gz looks like a binary file, not text: it has NUL bytes and is not UTF-8 at byte offset 1 (byte 0x8b);
    give a UTF-8 text file (decompress or convert it first)
    >>> print(not_utf8(b"hi \\xff", 3, 100, "a.txt").flagged)  # doctest: +NORMALIZE_WHITESPACE
    a.txt: invalid UTF-8 at byte offset 103 (byte 0xff); fix the file or pass --errors replace (train and
    encode take it: bad bytes become U+FFFD)
    """
    where = f"at byte offset {offset + start} (byte 0x{data[start]:02x})"
    if b"\0" in data:
        return BPEError(f"{source} looks like a binary file, not text: it has NUL bytes and is not UTF-8 {where}; "
                        "give a UTF-8 text file (decompress or convert it first)")
    problem = f"{source}: invalid UTF-8 {where}; fix the file or pass"
    return ArgumentError(f"{problem} errors='replace'",
                         f"{problem} --errors replace (train and encode take it: bad bytes become U+FFFD)")


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


def read_texts(
    path: str | Path, special_tokens: Sequence[str], *, errors: str = "strict", end: int | None = None,
    on_bytes: Callable[[int], None] | None = None, cuts: str = "gpt2",
) -> Iterator[str]:
    """The file's text (or its first ``end`` bytes), decoded one safely cut chunk at a time.

    The chunks are cut where :mod:`bpe.split.chunking` says no pre-token can span the cut, so the
    pre-tokens of the chunks are exactly those of the whole text while memory holds one chunk (a few
    MB), not the file; ``cuts`` names the pattern's rule (:func:`bpe.split.patterns.cuts_of`).  ``on_bytes(n)``
    is called once the caller is done with a chunk of ``n`` bytes.  The path is checked only when no ``end``
    is given: a caller that found the end (:func:`bpe.training.train.train_bpe`) checked it.
    """
    path = check_input_file(path) if end is None else Path(path)
    if end is None and path.stat().st_size == 0:
        # Files like /proc/cpuinfo report size 0 yet have content: read them to the end (they are small).
        with open(path, "rb") as f:
            data = f.read()
        yield decode_utf8(data, errors=errors, source=str(path))
        if on_bytes is not None and data:
            on_bytes(len(data))
        return
    with open(path, "rb") as f:
        for start, stop in iter_chunks(path, special_tokens, end=end, errors=errors, cuts=cuts):
            f.seek(start)
            yield decode_utf8(f.read(stop - start), offset=start, errors=errors, source=str(path))
            if on_bytes is not None:
                on_bytes(stop - start)
