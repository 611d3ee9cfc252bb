"""``python -m tools.ablation --rung v10``: v10 without each of its ideas in turn, beside v9 and v10.

v10's merge (``variants/_v10_merge.pyx``) is v8's algorithm made compact and shared by threads.  Its compact
ideas are switches of ``variants/_v10_switches.h``, each a constant the C compiler folds (the rung pays nothing
for being measurable): each row here is v10's merge compiled again with one switch set the other way, under a
module name of its own, into ``out/v10-ablation/`` (:mod:`tools.builds`: the same source, compiler and flags as
the rung's build), a small candidate file per row whose ``Merger`` is that build's state.  The parallel idea
needs no switch: its row runs the rung's own build with every merge on the calling thread.  v9's row is the
merge v10 replaces, on the same counts.

The ideas touch only the merge phase (the build of the state, then the merges), so the rows are compared on it;
the counting is v9's in every row.  Each row must make v10's merges on every run.  ``docs/v10-ablation.json``
(``make ablation RUNG=v10``) holds both regimes; docs/v10.md quotes it.

Example: ``python -m tools.ablation --rung v10 --data corpus-en --vocab-size 400 --repeat 1``.
"""

from __future__ import annotations

from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.variants import v9_counting_compiled as v9
from bpe.variants import v10_threads_compact as v10
from tools.builds import Build, build, built_module

#: Each compiled row, and the switch of ``variants/_v10_switches.h`` it sets, to the value it sets.
SWITCHES = {
    "wide_ids": ("V10_NARROW_IDS", "0"),
    "exact_holders": ("V10_EXACT_HOLDERS", "1"),
    "no_floored_heap": ("V10_FLOORED_HEAP", "0"),
    "no_prefetch": ("V10_PREFETCH", "0"),
}
#: The rows, in the order they run and are shown: the rung replaced, the rung, then v10 without each idea.
ROWS = ("v9", "v10", *SWITCHES, "one_merge_thread")
#: Files beside the rows that are not rows.
CANDIDATES = ()
#: The row every other is compared with, in merges and in time.
BASE = "v10"
#: The time the rows are compared on: the ideas are all in the merge phase.
FIGURE = "merge_phase"
#: Where the rows' builds go.
BUILD_DIR = REPO_ROOT / "out" / "v10-ablation"


def row_spec(row: str) -> str:
    """What the bench runs for a row: a rung's name, or the path of the row's file here."""
    return row if row in ("v9", BASE) else str(Path(__file__).with_name(f"{row}.py"))


def row_build(row: str) -> Build:
    """v10's merge with the row's switch set, under the module name ``_v10_merge_<row>``."""
    return Build(f"_v10_merge_{row}", "variants/_v10_merge.pyx", macros=(SWITCHES[row],))


def build_rows(log=None) -> None:
    """Build every row that is not built yet (two at a time), before the timed runs."""
    build([row_build(row) for row in SWITCHES], BUILD_DIR, log)


def merger_with(row: str) -> type:
    """v10's ``Merger`` on the merge built with the row's switch (built now if it is not yet)."""
    module = built_module(row_build(row), BUILD_DIR)
    state = module.MergeState

    class Merger(state):
        """v10's Merger (``variants/v10_threads_compact.py``) on this build's state."""

        def __new__(cls, pretoken_counts, threads=None):
            return super().__new__(cls, v10._as_source(pretoken_counts), 1)

        def __init__(self, pretoken_counts, threads=None):
            threads = v10.merge_threads(pretoken_counts, threads)
            state.__init__(self, v10._as_source(pretoken_counts), threads)
            if isinstance(pretoken_counts, v9.CompiledCounts):
                pretoken_counts.close()

        summary = v10.Merger.summary

    return Merger
