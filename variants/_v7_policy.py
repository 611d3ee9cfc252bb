"""v7's tuning around its idea: how many shards the words are worth, how many words the parent keeps,
and when the shards come home.

``variants/v7_sharded.py`` holds the idea (words sharded, one round trip per merge) and would give
the same merges with any of these choices: each one here is a measured trade of speed, kept apart so
that the variant reads as the idea, and so that a test can drive the gather with a rule and clocks of
its own (docs/v7.md, "The parent holds a shard" and "Gathering the shards").
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Mapping, Sequence

from bpe.running.cores import choose_workers

#: A shard process pays for itself only with enough words to rewrite: below this many distinct words
#: per shard, fewer shards are used, and with one shard v7 is v6 in this process (docs/v7.md, "Where
#: the time goes").
MIN_WORDS_PER_SHARD = 150_000

#: When v7 chooses its own process count (no ``workers`` given), it leaves this many of the free cores
#: to the rest of the machine.  Every merge is a round trip that waits for the slowest shard, so a
#: shard process that shares its core with a browser's bursts makes every process wait; one spare core
#: absorbs them.  On a 2-core machine this leaves one process: v7 is v6 there unless ``workers`` asks
#: for more (docs/v7.md, "The default on a busy machine": there a split won a little idle and lost
#: more under bursty load).
SPARE_CORES = 1


def merge_processes(workers: int | None, *, free_cores: Callable[[], int] | None = None) -> int:
    """How many processes v7 may merge in, the parent included: ``workers`` when given; else the cores
    other processes leave free now (:func:`~bpe.running.cores.choose_workers`) less :data:`SPARE_CORES`.

    >>> merge_processes(2), merge_processes(None, free_cores=lambda: 2), merge_processes(None, free_cores=lambda: 16)
    (2, 1, 15)
    """
    if workers is not None:
        return workers
    free = choose_workers(None) if free_cores is None else free_cores()
    return max(1, free - SPARE_CORES)


def shard_count(words: int, processes: int) -> int:
    """How many shards ``words`` distinct pre-tokens are worth with ``processes`` processes to merge in
    (:func:`merge_processes`), the parent's shard included: 1 means v6 in this process.

    >>> shard_count(100_000, 2), shard_count(400_000, 2), shard_count(400_000, 16), shard_count(10**7, 1)
    (1, 2, 2, 1)
    """
    return max(1, min(processes, words // MIN_WORDS_PER_SHARD))


#: How many words the parent's own shard holds, against 1 for a shard process: the parent also runs
#: the heap and sums the deltas, so it takes a smaller share.  With 2 workers it keeps 0.6 / 1.6 of
#: the words, which balanced the parent's and the shard process's CPU time (docs/v7.md).
PARENT_WEIGHT = 0.6


def parent_share(parts: Sequence[Mapping[bytes, int]]) -> tuple[dict[bytes, int], list[dict[bytes, int]]]:
    """``parts`` (one per shard, split by ``partition``) re-cut so that the parent's shard is smaller: it
    keeps a ``PARENT_WEIGHT`` share of part 0 and gives the rest to the other parts.

    Returns (the parent's words, the words of each shard process).  Any disjoint split gives the same
    merges; this one is stable (a second ``crc32``-derived number decides, not ``hash``).

    >>> parts = [{}, {}]
    >>> for b in range(200):
    ...     parts[zlib.crc32(bytes([b]) * 2) % 2][bytes([b]) * 2] = 1
    >>> mine, theirs = parent_share(parts)
    >>> len(mine), len(theirs[0])
    (74, 126)
    """
    shards = len(parts)
    keep = round(1024 * shards * PARENT_WEIGHT / (PARENT_WEIGHT + shards - 1))
    mine: dict[bytes, int] = {}
    theirs = [dict(part) for part in parts[1:]]
    for token, count in parts[0].items():
        h = zlib.crc32(token) // shards  # the part is crc32 % shards: use the other bits
        if h % 1024 < keep:
            mine[token] = count
        else:
            theirs[h % (shards - 1)][token] = count
    return mine, theirs


#: When the shards come home (v7's ``Merger.gather``): over each window of ``STALL_WINDOW`` merges, the
#: parent compares the wall time of its merges with the CPU time they took in every process, the
#: parent's own work and each shard's.  Idle, the shards work side by side and the wall time is well
#: below the CPU time.  One process on all the words spends more than that sum (docs/v7.md, "Gathering
#: the shards"), so the split has stopped paying only when the wall time exceeds ``STALL_RATIO`` times
#: the CPU time, ``STALLED_WINDOWS`` windows in a row (one slow window may be a passing hiccup).
STALL_RATIO = 1.5
STALL_WINDOW = 256
STALLED_WINDOWS = 2


class GatherWhenStalled:
    """The default gather rule, called after every merge with the merge's number, its wall time and
    its CPU time (parent and shards; timed by a :class:`StallWatch`).

    >>> rule = GatherWhenStalled(ratio=1.5, window=2, windows=2)
    >>> [rule(k, wall, 1.0) for k, wall in enumerate([1, 1, 2, 2, 1, 1, 2, 2, 2, 2], 1)]
    [False, False, False, False, False, False, False, False, False, True]
    """

    def __init__(self, ratio: float | None = None, window: int | None = None, windows: int | None = None):
        self.ratio = STALL_RATIO if ratio is None else ratio
        self.window = STALL_WINDOW if window is None else window
        self.windows = STALLED_WINDOWS if windows is None else windows
        self.wall = self.cpu = 0.0
        self.seen = self.stalled = 0

    def __call__(self, merge_number: int, wall: float, cpu: float) -> bool:
        self.wall += wall
        self.cpu += cpu
        self.seen += 1
        if self.seen < self.window:
            return False
        self.stalled = self.stalled + 1 if self.wall > self.ratio * self.cpu else 0
        self.wall = self.cpu = 0.0
        self.seen = 0
        return self.stalled >= self.windows


class StallWatch:
    """Times each of v7's merges for a gather rule ``rule(merge number, wall seconds, CPU seconds) -> bool``.

    The wall time runs from :meth:`start` to :meth:`stalled`; the CPU time is the parent's own from
    :meth:`start` to :meth:`parent_done` (not its wait for the answers) plus the shards' seconds.  The
    clocks exist so that a test can drive the rule without depending on the machine's speed.
    """

    def __init__(self, rule: Callable[[int, float, float], bool] | None = None, *,
                 clock: Callable[[], float] = time.perf_counter, cpu_clock: Callable[[], float] = time.thread_time):
        self.rule = GatherWhenStalled() if rule is None else rule
        self.clock, self.cpu_clock = clock, cpu_clock
        self._started = self._cpu_started = self._cpu = 0.0

    @classmethod
    def of(cls, gather_when) -> "StallWatch":
        """``gather_when`` as a watch: None is the default rule, a bare rule gets the real clocks."""
        return gather_when if isinstance(gather_when, StallWatch) else cls(gather_when)

    def start(self) -> None:
        self._started, self._cpu_started = self.clock(), self.cpu_clock()

    def parent_done(self) -> None:
        self._cpu = self.cpu_clock() - self._cpu_started

    def stalled(self, merge_number: int, shard_cpu: float) -> bool:
        """Whether the rule says to gather after merge ``merge_number``."""
        return self.rule(merge_number, self.clock() - self._started, self._cpu + shard_cpu)
