"""v5 — heap selection with lazy deletion: pop the best pair instead of scanning every pair.

Unlike v4: the best pair is popped from a heap instead of found by a scan. ``select_best_pair`` was
a ``max()`` over every live pair, O(P) per merge and the dominant stage of v4. v5 keeps a max-heap
of ``(count, pair)`` entries beside ``pair_counts``. Every pair whose count v4's update changed is
pushed again with its new count, once per merge (a pair touched in many words is pushed once, with
its final count); the old entry is left where it is (lazy deletion). Selecting pops entries until
the top one is *live*, i.e. its count equals the pair's current count in ``pair_counts``; every
skipped entry is stale and is counted in ``stale_pops``. The live top is only peeked at, not popped:
once the pair is merged its count drops to zero and the entry becomes stale like any other.

The heap key.  ``heapq`` is a min-heap and the rule is "largest count, then largest
``(bytes, bytes)`` pair".  Negating the count handles the first part; bytes cannot be negated, so
each token gets an *order-reversing* key: the tuple of ``255 - byte`` for its bytes followed by
``256``.  A larger byte becomes a smaller number, and the trailing 256 (larger than any
``255 - byte``) makes a longer token sort before its own prefix (``b"ab" > b"a"``, so ``b"ab"``
must pop first).  Hence for tokens ``s``, ``t``: ``s > t`` exactly when ``key(s) < key(t)``, and the
entry ``(-count, key(a), key(b), pair)`` pops in exactly the CS336 order, one O(log n) pop per
entry and no ties left to resolve (distinct pairs have distinct keys).  The alternative, popping
every live entry at the top count and taking the ``max()`` by bytes, needs re-pushing the losers on
each merge; a wrapper class with a reversed ``__lt__`` calls Python code on every comparison.
Keys are tuples of small ints, compared in C, and are cached per token.

v5 subclasses v4's merger: the update is v4's, and v5 hears of every changed count through v4's
``_change_pair_count``, then pushes each changed pair once when ``merge`` returns.

What it leaves out: stale entries stay in the heap until they surface (memory); the update is still
v4's O(length) Python loop per affected word, which is now the largest stage (v6).

Complexity: per merge O((1 + stale pops + pushes) · log H) for heap size H instead of O(P); each
pair changed by a merge pushes one entry, so total heap work is O(pairs changed, summed over merges,
· log H), and the per-1,000-merge time no longer grows with the number of live pairs.

Measured: select against v4's, and the per-1,000-merge times, docs/v5.md.

Walkthrough: docs/v5.md.

>>> merger = Merger({b"ab": 3, b"ba": 3, b"a": 1})
>>> merger.select_best_pair()   # (a, b) and (b, a) tie at 3: the larger pair wins
(b'b', b'a')
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from bpe.counting.parallel import count_file_parallel
from bpe.training.merge_loop import Pair

from .v4_fine_grained_diff import Merger as V4Merger

IDEA = "max-heap of (count, pair) with lazy deletion replaces the max() scan"
count_pretokens = count_file_parallel


def reversed_order_key(token: bytes) -> tuple[int, ...]:
    """A key that sorts tokens in *descending* byte order.

    >>> sorted([b"a", b"ab", b"b", b"\\x00"], key=reversed_order_key)
    [b'b', b'ab', b'a', b'\\x00']
    """
    return tuple(255 - byte for byte in token) + (256,)


class Merger(V4Merger):
    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        super().__init__(pretoken_counts)
        self.stale_pops = 0
        self._changed_pairs: set[Pair] = set()
        self._token_keys: dict[bytes, tuple[int, ...]] = {}
        self.heap = [self._heap_entry(pair, count) for pair, count in self.pair_counts.items()]
        heapq.heapify(self.heap)

    def _heap_entry(self, pair: Pair, count: int) -> tuple:
        keys = self._token_keys
        first, second = pair
        first_key = keys.get(first)
        if first_key is None:
            first_key = keys[first] = reversed_order_key(first)
        second_key = keys.get(second)
        if second_key is None:
            second_key = keys[second] = reversed_order_key(second)
        return (-count, first_key, second_key, pair)

    def _change_pair_count(self, pair: Pair, change: int) -> int:
        self._changed_pairs.add(pair)  # pushed once, with its final count, when the merge is done
        return super()._change_pair_count(pair, change)

    def merge(self, pair: Pair) -> None:
        self._changed_pairs = changed = set()
        super().merge(pair)
        pair_counts, heap = self.pair_counts, self.heap
        for changed_pair in changed:
            count = pair_counts.get(changed_pair)
            if count:  # the entry carrying the old count is now stale; it is skipped when it surfaces
                heapq.heappush(heap, self._heap_entry(changed_pair, count))

    def select_best_pair(self) -> Pair | None:
        heap, pair_counts = self.heap, self.pair_counts
        while heap:
            negative_count, _, _, pair = heap[0]
            if pair_counts.get(pair) == -negative_count:
                return pair
            heapq.heappop(heap)
            self.stale_pops += 1
        return None

    def set_aside(self, pair: Pair) -> None:
        """The pair just selected is never to be merged: its live entry, the top, is popped (one pushed again
        if its count rises surfaces, and is set aside again)."""
        heapq.heappop(self.heap)
