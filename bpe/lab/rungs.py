"""What the lab knows about each rung, one row a rung: adding a rung is its own file and its row here.

A row holds the rung's cost model (the constants ``bpe estimate`` and the bench's refusal of a long run
use), how ``bpe trace`` reads its state where it does not keep v2's structures, how the walkthrough
counts its work, and its role in the article series (what ``python -m tools.reproduce`` measures it as).  The hooks
are named as ``module:function`` and imported when used: the tools that use them import this table,
so a row holding them directly would be a cycle.  A rung with no row is an error that says so
(:func:`rung_row`), never another rung's model.  A trainer of your own has no row: it is estimated
from a timed run on a prefix of the data (``bpe.lab.measure.estimate_command``).

Example: ``rung_row("v6").cost.bytes_per_l`` is 65, the bytes v6 keeps per byte of distinct pre-tokens.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from bpe.errors import BPEError

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


@dataclass(frozen=True)
class Rung:
    """One rung as the lab sees it.  ``trace_state``: ``module:function`` reading its state for ``bpe
    trace`` (``None``: v2's structures, read as they are); ``counted``: what the walkthrough counts of
    its work, in the order shown (empty: not counted); ``counter``: ``module:function`` building its
    counting ``Merger`` from a tally (``None`` with metrics: v2's structures, counted); ``role``: the
    step of the article series it stands for in ``python -m tools.reproduce``."""

    cost: CostModel
    trace_state: str | None
    counted: tuple[str, ...]
    counter: str | None
    role: str


_TRACE = "bpe.lab.teach.trace"
_COUNT = "bpe.lab.teach.walkthrough.counting"
_V2_COUNTS = ("pairs scanned", "words visited", "pair counts written")
_V8_COUNTS = ("stale pops", "words visited", "stale visits")

# The cost models are fitted on one-worker CPU times, all timed in one sitting
# (docs/estimate-calibration.json, python -m tools.calibrate): each rung's constants scaled together,
# beside one pre-tokenizing rate, from a first fit on points timed on several days.  That fit set the ratios
# between a rung's loops, which a day's speed does not move; the one sitting sets the scale, which it does.
RUNGS: dict[str, Rung] = {
    "v1": Rung(CostModel("recount", 6.7e-7, 0.0, 0.0, 150), None,
               ("pairs recounted", "pairs scanned", "words rewritten"), f"{_COUNT}:_v1",
               "the reference: CS336's loop, every pair recounted each merge"),
    "v2": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150), None, _V2_COUNTS, None,
               "bpe_v2: the pair counts kept, and an index from a pair to its words"),
    "v3": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150), None, _V2_COUNTS, None,
               "bpe_v3: counting in parallel processes"),
    "v4": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150), None, _V2_COUNTS, None,
               "fine-grained pair-count updates in Python (Part 8)"),
    "v5": Rung(CostModel("heap", 4.7e-6, 1.4e-6, 2e-6, 170), None,
               ("heap pushes", "stale pops", "words visited", "pair counts written"), f"{_COUNT}:_v5",
               "a heap replaces the max() scan"),
    "v6": Rung(CostModel("heap", 0.0, 2.0e-7, 2.4e-6, 65), f"{_TRACE}:v6_state",
               ("heap pushes", "stale pops", "words visited", "stale visits", "pair counts written"),
               f"{_COUNT}:_v6", "constant factors in pure Python"),
    # v7 runs v6's merge code in each of its shards: the walkthrough counts v6 instead.
    "v7": Rung(CostModel("heap", 0.0, 2.2e-7, 2.4e-6, 65), f"{_TRACE}:v7_state", (), None,
               "merging in parallel: the words sharded across processes"),
    "v8": Rung(CostModel("heap", 2.6e-5, 1.8e-8, 1.3e-7, 36),  # the rewrites and the build in C
               f"{_TRACE}:v8_state", _V8_COUNTS, f"{_COUNT}:_v8",
               "compiled: the merge in C (Parts 5, 7, 8 and 10)"),
    # v8's merge, its state built from arrays (1.6e-8 s a unit of L, where v8 reads a dict) with no dict
    # beside it, and the counting compiled: fitted on its own runs of 100 MB, 1 GB and 11.9 GB of
    # webtext-synth (docs/v9-web-*.json; docs/v9.md, "The cost model").  Its merge is v8's: so are its
    # trace state and what is counted (v9 changes the counting alone).
    "v9": Rung(CostModel("heap", 2.6e-5, 1.8e-8, 1.6e-8, 24, bytes_per_second=100e6, table_bytes_per_word=64),
               f"{_TRACE}:v8_state", _V8_COUNTS, f"{_COUNT}:_v9", "compiled: the counting in C as well"),
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


def resolve_hook(dotted: str) -> Callable:
    """The function a row names as ``module:function``, imported now."""
    module, _, function = dotted.partition(":")
    return getattr(importlib.import_module(module), function)
