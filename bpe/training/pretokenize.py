"""Pre-tokenization, the plain definition: text -> counts of pre-tokens (as UTF-8 bytes).

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token and the special tokens themselves are dropped
from the counts.  Each piece is then cut by the GPT-2 pattern (``regex.findall``) and every pre-token
counted (``Counter``); each distinct pre-token is encoded to UTF-8 once, at the end.

>>> count_text("low low<|endoftext|>lower", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'lower': 1})

Which rung counts with what:

* v1, v2: :func:`count_file_serial`, this counter in this process, one safely cut chunk of the file at
  a time (:mod:`bpe.training.chunking`);
* v3, v4, v5: :func:`bpe.training.parallel.count_file_parallel`, this same counter in a process pool;
* v6, v7: the fast pre-tokenizer, :mod:`bpe.training.pretokenize_fast` (an ASCII twin of the pattern
  on the stdlib ``re`` engine, islands around non-ASCII characters), in the same pool; its counts are
  tested equal to :func:`count_text`'s.  Encoding (:mod:`bpe.io.tokenizer`) uses its in-order cut.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import add, itemgetter
from pathlib import Path

import regex

from bpe.errors import ArgumentError, BPEError
from bpe.training.chunking import iter_chunks

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


def count_into(counts: Counter[str], text: str, special_tokens: Sequence[str]) -> None:
    """Add the GPT-2 pre-tokens of ``text`` (special tokens split out) to ``counts``, as ``str``.

    ``findall`` and ``Counter.update`` keep the loop over the matches in C.
    """
    for piece in split_on_special_tokens(text, special_tokens):
        counts.update(GPT2_REGEX.findall(piece))


class PretokenCounts(Counter):
    """What a rung's ``count_pretokens`` returns: pre-token bytes -> count, as a ``Counter`` (``len()``: the
    distinct pre-tokens, ``total()``: all of them), and a ``close()`` that releases what holds them.

    These counts live in this process, so ``close()`` has nothing to do.  v7's counts, kept in its worker
    processes (:class:`bpe.training.shards.ShardedCounts`), answer the same three, and there ``close()``
    stops the workers; ``train_bpe`` calls it if the run fails before a ``Merger`` takes the counts.
    """

    def close(self) -> None:
        """Nothing to release: the counts are this object."""


def encoded(counts: Counter[str], kind: type[Counter] = Counter) -> Counter[bytes]:
    """``counts`` keyed by the UTF-8 bytes of each pre-token, as a ``kind``: one encoding per distinct pre-token."""
    return kind({token.encode("utf-8"): n for token, n in counts.items()})


def count_text(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    The definition: every faster counter (:mod:`bpe.training.pretokenize_fast`, the pool of
    :mod:`bpe.training.parallel`) is tested equal to it.
    """
    counts: Counter[str] = Counter()
    count_into(counts, text, special_tokens)
    return encoded(counts)


def add_counts(total: dict, more: dict) -> None:
    """``total += more`` for counts; ``more`` is used up.  Not pre-tokenization but summing: the pool's
    reduce, the fast counter and v7's shards use it.

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
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[str]:
    """The file's text (or its first ``end`` bytes), decoded one safely cut chunk at a time.

    The chunks are cut where :mod:`bpe.training.chunking` says no pre-token can span the cut, so the
    pre-tokens of the chunks are exactly those of the whole text while memory holds one chunk (a few
    MB), not the file.  ``on_bytes(n)`` is called once the caller is done with a chunk of ``n`` bytes.
    The path is checked only when no ``end`` is given: a caller that found the end
    (:func:`bpe.training.train.train_bpe`) checked it.
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
        for start, stop in iter_chunks(path, special_tokens, end=end, errors=errors):
            f.seek(start)
            yield decode_utf8(f.read(stop - start), offset=start, errors=errors, source=str(path))
            if on_bytes is not None:
                on_bytes(stop - start)


def count_file_serial(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None,
) -> PretokenCounts:
    """Count the file's pre-tokens in this process, chunk by chunk (bytes exactly as stored): v1, v2.

    Each chunk's pre-tokens go straight into one ``Counter`` of ``str``, encoded once at the end.
    ``end`` (a safe cut from :func:`bpe.training.chunking.find_limit_end`) reads only the first ``end``
    bytes; ``on_bytes(n)`` is called after each chunk of ``n`` bytes (see :func:`read_texts`).
    ``workers`` is accepted and ignored, so every variant's pre-tokenizer has the same signature.
    """
    return count_texts(read_texts(path, special_tokens, errors=errors, end=end, on_bytes=on_bytes), special_tokens)


def count_texts(texts: Iterable[str], special_tokens: Sequence[str], *, workers: int | None = None,
                on_text: Callable[[int], None] | None = None) -> PretokenCounts:
    """Count a stream of texts in this process, one after another, into one ``Counter`` of ``str`` encoded
    once at the end: the file's chunks (:func:`count_file_serial`) or a corpus's batches of documents
    (:mod:`bpe.training.corpus`), each counted on its own.  ``on_text(i)`` is called once text ``i``
    (from 0) is counted; ``workers`` is accepted and ignored, as the file counters do.
    """
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        count_into(counts, text, special_tokens)
        if on_text is not None:
            on_text(i)
    return encoded(counts, PretokenCounts)
