"""v3 — multiprocessing pre-tokenization: count the file chunk by chunk in a process pool.

Unlike v2: the counting runs in processes, and that is all. Nothing changes in the merge algorithm
(the ``Merger`` is v2's, imported unchanged) and nothing in the counting (each worker runs v1's and
v2's plain counter, ``count_text`` in ``bpe/counting/plain.py``: the GPT-2 pattern's
``findall`` and a ``Counter``); the pre-tokenize/count stage, regex work over every byte of the
corpus and v2's largest stage on a big file, is spread over ``workers`` processes (by default the
cores other processes leave free). The lesson is in two modules, each opened by the part that teaches it;
read them in this order:

* ``bpe/split/chunking.py`` — **where a file may be cut**: at a special token's start, or before
  ASCII whitespace that follows a non-space character (no GPT-2 pre-token continues across either),
  never inside any occurrence of a special token.  So the chunks' counts sum to exactly the serial
  counts, and a file without special tokens is still cut.
* ``bpe/counting/parallel.py`` — **the map and the reduce**: workers pull chunks (about 8 each, for
  load balance), each keeps a running count; the counts are split by a hash of the pre-token, worker
  ``p`` sums part ``p`` from everyone, and the parent joins the disjoint parts with ``dict.update``.

What it leaves out: any change to the merge loop (select is still v2's O(P) ``max()``, the update
still subtracts and re-adds every pair of an affected word); and, as hardening rather than the idea,
``bpe/running/pool.py``, which starts the workers and makes every failure (a worker killed, Ctrl-C, a
bad byte) one clear error with no process left over.

Complexity: the same O(total bytes) regex work as v2, divided by the workers, plus O(distinct
pre-tokens) to move and sum the counts, also divided by the workers.  Memory: one chunk (at most
32 MB) and its counts per worker; the parent never holds the text.

Measured: 2 workers against 1 on web-like text, with the second core free and busy, docs/v3.md,
"Measured".

Walkthrough: docs/v3.md.
"""

from bpe.counting.parallel import count_file_parallel

from .v2_inverted_index import Merger  # the merge algorithm does not change

__all__ = ["IDEA", "Merger", "count_pretokens"]

IDEA = "multiprocessing pre-tokenization: chunks cut at special tokens, counted in a process pool"
count_pretokens = count_file_parallel
