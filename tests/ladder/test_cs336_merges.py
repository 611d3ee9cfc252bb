"""Every rung reproduces the CS336 assignment's merges and vocab, and the seed's worked example; v3-v5
give v1's merges on the shipped corpus."""

import functools

import pytest

from bpe import VARIANTS, train_bpe
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from conftest import CORPUS_EN, DEFAULT_CORPUS, cs336_merges, cs336_vocab

ALL_VARIANTS = list(VARIANTS)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_cs336_merges_and_vocab(variant):
    vocab, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=variant)
    assert merges == cs336_merges()
    assert set(vocab.values()) == set(cs336_vocab().values())
    assert set(vocab.keys()) == set(range(500))


WORKED_EXAMPLE = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}
WORKED_MERGES = "s t, e st, o w, l ow, w est, n e, ne west, w i, wi d, wid est, low e, lowe r"


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_worked_example_at_merge_level(variant):
    merger = VARIANTS[variant].Merger(WORKED_EXAMPLE)
    merges = run_merges(merger, 12, NullTimer())
    assert [f"{a.decode()} {b.decode()}" for a, b in merges] == WORKED_MERGES.split(", ")


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_worked_example_stops_when_pairs_run_out(variant):
    merger = VARIANTS[variant].Merger(WORKED_EXAMPLE)
    merges = run_merges(merger, 100, NullTimer())
    # After the 12 merges every word is one token (low, lower, widest, newest): nothing left to merge.
    assert merges == [tuple(m.encode().split(b" ")) for m in WORKED_MERGES.split(", ")]


@functools.lru_cache(maxsize=None)
def v1_on_default_corpus():
    return train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant="v1")


@pytest.mark.parametrize("variant", ["v3", "v4", "v5"])
def test_default_corpus_matches_v1(variant):
    expected = v1_on_default_corpus()
    assert train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant=variant, workers=2) == expected


@pytest.mark.slow
def test_default_corpus_matches_v2_at_vocab_2000():
    expected = train_bpe(DEFAULT_CORPUS, 2000, ["<|endoftext|>"], variant="v2")
    for variant in ["v3", "v4", "v5"]:
        assert train_bpe(DEFAULT_CORPUS, 2000, ["<|endoftext|>"], variant=variant, workers=2) == expected
