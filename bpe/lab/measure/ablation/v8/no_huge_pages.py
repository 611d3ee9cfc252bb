"""v8 without huge pages: its large blocks are left to the system's pages.

v8 asks Linux (``madvise(MADV_HUGEPAGE)``) to back the blocks it reads at random (the records, the refs,
the pair table, the build's holders, the heap, and any block grown past 4 MiB) with 2 MiB pages, so that
a random read misses the TLB less.  Here nothing is asked: the blocks get what the system gives by
default (4 KiB pages where transparent huge pages are set to ``madvise``).  Everything else is v8's.
"""

from __future__ import annotations

from bpe.lab.measure.ablation.v8 import merger_without
from bpe.variants.v8_compiled import count_pretokens  # noqa: F401  (v8's)

IDEA = "v8 without huge pages (no madvise on its large blocks)"

Merger = merger_without("no_huge_pages")
