"""v10 with exact holder lists: the merge compiled with ``V10_EXACT_HOLDERS=1``.

A word that leaves a pair is found on the pair's sorted list and marked dead, so a merge reads only the words
that hold its pair and makes no stale visit; the price is the search on that list.  Everything else is v10's.
"""

from __future__ import annotations

from bpe.variants.v10_threads_compact import count_pretokens  # noqa: F401  (v10's: v9's counting)
from tools.ablation.v10 import merger_with

IDEA = "v10 with exact holder lists (a word that leaves a pair found on its list and marked dead)"

Merger = merger_with("exact_holders")
