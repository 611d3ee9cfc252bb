"""Encoding a file: a text file -> a NumPy ``.npy`` of token ids, streamed, on threads or in a pool.

The file is cut into chunks of about :data:`CHUNK_BYTES` at safe boundaries (the training chunker,
:func:`bpe.split.chunking.iter_chunks`: preferably where a special token starts, i.e. between
documents; no pre-token spans a cut, so the ids are exactly those of encoding the whole file at
once).  Two encoders, the same ids:

* **compiled** (the default where v9's compiled code is built, :mod:`bpe.io.compiled`): threads of this
  process (:func:`bpe.running.threads.run_threads`), each reading its chunk into its own buffer and
  encoding the bytes with v9's scanner and the merges in C, its own cache warm from chunk to chunk, the
  GIL released throughout.  Chunks are handed out in rounds of :data:`ROUND_CHUNKS_PER_THREAD` per
  thread; the parent writes each chunk's ids as soon as every earlier chunk's are written, so at most a
  round's ids wait in memory.  Ctrl-C raises every thread's stop flag: each returns within 64 KB of text,
  and no thread outlives the call;
* **python** (``--encoder python``, and the only one where the compiled code is not built): workers of the
  process pool read and encode their own chunk with :meth:`~bpe.io.tokenizer.Tokenizer.encode_packed_python`
  and send back the packed ids; the parent writes them in document order.

Memory is bounded by the chunk size, not the file size.  In the pool, chunks go to the workers
round-robin and the parent reads the answers in the same order, so at most one chunk per worker is in
flight and no answer waits in the parent for an earlier one.  The ``.npy`` header (which holds the
array's length) is written last into a space reserved at the start: a 1-D array's header is 128 bytes
for every length below 10**19, so the ids are never held or rewritten.

The output is written to a temporary file next to ``out`` and renamed only at the end: an error, Ctrl-C,
SIGTERM or SIGHUP leaves no output (and no worker or thread: the pool is terminated, the threads stopped
and joined, first), and a full disk is one line naming ``out``.

A corpus of several local plain text files is encoded the same way, file after file from their own paths,
the separator's id written where the corpus's joined text holds the separator (:func:`plain_parts`).

What it leaves out: no sharding into several files and no document index (the ids of special tokens
mark the documents).
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from bpe.corpus import text_file  # the same: its check_input_file read at each call
from bpe.corpus.batches import separator_of, text_file_of
from bpe.corpus.corpus import open_corpus
from bpe.errors import BPEError
from bpe.io import compiled as compiled_module  # its names (UNAVAILABLE) read at each call, as tests set them
from bpe.io.npy import NpyWriter, check_output_file, numpy_dtype
from bpe.io.outputs import load_tokenizer, where_it_is
from bpe.running.pool import WorkerPool, default_workers
from bpe.running.threads import read_span, run_threads
from bpe.split.chunking import iter_chunks
from bpe.split.patterns import cuts_of

#: Bytes of text per task.  A chunk's pre-tokens live as Python strings while it is encoded (about 14x
#: the chunk's size), so chunks are kept small; a task costs a pipe round trip, far below its encoding.
CHUNK_BYTES = 1 << 20
#: Chunks handed to each thread per round by the compiled encoder: the threads wait for one another only
#: at a round's end, and a round's ids are the most that wait in memory to be written in order.
ROUND_CHUNKS_PER_THREAD = 16
#: What ``--encoder`` names: v9's compiled encoder, or the pure-Python one in a process pool.
ENCODERS = ("compiled", "python")
#: What to try when encoding runs out of memory, in this process or a worker: each thread or worker holds its
#: chunk's text and ids (and a thread its cache of pre-tokens), so fewer of them, or smaller chunks, need less.
MEMORY_ADVICE = "try fewer --workers or a smaller --chunk-size"

#: A span of a text file to encode, ``(path, start, stop, after)``: ``after`` is packed ids written behind its
#: own (the separator's id, where a document of a corpus ends), or ``b""``.
Part = tuple[Path, int, int, bytes]

_TOKENIZERS: dict[str, object] = {}  # directory -> Tokenizer, per process (workers keep their cache warm)


@dataclass
class EncodeStats:
    path: str
    out: str
    bytes: int
    tokens: int
    seconds: float  # from the loaded tokenizer to the renamed .npy: chunking, pool, reading, encoding, writing
    cpu_seconds: float  # CPU time of this process and its workers meanwhile (a fairer figure on a busy machine)
    workers: int
    dtype: str
    encoder: str = "python"  # which encoded it: "compiled" (threads) or "python" (the pool)

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else float("nan")

    @property
    def mb_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds else float("inf")


def cpu_seconds() -> float:
    """CPU time used so far by this process and its reaped children (the pool's workers, once closed)."""
    try:
        import resource  # noqa: PLC0415 (absent off POSIX, as caught below)
    except ImportError:  # not on Unix: only this process
        return time.process_time()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss_mb() -> float | None:
    """The largest peak resident memory of this process and its reaped children (workers), in MB; None off Unix."""
    try:
        import resource  # noqa: PLC0415 (absent off POSIX, as caught below)
    except ImportError:
        return None
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6  # bytes on macOS, KiB elsewhere


def load_tokenizer_dir(directory: str | os.PathLike):
    """The tokenizer saved in ``directory`` (kept per process), or a :class:`BPEError` saying what is missing."""
    key = str(Path(directory).resolve())
    if key not in _TOKENIZERS:
        if not Path(directory).is_dir():
            raise BPEError(f"tokenizer directory not found: {directory} (train one with: python -m bpe train --out "
                           f"DIR){where_it_is(directory)}")
        _TOKENIZERS[key] = load_tokenizer(directory)
    return _TOKENIZERS[key]


def encode_chunk(tokenizer_dir: str, path: str, start: int, end: int, errors: str = "strict",
                 specials: tuple = (None, None)) -> bytes:
    """Task: the packed ids of bytes ``[start, end)`` of ``path`` (runs in a worker, or in the parent), the
    special tokens as ``Tokenizer.with_specials(*specials)`` takes them (the file was searched for those refused)."""
    tokenizer = load_tokenizer_dir(tokenizer_dir).with_specials(*specials)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return tokenizer.encode_packed_python(text_file.decode_utf8(data, offset=start, errors=errors, source=path))


def choose_encoder(tokenizer, encoder: str | None):
    """The compiled encoder of ``tokenizer`` (:mod:`bpe.io.compiled`) when ``encoder`` is ``"compiled"``, or
    is None and it can run; ``None`` for the Python path.  ``"compiled"`` where it cannot run is one line why."""
    if encoder is not None and encoder not in ENCODERS:
        raise BPEError(f"unknown encoder {encoder!r}: choose one of {', '.join(ENCODERS)}")
    if encoder == "python":
        return None
    compiled = tokenizer.compiled_encoder()
    if compiled is None and encoder == "compiled":
        raise BPEError(compiled_module.UNAVAILABLE
                       or "the compiled encoder cannot hold this tokenizer (an empty special token, an id past its "
                          "packed type, or a pattern of its own, which has no scanner): use --encoder python")
    return compiled


def encode_span_compiled(compiled, cache, tokenizer, data, offset: int, errors: str, source: str):
    """The packed ids of ``data`` (the file's bytes from ``offset``) by the compiled encoder.  Bytes that are
    not UTF-8 go through Python's own decoder, as on the Python path: with ``strict``, its one line naming
    the file offset; with ``replace`` (or another handler), its text, then encoded the same way."""
    try:
        return compiled.encode_bytes(cache, data)
    except compiled_module.InvalidUTF8:
        pass
    text = text_file.decode_utf8(bytes(data), offset=offset, errors=errors, source=source)
    if errors == "strict":
        raise AssertionError(f"the compiled scanner found a byte that is not UTF-8 in {source} where Python did not")
    try:
        fixed = text.encode("utf-8")
    except UnicodeEncodeError:  # a handler that leaves lone surrogates: the Python path, and its own error
        return tokenizer.encode_packed_python(text)
    return compiled.encode_bytes(cache, fixed)


def encode_on_threads(compiled, tokenizer, parts: Iterator[Part], writer: NpyWriter, threads: int, errors: str,
                      on_bytes: Callable[[int], None] | None) -> None:
    """Encode the ``parts`` (:data:`Part`) on ``threads`` threads, each with a cache of its own, and write their
    ids in order, each part's ``after`` behind its own (see the module's docstring)."""
    caches = [compiled.borrow() for _ in range(threads)]
    buffers = [bytearray() for _ in range(threads)]
    done: dict[int, bytearray] = {}  # this round's ids by chunk, until every earlier chunk's are written

    def encode_item(thread: int, item: tuple[int, Part]) -> None:
        index, (path, start, stop, _) = item
        data = read_span(path, start, stop, buffers, thread)
        done[index] = encode_span_compiled(compiled, caches[thread], tokenizer, data, start, errors, str(path))

    def stop_every_thread() -> None:
        for cache in caches:
            cache.stop()

    try:
        while True:
            chunks = list(islice(parts, threads * ROUND_CHUNKS_PER_THREAD))
            if not chunks:
                return
            written = [0]

            def write_ready(_: int, __: None, chunks=chunks, written=written) -> None:
                while written[0] in done:
                    writer.write(done.pop(written[0]))
                    _, start, stop, after = chunks[written[0]]
                    if after:
                        writer.write(after)
                    written[0] += 1
                    if on_bytes is not None:
                        on_bytes(stop - start)

            run_threads(encode_item, list(enumerate(chunks)), threads=threads, stop=stop_every_thread,
                        on_result=write_ready)
    finally:
        done.clear()
        for cache in caches:
            compiled.give_back(cache)


def encoded_in_order(pool, fn: Callable, tasks: Iterator[tuple]) -> Iterator[tuple[tuple, object]]:
    """``(task, fn(*task))`` for each task, in task order; on ``pool`` (a ``WorkerPool``) if not None.

    Round-robin keeps the order for free: task ``i`` goes to worker ``i % size`` and answers are read
    in task order, each worker getting its next task as soon as its answer is read, so it works while
    the parent writes.  Chunks of equal size take about equally long, so little is lost to waiting.
    """
    if pool is None:
        for task in tasks:
            yield task, fn(*task)
        return
    queue: deque[tuple[int, tuple]] = deque()  # (worker, its task), in task order
    for worker in range(pool.size):
        task = next(tasks, None)
        if task is None:
            break
        pool.submit(worker, fn, *task)
        queue.append((worker, task))
    while queue:
        worker, done = queue.popleft()
        value = pool.result(worker)
        task = next(tasks, None)
        if task is not None:
            pool.submit(worker, fn, *task)
            queue.append((worker, task))
        yield done, value


def encode_file(tokenizer_dir: str | os.PathLike, data: str | os.PathLike | None, out: str | os.PathLike, *,
                workers: int | None = None, errors: str = "strict", chunk_bytes: int = CHUNK_BYTES,
                on_bytes: Callable[[int], None] | None = None,
                on_size: Callable[[int], None] | None = None, encoder: str | None = None,
                text_column: str = "text", allowed_special=None, disallowed_special=None) -> EncodeStats:
    """Encode the file ``data`` (a path: ``bpe encode`` turns a data set's name into one) with the tokenizer in
    ``tokenizer_dir`` into ``out``.

    The path is checked here, once; ``on_size(bytes)`` then hears the file's size (a progress bar's
    total), and ``on_bytes(n)`` each chunk of ``n`` bytes encoded.  ``encoder``: ``"compiled"`` (threads),
    ``"python"`` (the process pool), or None: compiled where it is built.  ``workers`` threads or processes.

    Any other corpus (a directory, a glob, JSON lines, Parquet: :mod:`bpe.corpus.corpus`, the text in
    ``text_column``) gives the ids of its documents each followed by the tokenizer's first special token.
    Local plain text files are encoded in place, one after another (:func:`plain_parts`); the others are
    first written as one text file beside ``out``, and that file is encoded (then removed).
    ``allowed_special`` and ``disallowed_special``: a plain text file's special tokens, as
    ``Tokenizer.encode`` takes them.
    """
    specials = (allowed_special, disallowed_special)
    tokenizer = load_tokenizer_dir(tokenizer_dir).with_specials(*specials)  # before a worker forks: in each
    compiled = choose_encoder(tokenizer, encoder)
    corpus = open_corpus(data, text_column=text_column)
    out = check_output_file(out)
    if corpus.plain_file is not None:
        tokenizer.refuse_disallowed_in_file(corpus.plain_file)
        path = text_file.check_input_file(corpus.plain_file)
        size = path.stat().st_size
        parts = _file_parts(path, size, tokenizer, chunk_bytes, errors)
        return _encode_parts(tokenizer_dir, tokenizer, compiled, parts, size, str(path), out, workers, errors,
                             chunk_bytes, on_bytes, on_size, specials)
    if specials != (None, None):  # its documents are joined by a special token, which these would change too
        raise BPEError("--allowed-special and --disallowed-special take one text file, not a corpus of documents")
    paths = plain_paths(corpus, tokenizer)
    if paths is not None:
        size = sum(path.stat().st_size for path in paths)
        return _encode_parts(tokenizer_dir, tokenizer, compiled, plain_parts(paths, tokenizer, chunk_bytes, errors),
                             size, corpus.label, out, workers, errors, chunk_bytes, on_bytes, on_size)
    # JSON lines, Parquet and compressed files are parsed into documents first: written as one text file, which
    # the encoder reads by byte ranges as it reads any file.
    with text_file_of(corpus, tokenizer.special_tokens, out.parent, errors=errors) as path:
        size = path.stat().st_size
        parts = _file_parts(path, size, tokenizer, chunk_bytes, errors)
        return _encode_parts(tokenizer_dir, tokenizer, compiled, parts, size, corpus.label, out, workers, errors,
                             chunk_bytes, on_bytes, on_size)


def _file_parts(path: Path, size: int, tokenizer, chunk_bytes: int, errors: str) -> Iterator[Part]:
    """One text file's parts, nothing written after them."""
    # Cuts are found one at a time as chunks are handed out: not even the list of cuts grows with the file.
    return ((path, start, stop, b"") for start, stop in iter_chunks(
        path, tokenizer.special_tokens, end=size, chunk_bytes=chunk_bytes, errors=errors,
        cuts=cuts_of(tokenizer.pattern)))


def plain_paths(corpus, tokenizer) -> list[Path] | None:
    """The corpus's files, checked, where each is a local uncompressed text file and the tokenizer has a
    special token to end each document with; else ``None`` (the corpus is encoded from a joined copy).

    Without a special token the separator is text (:data:`~bpe.defaults.SPECIAL_TOKEN`), whose pre-tokens may
    join the text around it, so a file's ids would not be its own: those corpora keep the joined copy."""
    files = corpus.plain_files
    if files is None or not tokenizer.special_tokens:
        return None
    return [text_file.check_input_file(path) for path in files]


def plain_parts(paths: list[Path], tokenizer, chunk_bytes: int, errors: str) -> Iterator[Part]:
    """The parts of plain text files encoded in place, in order, with exactly the ids of their joined copy
    (:func:`~bpe.corpus.batches.text_file_of`): each file is a document, so its last chunk carries the
    separator's id (the tokenizer's first special token), and a file with no text none.  The special token
    splits the text, so nothing is encoded across it, and a file's ids are its own."""
    separator = tokenizer.encode_packed_python(separator_of(tokenizer.special_tokens))
    for path in paths:
        size = path.stat().st_size
        held = None
        for part in _file_parts(path, size, tokenizer, chunk_bytes, errors):
            if held is not None:
                yield held
            held = part
        if held is not None:
            yield held[:3] + (separator,)


def _encode_part(tokenizer_dir, path, start, end, errors, specials, _after) -> bytes:
    """Task: :func:`encode_chunk` of a :data:`Part` (its ``after`` is written by the parent)."""
    return encode_chunk(tokenizer_dir, path, start, end, errors, specials)


def _encode_parts(tokenizer_dir, tokenizer, compiled, parts: Iterator[Part], size: int, label: str, out, workers,
                  errors, chunk_bytes, on_bytes, on_size, specials=(None, None)) -> EncodeStats:
    """:func:`encode_file` on the ``parts`` of one text file, or of several, ``size`` bytes in all."""
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise BPEError(f"workers must be at least 1, got {workers}")
    started, cpu_started = time.perf_counter(), cpu_seconds()  # the tokenizer is loaded: the file's work starts
    if on_size is not None:
        on_size(size)
    workers = max(1, min(workers, -(-size // chunk_bytes)))  # no more workers than chunks
    writer = None
    try:
        writer = NpyWriter(out, numpy_dtype(tokenizer.typecode))
        if compiled is not None:
            encode_on_threads(compiled, tokenizer, parts, writer, workers, errors, on_bytes)
        else:
            tasks = ((str(tokenizer_dir), str(path), start, end, errors, specials, after)
                     for path, start, end, after in parts)
            # Forked after the tokenizer is loaded, so every worker starts with it (its cache fills per worker).
            # One worker needs no pool: the parent encodes, with the same task function.
            with WorkerPool(workers, what="tokenizer", doing="encoding", source=label,
                            memory_advice=MEMORY_ADVICE) if workers > 1 \
                    else nullcontext() as pool:
                for (_, _, start, end, _, _, after), packed in encoded_in_order(pool, _encode_part, tasks):
                    writer.write(packed)
                    if after:
                        writer.write(after)
                    if on_bytes is not None:
                        on_bytes(end - start)
        writer.commit()
    except BaseException:
        if writer is not None:
            writer.abort()
        # A stop signal between the file's creation and ``writer`` being bound leaves no object to abort:
        # the file is removed by its name.
        NpyWriter.temporary(out).unlink(missing_ok=True)
        raise
    return EncodeStats(label, str(out), size, writer.count, time.perf_counter() - started,
                       cpu_seconds() - cpu_started, workers, writer.dtype.name,
                       "python" if compiled is None else "compiled")
