"""What the lab knows about each rung, one row a rung: adding a rung is its own file and its row here.

A row holds the rung's cost model (the constants ``bpe estimate`` and the bench's refusal of a long run use,
and the runs ``python -m tools.calibrate`` fits them on), how ``bpe trace`` reads its state where it does not
keep v2's structures (a reader of :mod:`bpe.lab.rung_states`), how the walkthrough counts its work (a twin
of :mod:`bpe.lab.rung_twins`), its role in the article series (what ``python -m tools.reproduce`` measures
it as), and the few facts the lab's tools ask of a rung by name nowhere else: which rung is the reference,
which one the walkthrough records merges with, whether the estimate was fitted on long words.  The hooks are
the functions themselves, imported here: the modules that hold them import no part of the lab.  A rung with
no row is an error that says so (:func:`rung_row`), never another rung's model.  A trainer of your own has
no row: it is estimated from a timed run on a prefix of the data (:mod:`bpe.lab.measure.candidate_estimate`).

Example: ``rung_row("v6").cost.bytes_per_l`` is 65, the bytes v6 keeps per byte of distinct pre-tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from bpe.errors import BPEError
from bpe.lab.rung_states import compiled_state, shards_state, str_words_state
from bpe.lab.rung_twins import compiled_twin, heap_twin, recount_twin, str_words_twin
from bpe.variants import _v7_policy

#: Every rung pre-tokenizes about this fast in one process; from v3 on the pool's workers share it.
SERIAL_BYTES_PER_SECOND = 6e6


@dataclass(frozen=True)
class CostModel:
    """Seconds = per_merge x (merges x what one merge scans) + per_touch x T + per_l x L, after the
    pre-tokenizing (the bytes at ``bytes_per_second`` a worker).

    What one merge scans is the whole text ``L`` (recount), the live pairs (scan) or nothing that
    grows (heap: per_merge is then seconds per merge); ``T`` is the length of the words the merges
    rewrite (:func:`bpe.lab.measure.estimate.touched_length`).  Memory = base + bytes_per_l x L, and, for a
    rung that counts in compiled tables (``table_bytes_per_word``: v9), the larger of its two phases
    (:func:`bpe.lab.measure.estimate.phased_memory`).
    """

    kind: str  # "recount", "scan" or "heap"
    per_merge: float
    per_touch: float
    per_l: float  # seconds per unit of L (building the pair table)
    bytes_per_l: float
    bytes_per_second: float = SERIAL_BYTES_PER_SECOND  # pre-tokenizing, one worker
    table_bytes_per_word: float = 0.0  # compiled counting: a table's bytes per distinct pre-token
    # The policy of a rung that merges in shard processes (v7: how many shards, the parent's share, the cores
    # it leaves spare), whose memory the estimate adds beside the parent's; None: one process merges.
    shards: ModuleType | None = None
    # The runs its constants are fitted on, (data set, vocab size), each timed by python -m tools.calibrate.
    fitted_on: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Rung:
    """One rung as the lab sees it.  ``trace_state``: the reader of its state for ``bpe trace`` (``None``:
    v2's structures, read as they are); ``counted``: what the walkthrough counts of its work, in the order
    shown (empty: not counted); ``counter``: the twin that builds its counting ``Merger``, ``(rung, tally)
    -> class`` (``None`` with metrics: v2's structures, counted); ``role``: the step of the article series it
    stands for in ``python -m tools.reproduce``.  Three facts, each true of one rung or two: ``reference``,
    the rung whose merges are the reference (it also stands for a candidate the lab cannot estimate, as the
    slowest); ``records``, the rung the walkthrough records the merges with (exact structures, fast enough);
    ``long_words``, whether its cost model was fitted on text of long words too.  ``uncounted``: why the
    walkthrough counts no work of a rung it could run (said when it is asked to)."""

    cost: CostModel
    trace_state: Callable[[object], dict] | None
    counted: tuple[str, ...]
    counter: Callable[[ModuleType, object], type] | None
    role: str
    reference: bool = False
    records: bool = False
    long_words: bool = False
    uncounted: str = ""


_V2_COUNTS = ("pairs scanned", "words visited", "pair counts written")
_V8_COUNTS = ("stale pops", "words visited", "stale visits")
# the data sets the cost models are fitted on (python -m tools.calibrate)
_GS, _GB, _W2, _W20, _W100 = "gutenberg-sample", "gutenberg-books", "webtext-synth-2MB", "webtext-synth-20MB", \
    "webtext-synth-100MB"
_T10, _T50 = "tinystories-synth-10MB", "tinystories-synth-50MB"

# The cost models are fitted on one-worker CPU times, all timed in one sitting
# (docs/estimate-calibration.json, python -m tools.calibrate): each rung's constants scaled together,
# beside one pre-tokenizing rate, from a first fit on points timed on several days.  That fit set the ratios
# between a rung's loops, which a day's speed does not move; the one sitting sets the scale, which it does.
RUNGS: dict[str, Rung] = {
    "v1": Rung(CostModel("recount", 6.7e-7, 0.0, 0.0, 150,
                         fitted_on=((_GS, 500), (_T10, 500), (_W2, 300))),
               None, ("pairs recounted", "pairs scanned", "words rewritten"), recount_twin,
               "the reference: CS336's loop, every pair recounted each merge", reference=True),
    "v2": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150,
                         fitted_on=((_GS, 2000), (_GS, 10000), (_T10, 2000), (_T10, 10000), (_T50, 10000),
                                    (_W2, 500), (_W2, 2000), (_W20, 500))),
               None, _V2_COUNTS, None, "bpe_v2: the pair counts kept, and an index from a pair to its words"),
    "v3": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150, fitted_on=((_GS, 2000), (_T10, 10000), (_W2, 2000))),
               None, _V2_COUNTS, None, "bpe_v3: counting in parallel processes"),
    "v4": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150,
                         fitted_on=((_GS, 2000), (_GB, 2000), (_T10, 10000), (_W2, 2000))),
               None, _V2_COUNTS, None, "fine-grained pair-count updates in Python (lili's Part 8)"),
    "v5": Rung(CostModel("heap", 4.7e-6, 1.4e-6, 2e-6, 170,
                         fitted_on=((_GS, 10000), (_T10, 10000), (_W2, 2000), (_W20, 10000), (_W20, 32000))),
               None, ("heap pushes", "stale pops", "words visited", "pair counts written"), heap_twin,
               "a heap replaces the max() scan", records=True),
    "v6": Rung(CostModel("heap", 0.0, 2.0e-7, 2.4e-6, 65,
                         fitted_on=((_GS, 10000), (_GB, 10000), (_T10, 10000), (_W2, 10000), (_W20, 32000))),
               str_words_state, ("heap pushes", "stale pops", "words visited", "stale visits", "pair counts written"),
               str_words_twin, "constant factors in pure Python", long_words=True),
    "v7": Rung(CostModel("heap", 0.0, 2.2e-7, 2.4e-6, 65, shards=_v7_policy,
                         fitted_on=((_GS, 10000), (_T10, 10000), (_W2, 10000), (_W20, 10000))),
               shards_state, (), None, "merging in parallel: the words sharded across processes", long_words=True,
               uncounted="v7 runs v6's merge code in each of its shards"),
    "v8": Rung(CostModel("heap", 2.6e-5, 1.8e-8, 1.3e-7, 36,  # the rewrites and the build in C
                         fitted_on=((_GS, 10000), (_GB, 10000), (_T10, 10000), (_W2, 10000), (_W20, 32000),
                                    (_W100, 32000))),
               compiled_state, _V8_COUNTS, compiled_twin, "compiled: the merge in C (lili's Parts 5, 7, 8 and 10)"),
    # v8's merge, its state built from arrays (1.6e-8 s a unit of L, where v8 reads a dict) with no dict
    # beside it, and the counting compiled: fitted on its own runs of 100 MB, 1 GB and 11.9 GB of
    # webtext-synth (docs/v9-web-*.json; docs/v9.md, "The cost model"), not by tools.calibrate.  Its merge
    # is v8's: so are its trace state and what is counted (v9 changes the counting alone).
    "v9": Rung(CostModel("heap", 2.6e-5, 1.8e-8, 1.6e-8, 24, bytes_per_second=100e6, table_bytes_per_word=64),
               compiled_state, _V8_COUNTS, compiled_twin, "compiled: the counting in C as well"),
    # v9's counting and a merge of its own, compact and on threads, read through the same interface as v8's
    # (trace, walkthrough).  Its cost model is v9's with the merge's constants scaled by what its own runs
    # measured against v9's in the same sittings (docs/v10-web-100MB-idle.json, -1GB, -11.9GB): the update
    # about 0.58 of v9's, the pair table's build 0.85, the merge state 0.6 of its bytes; and a merge's fixed
    # cost (the select, a merge handed to the threads) 3 us, what its runs take over 31,743 merges
    # (docs/v10.md, "The cost model").
    "v10": Rung(CostModel("heap", 3e-6, 1.04e-8, 1.4e-8, 14, bytes_per_second=100e6, table_bytes_per_word=64),
                compiled_state, _V8_COUNTS, compiled_twin,
                "the merge compact and on threads: 16-bit ids, a merge's words shared by threads"),
}


def rung_row(name: str) -> Rung:
    """``name``'s row, or one line saying that the lab has none and where to add it.

    >>> rung_row("v99")
    Traceback (most recent call last):
    ...
    bpe.errors.BPEError: the lab has no row for rung 'v99': add its row to RUNGS in bpe/lab/rungs.py
    """
    row = RUNGS.get(name)
    if row is None:
        raise BPEError(f"the lab has no row for rung {name!r}: add its row to RUNGS in bpe/lab/rungs.py")
    return row


def rung_with(fact: str) -> str:
    """The rung whose row says ``fact`` (``reference`` or ``records``): one row says each.

    >>> rung_with("reference"), rung_with("records")
    ('v1', 'v5')
    """
    found = [name for name, row in RUNGS.items() if getattr(row, fact)]
    if len(found) != 1:
        raise BPEError(f"the lab's table of rungs must mark one rung as {fact}, it marks {found or 'none'}")
    return found[0]
