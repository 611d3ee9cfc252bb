"""Guard rails: the cost estimate and --force, --out replaced as one unit, clean one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bpe import VARIANTS, BPEError, Tokenizer, train_bpe
from bpe.cli import main
from bpe.io.outputs import OutputLock, save_tokenizer
from bpe.lab.estimate import CorpusShape, estimate_run

from conftest import CORPUS_EN, REPO_ROOT

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def small_result():
    return train_bpe(CORPUS_EN, 300, [EOT], variant="v6")


def _no_training(monkeypatch):
    calls = []
    monkeypatch.setattr("bpe.training.train.train_bpe", lambda *a, **k: calls.append(1))
    return calls


# --- the cost estimate -------------------------------------------------------------------------

def predicted_cost(variant: str, shape: CorpusShape) -> float:
    """The cost model's prediction for a fixed, made-up corpus shape: arithmetic, no clock is read."""
    return estimate_run(variant, shape, 9_743, 2).seconds


def test_estimate_orders_the_ladder_and_grows_with_the_data():
    small, large = CorpusShape(2_000_000, 200_000, True), CorpusShape(2_000_000_000, 5_000_000, True)
    for shape in (small, large):
        cost = {v: predicted_cost(v, shape) for v in ("v1", "v2", "v5", "v6")}
        assert cost["v1"] > cost["v2"] > cost["v5"] > cost["v6"]
    # 25 times the distinct words' length: the scan's live pairs and the rewrites grow about as much
    assert predicted_cost("v2", large) > 10 * predicted_cost("v2", small)
    assert estimate_run("v2", large, 9_743, 2).peak_bytes > estimate_run("v6", large, 9_743, 2).peak_bytes


def test_a_very_long_bench_needs_force(monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.bench.run_once", lambda *a, **k: runs.append(a) or {})
    assert main(["bench", "--variant", "v1,v6", "--repeat", "1"]) == 2  # v1 at vocab 10,000 on 2.3 MB
    err = capsys.readouterr().err
    assert "estimated v1 ~" in err and "pass --force to run it anyway" in err
    assert runs == []


def test_variant_all_skips_the_long_runs_with_a_note(monkeypatch, capsys):
    from bpe.lab import bench, probes
    from bpe.lab.estimate import Estimate

    def estimate(variant, shape, merges, workers):  # v1 past the budget, the rest a second
        return Estimate(variant, merges, 1_000.0 if variant == "v1" else 1.0, 1e6)

    monkeypatch.setattr(probes, "estimate_run", estimate)
    report = bench.run_bench(bench.BenchSettings("all", "tinystories-sample", 300, 1, [EOT], 1, budget=60), out=sys.stdout)
    assert "v1" in report["skipped"] and "--variant v1 --force" in report["skipped"]["v1"]
    assert list(report["variants"]) == [name for name in VARIANTS if name != "v1"]
    assert "estimate per run: v1 ~17 min" in capsys.readouterr().out
    with pytest.raises(BPEError, match=r"bench of v1 on tinystories-sample .* pass --force"):
        bench.run_bench(bench.BenchSettings("v1,v6", "tinystories-sample", 300, 1, [EOT], 1, budget=60), out=sys.stdout)


def test_estimate_command_prints_every_variant(capsys):
    assert main(["estimate", "--data", "corpus-en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cost estimate: corpus-en (133,027 bytes), vocab 10,000, special ['<|endoftext|>']")
    assert [line.split()[0] for line in out.splitlines()[2:]] == list(VARIANTS)


# --- --out as one unit ---------------------------------------------------------------------------

def test_retrain_leaves_one_consistent_tokenizer(tmp_path, capsys):
    out = tmp_path / "tok"
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(out), "--format", "hf",
                 "--format", "tiktoken"]) == 0
    assert main(["train", "--data", "corpus-en", "--vocab-size", "280", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["merges.txt", "train.json", "vocab.json"]
    assert json.loads((out / "train.json").read_text())["settings"]["vocab_size"] == 280
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tok.lock", "tok"]  # no temporary directory left


def test_directory_in_the_way_fails_before_anything_is_written(tmp_path, monkeypatch, capsys):
    calls = _no_training(monkeypatch)
    out = tmp_path / "tok"
    (out / "merges.txt").mkdir(parents=True)
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(out)]) == 2
    assert "holds merges.txt/, which is not a saved tokenizer's file" in capsys.readouterr().err
    assert calls == [] and [p.name for p in out.iterdir()] == ["merges.txt"]


def test_a_directory_with_other_files_is_never_replaced(tmp_path, monkeypatch, capsys):
    calls = _no_training(monkeypatch)
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(tmp_path)]) == 2
    assert "holds notes.txt" in capsys.readouterr().err
    assert calls == [] and (tmp_path / "notes.txt").read_text() == "mine"


def test_a_concurrent_run_into_the_same_out_fails_at_once(tmp_path, monkeypatch, capsys):
    calls = _no_training(monkeypatch)
    out = tmp_path / "tok"
    with OutputLock(out):
        # another process: the same lock through a fresh interpreter
        proc = subprocess.run([sys.executable, "-m", "bpe", "train", "--data", "corpus-en", "--vocab-size", "300",
                               "--out", str(out)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert f"another bpe run is writing {out}" in proc.stderr and "Traceback" not in proc.stderr
    assert calls == [] and not out.exists()


_KILLED_BETWEEN_RENAMES = """
import os, signal, sys
from bpe import train_bpe
from bpe.io import outputs
vocab, merges = train_bpe(sys.argv[1], int(sys.argv[3]), ["<|endoftext|>"], variant="v6")
real_rename = os.rename
def rename_then_signal(src, dst):
    real_rename(src, dst)
    os.kill(os.getpid(), getattr(signal, sys.argv[4]))  # the worst moment: between the two renames
outputs.os.rename = rename_then_signal
outputs.save_tokenizer(sys.argv[2], vocab, merges, ["<|endoftext|>"])
"""


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_between_the_renames_leaves_old_or_new_never_a_mix(tmp_path, signame, small_result):
    out = tmp_path / "tok"
    vocab, merges = small_result
    save_tokenizer(out, vocab, merges, [EOT], formats=["hf"])  # the old tokenizer, with an export
    proc = subprocess.run([sys.executable, "-c", _KILLED_BETWEEN_RENAMES, str(CORPUS_EN), str(out), "280", signame],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0  # the signal did end it
    names = sorted(p.name for p in out.iterdir())
    assert names == ["merges.txt", "train.json", "vocab.json"]  # the new set whole: no old tokenizer.json
    assert len((out / "merges.txt").read_text().splitlines()) == 280 - 257
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("tok", ".tok.lock")]
    save_tokenizer(out, vocab, merges, [EOT])  # the next save clears what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tok.lock", "tok"], leftovers


def test_disk_full_names_the_file_and_leaves_no_directory(tmp_path, monkeypatch, small_result):
    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("bpe.io.outputs.os.fsync", full)
    out = tmp_path / "tok"
    with pytest.raises(BPEError, match=f"cannot write {out / 'vocab.json'}: No space left on device"):
        save_tokenizer(out, *small_result, [EOT])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tok.lock"]


def test_results_are_saved_when_the_reader_of_stdout_leaves(tmp_path):
    out = tmp_path / "tok"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "bpe", "train", "--data", "corpus-en", "--vocab-size", "300",
                             "--out", str(out)], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    proc.stdout.readline()  # `| head -1`: read the first line, then go away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err
    assert (out / "vocab.json").is_file() and (out / "merges.txt").is_file()


# --- one clear line ------------------------------------------------------------------------------

def test_bench_json_into_a_directory_fails_before_the_bench(tmp_path, monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.bench.run_once", lambda *a, **k: runs.append(a))
    assert main(["bench", "--data", "corpus-en", "--json", str(tmp_path)]) == 2
    assert f"--json {tmp_path} is a directory" in capsys.readouterr().err
    assert runs == []


def test_bench_json_goes_beside_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("a file that is not a tokenizer's")
    assert main(["bench", "--variant", "v6", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "1",
                 "--workers", "1", "--quiet", "--json", str(tmp_path / "bench.json")]) == 0
    assert json.loads((tmp_path / "bench.json").read_text())["settings"]["vocab_size"] == 300
    assert (tmp_path / "notes.txt").is_file()


def test_no_special_with_special_is_a_contradiction(monkeypatch, capsys):
    calls = _no_training(monkeypatch)
    assert main(["train", "--data", "corpus-en", "--no-special", "--special", "<s>"]) == 2
    assert "--no-special and --special '<s>' contradict each other" in capsys.readouterr().err
    assert calls == []


def test_merge_cost_on_a_text_file_is_one_line(capsys):
    assert main(["merge-cost", str(REPO_ROOT / "README.md")]) == 2
    err = capsys.readouterr().err
    assert "README.md is not a Python file; a candidate is a variant name" in err and "Traceback" not in err


def test_decode_of_an_unknown_id_is_one_line():
    tokenizer = Tokenizer({i: bytes([i]) for i in range(256)}, [])
    assert tokenizer.decode(iter([104, 105])) == "hi"
    with pytest.raises(BPEError, match=r"cannot decode token id 999999: the vocab has ids 0 to 255"):
        tokenizer.decode([104, 999999])


def test_memory_exhausted_says_what_to_do(monkeypatch, capsys):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("bpe.training.train.train_bpe", exhausted)
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bpe: error: out of memory; train on less (--limit")
