"""v3 counting in one worker process, whatever the run asks for: beside v3 with two, in one bench, what the
pool's second worker buys the plain counter (docs/v3.md; v8's twin, with the fast counter, is
``tools/ablation/v8/one_counting_worker.py``).

Not a row of v6's ablation: a candidate for ``bpe bench``, whose runs take turns with v3's.  The merge is v3's.

Example: ``python -m bpe bench --variant v3,tools/ablation/v3_one_counting_worker.py --workers 2
--data webtext-synth-100MB --vocab-size 257`` (no merge: the counting alone).
"""

from __future__ import annotations

from bpe.counting.parallel import count_file_parallel
from bpe.variants.v3_parallel_pretokenize import Merger  # noqa: F401  (v3's)

IDEA = "v3 with one counting worker process"


def count_pretokens(path, special_tokens, *, workers=None, **settings):
    """v3's counter (the plain GPT-2 pattern in the pool) with one worker, ``workers`` set aside."""
    return count_file_parallel(path, special_tokens, workers=1, **settings)
