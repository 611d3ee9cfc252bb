"""The command line (bpe/cli.py): the header every command prints, the train summary (early stops, nothing
saved, peak memory, longest tokens), sizes read with units, bad values and contradictions refused in one line,
out of memory said, results saved when the reader of stdout leaves."""

import os
import re
import subprocess
import sys

import pytest

from bpe import best_variant
from bpe.cli import main
from bpe.lab.measure.bench import BenchSettings, run_bench
from conftest import DEFAULT_CORPUS, REPO_ROOT

EOT = ["<|endoftext|>"]


def _no_training(monkeypatch):
    calls = []
    monkeypatch.setattr("bpe.training.train.train_bpe", lambda *a, **k: calls.append(1))
    return calls


def one_line_error(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and message in err and err.count("\n") == 1, err


def test_an_empty_file_says_training_stopped_early(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["train", "--data", str(empty), "--vocab-size", "500"]) == 0
    out = capsys.readouterr().out
    assert "stopped early: 0 of 243 merges: the text is empty (no pair to merge)" in out
    assert "longest tokens" not in out  # no blank list of learned tokens
    assert "nothing saved: give --out DIR" in out
    report = run_bench(BenchSettings("v2", str(empty), 500, 1, EOT, 1))
    assert "stopped early, 0 of 243 merges" in report["variants"]["v2"]["notes"][0]
    printed = capsys.readouterr().out
    checkpoint_line = "elapsed at merge"  # the progress line: none is printed before the first merge
    assert checkpoint_line not in printed


def test_a_vocab_the_text_cannot_reach_says_why(tmp_path, capsys):
    small = tmp_path / "small.txt"
    small.write_text("ab ab ab")
    assert main(["train", "--data", str(small), "--vocab-size", "300", "--no-special"]) == 0
    assert "stopped early: 2 of 44 merges: no pair left to merge" in capsys.readouterr().out


def test_vocab_size_reads_units_like_limit(capsys):
    assert main(["train", "--data", "corpus-en", "--vocab-size", "0.3k", "--limit", "10KB"]) == 0
    out = capsys.readouterr().out
    assert "vocab 300," in out and "43 merges" in out
    assert "(the first ~10,000 of 133,027 bytes, --limit 10KB)" in out.splitlines()[0]  # not the whole file's size
    one_line_error(capsys, ["train", "--data", "corpus-en", "--vocab-size", "ten"], "cannot read --vocab-size 'ten'")


@pytest.mark.parametrize("argv, message", [
    (["train", "--data", "corpus-en", "--special", ""], "--special '': special tokens must not be empty"),
    (["train", "--data", "corpus-en", "--workers", "100000"], "--workers 100,000 is too many: at most"),
    (["bench", "--data", "corpus-en", "--workers", "100000"], "--workers 100,000 is too many: at most"),
])
def test_bad_values_are_one_line(argv, message, capsys):
    one_line_error(capsys, argv, message)


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


def test_no_special_with_special_is_a_contradiction(monkeypatch, capsys):
    calls = _no_training(monkeypatch)
    assert main(["train", "--data", "corpus-en", "--no-special", "--special", "<s>"]) == 2
    assert "--no-special and --special '<s>' contradict each other" in capsys.readouterr().err
    assert calls == []


def test_memory_exhausted_says_what_to_do(monkeypatch, capsys):
    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr("bpe.training.train.train_bpe", exhausted)
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bpe: error: out of memory; train on less (--limit")


def test_every_header_shows_the_vocab_and_special_tokens(monkeypatch, capsys):
    monkeypatch.setattr("bpe.lab.measure.timed_run.run_once", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["bench", "--data", "corpus-en", "--repeat", "1"]) == 130  # stop after the header
    assert "vocab 10,000 (9,743 merges), special ['<|endoftext|>']" in capsys.readouterr().out
    assert main(["train", "--data", "corpus-en", "--no-special", "--vocab-size", "300"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"bpe-lab train: {best_variant()} on corpus-en (133,027 bytes), vocab 300, special []; estimate {best_variant()} ~")


def test_train_prints_peak_memory_and_longest_words(capsys):
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "10000", "--quiet"]) == 0
    out = capsys.readouterr().out
    # the size in MB or GB: this process's peak, reset at the run's start (Linux) to what it holds then, which
    # earlier tests in the same process may have left above a gigabyte
    assert re.search(r"^peak memory: [\d.,]+ [MG]B \(training process\)", out, re.M), out
    longest = next(line for line in out.splitlines() if line.startswith("longest tokens: "))
    assert "'" + " " * 44 + "' (44 bytes" in longest  # indentation in the books: whitespace only
    worded = next(line for line in out.splitlines() if line.startswith("longest tokens that are not only whitespace"))
    assert "' disappointment' (15 bytes" in worded
