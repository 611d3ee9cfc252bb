"""Every registered rung defines the whole contract (bpe/training/rung.py), and keeps its promises.

Checked on every rung the registry lists, so a rung that leaves a part out fails here instead of
being skipped by the tests that select rungs by what they define (the pooled ones, the progress).
"""

from __future__ import annotations

import os
import types

import pytest

from bpe import train_bpe
from bpe.counting.plain import count_file_serial
from bpe.running.progress import Progress
from bpe.training.observer import Observer
from bpe.training.registry import VARIANTS, best_variant
from bpe.training.rung import check_rung, parallel, pooled
from bpe.variants import _v7_policy as shard_policy
from conftest import DEFAULT_CORPUS, live_processes, pooled_variants


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_rung_defines_the_contract(name):
    assert check_rung(VARIANTS[name]) == []


@pytest.mark.parametrize("name", list(VARIANTS))
def test_no_rung_carries_what_only_the_lab_or_the_tests_need(name):
    """The trace's view of a rung is the lab's subclass (bpe/lab/teach/trace.py); the pooled rungs follow
    from their counter (bpe.training.rung.pooled)."""
    assert not hasattr(VARIANTS[name].Merger, "trace_state") and not hasattr(VARIANTS[name], "POOLED")


def test_a_rung_leaving_a_part_out_is_named():
    v6 = VARIANTS["v6"]
    partial = types.ModuleType("v9_partial", "A rung without an idea, whose counter takes no progress.")
    partial.Merger = v6.Merger
    partial.count_pretokens = lambda path, special_tokens, *, workers=None, errors="strict", end=None: None
    assert check_rung(partial) == ["v9_partial.IDEA is missing", "v9_partial.count_pretokens: takes no on_bytes",
                                   "v9_partial.count_pretokens: takes no pattern"]
    partial.count_pretokens = lambda path, special_tokens, *, workers=None, errors="strict", end=None, \
        on_bytes=None, pattern="cl100k": None
    assert check_rung(partial)[1:] == ["v9_partial.count_pretokens: pattern must default to 'gpt2', not 'cl100k'"]


def test_the_parallel_rungs_include_the_default_and_count_in_processes_or_threads():
    names = pooled_variants()
    assert "v7" in names and "v3" in names
    assert best_variant() in [name for name in VARIANTS if parallel(VARIANTS[name])]
    assert [name for name in VARIANTS if not parallel(VARIANTS[name])] == ["v1", "v2"]
    threaded = [name for name in VARIANTS if parallel(VARIANTS[name]) and not pooled(VARIANTS[name])]
    assert threaded == [name for name in ("v9", "v10") if name in VARIANTS]  # v10 counts as v9 does


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_rungs_counts_answer_their_length_total_and_close(name, monkeypatch):
    """train_bpe asks the counts for these three alone, whatever the rung; v7's, kept in its worker
    processes (even for a few words here), are released by close()."""
    monkeypatch.setattr(shard_policy, "MIN_WORDS_PER_SHARD", 1)
    expected = count_file_serial(DEFAULT_CORPUS, ["<|endoftext|>"])
    counts = VARIANTS[name].count_pretokens(DEFAULT_CORPUS, ["<|endoftext|>"], workers=2)
    held_elsewhere = getattr(counts, "pool", None) is not None
    assert (len(counts), counts.total()) == (len(expected), sum(expected.values()))
    assert held_elsewhere == (name == "v7") and (live_processes(parent=os.getpid()) != []) == held_elsewhere
    counts.close()
    assert live_processes(parent=os.getpid()) == []


class Bytes(Progress):
    def __init__(self):
        self.seen = []

    def on_bytes(self, done):
        self.seen.append(done)


@pytest.mark.parametrize("name", [name for name in VARIANTS if parallel(VARIANTS[name])])
def test_every_parallel_rung_shows_byte_progress_while_counting(name):
    """The bar moves while counting (one event per chunk counted), not once at the end."""
    progress = Bytes()
    train_bpe(DEFAULT_CORPUS, 260, ["<|endoftext|>"], variant=name, workers=2, observer=Observer(progress=progress))
    assert len(progress.seen) > 1 and sum(progress.seen) == DEFAULT_CORPUS.stat().st_size, progress.seen
