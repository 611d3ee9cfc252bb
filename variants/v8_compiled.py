r"""v8 — compiled: v6's algorithm on C arrays, its merge loop in Cython.

Unlike v6: the same algorithm (v4's fine-grained diff grouped by neighbour, v2's lazy index, v5's
lazy-deletion heap with the byte-order tie-break), its data in C arrays and its loop compiled
(``variants/_v8_merge.pyx``).  v6 had made every part of a merge a C call on Python objects: a
partition of a ``str``, a ``dict`` probe, a ``heapq`` push of a tuple.  What was left was the cost of
the objects themselves: each probe hashes a string and follows pointers to it, each count is a boxed
``int``, each word a separate ``str`` somewhere on the heap.  Here a word is a record in one block
(count, length, token ids), a pair a slot in one array found through an open-addressing table of
integer keys, and the heap an array of (count, slot): a merge's work is loads and stores, and the
first touch of each word, a cache miss, is what remains; the records are fetched ahead of use.

This file is the rung's Python side: the pre-tokenizer (v6's, unchanged: Koschei's article, too, kept
pre-tokenization in Python and handed only the merge to C++) and the ``Merger``, a Python subclass of
the compiled state whose ``select_best_pair`` and ``merge`` are compiled methods.  The compiled module
is built by ``pip install`` from ``pyproject.toml`` (setuptools and Cython); where no C compiler was
found at install time it is absent, and the rung says so in one line (:data:`UNAVAILABLE`) instead of
running.

What it leaves out: parallel merging (v7's idea; one core's merge is now a small part of the run);
a faster pre-tokenizer (now most of the run); the floor of v6's heap (every gained pair is pushed
into one array heap, a few percent of the merge phase in the profile); more than 2**31 tokens or pairs.

Complexity: as v6.  Memory: a word is a 16-byte head and 4 bytes a token (padded to 16) and a 4-byte
offset; a pair 32 bytes, an index entry 4, a heap entry 16: instead of Python objects of 30-70 bytes each.

Measured: docs/v8.md.

Walkthrough: docs/v8.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from bpe.counting.parallel import count_file_parallel_fast
from bpe.errors import BPEError
from bpe.interface import not_built

IDEA = "the merge compiled: v6's algorithm on C arrays (words in one block, pair slots, an array heap), in Cython"

try:
    from ._v8_merge import MergeState
except ImportError:  # built without a C compiler: the rest of the ladder works, v8 says why it does not
    MergeState = None

#: The line v8 answers with where its compiled merge was not built (its fix worded for how bpe-lab was installed).
NOT_BUILT = not_built("v8 is", "its compiled merge needs")
#: Why v8 cannot run here, or ``None`` when its compiled merge is built (the registry reads it).
UNAVAILABLE: str | None = None if MergeState is not None else NOT_BUILT

# v6's fast pre-tokenizer in v3's pool, unchanged.
count_pretokens = count_file_parallel_fast


class Merger(MergeState if MergeState is not None else object):
    """The compiled state itself: ``select_best_pair`` and ``merge`` are its compiled methods.

    Token ids: 0-255 the bytes, then one id per *distinct* merged byte string, as in v6 (two merges
    that make the same bytes, (a, bc) and (ab, c), make one token), kept by the state with their bytes.
    This class adds only what runs once: the check that v8 is built and the summary.
    (A Python ``select_best_pair`` and ``merge`` around the compiled ones cost a fifth of the merge
    phase on web-like text: about 7 microseconds a merge against a compiled merge of a few tens.)

    >>> merger = Merger({b"low": 5, b"lower": 2})
    >>> merger.select_best_pair()  # (o, w) and (l, o) tie at 7: the larger byte pair wins
    (b'o', b'w')
    >>> merger.merge((b"o", b"w")); merger.select_best_pair()
    (b'l', b'ow')
    """

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        if MergeState is None:
            raise BPEError(UNAVAILABLE)
        counts = pretoken_counts if isinstance(pretoken_counts, dict) else dict(pretoken_counts)  # a Counter is one
        super().__init__(counts)  # pair_count: the words' records, byte pairs' counts and holders, heap

    def summary(self) -> dict:
        """What the compiled loop counted: words read and reads that found the pair gone (the lazy index's
        cost), stale heap entries popped, and the C memory held at the end."""
        return {"word_visits": self.visits, "stale_visits": self.stale_visits, "stale_pops": self.stale_pops,
                "merge_memory_bytes": self.memory_bytes()}


if MergeState is None:  # nothing to run the examples on where v8 is not built: its words stay, not its examples
    Merger.__doc__ = Merger.__doc__.split("    >>>")[0].rstrip() + "\n"
