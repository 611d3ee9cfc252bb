"""Parallel pre-tokenization: cut the file into chunks at safe boundaries, count them in a process pool.

Used by v3 and every later variant (``variants/v3_parallel_pretokenize.py`` is where the switch is
made).  The parent never reads the file as a whole: it only peeks at small windows around evenly
spaced offsets to find cut points, and each worker reads its own byte range, so peak memory is one
chunk per worker plus the (much smaller) per-chunk counts.

A cut is *safe* when pre-tokenizing the two halves gives exactly the pre-tokens of the whole:

* the start of a special token (the text is split there anyway); preferred, it is a document boundary;
* otherwise a ``\\n`` right after an ASCII non-space byte: no GPT-2 alternative matches a non-space
  character followed by a newline, so no pre-token spans the cut and the regex restarts there in
  both cases.  This lets a file with no special token at all, or one huge document, still be split.

A cut that falls inside any occurrence of a special token (``<|a|>`` inside ``<|b|><|a|>``, or a
newline inside a token that contains one) is moved back to that occurrence's start.  A file with no
safe cut at all is counted as one chunk.

Failures: an error in a chunk (e.g. invalid UTF-8, reported with its offset in the file) or a worker
that died (OOM killer, ``kill -9``) becomes one :class:`~bpe.errors.BPEError`, raised as soon as it is
seen; Ctrl-C reaches only the parent (workers ignore SIGINT).  In every case the remaining work is
cancelled and the workers are terminated and reaped before the exception leaves
:func:`count_file_parallel`, so no orphan is left behind (``tests/test_reliability.py``).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from contextlib import contextmanager
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path


from bpe.errors import BPEError
from bpe.training.pretokenize import check_input_file, count_pretokens, decode_utf8

#: Chunks smaller than this are not worth a process hop.
MIN_CHUNK_BYTES = 64 * 1024
#: Chunks larger than this would make a worker hold too much text at once.
MAX_CHUNK_BYTES = 32 * 1024 * 1024
#: More chunks than workers so a slow chunk does not leave the other workers idle.
CHUNKS_PER_WORKER = 8
#: How far past an offset we read at a time while looking for a cut.
SCAN_BLOCK_BYTES = 64 * 1024

_ASCII_NON_SPACE = frozenset(range(0x21, 0x7F))

#: TEST-ONLY fault injection: when this environment variable holds a chunk index, the pool worker
#: that picks up that chunk kills itself with SIGKILL before counting it, as the OOM killer would.
#: The reliability tests use it to check that a dead worker becomes one clear error and no orphans.
KILL_WORKER_ON_CHUNK_ENV = "BPE_TEST_KILL_WORKER_ON_CHUNK"

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def default_workers() -> int:
    return os.cpu_count() or 1


def plan_chunk_count(file_size: int, workers: int) -> int:
    """How many chunks to aim for: enough for load balance, none tiny, none huge."""
    wanted = max(workers * CHUNKS_PER_WORKER, -(-file_size // MAX_CHUNK_BYTES))
    return max(1, min(wanted, file_size // MIN_CHUNK_BYTES))


def _safe_newline_cut(block: bytes) -> int | None:
    """Index of the first ``\\n`` in ``block`` that follows an ASCII non-space byte."""
    pos = block.find(b"\n", 1)
    while pos != -1:
        if block[pos - 1] in _ASCII_NON_SPACE:
            return pos
        pos = block.find(b"\n", pos + 1)
    return None


def _first_special_start(block: bytes, special_bytes: Sequence[bytes]) -> int | None:
    starts = [i for i in (block.find(token) for token in special_bytes) if i != -1]
    return min(starts) if starts else None


def _find_cut(f, offset: int, file_size: int, special_bytes: Sequence[bytes], overlap: int) -> int | None:
    """The first safe cut at or after ``offset`` (see module docstring), or None."""
    pos = offset
    while pos < file_size:
        f.seek(pos)
        block = f.read(SCAN_BLOCK_BYTES + overlap)
        if not block:
            return None
        found = _first_special_start(block, special_bytes)
        if found is None:
            found = _safe_newline_cut(block[: SCAN_BLOCK_BYTES + 1])
        if found is not None:
            return pos + found
        pos += SCAN_BLOCK_BYTES
    return None


def _occurrences(data: bytes, token: bytes):
    """Every start of ``token`` in ``data``, overlapping ones included."""
    pos = data.find(token)
    while pos != -1:
        yield pos
        pos = data.find(token, pos + 1)


def _move_out_of_special(f, cut: int, special_bytes: Sequence[bytes], max_special_len: int) -> int:
    """Move ``cut`` back until no occurrence of any special token starts before it and ends after it.

    Such a cut is safe whatever the whole file's special-token matching looks like: no match can
    span it, so both halves split exactly as the whole does.  All occurrences are checked, not just
    the matches a scan of a small window would find, because a window that starts in the middle of
    a self-overlapping token (``aa`` in ``aaaaa``) can pair the matches up differently from the
    whole file.
    """
    while cut > 0 and max_special_len > 1:
        window_start = max(0, cut - max_special_len + 1)
        f.seek(window_start)
        window = f.read(cut - window_start + max_special_len - 1)
        inside = cut - window_start
        spanning = [
            start
            for token in special_bytes
            for start in _occurrences(window, token)
            if start < inside < start + len(token)
        ]
        if not spanning:
            break
        cut = window_start + min(spanning)
    return cut


def _safe_cut(f, offset: int, file_size: int, special_bytes: Sequence[bytes], max_special_len: int) -> int | None:
    """The first safe cut at or after ``offset`` that is not inside a special token, or None."""
    cut = _find_cut(f, offset, file_size, special_bytes, max(max_special_len - 1, 0))
    return None if cut is None else _move_out_of_special(f, cut, special_bytes, max_special_len)


def find_chunk_boundaries(
    path: str | Path, special_tokens: Sequence[str], num_chunks: int, *, end: int | None = None
) -> list[int]:
    """Sorted byte offsets ``[0, ..., file_size]``; each neighbouring pair is one chunk.

    ``end`` (a safe cut, see :func:`find_limit_end`) counts only the file's first ``end`` bytes.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as tmp:
    ...     _ = tmp.write(b"one two<|e|>three four<|e|>five")
    >>> find_chunk_boundaries(tmp.name, ["<|e|>"], 3)
    [0, 22, 31]
    >>> os.unlink(tmp.name)
    """
    file_size = os.path.getsize(path) if end is None else end
    special_bytes = [token.encode("utf-8") for token in special_tokens]
    max_special_len = max((len(t) for t in special_bytes), default=0)
    boundaries = [0]
    with open(path, "rb") as f:
        for i in range(1, num_chunks):
            offset = file_size * i // num_chunks
            if offset <= boundaries[-1]:
                continue
            cut = _safe_cut(f, offset, file_size, special_bytes, max_special_len)
            if cut is None:
                break
            if boundaries[-1] < cut < file_size:
                boundaries.append(cut)
    boundaries.append(file_size)
    return boundaries


def find_limit_end(path: str | Path, limit: int, special_tokens: Sequence[str]) -> int:
    """Where a subset of about ``limit`` bytes ends: the first safe cut at or after byte ``limit``.

    The subset is whole documents: it runs up to the next special-token start (or, without one, the
    next safe newline; see the module docstring), so it may be a little longer than ``limit``.  The
    whole file when it is not longer than ``limit`` or has no safe cut after it.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as tmp:
    ...     _ = tmp.write(b"one two<|e|>three four<|e|>five")
    >>> find_limit_end(tmp.name, 9, ["<|e|>"]), find_limit_end(tmp.name, 7, ["<|e|>"]), find_limit_end(tmp.name, 99, [])
    (22, 7, 31)
    >>> os.unlink(tmp.name)
    """
    file_size = os.path.getsize(path)
    if limit >= file_size:
        return file_size
    special_bytes = [token.encode("utf-8") for token in special_tokens]
    max_special_len = max((len(t) for t in special_bytes), default=0)
    with open(path, "rb") as f:
        cut = _safe_cut(f, limit, file_size, special_bytes, max_special_len)
    return file_size if cut is None else cut


def count_chunk(path: str, start: int, end: int, special_tokens: Sequence[str], errors: str) -> Counter[bytes]:
    """Worker: read bytes ``[start, end)`` of ``path`` and count their pre-tokens."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    text = decode_utf8(data, offset=start, errors=errors, source=path)
    return count_pretokens(text, special_tokens)


def _pool_context():
    # fork starts workers in milliseconds and shares the already-imported modules; spawn elsewhere.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


@contextmanager
def _sigint_blocked():
    """Hold back SIGINT while the pool forks, so no worker can see a Ctrl-C before it ignores it.

    A SIGINT that arrives meanwhile stays pending and reaches the parent as soon as this exits.
    """
    can_block = hasattr(signal, "pthread_sigmask")
    if can_block:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if can_block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _die_with_parent(parent_pid: int) -> None:
    """Linux: have the kernel SIGTERM this worker if the parent dies (even by SIGKILL).

    Without it a worker of a ``kill -9``-ed trainer waits forever for work that never comes.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _worker_init(parent_pid: int) -> None:
    _die_with_parent(parent_pid)
    # Ctrl-C in a terminal signals the whole process group.  Only the parent reacts (it terminates the
    # pool); a worker that also raised KeyboardInterrupt would print its own traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _count_chunk_in_worker(
    index: int, path: str, start: int, end: int, special_tokens: Sequence[str], errors: str
) -> Counter[bytes]:
    if os.environ.get(KILL_WORKER_ON_CHUNK_ENV) == str(index):  # test-only, see KILL_WORKER_ON_CHUNK_ENV
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
    return count_chunk(path, start, end, special_tokens, errors)


def _shutdown_now(executor: ProcessPoolExecutor, processes: Sequence[multiprocessing.Process]) -> None:
    """Cancel pending work and terminate the workers instead of waiting for running chunks."""
    processes = list(processes) or list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
        if process.is_alive():  # ignored SIGTERM (stuck in C code): make sure it does not outlive us
            process.kill()
            process.join(timeout=5)
    # The pool's manager thread notices the dead workers and exits; once it has, every worker is
    # reaped and its exit code known.
    manager = getattr(executor, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=5)


def count_file_parallel(
    path: str | Path,
    special_tokens: Sequence[str],
    *,
    workers: int | None = None,
    errors: str = "strict",
    end: int | None = None,
) -> Counter[bytes]:
    """Counts of every pre-token in the file (or its first ``end`` bytes), chunk by chunk in ``workers`` processes.

    Any failure (bad bytes in a chunk, a worker that died, Ctrl-C) terminates the whole pool before
    the exception leaves this function, so no worker outlives the call.
    """
    path = check_input_file(path)
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise BPEError(f"workers must be at least 1, got {workers}")
    file_size = path.stat().st_size if end is None else end
    num_chunks = plan_chunk_count(file_size, workers)
    boundaries = find_chunk_boundaries(path, special_tokens, num_chunks, end=end)
    chunks = list(zip(boundaries[:-1], boundaries[1:]))
    if workers == 1 or len(chunks) == 1:
        total: Counter[bytes] = Counter()
        for chunk_start, chunk_end in chunks:  # not `end`: that is the subset's end, a parameter
            total.update(count_chunk(str(path), chunk_start, chunk_end, special_tokens, errors))
        return total

    executor = ProcessPoolExecutor(
        max_workers=min(workers, len(chunks)), mp_context=_pool_context(), initializer=_worker_init,
        initargs=(os.getpid(),)
    )
    processes: list[multiprocessing.Process] = []
    try:
        with _sigint_blocked():
            futures = {
                executor.submit(_count_chunk_in_worker, index, str(path), start, end, list(special_tokens),
                                errors): (start, end)
                for index, (start, end) in enumerate(chunks)
            }
            processes = list((getattr(executor, "_processes", None) or {}).values())
        total = Counter()
        pending = set(futures)
        while pending:
            # Sum each chunk's counts as it arrives, while the workers count the rest (waiting for
            # all of them left 16 sums, ~70 ms on 14 MB, to run after the last chunk).
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                chunk_start, chunk_end = futures.pop(future)  # drop it so its chunk's counts can be freed once summed
                exc = future.exception()
                if exc is not None:
                    _shutdown_now(executor, processes)  # first, so the dead worker's exit code is known
                    raise _worker_error(exc, path, chunk_start, chunk_end, processes) from None
                total.update(future.result())
        executor.shutdown(wait=True)
        return total
    except BaseException:
        _shutdown_now(executor, processes)
        raise


def _worker_error(
    exc: BaseException, path: Path, start: int, end: int, processes: Sequence[multiprocessing.Process] = ()
) -> BPEError:
    """One sentence for the user about a failed chunk; never the worker's traceback."""
    if isinstance(exc, BPEError):
        return exc
    if isinstance(exc, BrokenProcessPool):
        # Every unfinished chunk fails once the pool breaks, so the chunk is not named; the dead
        # worker's signal is (the workers are reaped by now).  The survivors were SIGTERMed by the
        # shutdown, so a different signal is the one that caused the failure.
        killed = sorted((-code for code in (p.exitcode for p in processes) if code is not None and code < 0),
                        key=lambda signum: signum == signal.SIGTERM)
        how = ""
        if killed:
            try:
                how = f" (killed by {signal.Signals(killed[0]).name})"
            except ValueError:
                how = f" (killed by signal {killed[0]})"
        return BPEError(
            f"a pre-tokenization worker died{how} while counting {path}; it may have been killed or run "
            "out of memory (try fewer --workers)"
        )
    return BPEError(
        f"pre-tokenization worker failed on {path} bytes {start}-{end}: {type(exc).__name__}: {exc}"
    )
