"""v6 without the floor under its heap: every pair goes into the heap.

The plain lazy heap (v5's, with v6's byte-order keys): the floor is 1 from the start, so no pair waits
in a bucket; every pair is pushed when the heap is built and every pair a merge makes is pushed too,
though most never come near the top.  Everything else is v6's.
"""

from __future__ import annotations

from bpe.variants.v6_tuned import (
    FlooredHeap,
    count_pretokens,  # noqa: F401  (v6's)
)
from bpe.variants.v6_tuned import Merger as V6Merger

IDEA = "v6 with every pair in its heap (no floor, no buckets)"


class Heap(FlooredHeap):
    """v6's heap with the floor at 1 from the start: nothing waits."""

    @staticmethod
    def first_floor_bits(top: int) -> int:
        return 0


class Merger(V6Merger):
    def new_queue(self) -> Heap:
        return Heap(self.pair_counts, self.token_keys)
