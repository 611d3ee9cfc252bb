r"""v7 — sharded: the words live in worker processes from counting to the last merge.

What it adds over v6: the update stage, the largest one on web-like text, runs in parallel.  The
words (distinct pre-tokens) are split into ``workers`` shards by a stable hash: the parent holds one
shard itself and ``workers - 1`` worker processes hold the others, each with its words, their counts
and its own lazy index (v6's technique: a word is a str with one character per token).  The parent
also keeps what is global: the pair counts and v6's heap.  Each merge is one round trip:

1. the parent picks the best pair (v6's heap, byte-order tie-break) and sends ``(pair, new token,
   pairs to forget)`` to the shard processes, then rewrites its own shard while they rewrite theirs;
2. each :class:`Shard` rewrites its words holding the pair (v6's phases) and answers with its
   pair-count changes: ``[(pair, count lost), ...]`` and ``{new pair: count gained}``;
3. the parent adds the changes to the global counts and offers the gained pairs to the heap.  A pair
   whose global count reaches zero is sent to the shards with the next merge, so they drop its list.

Why the parent holds a shard: with 2 workers, two busy processes on two cores instead of three (two
shard processes and a parent that mostly waits).  It takes a smaller share (``PARENT_WEIGHT``), as
it also runs the heap and adds every shard's changes.

Why this split pays where parallelising the max-pair search does not: the search is O(log H) on a
heap and cannot be cut into parts worth a message; the rewrite is O(words holding the pair) and is
cut by the shards for free.  What crosses a pipe per merge is the pair and the changes, never words.

When the split stops paying, the shards come home: over each window of merges the parent compares
the wall time of its round trips with the CPU time the merges took in all processes (what one
process would have spent); when the round trips cost more (a core taken by another program, or the
last merges, each touching a few words), :meth:`Merger.gather` brings every shard's words here and
v7 goes on as v6, with the same merges.  With ``workers=1``, or fewer distinct pre-tokens than two
shards' worth (``MIN_WORDS_PER_SHARD`` each), v7 *is* v6 from the start.

The processes, their channels and the counts that stay in the counting pool's workers are
:mod:`bpe.training.shards`; this file is the idea.

What it leaves out: shards do not tell the parent which pairs they hold (every merge goes to every
shard process); a merge is not pipelined with the next selection (the next best pair depends on the
changes).

Complexity: as v6, with the per-merge rewrite divided among the shards, plus one round trip per
merge per shard and O(changed pairs per shard) parent work to apply the changes.

Measured (idle and with one core busy): docs/v7.md, "Idle and with one core busy".  Walkthrough: docs/v7.md.
"""

from __future__ import annotations

import gc
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import add
from types import SimpleNamespace

from bpe.training.merge_loop import Pair
from bpe.training.parallel import partition
from bpe.training.pool import default_workers
from bpe.training.pretokenize import add_counts
from bpe.training.shards import ShardedCounts, ShardProcesses, count_into_shard_pool

from .v6_tuned import FlooredHeap, Merger as V6Merger
from .v6_tuned import add_neighbour_changes, count_pairs, index_gained, rewrite_words, subtract_lost

IDEA = ("words sharded across worker processes that stay alive from counting to the last merge "
        "(v6 itself below two shards' worth of words, or once round trips stall)")
POOLED = True

#: A shard process pays for itself only with enough words to rewrite: below this many distinct words
#: per shard, fewer shards are used, and with one shard v7 is v6 in this process (docs/v7.md, "Where
#: the time goes").
MIN_WORDS_PER_SHARD = 150_000


#: How many words the parent's own shard holds, against 1 for a shard process: the parent also runs
#: the heap and sums the deltas, so it takes a smaller share.  With 2 workers it keeps 0.6 / 1.6 of
#: the words, which balanced the parent's and the shard process's CPU time (docs/v7.md).
PARENT_WEIGHT = 0.6


def shard_count(words: int, workers: int | None) -> int:
    """How many shards ``words`` distinct pre-tokens are worth, the parent's included: 1 means v6 in this process.

    >>> shard_count(100_000, 2), shard_count(400_000, 2), shard_count(400_000, 16), shard_count(10**7, 1)
    (1, 2, 2, 1)
    """
    workers = default_workers() if workers is None else workers
    return max(1, min(workers, words // MIN_WORDS_PER_SHARD))


def split_counts(pretoken_counts: Mapping[bytes, int], shards: int) -> list[dict[bytes, int]]:
    """``pretoken_counts`` split into ``shards`` disjoint dicts, as the counting pool splits them."""
    parts: list[dict[bytes, int]] = [{} for _ in range(shards)]
    for token, count in pretoken_counts.items():
        parts[partition(token, shards)][token] = count
    return parts


def parent_share(parts: Sequence[Mapping[bytes, int]]) -> tuple[dict[bytes, int], list[dict[bytes, int]]]:
    """``parts`` (one per shard, as :func:`split_counts` makes them) re-cut so that the parent's shard is
    smaller: it keeps a ``PARENT_WEIGHT`` share of part 0 and gives the rest to the other parts.

    Returns (the parent's words, the words of each shard process).  Any disjoint split gives the same
    merges; this one is stable (a second ``crc32``-derived number decides, not ``hash``).

    >>> mine, theirs = parent_share(split_counts({bytes([b]) * 2: 1 for b in range(200)}, 2))
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


class Shard:
    """One shard of the words: builds its words and pair counts, applies merges, answers with deltas.

    >>> shard = Shard({b"low": 5, b"lower": 2})
    >>> shard.initial_pair_counts["ow"]
    7
    >>> shard.merge("ow", "\u0100", "")   # (o, w) -> token 256: (l, o) and (w, e) lost, (l, 256) and (256, e) gained
    ([('we', 2), ('lo', 7)], {'Āe': 2, 'lĀ': 7})
    >>> shard.words
    ['lĀ', 'lĀer']
    """

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        tokens = [token for token in pretoken_counts if len(token) > 1]
        self.words = [token.decode("latin-1") for token in tokens]  # as v6: chr(id) per token
        self.word_counts = list(map(pretoken_counts.__getitem__, tokens))
        collecting = gc.isenabled()
        gc.disable()  # no cycles in what is built (as v6)
        try:
            self.initial_pair_counts, self.pair_to_words = count_pairs(self.words, self.word_counts)
        finally:
            if collecting:
                gc.enable()

    def merge(self, the_pair: str, new_char: str, forget: str) -> tuple[list, dict[str, int]] | None:
        """Rewrite the words holding ``the_pair``; ``([(pair, count lost), ...], {pair: count gained})``.

        ``forget`` is a string of pairs (two characters each) whose global count fell to zero: their
        index lists are dropped first.  None when no word of this shard holds ``the_pair``.
        v6's phases of a merge; the count changes are returned, not applied.
        """
        index = self.pair_to_words
        for i in range(0, len(forget), 2):
            index.pop(forget[i:i + 2], None)
        listed = index.pop(the_pair, None)
        if listed is None:
            return None
        lost_in_several: dict[str, int] = {}
        gained: dict[str, list] = {}  # new pairs (all contain new) -> [count gained, word ids]
        by_previous, by_next = rewrite_words(self.words, self.word_counts, listed, the_pair, new_char,
                                             lost_in_several, gained)
        lost = add_neighbour_changes(by_previous, by_next, the_pair, new_char, self.word_counts, gained)
        lost += lost_in_several.items()
        index_gained(index, gained)
        return lost, {pair: count for pair, (count, _) in gained.items()}


def count_pretokens(path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
                    end: int | None = None, on_bytes: Callable[[int], None] | None = None) -> ShardedCounts:
    """Count the file in the pool that will hold the shards; part ``p``'s counts stay in worker ``p``.

    Too few distinct pre-tokens for shard processes to pay (:func:`shard_count`): the parts are
    gathered here and the pool stops, and v7 runs as v6.
    """
    return count_into_shard_pool(path, special_tokens, workers=workers, errors=errors, end=end, on_bytes=on_bytes,
                                 worth_shards=lambda distinct: shard_count(distinct, workers) > 1)


#: When the shards come home (:meth:`Merger.gather`): over each window of ``STALL_WINDOW`` merges, the
#: parent compares the wall time of its merges with the CPU time they took in every process, the
#: parent's own work and each shard's.  Idle, the shards work side by side and the wall time is well
#: below the CPU time.  One process on all the words spends more than that sum (docs/v7.md, "Gathering
#: the shards"), so the split has stopped paying only when the wall time exceeds ``STALL_RATIO`` times
#: the CPU time, ``STALLED_WINDOWS`` windows in a row (one slow window may be a passing hiccup).
STALL_RATIO = 1.5
STALL_WINDOW = 256
STALLED_WINDOWS = 2


class GatherWhenStalled:
    """The default rule for :meth:`Merger.gather`, called after every merge with the merge's number,
    its wall time and its CPU time (parent and shards; from the merger's clocks, which a test injects).

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


class Merger(V6Merger):
    """v6's heap in this process, v6's words in shards: one here, the others in processes.

    ``pretoken_counts`` is a :class:`~bpe.training.shards.ShardedCounts` (from :func:`count_pretokens`)
    or any mapping of pre-token bytes to counts, which is then split into shards here.
    ``gather_when(merge number, wall seconds, CPU seconds) -> bool`` decides when the shards come home
    (default :class:`GatherWhenStalled`); ``clock`` and ``cpu_clock`` time the merges for it.
    """

    def __init__(self, pretoken_counts, workers: int | None = None, *, gather_when=None,
                 clock=time.perf_counter, cpu_clock=time.thread_time):
        self._gather_when = GatherWhenStalled() if gather_when is None else gather_when
        self._clock, self._cpu_clock = clock, cpu_clock
        self.merges_done = 0
        self.gathered_at: int | None = None  # the merge after which the shards came here
        self._forget = ""  # pairs whose count fell to zero, told to the shards with the next merge
        self._shards = None
        if isinstance(pretoken_counts, ShardedCounts):
            if pretoken_counts.pool is not None:  # counted in the pool: worker 0's part comes here
                self._shards, part_0 = ShardProcesses.from_counts(pretoken_counts)
                parts = [part_0] + [{}] * len(self._shards.remote)
            pretoken_counts = pretoken_counts.local
        else:
            shards = shard_count(len(pretoken_counts), workers)
            if shards > 1:  # the parent holds one shard: shards - 1 processes
                self._shards = ShardProcesses.start(shards - 1)
                parts = split_counts(pretoken_counts, shards)
        if self._shards is None:  # too few words for a shard process to pay (or one worker, no fork): v6
            super().__init__(pretoken_counts)
            return
        try:
            mine, theirs = parent_share(parts)
            del parts
            self._shards.start_building(Shard, theirs)
            del theirs
            self._init_tokens()
            self._shard = Shard(mine)  # built while the processes build theirs
            self.pair_counts = dict(self._shard.initial_pair_counts)
            for counts in self._shards.built():
                add_counts(self.pair_counts, counts)
            self.queue = FlooredHeap(self.pair_counts, self.token_keys)
        except BaseException:
            self.close()
            raise
        gc.freeze()  # as v6: the heap, the counts and the parent's shard live until close(), which unfreezes

    def close(self) -> None:
        """Stop the shard processes (called by ``run_merges`` in every case: done, error, Ctrl-C)."""
        shards, self._shards = self._shards, None
        if shards is not None:
            shards.close()
        super().close()

    def summary(self) -> dict:
        """What the run's observer hears after the merges: the merge after which the shards came here."""
        return {"gathered_at": self.gathered_at}

    def merge(self, pair: Pair) -> None:
        if self._shards is None:
            return super().merge(pair)
        started, cpu_started = self._clock(), self._cpu_clock()
        ids = self.token_ids
        the_pair = chr(ids[pair[0]]) + chr(ids[pair[1]])
        new_char = chr(self._new_token(*pair))
        forget, self._forget = self._forget, ""
        gone: list[str] = []
        gained: set[str] = set()
        # The processes get the merge first; the parent rewrites its own shard while they rewrite theirs.
        self._shards.send((the_pair, new_char, forget))
        self._add_changes(self._shard.merge(the_pair, new_char, forget), gone, gained)
        cpu = self._cpu_clock() - cpu_started
        for changes, seconds in self._shards.answers():
            self._add_changes(changes, gone, gained)
            cpu += seconds
        pair_counts = self.pair_counts
        pair_counts.pop(the_pair, None)
        # A pair lost in one shard may be gained in another (only when a merge makes bytes an earlier
        # merge made too): it is gone only if it is still at zero after every shard.
        self._forget = "".join(pair for pair in gone if pair not in pair_counts)
        self.queue.offer(gained)  # with the totals over every shard
        self.merges_done += 1
        if self._gather_when(self.merges_done, self._clock() - started, cpu):
            self.gather()

    def _add_changes(self, changes, gone: list[str], gained: set[str]) -> None:
        """Apply one shard's answer (None: it held no word with the pair) to the global pair counts."""
        if changes is not None:
            lost, gains = changes
            subtract_lost(self.pair_counts, lost, gone)
            gained.update(gains)
            add_counts(self.pair_counts, gains)  # most gained pairs are new: copied in C

    def gather(self) -> None:
        """Bring every shard's words here and go on as v6 in this process: the same merges from here.

        The pair counts and the heap are the parent's already; the shards' words are joined and their
        lazy indexes too (word ids shifted past the shards before), less the pairs at zero that the
        shards have not been told of yet, which v6 would have dropped.  The processes then stop.
        """
        if self._shards is None:
            return
        collecting = gc.isenabled()
        gc.disable()  # as in v6's build: no cycles in what comes back
        try:
            # the processes' shards first: they are the larger, and the first is extended, not copied
            self.words, self.word_counts, self.pair_to_words = joined_shards(
                self._shards.states() + [self._shard_state()])
            for i in range(0, len(self._forget), 2):
                self.pair_to_words.pop(self._forget[i:i + 2], None)
        finally:
            if collecting:
                gc.enable()
        self._forget, self._shard = "", None
        self.close()  # stops the processes and unfreezes; the gathered state is frozen again below
        gc.freeze()
        self.gathered_at = self.merges_done

    def _shard_state(self) -> tuple:
        return self._shard.words, self._shard.word_counts, self._shard.pair_to_words

    def trace_state(self) -> dict:
        """The words of every shard, numbered across shards, for ``bpe trace`` only."""
        if self._shards is None:
            return super().trace_state()
        # the parent's shard last: joining extends the first shard's lists, and this one lives on
        words, word_counts, index = joined_shards(self._shards.states() + [self._shard_state()])
        view = SimpleNamespace(token_bytes=self.token_bytes, pair_counts=self.pair_counts, queue=self.queue,
                               words=words, word_counts=word_counts, pair_to_words=index)
        return V6Merger.trace_state(view)


def joined_shards(states: list[tuple]) -> tuple[list[str], list[int], dict[str, list[int]]]:
    """Shards' ``(words, word_counts, pair_to_words)`` as one, word ids numbered across the shards in
    order.  The first shard's lists are extended in place; the others are left as they were."""
    words, word_counts, index = states[0]
    for shard_words, shard_counts, shard_index in states[1:]:
        offset = len(words)
        words += shard_words
        word_counts += shard_counts
        for pair, listed in shard_index.items():
            moved = list(map(add, listed, repeat(offset)))  # in C
            mine = index.get(pair)
            if mine is None:
                index[pair] = moved
            else:
                mine += moved
    return words, word_counts, index
