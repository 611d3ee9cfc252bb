"""The ladder's correctness checks, run on your own trainer: set ``BPE_CANDIDATE`` to run them.

::

    BPE_CANDIDATE=exercises/start_v1.py .venv/bin/python -m pytest -q tests/test_own_trainer.py
    BPE_CANDIDATE=mine.py,mine_v2.py:train_bpe .venv/bin/python -m pytest -q tests/test_own_trainer.py

Each entry is what ``bpe bench --variant`` takes (a file defining ``Merger`` or ``train_bpe``,
``file.py:function`` or ``module:function``).  A failure says where the merges part from the
reference and the likely cause (:mod:`bpe.lab.diagnose`).  Without ``BPE_CANDIDATE`` every test here
is skipped.
"""

import os

import pytest

from bpe.lab.candidates import load_algorithm, load_function, parse_variants
from bpe.lab.diagnose import Evidence, diagnose
from bpe.training.merge_loop import run_merges
from bpe.training.pretokenize import count_text
from bpe.training.registry import VARIANTS
from bpe.training.timer import NullTimer
from bpe.training.train import train_bpe
from conftest import CORPUS_EN, OVERLAPS, REPEATS, TIES, TINYSTORIES_SAMPLE, reference_merges

ENTRIES = os.environ.get("BPE_CANDIDATE", "")
CANDIDATES = parse_variants(ENTRIES) if ENTRIES else []
MERGERS = [c for c in CANDIDATES if c.kind != "function"]
EOT = ["<|endoftext|>"]
WORKED_EXAMPLE = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6, b"es": 2, b"st": 2}


def ids(candidates):
    return [c.label for c in candidates] or None


def train(candidate, path, vocab_size):
    if candidate.kind == "function":
        return load_function(candidate.spec)(str(path), vocab_size, list(EOT))
    return train_bpe(path, vocab_size, EOT, variant=load_algorithm(candidate.kind, candidate.spec), workers=1)


def text_evidence(path):
    text = path.read_text(encoding="utf-8")
    return Evidence(lambda: count_text(text, EOT), lambda: text, EOT)


def check(merges, reference, evidence, name):
    verdict = diagnose(merges, reference, evidence, name, "the reference")
    assert verdict["verdict"] == "identical", (
        f"merge {verdict['step']}: {name} chose {verdict['candidate_pair']}, the reference "
        f"{verdict['reference_pair']}: {verdict['explanation']}")


pytestmark = pytest.mark.skipif(not ENTRIES, reason="set BPE_CANDIDATE=path/to/mine.py to check your own trainer")


@pytest.mark.parametrize("candidate", CANDIDATES, ids=ids(CANDIDATES))
def test_cs336_reference_merges(candidate):
    vocab, merges = train(candidate, CORPUS_EN, 500)
    check(merges, reference_merges(), text_evidence(CORPUS_EN), candidate.label)
    assert sorted(vocab) == list(range(500)), "vocab ids must be 0..vocab_size-1"


@pytest.mark.parametrize("candidate", CANDIDATES, ids=ids(CANDIDATES))
def test_special_tokens_split_out(candidate):
    _, merges = train(candidate, TINYSTORIES_SAMPLE, 400)
    _, reference = train_bpe(TINYSTORIES_SAMPLE, 400, EOT, variant="v1")
    check(merges, reference, text_evidence(TINYSTORIES_SAMPLE), candidate.label)


@pytest.mark.parametrize("counts", [WORKED_EXAMPLE, OVERLAPS, REPEATS, TIES],
                         ids=["worked-example", "overlaps", "repeats", "ties"])
@pytest.mark.parametrize("candidate", MERGERS, ids=ids(MERGERS))
def test_tricky_counts_against_v1(candidate, counts):
    """Overlapping, repeated and tied pairs, every merge until no pair is left."""
    merger = load_algorithm(candidate.kind, candidate.spec).Merger(counts)
    merges = run_merges(merger, 100, NullTimer())
    reference = run_merges(VARIANTS["v1"].Merger(counts), 100, NullTimer())
    check(merges, reference, Evidence(lambda: counts, lambda: "", []), candidate.label)
