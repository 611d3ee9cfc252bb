"""``python -m bpe encode``: a text file -> a NumPy ``.npy`` of token ids, streamed, in a process pool.

The file is cut into chunks of about :data:`CHUNK_BYTES` at safe boundaries (the training chunker,
:func:`bpe.training.chunking.iter_chunks`: preferably where a special token starts, i.e. between
documents; no pre-token spans a cut, so the ids are exactly those of encoding the whole file at
once).  Workers read and encode their own chunk with
:meth:`~bpe.io.tokenizer.Tokenizer.encode_packed` and send back the packed ids; the parent writes them
in document order.

Memory is bounded by the chunk size, not the file size: chunks go to the workers round-robin and the
parent reads the answers in the same order, so at most one chunk per worker is in flight and no
answer waits in the parent for an earlier one.  The ``.npy`` header (which holds the array's length)
is written last into a space reserved at the start: a 1-D array's header is 128 bytes for every
length below 10**19, so the ids are never held or rewritten.

The output is written to a temporary file next to ``out`` and renamed only at the end: an error, Ctrl-C,
SIGTERM or SIGHUP leaves no output (and no worker: the pool is terminated first), and a full disk is
one line naming ``out``.

What it leaves out: no sharding into several files and no document index (the ids of special tokens
mark the documents).
"""

from __future__ import annotations

import io
import os
import sys
import time
from array import array
from collections import deque
from contextlib import contextmanager, nullcontext
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bpe.errors import BPEError

#: Bytes of text per task.  A chunk's pre-tokens live as Python strings while it is encoded (about 14x
#: the chunk's size), so chunks are kept small; a task costs a pipe round trip, far below its encoding.
CHUNK_BYTES = 1 << 20
#: Bytes reserved for the .npy header: the header of any 1-D array shorter than 10**19 fits (tested).
NPY_HEADER_BYTES = 128

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

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else float("nan")

    @property
    def mb_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds else float("inf")


def cpu_seconds() -> float:
    """CPU time used so far by this process and its reaped children (the pool's workers, once closed)."""
    try:
        import resource
    except ImportError:  # not on Unix: only this process
        return time.process_time()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss_mb() -> float | None:
    """The largest peak resident memory of this process and its reaped children (workers), in MB; None off Unix."""
    try:
        import resource
    except ImportError:
        return None
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6  # bytes on macOS, KiB elsewhere


def load_tokenizer_dir(directory: str | os.PathLike):
    """The tokenizer saved in ``directory`` (kept per process), or a :class:`BPEError` saying what is missing."""
    from bpe.io.outputs import load_tokenizer

    key = str(Path(directory).resolve())
    if key not in _TOKENIZERS:
        if not Path(directory).is_dir():
            raise BPEError(f"tokenizer directory not found: {directory} (train one with: "
                           "python -m bpe train --out DIR)")
        _TOKENIZERS[key] = load_tokenizer(directory)
    return _TOKENIZERS[key]


def encode_chunk(tokenizer_dir: str, path: str, start: int, end: int, errors: str = "strict") -> bytes:
    """Task: the packed ids of bytes ``[start, end)`` of ``path`` (runs in a worker, or in the parent)."""
    from bpe.training.pretokenize import decode_utf8

    tokenizer = load_tokenizer_dir(tokenizer_dir)
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return tokenizer.encode_packed(decode_utf8(data, offset=start, errors=errors, source=path))


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


class NpyWriter:
    """A 1-D ``.npy`` written as it grows: header space first, data appended, header filled in at the end.

    The file is a temporary sibling of ``out`` until :meth:`commit` renames it; :meth:`abort` removes it.
    An OS error while writing (a full disk, a file-size limit) is a :class:`BPEError` naming ``out``.
    """

    def __init__(self, out: Path, dtype):
        self.out, self.dtype = out, np.dtype(dtype)
        self.tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        self.count = 0
        self._file = None
        try:
            with self._naming_out():
                self._file = open(self.tmp, "wb")
                self._file.write(b"\0" * NPY_HEADER_BYTES)
        except BPEError:
            self.abort()
            raise

    def write(self, packed: bytes) -> None:
        with self._naming_out():
            self._file.write(packed)
        self.count += len(packed) // self.dtype.itemsize

    def commit(self) -> None:
        with self._naming_out():
            self._file.seek(0)
            self._file.write(npy_header(self.dtype, self.count))
            self._file.close()
            os.replace(self.tmp, self.out)

    def abort(self) -> None:
        try:
            if self._file is not None:
                self._file.close()
        except OSError:  # what was still buffered cannot be written either (the disk is full): it goes anyway
            pass
        self.tmp.unlink(missing_ok=True)

    @contextmanager
    def _naming_out(self):
        try:
            yield
        except OSError as exc:
            raise BPEError(f"cannot write {self.out}: {exc.strerror or exc}") from None


def npy_header(dtype, length: int) -> bytes:
    """The ``.npy`` (format 1.0) header of a 1-D array of ``length`` items, exactly NPY_HEADER_BYTES long."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                 "shape": (length,)})
    header = buffer.getvalue()
    if len(header) != NPY_HEADER_BYTES:  # numpy pads 1-D headers to 128 bytes; a change would show here
        raise BPEError(f"unexpected .npy header size {len(header)} (expected {NPY_HEADER_BYTES})")
    return header


def check_output_file(out: str | os.PathLike) -> Path:
    """``out`` as a Path if a file can be written there, else a :class:`BPEError` saying why."""
    out = Path(out)
    if out.is_dir():
        raise BPEError(f"--out {out} is a directory; give a file name such as {out / 'ids.npy'}")
    if not out.parent.is_dir():
        raise BPEError(f"cannot write {out}: directory {out.parent} does not exist")
    if not os.access(out.parent, os.W_OK):
        raise BPEError(f"cannot write {out}: directory {out.parent} is not writable")
    return out


def numpy_dtype(typecode: str):
    return np.dtype(f"=u{array(typecode).itemsize}")


def encode_file(tokenizer_dir: str | os.PathLike, data: str | os.PathLike | None, out: str | os.PathLike, *,
                workers: int | None = None, errors: str = "strict", chunk_bytes: int = CHUNK_BYTES,
                on_bytes: Callable[[int], None] | None = None,
                on_size: Callable[[int], None] | None = None) -> EncodeStats:
    """Encode the file ``data`` (a data set name or path) with the tokenizer in ``tokenizer_dir`` into ``out``.

    The path is checked here, once; ``on_size(bytes)`` then hears the file's size (a progress bar's
    total), and ``on_bytes(n)`` each chunk of ``n`` bytes encoded.
    """
    from bpe.data.datasets import resolve_data
    from bpe.training.chunking import iter_chunks
    from bpe.training.pool import WorkerPool, default_workers
    from bpe.training.pretokenize import check_input_file

    tokenizer = load_tokenizer_dir(tokenizer_dir)
    path = check_input_file(resolve_data(data))
    out = check_output_file(out)
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise BPEError(f"workers must be at least 1, got {workers}")
    started, cpu_started = time.perf_counter(), cpu_seconds()  # the tokenizer is loaded: the file's work starts
    size = path.stat().st_size
    if on_size is not None:
        on_size(size)
    workers = max(1, min(workers, -(-size // chunk_bytes)))  # no more workers than chunks
    # Cuts are found one at a time as tasks are handed out: not even the list of cuts grows with the file.
    tasks = ((str(tokenizer_dir), str(path), start, end, errors)
             for start, end in iter_chunks(path, tokenizer.special_tokens, chunk_bytes=chunk_bytes, errors=errors))
    writer = NpyWriter(out, numpy_dtype(tokenizer.typecode))
    try:
        # Forked after the tokenizer is loaded, so every worker starts with it (its cache fills per worker).
        # One worker needs no pool: the parent encodes, with the same task function.
        with WorkerPool(workers, what="tokenizer", doing="encoding", source=str(path),
                        memory_advice="try fewer --workers or a smaller --chunk-size") if workers > 1 \
                else nullcontext() as pool:
            for (_, _, start, end, _), packed in encoded_in_order(pool, encode_chunk, tasks):
                writer.write(packed)
                if on_bytes is not None:
                    on_bytes(end - start)
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    return EncodeStats(str(path), str(out), size, writer.count, time.perf_counter() - started,
                       cpu_seconds() - cpu_started, workers, writer.dtype.name)


def run_encode(tokenizer_dir, data, out, *, workers=None, errors="strict", chunk_bytes=CHUNK_BYTES,
               progress: bool | None = None) -> EncodeStats:
    """The ``bpe encode`` command: encode, with a progress bar over bytes on a terminal, and print the figures."""
    from tqdm import tqdm

    show = sys.stderr.isatty() if progress is None else progress
    bars = []

    def on_size(total: int) -> None:  # the bar starts once encode_file has checked every input
        bars.append(tqdm(total=total, unit="B", unit_scale=True, desc="encoding", disable=not show,
                         file=sys.stderr))

    try:
        stats = encode_file(tokenizer_dir, data, out, workers=workers, errors=errors, chunk_bytes=chunk_bytes,
                            on_bytes=lambda n: bars[0].update(n), on_size=on_size)
    finally:
        for bar in bars:
            bar.close()
    ratio = f"{stats.bytes_per_token:.2f} bytes/token" if stats.tokens else "an empty file"
    print(f"encoded {stats.path}: {stats.bytes:,} bytes -> {stats.tokens:,} tokens "
          f"({ratio}) in {stats.seconds:.2f}s, {stats.mb_per_second:.1f} MB/s, "
          f"{stats.workers} worker{'s' if stats.workers != 1 else ''}")
    peak = peak_rss_mb()
    print(f"wrote {stats.out} ({stats.dtype}, {stats.tokens:,} ids)"
          + (f"; peak memory of the largest process {peak:.1f} MB" if peak is not None else ""))
    return stats
