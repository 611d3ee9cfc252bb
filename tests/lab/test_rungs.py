"""The lab's table of rungs (bpe/lab/rungs.py): a row for every registered rung, each hook found."""

from __future__ import annotations

import dataclasses

import pytest

from bpe.errors import BPEError
from bpe.lab.measure.estimate import CorpusShape, estimate_run
from bpe.lab.rungs import RUNGS, rung_row
from bpe.training.registry import VARIANTS


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_registered_rung_has_a_whole_row(name):
    row = rung_row(name)
    assert all(getattr(row, f.name) is not None for f in dataclasses.fields(row) if f.name not in
               ("trace_state", "counter")), row
    assert row.cost.kind in ("recount", "scan", "heap") and row.role
    for hook in (row.trace_state, row.counter):
        assert hook is None or callable(hook), hook
    assert row.counter is None or row.counted  # a counting hook counts something


def test_the_table_holds_no_rung_that_is_not_one():
    assert set(RUNGS) >= set(VARIANTS) and all(name.startswith("v") for name in RUNGS)


def test_a_rung_without_a_row_is_one_line_not_another_rungs_model():
    with pytest.raises(BPEError) as caught:
        estimate_run("v99", CorpusShape(bytes=1_000_000, distinct_length=50_000.0), 500)
    assert str(caught.value) == "the lab has no row for rung 'v99': add its row to RUNGS in bpe/lab/rungs.py"
