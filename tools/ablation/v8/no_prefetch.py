"""v8 without prefetching: each offset, record, table bucket and slot is read when the loop reaches it.

v8's merge asks for the offset of the word two listings ahead and the record of the word one listing ahead
(``__builtin_prefetch``), and at the merge's end for the buckets and slots of the pairs it lowers and
files a few rows ahead, so that their cache misses overlap.  Here nothing is asked for ahead: each miss
waits for the one before.  Everything else is v8's.
"""

from __future__ import annotations

from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)
from tools.ablation.v8 import merger_without

IDEA = "v8 without prefetching (each record, bucket and slot read when reached)"

Merger = merger_without("no_prefetch")
