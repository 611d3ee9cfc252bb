"""The ladder's correctness checks, run on your own trainer: set ``BPE_CANDIDATE`` to run them.

::

    BPE_CANDIDATE=exercises/start_v1.py .venv/bin/python -m pytest -q tests/student/test_own_trainer.py
    BPE_CANDIDATE=mine.py,mine_v2.py:train_bpe .venv/bin/python -m pytest -q tests/student/test_own_trainer.py

Each entry is what ``bpe bench --variant`` takes (a file defining ``Merger`` or ``train_bpe``,
``file.py:function``, ``module:function``, or ``file.py:Class`` for ``Class().train``).  A failure
says where the merges part from the reference and the likely cause (:mod:`bpe.lab.judge.diagnose`); a
``Merger`` file with its own ``count_pretokens`` has its counts compared with the reference counts
first.  Without ``BPE_CANDIDATE`` every test here is skipped.
"""

import os
from types import SimpleNamespace

import pytest

from bpe.counting.plain import count_text
from bpe.lab.judge.candidates import load_algorithm, load_function, parse_variants, vocab_problems
from bpe.lab.judge.diagnose import Evidence, diagnose
from bpe.lab.judge.probe import PROBES
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.registry import VARIANTS
from bpe.training.train import train_bpe
from conftest import CORPUS_EN, OVERLAPS, REPEATS, TIES, TINYSTORIES_SAMPLE, cs336_merges

ENTRIES = os.environ.get("BPE_CANDIDATE", "")
CANDIDATES = parse_variants(ENTRIES) if ENTRIES else []
MERGERS = [c for c in CANDIDATES if c.kind != "function"]
EOT = ["<|endoftext|>"]
WORKED_EXAMPLE = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6, b"es": 2, b"st": 2}


SKIP = "set BPE_CANDIDATE=path/to/mine.py to check your own trainer"


def cases(candidates, reason=SKIP):
    """The candidates as parameters; without any, one skipped case saying why."""
    none = pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-candidate")
    return [pytest.param(c, id=c.label) for c in candidates] or [none]


def train(candidate, path, vocab_size):
    """``(vocab, merges, own counts)``: the candidate's own pre-token counts when it brings a pre-tokenizer
    (so a difference in them is named as such), else ``None``."""
    if candidate.kind == "function":
        return (*load_function(candidate.spec)(str(path), vocab_size, list(EOT)), None)
    algorithm = load_algorithm(candidate.kind, candidate.spec)
    seen = {}
    if getattr(algorithm, "own_counter", False):
        count = algorithm.count_pretokens

        def counting(*args, **kwargs):
            seen["counts"] = counts = count(*args, **kwargs)
            return counts

        algorithm = SimpleNamespace(Merger=algorithm.Merger, count_pretokens=counting)
    vocab, merges = train_bpe(path, vocab_size, EOT, variant=algorithm, workers=1)
    return vocab, merges, seen.get("counts")


def text_evidence(path):
    text = path.read_bytes().decode("utf-8")  # its own line ends: text mode would read "\r\n" as "\n"
    return Evidence(lambda: count_text(text, EOT), lambda: text, EOT)


def failure(merges, reference, evidence, name, counts=None):
    """The assertion message for a candidate that differs from the reference, or ``None``."""
    verdict = diagnose(merges, reference, evidence, name, "the reference", counts)
    if verdict["verdict"] == "identical":
        return None
    cause = "likely cause: " if verdict["cause"] else ""
    if verdict["step"] is None:
        return f"{name}'s pre-token counts differ: {cause}{verdict['explanation']}"
    return (f"merge {verdict['step']}: {name} chose {verdict['candidate_pair']}, the reference "
            f"{verdict['reference_pair']}: {cause}{verdict['explanation']}")


def check(merges, reference, evidence, name, counts=None):
    message = failure(merges, reference, evidence, name, counts)
    assert message is None, message


pytestmark = pytest.mark.skipif(not ENTRIES, reason=SKIP)


@pytest.mark.parametrize("candidate", cases(CANDIDATES))
def test_cs336_merges(candidate):
    vocab, merges, counts = train(candidate, CORPUS_EN, 500)
    check(merges, cs336_merges(), text_evidence(CORPUS_EN), candidate.label, counts)
    assert sorted(vocab) == list(range(500)), "vocab ids must be 0..vocab_size-1"
    problems = vocab_problems(vocab, merges, EOT, 500)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("probe", PROBES, ids=lambda probe: probe.slug)
@pytest.mark.parametrize("candidate", cases(CANDIDATES))
def test_probe(candidate, probe, tmp_path):
    """The mistakes the shipped corpora hide (bpe/lab/judge/probe.py), in its merges and its vocab: special tokens
    mishandled, and ties broken by another order than the bytes' (a function's ties as a Merger's)."""
    path = probe.write(tmp_path)
    vocab, merges, counts = train(candidate, path, probe.vocab_size)
    check(merges, probe.default_merges(path), probe.evidence(), candidate.label, counts)
    problems = vocab_problems(vocab, merges, EOT, probe.vocab_size)
    assert not problems, "; ".join(problems)


@pytest.mark.parametrize("candidate", cases(CANDIDATES))
def test_special_tokens_split_out(candidate):
    _, merges, counts = train(candidate, TINYSTORIES_SAMPLE, 400)
    _, reference = train_bpe(TINYSTORIES_SAMPLE, 400, EOT, variant="v1")
    check(merges, reference, text_evidence(TINYSTORIES_SAMPLE), candidate.label, counts)


@pytest.mark.parametrize("counts", [WORKED_EXAMPLE, OVERLAPS, REPEATS, TIES],
                         ids=["worked-example", "overlaps", "repeats", "ties"])
@pytest.mark.parametrize("candidate", cases(MERGERS, "a Merger candidate's test (a train_bpe function takes a "
                                                    "file, not counts: test_probe checks its ties on the tie probe)"
                                                    if ENTRIES else SKIP))
def test_tricky_counts_against_v1(candidate, counts):
    """Overlapping, repeated and tied pairs, every merge until no pair is left."""
    merger = load_algorithm(candidate.kind, candidate.spec).Merger(counts)
    merges = run_merges(merger, 100, NullTimer())
    reference = run_merges(VARIANTS["v1"].Merger(counts), 100, NullTimer())
    check(merges, reference, Evidence(lambda: counts, lambda: "", []), candidate.label)
