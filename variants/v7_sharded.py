r"""v7 — sharded: the words live in worker processes from counting to the last merge.

Unlike v6: the merge phase runs across processes.  The words (distinct pre-tokens) are split into
shards by a stable hash; the parent holds one shard and worker processes hold the others, each with
its words, their counts and its own lazy index (v6's technique).  The parent keeps what is global:
the pair counts and v6's heap.  Each merge is one round trip (:meth:`Merger.merge`):

1. the parent picks the best pair (v6's heap, byte-order tie-break) and sends ``(pair, new token,
   pairs to forget)`` to the shard processes, then rewrites its own shard while they rewrite theirs;
2. each :class:`Shard` rewrites its words holding the pair (v6's rewrite) and answers with its
   pair-count changes: ``[(pair, count lost), ...]`` and ``{new pair: count gained}``;
3. the parent adds the changes to the global counts and offers the gained pairs to the heap.  A pair
   whose global count reaches zero is sent to the shards with the next merge, so they drop its list
   (a shard cannot know that alone: the pair may live on in another shard).

Why this split pays where parallelising the max-pair search does not: the search is O(log H) on a
heap and cannot be cut into parts worth a message; the rewrite is O(words holding the pair) and is
cut by the shards for free.  What crosses a pipe per merge is the pair and the changes, never words.

Around the idea, :mod:`bpe.variants._v7_policy` decides how many shards the words and the free cores
are worth (one: v7 *is* v6; with no ``workers`` given a core is kept spare), the parent's share, and when
the shards come home (:meth:`Merger.gather`, then v6 goes on with the same merges);
:mod:`bpe.variants._v7_shards` runs the processes, their channels and the counts.

What it leaves out: shards do not say which pairs they hold (every merge goes to every shard
process); no pipelining (the next best pair depends on this merge's changes).

Complexity: as v6, with the per-merge rewrite divided among the shards, plus one round trip per
merge per shard and O(changed pairs per shard) parent work to apply the changes.

Walkthrough and measurements: docs/v7.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Mapping, Sequence

from bpe.counting.parallel import count_file_parallel_fast, partition
from bpe.counting.plain import add_counts
from bpe.split.patterns import DEFAULT_PATTERN
from bpe.training.merge_loop import Pair
from bpe.variants._v7_policy import StallWatch, merge_processes, parent_share, shard_count
from bpe.variants._v7_shards import ShardedCounts, ShardProcesses, count_into_shard_pool, gathered

from .v6_tuned import FlooredHeap, count_pairs, index_gained, subtract_lost
from .v6_tuned import Merger as V6Merger

IDEA = ("the merge phase across processes: words sharded, pair counts and heap in the parent "
        "(v6 itself below two shards' worth of words, without a core to spare, or once round trips stall)")


def split_counts(pretoken_counts: Mapping[bytes, int], shards: int) -> list[dict[bytes, int]]:
    """``pretoken_counts`` split into ``shards`` disjoint dicts, as the counting pool splits them."""
    parts: list[dict[bytes, int]] = [{} for _ in range(shards)]
    for token, count in pretoken_counts.items():
        parts[partition(token, shards)][token] = count
    return parts


class Shard:
    """One shard of the words: builds its words and pair counts, applies merges, answers with deltas.

    >>> shard = Shard({b"low": 5, b"lower": 2})
    >>> shard.initial_pair_counts["ow"]
    7
    >>> shard.merge("ow", "\u0100", [])   # (o, w) -> token 256: (l, o) and (w, e) lost, (l, 256) and (256, e) gained
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

    # v6's own rewrite (the diff grouped by neighbour), run on this shard's words and word_counts: it
    # returns the changes, ``(lost, gained)``, and applies none of them.
    rewrite = V6Merger.rewrite

    def merge(self, the_pair: str, new_char: str, forget: Iterable[str]) -> tuple[list, dict[str, int]] | None:
        """Rewrite the words holding ``the_pair`` (v6's rewrite); the count changes are returned, not
        applied: ``([(pair, count lost), ...], {pair: count gained})``, or None if no word holds it.
        ``forget``: pairs whose global count fell to zero, whose index lists are dropped first."""
        index = self.pair_to_words
        for pair in forget:
            index.pop(pair, None)
        listed = index.pop(the_pair, None)
        if listed is None:
            return None
        lost, gained = self.rewrite(listed, the_pair, new_char)  # gained: new pair -> [count, word ids]
        index_gained(index, gained)
        return lost, {pair: count for pair, (count, _) in gained.items()}


def count_pretokens(path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
                    end: int | None = None, on_bytes: Callable[[int], None] | None = None,
                    pattern: str = DEFAULT_PATTERN) -> ShardedCounts:
    """Count the file in the pool that will hold the shards; part ``p``'s counts stay in worker ``p``.  Another
    pattern than GPT-2's is counted as v6 counts it, by its plain counter in the same pool, and sharded the same.

    Too few processes or distinct pre-tokens for shard processes to pay (:func:`merge_processes`,
    :func:`shard_count`): the file is counted as v6 counts it, or the parts are gathered here and the
    pool stops, and v7 runs as v6.
    """
    processes = merge_processes(workers)
    if processes == 1 and workers is None:  # no shard process: count on every free core, as v6 does
        return ShardedCounts(local=count_file_parallel_fast(path, special_tokens, errors=errors, end=end,
                                                            on_bytes=on_bytes, pattern=pattern))
    return count_into_shard_pool(path, special_tokens, workers=processes, errors=errors, end=end, on_bytes=on_bytes,
                                 worth_shards=lambda distinct: shard_count(distinct, processes) > 1, pattern=pattern)


class Merger(V6Merger):
    """v6's heap in this process, v6's words in shards: one here, the others in processes.

    ``pretoken_counts`` is a :class:`~bpe.variants._v7_shards.ShardedCounts` (from :func:`count_pretokens`)
    or any mapping of pre-token bytes to counts, which is then split into shards here.  ``gather_when``
    decides when the shards come home: a rule ``(merge number, wall seconds, CPU seconds) -> bool`` or a
    :class:`~bpe.variants._v7_policy.StallWatch` (default: the stall rule on the real clocks).
    """

    def __init__(self, pretoken_counts, workers: int | None = None, *, gather_when=None):
        self._watch = StallWatch.of(gather_when)
        self.merges_done = 0
        self.gathered_at: int | None = None  # the merge after which the shards came here
        self._forget: list[str] = []  # pairs whose count fell to zero, told to the shards with the next merge
        self.shard_processes: ShardProcesses | None = None  # the processes holding the other shards
        self.parent_shard: Shard | None = None  # the shard this process holds
        self.shards_at_start = 1  # the parent's included (1: v6 in this process)
        if isinstance(pretoken_counts, ShardedCounts):
            if pretoken_counts.pool is not None:  # counted in the pool: worker 0's part comes here
                self.shard_processes, part_0 = ShardProcesses.from_counts(pretoken_counts)
                parts = [part_0] + [{}] * len(self.shard_processes.remote)
            pretoken_counts = pretoken_counts.local
        else:
            shards = shard_count(len(pretoken_counts), merge_processes(workers))
            if shards > 1:  # the parent holds one shard: shards - 1 processes
                self.shard_processes = ShardProcesses.start(shards - 1)
                parts = split_counts(pretoken_counts, shards)
        if self.shard_processes is None:  # too few words for a shard process to pay (or one worker, no fork): v6
            super().__init__(pretoken_counts)
            return
        self.shards_at_start = 1 + len(self.shard_processes.remote)
        try:
            mine, theirs = parent_share(parts)
            del parts
            self.shard_processes.start_building(Shard, theirs)
            del theirs
            self._init_tokens()
            self.parent_shard = Shard(mine)  # built while the processes build theirs
            self.pair_counts = dict(self.parent_shard.initial_pair_counts)
            for counts in self.shard_processes.built():
                add_counts(self.pair_counts, counts)
            self.queue = FlooredHeap(self.pair_counts, self.token_keys)
        except BaseException:
            self.close()
            raise
        gc.freeze()  # as v6: the heap, the counts and the parent's shard live until close(), which unfreezes

    def close(self) -> None:
        """Stop the shard processes (called by ``run_merges`` in every case: done, error, Ctrl-C)."""
        processes, self.shard_processes = self.shard_processes, None
        if processes is not None:
            processes.close()
        super().close()

    def merge(self, pair: Pair) -> None:
        """One round trip: the merge goes to every shard, their count changes come back and are added."""
        processes = self.shard_processes
        if processes is None:
            return super().merge(pair)
        self._watch.start()
        ids = self.token_ids
        the_pair = chr(ids[pair[0]]) + chr(ids[pair[1]])
        new_char = chr(self._new_token(*pair))
        forget, self._forget = self._forget, []
        gone: list[str] = []
        gained: set[str] = set()
        # The processes get the merge first; the parent rewrites its own shard while they rewrite theirs.
        processes.send(the_pair, new_char, forget)
        self._add_changes(self.parent_shard.merge(the_pair, new_char, forget), gone, gained)
        self._watch.parent_done()
        for changes in processes.answers():
            self._add_changes(changes, gone, gained)
        pair_counts = self.pair_counts
        pair_counts.pop(the_pair, None)
        # A pair lost in one shard may be gained in another (only when a merge makes bytes an earlier
        # merge made too): it is gone only if it is still at zero after every shard.
        self._forget = [pair for pair in gone if pair not in pair_counts]
        self.queue.offer(gained)  # with the totals over every shard
        self.merges_done += 1
        if self._watch.stalled(self.merges_done, processes.cpu_seconds):
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

        The pair counts and the heap are the parent's already; the shards' words and lazy indexes are
        joined (word ids shifted past the shards before).  The processes then stop.
        """
        if self.shard_processes is None:
            return
        self.words, self.word_counts, self.pair_to_words = gathered(self.shard_processes, self.parent_shard,
                                                                    self._forget)
        self._forget, self.parent_shard = [], None
        self.close()  # stops the processes and unfreezes; the gathered state is frozen again below
        gc.freeze()
        self.gathered_at = self.merges_done

    def summary(self) -> dict:
        """What the run did beyond its merges: how many shards it started with (the parent's included; 1:
        it ran as v6) and the merge after which the shards came here (None: never)."""
        return {"shards": self.shards_at_start, "gathered_at": self.gathered_at}

