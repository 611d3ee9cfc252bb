"""v3 — multiprocessing pre-tokenization: count the file chunk by chunk in a process pool.

The idea, over v2: nothing changes in the merge algorithm (the ``Merger`` is v2's, imported unchanged);
the pre-tokenize/count stage, which is regex work over every byte of the corpus and the largest
stage of v2 on a big file, is spread over ``workers`` processes (default ``os.cpu_count()``) by
:func:`bpe.training.parallel.count_file_parallel`:

* **Chunking rule.** The file is cut near evenly spaced byte offsets, searching forward (in bytes,
  without decoding) for the start of a special token, the place where the text is split anyway.
  A file with no special token is cut at a ``\\n`` that follows an ASCII non-space byte, where no
  GPT-2 pre-token can continue across the cut; a file with neither is one chunk.  So the chunk
  counts always sum to exactly the serial counts.
* **Memory bound.** The parent never reads the file as one string: each worker opens the file and
  reads only its own byte range, so peak memory is about one chunk per worker (chunks are capped at
  32 MB) plus the per-chunk counts, which are small next to the text.
* **Load balance.** About 8 chunks per worker (none below 64 KB), so one slow chunk does not leave
  the other workers idle at the end.
* A failing worker (invalid UTF-8, an exception, a killed process) makes the whole call raise one
  :class:`~bpe.errors.BPEError` naming the file and byte range; the pool is torn down.

What it leaves out: any change to the merge loop (select is still v2's O(P) ``max()``, the update
still subtracts and re-adds every pair of an affected word); and the pool only pays when a core is
free and the file is large: on the 2.3 MB shipped corpus, starting it costs about what it saves.

Complexity: the same O(total bytes) work as v2's pre-tokenizer, divided by the number of workers,
plus O(distinct pre-tokens per chunk) to send and sum the counts.

Headline: the pretokenize stage 1.4-1.7x faster than v2's serial one with 2 workers on an idle
2-core machine, and no faster when another job holds a core (``python -m bpe bench --variant v2,v3
--data gutenberg-books --vocab-size 300 --repeat 3 --workers 2``; docs/v3.md, "Measured").

Walkthrough: docs/v3.md.
"""

from bpe.training.parallel import count_file_parallel
from variants.v2_inverted_index import Merger  # the merge algorithm does not change

__all__ = ["IDEA", "Merger", "count_pretokens"]

IDEA = "multiprocessing pre-tokenization: chunks cut at special tokens, counted in a process pool"
count_pretokens = count_file_parallel
