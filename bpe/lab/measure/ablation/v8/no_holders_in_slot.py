"""v8 without holders in the slot: every pair's holders are an array of their own from the first word.

v8 keeps a pair's first two holders (word numbers) in the pair's slot itself, where the merge writes the
count anyway, and moves them to an array of their own, grown by doubling, only when a third word comes;
most pairs a merge makes are held by one or two words.  Here a pair's first word allocates its array
(8 entries, grown by doubling): a ``malloc`` per new pair.  Everything else is v8's.
"""

from __future__ import annotations

from bpe.lab.measure.ablation.v8 import merger_without
from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)

IDEA = "v8 with an array of holders per pair from its first word (a malloc per new pair)"

Merger = merger_without("no_holders_in_slot")
