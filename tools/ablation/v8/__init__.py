"""``python -m tools.ablation --rung v8``: v8 without each of its tricks in turn, beside v8.

v8's merge (``variants/_v8_merge.pyx``) is v6's algorithm on C arrays, and on top of it two tricks aimed
at the cache misses that are left, each a switch in ``variants/_v8_tricks.h``, on in the rung.  Each row
here is v8's merge compiled again with one switch off, under a module name of its own, into
``out/v8-ablation/`` (:mod:`tools.builds`: the same source, compiler and flags as the rung's build):
a small candidate file per row (``no_prefetch``, ``no_deferred_probes``; its docstring says what the
switch swaps) whose ``Merger`` is that build's state.  A switch is a constant the C compiler folds, so the
rung itself pays nothing for being measurable.

The tricks touch only the merge phase (the build of the state, then the merges), so the rows are compared
on it; the pre-tokenizer is v8's in every row.  Each row must make v8's merges on every run, as in v6's
ablation.  ``docs/v8-ablation.json`` (``make ablation RUNG=v8``) holds both regimes; docs/v8.md quotes it.

Example: ``python -m tools.ablation --rung v8 --data corpus-en --vocab-size 400 --repeat 1``.
"""

from __future__ import annotations

from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.variants import v8_compiled
from tools.builds import Build, build, built_module

#: Each row, and the switch of ``variants/_v8_tricks.h`` it turns off.
TRICKS = {
    "no_prefetch": "V8_PREFETCH",
    "no_deferred_probes": "V8_DEFERRED_PROBES",
}
#: The rows, in the order they run and are shown: the rung, then v8 without each trick.
ROWS = ("v8", *TRICKS)
#: Files beside the rows that are not rows: candidates ``bpe bench`` runs beside v8 (their docstrings).
CANDIDATES = ("one_counting_worker",)
#: The row every other is compared with, in merges and in time.
BASE = "v8"
#: The time the rows are compared on: the tricks are all in the merge phase.
FIGURE = "merge_phase"
#: Where the rows' builds go.
BUILD_DIR = REPO_ROOT / "out" / "v8-ablation"


def row_spec(row: str) -> str:
    """What the bench runs for a row: the rung's name, or the path of the row's file here."""
    return row if row == BASE else str(Path(__file__).with_name(f"{row}.py"))


def row_build(row: str) -> Build:
    """v8's merge with the row's switch off, under the module name ``_v8_merge_<row>``."""
    return Build(f"_v8_merge_{row}", "variants/_v8_merge.pyx", macros=((TRICKS[row], "0"),))


def build_rows(log=None) -> None:
    """Build every row that is not built yet (two at a time), before the timed runs."""
    build([row_build(row) for row in TRICKS], BUILD_DIR, log)


def merger_without(row: str) -> type:
    """v8's ``Merger`` on the merge built without the row's trick (built now if it is not yet)."""
    module = built_module(row_build(row), BUILD_DIR)

    class Merger(module.MergeState):
        """v8's Merger (``variants/v8_compiled.py``) on this build's state."""

        def __init__(self, pretoken_counts):
            super().__init__(pretoken_counts if isinstance(pretoken_counts, dict) else dict(pretoken_counts))

        summary = v8_compiled.Merger.summary

    return Merger
