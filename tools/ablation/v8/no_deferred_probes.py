"""v8 without deferred probes: each rewritten word's lost pairs are found in the table and lowered at once.

v8's merge adds a word's count to the rows of its neighbours x and y and finds each row's lost pair,
(x, a) or (b, y), once when the words are done, the buckets fetched ahead; a fresh token's pairs get
slots with no probe, filed at the end.  Here each word with one occurrence probes the table for its two
lost pairs and lowers them as it is rewritten, and every gained pair is looked up in the table when its
row is first filled.  The rows still gather the gains (v6's diff grouped by neighbour).  Everything else
is v8's.
"""

from __future__ import annotations

from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)
from tools.ablation.v8 import merger_without

IDEA = "v8 with a probe and a lowered count per word's lost pair, none deferred to the merge's end"

Merger = merger_without("no_deferred_probes")
