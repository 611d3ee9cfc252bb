"""Every registered rung defines the whole contract (bpe/training/rung.py), and keeps its promises.

Checked on every rung the registry lists, so a rung that leaves a part out fails here instead of
being skipped by the tests that select rungs by what they define (the pooled ones, the progress).
"""

from __future__ import annotations

import types

import pytest

from bpe import train_bpe
from bpe.training.observer import Observer
from bpe.training.progress import Progress
from bpe.training.registry import VARIANTS, best_variant
from bpe.training.rung import check_rung, pooled
from conftest import DEFAULT_CORPUS, pooled_variants


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_rung_defines_the_contract(name):
    assert check_rung(VARIANTS[name]) == []


def test_a_rung_leaving_a_part_out_is_named():
    v6 = VARIANTS["v6"]
    partial = types.ModuleType("v9_partial", "A rung without a pooled flag, whose counter takes no progress.")
    partial.IDEA, partial.Merger = "an idea", v6.Merger
    partial.count_pretokens = lambda path, special_tokens, *, workers=None, errors="strict", end=None: None
    assert check_rung(partial) == ["v9_partial.POOLED is missing", "v9_partial.count_pretokens: takes no on_bytes"]


def test_the_pooled_rungs_include_the_default():
    names = pooled_variants()
    assert best_variant() in names and "v7" in names and "v3" in names
    assert [name for name in VARIANTS if not pooled(VARIANTS[name])] == ["v1", "v2"]


class Bytes(Progress):
    def __init__(self):
        self.seen = []

    def on_bytes(self, done):
        self.seen.append(done)


@pytest.mark.parametrize("name", pooled_variants())
def test_every_pooled_rung_shows_byte_progress_while_counting(name):
    """The bar moves while counting (one event per chunk counted), not once at the end."""
    progress = Bytes()
    train_bpe(DEFAULT_CORPUS, 260, ["<|endoftext|>"], variant=name, workers=2, observer=Observer(progress=progress))
    assert len(progress.seen) > 1 and sum(progress.seen) == DEFAULT_CORPUS.stat().st_size, progress.seen
