"""v10 with 32-bit token ids from the start: the merge compiled with ``V10_NARROW_IDS=0``.

No record holds 16-bit ids: a word's ids take 4 bytes each, where the rung's take 2 while the vocab has at
most 65,536 tokens, so every record is about twice as long.  Everything else is v10's.
"""

from __future__ import annotations

from bpe.variants.v10_threads_compact import count_pretokens  # noqa: F401  (v10's: v9's counting)
from tools.ablation.v10 import merger_with

IDEA = "v10 with 32-bit token ids from the start (every record's ids twice as long)"

Merger = merger_with("wide_ids")
