"""v10 with every merge on the calling thread: the rung's own build, its compact state, no merge shared.

The counting still runs on the workers asked for; only the merge's threads are held to one, so the row
measures what sharing a merge's rewrites with worker threads adds to the compact state alone.
"""

from __future__ import annotations

from bpe.variants import v10_threads_compact as v10
from bpe.variants.v10_threads_compact import count_pretokens  # noqa: F401  (v10's: v9's counting)

IDEA = "v10 with every merge on the calling thread (compact, not shared)"


class Merger(v10.Merger):
    """v10's Merger with one merge thread, whatever the counts were counted with."""

    def __new__(cls, pretoken_counts, threads=None):
        return super().__new__(cls, pretoken_counts, 1)

    def __init__(self, pretoken_counts, threads=None):
        super().__init__(pretoken_counts, 1)
