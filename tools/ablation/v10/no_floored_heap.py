"""v10 with every pair in its heap: the merge compiled with ``V10_FLOORED_HEAP=0``.

Every pair a merge gains is pushed, as v8 pushes them, where the rung heaps only the pairs near the top (v6's
floor) and the others when the floor comes down to them.  Everything else is v10's.
"""

from __future__ import annotations

from bpe.variants.v10_threads_compact import count_pretokens  # noqa: F401  (v10's: v9's counting)
from tools.ablation.v10 import merger_with

IDEA = "v10 with every pair in its heap (no floor)"

Merger = merger_with("no_floored_heap")
