"""v6 without its handling of the garbage collector: the collector runs as it will.

The plain build: the collector stays on while the words, the index and the heap are built, and
nothing is frozen afterwards, so the collector walks the index and the heap again during the merges.
Everything else is v6's.
"""

from __future__ import annotations

from bpe.variants.v6_tuned import Merger as V6Merger
from bpe.variants.v6_tuned import count_pretokens  # noqa: F401  (v6's)

IDEA = "v6 with the garbage collector left alone (not off for the build, nothing frozen)"


class Merger(V6Merger):
    def build(self, words: list[str], counts: list[int]) -> None:
        self.build_structures(words, counts)

    def close(self) -> None:
        pass  # nothing was frozen
