"""v6 with v5's pre-tokenizer (v5's ``count_pretokens``) and v6's merges.

The merges are v6's own; only the counting is v5's.  Where v5 and v6 count with the same function,
this row runs v6's code twice over, and its gap to v6 is the run-to-run noise.
"""

from __future__ import annotations

from bpe.variants.v5_heap import count_pretokens  # noqa: F401  (the row's one change)
from bpe.variants.v6_tuned import Merger  # noqa: F401

IDEA = "v6 counting with v5's pre-tokenizer"
