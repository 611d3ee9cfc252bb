"""v8 counting in one worker process, whatever the run asks for: beside v8 with two, in one bench, what the
pool's second worker buys v8's pre-tokenizing (docs/v9.md, "The idea").

Not a row of v8's ablation (which holds the merge phase to v8's): a candidate for ``bpe bench``, whose runs
take turns with v8's, so that a slow spell of the machine falls on both alike.  The merge is v8's.

Example: ``python -m bpe bench --variant v8,tools/ablation/v8/one_counting_worker.py --workers 2
--data webtext-synth-100MB``.
"""

from __future__ import annotations

from bpe.counting.parallel import count_file_parallel_fast
from bpe.variants.v8_compiled import Merger  # noqa: F401  (v8's)

IDEA = "v8 with one counting worker process"


def count_pretokens(path, special_tokens, *, workers=None, **settings):
    """v8's counter (v6's fast pre-tokenizer in the pool) with one worker, ``workers`` set aside."""
    return count_file_parallel_fast(path, special_tokens, workers=1, **settings)
