"""v8 without the summary bits: every listing of a word reads its record.

v8 keeps beside each record's offset a 32-bit summary of the pairs the word holds (a bit per pair, by a
hash); a listing whose bit is clear is skipped without reading the record, since the lazy index lists
words that lost the pair long ago.  Here no summary is made or read: every listing reads its record, and
the scan of its tokens finds the pair gone.  (The ref keeps its 8 bytes.)  Everything else is v8's.
"""

from __future__ import annotations

from bpe.lab.measure.ablation.v8 import merger_without
from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)

IDEA = "v8 without the summary bits (every stale listing reads its record)"

Merger = merger_without("no_summary_bits")
