"""Parallel pre-tokenization: count the file's chunks in a worker pool, then reduce the counts in parallel.

v3's one idea (``variants/v3_parallel_pretokenize.py`` makes the switch): the plain counter of v1 and
v2, :func:`~bpe.counting.plain.count_text`, run on the file's chunks in processes
(:func:`count_file_parallel`; v4 and v5 keep it).  v6 and v7 run the same pool with the fast
pre-tokenizer (:func:`count_file_parallel_fast`, :mod:`bpe.split.fast`): the text
counter is a parameter of the functions below, handed to the workers by reference, so the pool is
written once.  Where the file is cut is :mod:`bpe.split.chunking`; how processes are started,
watched and torn down is :mod:`bpe.running.pool`.  This module is the map and the reduce:

1. **map**: each idle worker takes the next chunk (about 8 per worker, so none idles at the end),
   reads its own byte range, counts the pre-tokens and adds them to a running ``Counter`` that stays
   in the worker (:func:`~bpe.running.workers.worker_state`); only the chunk's length comes back.
2. **partition**: each worker splits its counts into ``workers`` parts by a hash of the pre-token,
   so every pre-token belongs to exactly one part number, whichever worker counted it.
3. **reduce**: worker ``p`` sums part ``p`` from every worker, disjoint from the other parts.
4. **join** (:func:`count_file_parallel`): the parent takes the parts and joins them with
   ``dict.update``, which is C code and needs no addition because no pre-token is in two parts.

Why not let the parent sum each chunk's ``Counter`` as it arrives?  On Gutenberg a chunk has ~10^4
distinct pre-tokens and that is cheap; on web text a chunk has 10^5-10^6 and the parent's Python-level
sum, alone on one core, becomes the stage's bottleneck while the workers wait.  Here the summing is
spread over the workers, and what crosses the pipes is each distinct pre-token about three times
(worker -> parent -> reducing worker, then part -> parent), pickled in C.

:func:`count_into_parts` stops after step 3 and leaves the parts in the workers, for a caller that
keeps its words there (the words never travel to the parent).

Every function here takes the pattern (``pattern=``, GPT-2's by default; :mod:`bpe.split.patterns`): the
file is cut by its rule, and each text counted by the plain counter of that pattern.  The fast split is
GPT-2's alone, so the fast functions count any other pattern with the plain counter, in the same pool: the
same counts as v1's, without the fast split's speed (:func:`counters_for`).
"""

from __future__ import annotations

import functools
import itertools
import os
import pickle
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, repeat
from operator import eq, mod
from pathlib import Path

from bpe.corpus.text_file import check_input_file, decode_utf8
from bpe.counting.fast import count_file_serial_fast, count_text_fast, count_texts_fast
from bpe.counting.plain import PretokenCounts, add_counts, count_file_serial, count_text, count_texts
from bpe.errors import BPEError
from bpe.running.cores import choose_workers, plan_chunk_count, workers_for
from bpe.running.pool import WorkerPool
from bpe.running.workers import worker_state
from bpe.split.chunking import find_chunk_boundaries, has_hidden_content
from bpe.split.patterns import DEFAULT_PATTERN, cuts_of, pattern_name

#: A text counter: ``(text, special_tokens) -> Counter[bytes]``, a module-level function (it is sent to
#: the workers by reference).
TextCounter = Callable[[str, Sequence[str]], Counter]

#: The key of a worker's part in :func:`~bpe.running.workers.worker_state` after :func:`count_into_parts`:
#: a ``Counter[bytes]`` of the pre-tokens whose :func:`partition` is that worker's index.
PART_KEY = "pretoken_counts"
_RUNNING_KEY = "pretoken_counts_running"
_runs = itertools.count()


def partition(token: bytes, parts: int) -> int:
    """The part a pre-token belongs to.  ``zlib.crc32``, not ``hash()``: ``hash`` of bytes is salted
    per interpreter, so a spawned (not forked) worker would put the same token in another part."""
    return zlib.crc32(token) % parts


def count_chunk(path: str, start: int, end: int, special_tokens: Sequence[str], errors: str,
                counter: TextCounter = count_text) -> Counter[bytes]:
    """Read bytes ``[start, end)`` of ``path`` and count their pre-tokens with ``counter``."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    return counter(decode_utf8(data, offset=start, errors=errors, source=path), special_tokens)


# --- what the workers run ------------------------------------------------------------------------


def _add_to_running(run: tuple, counts: Counter[bytes]) -> None:
    state = worker_state()
    running = state.get(_RUNNING_KEY)
    if running is None or running[0] != run:  # this worker's first chunk of this file
        state[_RUNNING_KEY] = (run, counts)
    else:
        add_counts(running[1], counts)


def _count_chunk_into_state(run: tuple, counter: TextCounter, path: str, start: int, end: int, special_tokens,
                            errors) -> int:
    _add_to_running(run, count_chunk(path, start, end, special_tokens, errors, counter))
    return end - start


def _count_text_into_state(run: tuple, counter: TextCounter, text: str, special_tokens) -> None:
    _add_to_running(run, counter(text, special_tokens))


def split_into_parts(counts: dict[bytes, int], parts: int) -> list[dict[bytes, int]]:
    """``counts`` as ``parts`` disjoint dicts, pre-token ``t`` in part :func:`partition` ``(t, parts)``.  The
    pool's workers split their running counts so; so do a cluster's counting tasks
    (:mod:`bpe.corpus.cluster`)."""
    tokens, values = list(counts), list(counts.values())
    # partition() of every token, computed by C-level map() rather than a Python loop per token
    owners = list(map(mod, map(zlib.crc32, tokens), repeat(parts)))
    split = []
    for p in range(parts):
        mine = list(map(eq, owners, repeat(p)))
        split.append(dict(zip(compress(tokens, mine), compress(values, mine))))
    return split


def _split_running(run: tuple, parts: int) -> list[bytes]:
    running = worker_state().pop(_RUNNING_KEY, None)
    counts = running[1] if running is not None and running[0] == run else {}
    del running
    # pickled here so the parent only passes bytes along, never unpickles the words
    return [pickle.dumps(part, pickle.HIGHEST_PROTOCOL) for part in split_into_parts(counts, parts)]


def _reduce_parts(pickled_parts: list[bytes]) -> int:
    part: Counter[bytes] = Counter()
    for blob in pickled_parts:
        add_counts(part, pickle.loads(blob))
    worker_state()[PART_KEY] = part
    return len(part)


def _take_part() -> dict[bytes, int]:
    return worker_state().pop(PART_KEY)


# --- the parent -----------------------------------------------------------------------------------


def _checked(path: str | Path, end: int | None) -> tuple[Path, int]:
    """``(path, bytes to count)``.  A given ``end`` says the caller checked the path (:func:`train_bpe`
    does, once); without one, as in a direct call, the path is checked here for its one clear error."""
    if end is not None:
        return Path(path), end
    path = check_input_file(path)
    return path, path.stat().st_size


def count_into_parts(
    pool: WorkerPool, path: str | Path, special_tokens: Sequence[str], *, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, counter: TextCounter = count_text,
    pattern: str = DEFAULT_PATTERN,
) -> list[int]:
    """Count the file (or its first ``end`` bytes) in ``pool`` with ``counter`` and leave part ``p`` in
    worker ``p``; the file is cut by ``pattern``'s rule, which ``counter`` must count by.

    Afterwards ``worker_state()[PART_KEY]`` in worker ``p`` is the ``Counter[bytes]`` of exactly the
    pre-tokens with ``partition(token, pool.size) == p``.  Returns the number of distinct pre-tokens in
    each part.  ``on_bytes(n)`` is called in the parent as each chunk of ``n`` bytes is counted.
    """
    path, size = _checked(path, end)
    if size == 0 and end is None and has_hidden_content(path):
        raise BPEError(f"{path} reports a size of 0 but has content (a /proc or device file?): the process pool "
                       "needs a regular file; copy it to one first")
    boundaries = find_chunk_boundaries(path, special_tokens, plan_chunk_count(size, pool.size), end=end, errors=errors,
                                       cuts=cuts_of(pattern))
    run = (os.getpid(), next(_runs))  # tells this count's running Counter from an earlier one's
    chunks = [(run, counter, str(path), start, stop, list(special_tokens), errors)
              for start, stop in zip(boundaries[:-1], boundaries[1:])]
    for _, n_bytes in pool.imap_unordered(_count_chunk_into_state, chunks):
        if on_bytes is not None:
            on_bytes(n_bytes)
    parts = pool.broadcast(_split_running, run, pool.size)  # parts[w][p]: worker w's part p, pickled
    return pool.run_all(_reduce_parts, [([parts[w][p] for w in range(pool.size)],) for p in range(pool.size)])


def count_file_parallel(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, pattern: str = DEFAULT_PATTERN,
) -> PretokenCounts:
    """Counts of every pre-token in the file (or its first ``end`` bytes), counted in ``workers`` processes
    with the plain counter of ``pattern`` (v3-v5).

    One worker, or a file too small for two chunks, is counted in this process instead (the serial
    streaming counter of v1 and v2: the same counts without the process hop).  ``workers=None`` takes
    the cores that other processes leave free (:func:`bpe.running.cores.choose_workers`); a given
    count is used as is.  Any failure (bad bytes, a worker that died, Ctrl-C) terminates the whole pool
    before the exception leaves this function.
    """
    return _count_file(*counters_for(count_text, count_file_serial, pattern), path, special_tokens,
                       workers=workers, errors=errors, end=end, on_bytes=on_bytes, pattern=pattern)


def count_file_parallel_fast(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, pattern: str = DEFAULT_PATTERN,
) -> PretokenCounts:
    """:func:`count_file_parallel` with the fast pre-tokenizer (v6, v7): each worker counts its chunks with
    :func:`~bpe.counting.fast.count_text_fast`, and one worker or a tiny file is counted
    in this process by :func:`~bpe.counting.fast.count_file_serial_fast`.  The same counts.  Another pattern
    than GPT-2's is counted by its plain counter (:func:`counters_for`).
    """
    return _count_file(*counters_for(count_text_fast, count_file_serial_fast, pattern), path, special_tokens,
                       workers=workers, errors=errors, end=end, on_bytes=on_bytes, pattern=pattern)


def count_texts_parallel(texts: Iterable[str], special_tokens: Sequence[str], *, workers: int | None = None,
                         on_text: Callable[[int], None] | None = None,
                         pattern: str = DEFAULT_PATTERN) -> PretokenCounts:
    """A stream of texts (a corpus's batches of documents, :mod:`bpe.corpus.corpus`) counted in the pool
    with the plain counter of ``pattern`` (v3-v5): each idle worker takes the next text, and the counts are
    reduced by part as a file's are.  ``on_text(i)`` is called as text ``i`` (from 0) is counted.  A stream
    of one text, or one worker, is counted in this process (:func:`~bpe.counting.plain.count_texts`).
    """
    return _count_texts(*counters_for(count_text, count_texts, pattern), texts, special_tokens, workers=workers,
                        on_text=on_text)


def count_texts_parallel_fast(texts: Iterable[str], special_tokens: Sequence[str], *, workers: int | None = None,
                              on_text: Callable[[int], None] | None = None,
                              pattern: str = DEFAULT_PATTERN) -> PretokenCounts:
    """:func:`count_texts_parallel` with the fast pre-tokenizer (v6-v8): the same counts (another pattern
    than GPT-2's: its plain counter)."""
    return _count_texts(*counters_for(count_text_fast, count_texts_fast, pattern), texts, special_tokens,
                        workers=workers, on_text=on_text)


def counters_for(counter: TextCounter, count_serially: Callable[..., PretokenCounts],
                 pattern: str) -> tuple[TextCounter, Callable[..., PretokenCounts]]:
    """``(counter, count_serially)`` as given for GPT-2's pattern; for any other, the plain counter of that
    pattern in their place (the fast split is GPT-2's alone): partials of module-level functions, which
    pickle by reference as the workers need.

    >>> counters_for(count_text_fast, count_file_serial_fast, "gpt2")[0] is count_text_fast
    True
    >>> counters_for(count_text_fast, count_file_serial_fast, "o200k")[0].keywords
    {'pattern': 'o200k'}
    """
    if pattern_name(pattern) == "gpt2":
        return counter, count_serially
    serial = count_texts if count_serially in (count_texts, count_texts_fast) else count_file_serial
    return functools.partial(count_text, pattern=pattern), functools.partial(serial, pattern=pattern)


def _count_texts(counter: TextCounter, count_serially: Callable[..., PretokenCounts], texts: Iterable[str],
                 special_tokens: Sequence[str], *, workers: int | None,
                 on_text: Callable[[int], None] | None) -> PretokenCounts:
    """The texts in the pool (``counter`` in each worker), taken from ``texts`` only as a worker is free: the
    stream is never held whole, only a text per worker; or in this process when one would do."""
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise BPEError(f"workers must be at least 1, got {workers}")
    texts = iter(texts)
    first = list(itertools.islice(texts, 2))  # a stream of one text is not worth a pool
    workers = 1 if len(first) < 2 else choose_workers(workers)
    if workers == 1:
        return count_serially(itertools.chain(first, texts), special_tokens, on_text=on_text)
    run = (os.getpid(), next(_runs))
    tasks = ((run, counter, text, list(special_tokens)) for text in itertools.chain(first, texts))
    with WorkerPool(workers, source="the corpus") as pool:
        for index, _ in pool.imap_unordered(_count_text_into_state, tasks):
            if on_text is not None:
                on_text(index)
        parts = pool.broadcast(_split_running, run, pool.size)
        pool.run_all(_reduce_parts, [([parts[w][p] for w in range(pool.size)],) for p in range(pool.size)])
        total = PretokenCounts()
        for part in pool.broadcast(_take_part):
            dict.update(total, part)  # disjoint parts: a C-level join
    return total


def _count_file(counter: TextCounter, count_serially: Callable[..., PretokenCounts], path: str | Path,
                special_tokens: Sequence[str], *, workers: int | None, errors: str, end: int | None,
                on_bytes: Callable[[int], None] | None, pattern: str) -> PretokenCounts:
    """The pool (``counter`` in each worker), or ``count_serially`` in this process when one worker or
    one chunk would do."""
    path, size = _checked(path, end)
    if end is None:  # checked here: the layers below trust it (a size that reads 0 stays open-ended)
        end = size or None
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise BPEError(f"workers must be at least 1, got {workers}")
    workers = workers_for(workers, size)  # no count given: the free cores, sampled only when a pool would start
    if workers == 1 or size == 0:  # size 0 includes files that only look empty, like /proc/cpuinfo
        return count_serially(path, special_tokens, errors=errors, end=end, on_bytes=on_bytes)
    with WorkerPool(workers, source=str(path)) as pool:
        count_into_parts(pool, path, special_tokens, errors=errors, end=end, on_bytes=on_bytes, counter=counter,
                         pattern=pattern)
        total = PretokenCounts()
        for part in pool.broadcast(_take_part):
            dict.update(total, part)  # disjoint parts: a C-level join, not Counter's Python-level sum
    return total
