"""The work each rung does, counted on the rung's own code: the walkthrough's metrics, and the counting merger
of a rung built by the twin its row names (:mod:`bpe.lab.rung_twins`).

Every counter is an operation on a structure, never a formula: what a metric says is what the rung did.
:data:`METRICS` names them per rung; the build's work (before merge 1) is kept apart.

>>> merger, tally = counted_merger("v2", {b"low": 5, b"lower": 2, b"newest": 6})
>>> pair = merger.select_best_pair(); merger.merge(pair)
>>> pair, tally["words visited"], tally["pairs scanned"]
((b'w', b'e'), 2, 8)
"""

from __future__ import annotations

from collections.abc import Mapping

from bpe.errors import BPEError
from bpe.lab.rung_twins import Tally, indexed_twin
from bpe.lab.rungs import RUNGS, rung_row
from bpe.training.registry import VARIANTS

#: The rungs whose work is counted, and what is counted for each (in the order shown), from their rows in
#: the lab's table of rungs (bpe/lab/rungs.py); a compiled rung not built here is left out: nothing to count.
#: A metric in :data:`PARTS` is a part of another (its stale share), so it is left out of a rung's total.
METRICS: dict[str, tuple[str, ...]] = {name: row.counted for name, row in RUNGS.items()
                                       if row.counted and name in VARIANTS}
PARTS = {"stale visits"}

#: What each metric counts, shown on the page beside it.
MEANINGS = {
    "pairs recounted": "adjacent pairs counted again, in every word (Counter writes in count_pairs)",
    "pairs scanned": "pairs max() walked to select (iterations over the pair counts)",
    "words rewritten": "calls of merge_word: every word, holding the pair or not",
    "words visited": "words the merge looked at, reached through the index pair -> words",
    "stale visits": "of those, words listed by the lazy index that no longer hold the pair",
    "pair counts written": "writes to the pair-count dict (set, delete)",
    "heap pushes": "heap entries pushed",
    "stale pops": "heap entries popped or re-keyed because their count was out of date",
}


def not_counted(name: str) -> str:
    """Why ``name`` gets no counts: the one line for a rung or file the walkthrough does not count."""
    why = [row.uncounted for row in RUNGS.values() if row.uncounted]  # the rows that say why they are left out
    return (f"the walkthrough counts the work of {', '.join(METRICS)}, not {name!r} "
            f"({'; '.join([*why, 'a file of your own: bpe trace --variant FILE'])})")


def counted_merger(rung: str, pretoken_counts: Mapping[bytes, int]):
    """A counting merger of ``rung`` built on ``pretoken_counts``, and the tally it adds to."""
    if rung not in METRICS:
        raise BPEError(not_counted(rung))
    tally = Tally()
    twin = rung_row(rung).counter or indexed_twin  # none: v2's structures, counted
    cls = twin(VARIANTS[rung], tally)
    return cls(pretoken_counts), tally
