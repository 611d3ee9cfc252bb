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

A cut that falls inside a longer special token (``<|a|>`` inside ``<|b|><|a|>``) is moved to that
token's start.  A file with no safe cut at all is counted as one chunk.

Worker failures are turned into one :class:`~bpe.errors.BPEError` naming the chunk, raised as soon
as the failure is seen; remaining work is cancelled and the pool's processes are terminated so no
orphan is left behind.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from bpe.errors import BPEError
from bpe.pretokenize import check_input_file, count_pretokens, decode_utf8, special_token_regex

#: Chunks smaller than this are not worth a process hop.
MIN_CHUNK_BYTES = 64 * 1024
#: Chunks larger than this would make a worker hold too much text at once.
MAX_CHUNK_BYTES = 32 * 1024 * 1024
#: More chunks than workers so a slow chunk does not leave the other workers idle.
CHUNKS_PER_WORKER = 8
#: How far past an offset we read at a time while looking for a cut.
SCAN_BLOCK_BYTES = 64 * 1024

_ASCII_NON_SPACE = frozenset(range(0x21, 0x7F))


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


def _move_out_of_special(f, cut: int, special_pattern, max_special_len: int) -> int:
    """If ``cut`` falls strictly inside a special-token match, move it back to that match's start."""
    if special_pattern is None:
        return cut
    window_start = max(0, cut - max_special_len)
    f.seek(window_start)
    window = f.read(2 * max_special_len).decode("utf-8", errors="replace")
    # Offsets in `window` are characters; re-encode prefixes to get byte offsets.
    for match in special_pattern.finditer(window):
        start = window_start + len(window[: match.start()].encode("utf-8", errors="replace"))
        end = window_start + len(window[: match.end()].encode("utf-8", errors="replace"))
        if start < cut < end:
            return start
    return cut


def find_chunk_boundaries(
    path: str | Path, special_tokens: Sequence[str], num_chunks: int
) -> list[int]:
    """Sorted byte offsets ``[0, ..., file_size]``; each neighbouring pair is one chunk.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile(delete=False) as tmp:
    ...     _ = tmp.write(b"one two<|e|>three four<|e|>five")
    >>> find_chunk_boundaries(tmp.name, ["<|e|>"], 3)
    [0, 22, 31]
    >>> os.unlink(tmp.name)
    """
    file_size = os.path.getsize(path)
    special_bytes = [token.encode("utf-8") for token in special_tokens]
    max_special_len = max((len(t) for t in special_bytes), default=0)
    special_pattern = special_token_regex(special_tokens)
    boundaries = [0]
    with open(path, "rb") as f:
        for i in range(1, num_chunks):
            offset = file_size * i // num_chunks
            if offset <= boundaries[-1]:
                continue
            cut = _find_cut(f, offset, file_size, special_bytes, max(max_special_len - 1, 0))
            if cut is None:
                break
            cut = _move_out_of_special(f, cut, special_pattern, max_special_len)
            if boundaries[-1] < cut < file_size:
                boundaries.append(cut)
    boundaries.append(file_size)
    return boundaries


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


def _shutdown_now(executor: ProcessPoolExecutor) -> None:
    """Cancel pending work and terminate the workers instead of waiting for running chunks."""
    processes = list(getattr(executor, "_processes", {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def count_file_parallel(
    path: str | Path,
    special_tokens: Sequence[str],
    *,
    workers: int | None = None,
    errors: str = "strict",
) -> Counter[bytes]:
    """Counts of every pre-token in the file, computed chunk by chunk in ``workers`` processes."""
    path = check_input_file(path)
    workers = workers or default_workers()
    if workers < 1:
        raise BPEError(f"workers must be at least 1, got {workers}")
    file_size = path.stat().st_size
    num_chunks = plan_chunk_count(file_size, workers)
    boundaries = find_chunk_boundaries(path, special_tokens, num_chunks)
    chunks = list(zip(boundaries[:-1], boundaries[1:]))
    if workers == 1 or len(chunks) == 1:
        total: Counter[bytes] = Counter()
        for start, end in chunks:
            total.update(count_chunk(str(path), start, end, special_tokens, errors))
        return total

    executor = ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=_pool_context())
    try:
        futures = {
            executor.submit(count_chunk, str(path), start, end, list(special_tokens), errors): (start, end)
            for start, end in chunks
        }
        total = Counter()
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in done:
                exc = future.exception()
                if exc is not None:
                    start, end = futures[future]
                    raise _worker_error(exc, path, start, end) from None
                total.update(future.result())
        executor.shutdown(wait=True)
        return total
    except BaseException:
        _shutdown_now(executor)
        raise


def _worker_error(exc: BaseException, path: Path, start: int, end: int) -> BPEError:
    if isinstance(exc, BPEError):
        return exc
    if isinstance(exc, BrokenProcessPool):
        return BPEError(
            f"a pre-tokenization worker died while counting {path} (bytes {start}-{end}); "
            "it may have been killed or run out of memory"
        )
    return BPEError(
        f"pre-tokenization worker failed on {path} bytes {start}-{end}: {type(exc).__name__}: {exc}"
    )
