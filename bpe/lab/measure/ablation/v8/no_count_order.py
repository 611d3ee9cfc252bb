"""v8 without the count order: the records are laid out in the order the pre-tokens come.

v8 lays the words' records out by count, the most frequent first (bucketed by the count's bit length),
so that the words holding the pairs merged most often sit together in the cache.  Here the records
follow the counts' own order (a dict's, or v9's arrays').  Everything else is v8's.
"""

from __future__ import annotations

from bpe.lab.measure.ablation.v8 import merger_without
from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)

IDEA = "v8 with its records in the counts' order, not the most frequent first"

Merger = merger_without("no_count_order")
