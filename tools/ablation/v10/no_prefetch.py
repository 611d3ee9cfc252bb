"""v10 without prefetching: the merge compiled with ``V10_PREFETCH=0``.

Nothing is asked for ahead (records, buckets, slots), so each cache miss waits for the one before, as in v8's
row without it.  Everything else is v10's.
"""

from __future__ import annotations

from bpe.variants.v10_threads_compact import count_pretokens  # noqa: F401  (v10's: v9's counting)
from tools.ablation.v10 import merger_with

IDEA = "v10 without prefetching (each record, bucket and slot read when reached)"

Merger = merger_with("no_prefetch")
