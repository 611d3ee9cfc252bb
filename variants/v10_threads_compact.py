r"""v10 — the merge on threads and compact: v8's algorithm in fewer bytes a word, its rewrites shared by threads.

Unlike v9: the merge is new, the counting is v9's, unchanged.  v9 made counting fast, and on web-like text
the merge became the larger part of the run again (docs/v9.md); it was v8's, on one thread, at 171 bytes a
distinct pre-token at OpenWebText's size (302 on 100 MB of webtext-synth).  v10 changes two things, each
measured on its own (docs/v10.md):

1. **compact** (``variants/_v10_merge.pyx``): a word's record is an 8-byte head (32-bit count, 16-bit
   length and size) and 16-bit token ids while the vocabulary fits (the block widened to 32-bit ids at
   the 65,537th token), not padded to 16 bytes, and named by where it lies, with no array of offsets; a
   pair's slot is 24 bytes with its first two holders in it, its bucket 8, its list of holders made once
   at its exact size; the heap holds only the pairs near the top (v6's floor).  The records mostly fit
   in the cache, where v8's did not;
2. **parallel**: the words a merge rewrites are shared, in blocks, by the calling thread and worker
   threads started once (POSIX threads, no OpenMP), each writing one event per word; the calling thread
   then replays the events in word order, as v8's loop did its words, so the merges, the counts and the
   holders are the same with any number of threads.  A merge of fewer than
   :data:`~bpe.variants._v10_merge.PARALLEL_WORDS` words runs on the calling thread alone, and so do the
   next merges after one that a busy machine made slower shared.

How many threads: ``--workers`` when given (the same number counts and merges; 1: everything on one
thread), else the cores other processes leave free, as v9's counting picks them (``bpe/running/cores.py``).

What it leaves out: exact holder lists (a build switch, measured slower on web text: the stale visits they
save read compact records the cache mostly holds); a parallel replay of the events (the calling thread
applies them all, a part that does not shrink with more threads); reuse of the slots of pairs whose count
fell to zero; a pre-token longer than 65,535 bytes (a record's 16-bit length), for which the rung runs v9's
merge for the whole run and says so in its summary.

Complexity: as v8; a merge's rewrites divided among the threads.  Memory: a word is 8 bytes and 2 a token
(4 past 65,536 tokens), padded to 4, and 4 bytes in the list of each pair it holds; a pair 24 bytes, 8 or
16 in the table, 16 a heap entry for a pair near the top.

Measured: docs/v10.md.

Walkthrough: docs/v10.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from bpe.errors import BPEError
from bpe.interface import not_built
from bpe.running.cores import choose_workers

from . import v9_counting_compiled as v9

IDEA = "the merge compact and on threads: 16-bit ids in compact records, a merge's rewrites shared by worker threads"

try:
    from ._v10_merge import MAX_WORD_BYTES, PARALLEL_WORDS, MergeState, longest_pretoken
except ImportError:  # built without a C compiler: the rest of the ladder works, v10 says why it does not
    MergeState = None
    MAX_WORD_BYTES = PARALLEL_WORDS = 0

#: The line v10 answers with where its compiled merge was not built (its fix worded for how bpe-lab was installed),
#: and where none of the compiled code was (no C compiler: the usual case).
NOT_BUILT = not_built("v10 is", "its compiled merge needs")
NONE_BUILT = not_built("v10, v9 and v8 are", "their compiled merges and counter need")
#: Why v10 cannot run here, or ``None`` (the registry reads it): it needs its merge and v9's counter.
UNAVAILABLE: str | None = (v9.UNAVAILABLE if MergeState is not None else
                           NONE_BUILT if v9.UNAVAILABLE is not None else NOT_BUILT)

# v9's counting, unchanged: threads of this process, the counts as arrays; its cluster parts too.
COUNTS_IN = v9.COUNTS_IN
COUNTS_BYTES = v9.COUNTS_BYTES
count_parts, sum_parts, joined_parts = v9.count_parts, v9.sum_parts, v9.joined_parts


class ThreadedCounts(v9.CompiledCounts):
    """v9's counts, and the workers they were counted with, which v10's ``Merger`` merges with (``None``:
    none were asked for, and the merge takes the free cores)."""

    def __init__(self, counts: v9.CompiledCounts, workers: int | None):
        keys, ends, numbers = counts.pretoken_arrays()
        super().__init__(keys, ends, numbers, counts.total(), has_empty=counts.has_empty)
        self.workers = workers


def count_pretokens(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, pattern: str = "gpt2",
) -> ThreadedCounts:
    """v9's counter, unchanged; its counts carry the ``workers`` asked for to the merge."""
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    counts = v9.count_pretokens(path, special_tokens, workers=workers, errors=errors, end=end, on_bytes=on_bytes,
                                pattern=pattern)
    return ThreadedCounts(counts, workers)


def count_texts(texts: Iterable[str | bytes], special_tokens: Sequence[str], *, workers: int | None = None,
                on_text: Callable[[int], None] | None = None, pattern: str = "gpt2") -> ThreadedCounts:
    """v9's counter of a stream of texts, unchanged; its counts carry the ``workers`` asked for to the merge."""
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    return ThreadedCounts(v9.count_texts(texts, special_tokens, workers=workers, on_text=on_text, pattern=pattern),
                          workers)


def merge_threads(pretoken_counts, threads: int | None) -> int:
    """How many threads share a large merge: ``threads`` when given, else the workers the counts were
    counted with, else the free cores; 1 where no merge could be large enough to be shared (so a small
    input never samples the cores)."""
    if threads is None:
        threads = getattr(pretoken_counts, "workers", None)
    if threads is None:
        threads = 1 if len(pretoken_counts) < PARALLEL_WORDS else choose_workers(None)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise BPEError(f"v10's merge threads must be at least 1, got {threads!r}")
    return threads


class Merger(MergeState if MergeState is not None else object):
    """The compiled state itself (as v8's): ``select_best_pair`` and ``merge`` are its compiled methods.

    ``threads``: how many threads share a large merge, the calling one included (default:
    :func:`merge_threads`).  ``close()`` stops them; the merge loop calls it when the merges end.  A
    pre-token longer than a record holds makes this a v9 merger instead (:class:`LongWordsMerger`).

    >>> merger = Merger({b"low": 5, b"lower": 2}, threads=2)
    >>> merger.select_best_pair()  # (o, w) and (l, o) tie at 7: the larger byte pair wins
    (b'o', b'w')
    >>> merger.merge((b"o", b"w")); merger.select_best_pair()
    (b'l', b'ow')
    >>> merger.close()
    """

    def __new__(cls, pretoken_counts: Mapping[bytes, int], threads: int | None = None):
        if UNAVAILABLE is not None:
            raise BPEError(UNAVAILABLE)
        counts = _as_source(pretoken_counts)
        if longest_pretoken(counts) > MAX_WORD_BYTES:
            return LongWordsMerger(pretoken_counts)  # not a v10 Merger: __init__ below is not called
        return super().__new__(cls, counts, 1)

    def __init__(self, pretoken_counts: Mapping[bytes, int], threads: int | None = None):
        threads = merge_threads(pretoken_counts, threads)
        counts = _as_source(pretoken_counts)
        super().__init__(counts, threads)  # pair_count: the words' records, byte pairs' counts and holders, heap
        if isinstance(pretoken_counts, v9.CompiledCounts):
            pretoken_counts.close()  # the state holds every word now: the arrays go, as v9's Merger lets them

    def summary(self) -> dict:
        """What the compiled loop counted: words read and reads that found the pair gone (none, with exact
        holders), stale heap entries popped, the C memory held at the end and at most, and the threads: how
        many share a large merge, how many merges were shared, the most threads that rewrote words in one
        merge, and the time from handing a shared merge out to its last thread's start, summed."""
        return {"word_visits": self.visits, "stale_visits": self.stale_visits, "stale_pops": self.stale_pops,
                "merge_memory_bytes": self.memory_bytes(), "merge_memory_peak_bytes": self.peak_memory_bytes,
                "merge_threads": self.threads, "parallel_merges": self.parallel_merges,
                "most_threads_in_a_merge": self.most_threads_ran,
                "merges_kept_on_one_thread": self.merges_kept_on_one_thread,
                "dispatch_seconds": self.dispatch_ns / 1e9, "wait_seconds": self.wait_ns / 1e9}


class LongWordsMerger(v9.Merger):
    """v9's merge (v8's state), for counts with a pre-token longer than v10's records hold; its summary says
    so.  ``close()`` is there for the merge loop, with no thread to stop."""

    def close(self) -> None:
        pass

    def summary(self) -> dict:
        return {**super().summary(), "merge_threads": 1, "parallel_merges": 0, "most_threads_in_a_merge": 1,
                "fallback": f"a pre-token longer than {MAX_WORD_BYTES:,} bytes: v9's merge ran"}


def _as_source(pretoken_counts):
    """What the compiled state reads: v9's arrays as they are, a dict, or any other mapping as a dict.  Arrays
    holding an empty pre-token (a custom pattern's empty match) are read as a dict too, as v9's Merger reads
    them: the arrays' reader takes each pre-token to end after the one before."""
    if isinstance(pretoken_counts, dict):
        return pretoken_counts
    if hasattr(pretoken_counts, "pretoken_arrays") and not getattr(pretoken_counts, "has_empty", False):
        return pretoken_counts
    return dict(pretoken_counts)


if MergeState is None:  # nothing to run the examples on where v10 is not built: its words stay, not its examples
    Merger.__doc__ = Merger.__doc__.split("    >>>")[0].rstrip() + "\n"
