"""Small things a user meets: early stops said, nothing saved said, sizes read, bad values refused in one line,
tables aligned, make's lines readable."""

import re
import shutil
import subprocess

import pytest

from bpe.cli import main
from bpe.lab.bench import BenchSettings, run_bench
from bpe.lab.peers import peers_table
from conftest import REPO_ROOT

EOT = ["<|endoftext|>"]


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


def test_peers_table_columns_line_up():
    table = peers_table({"rustbpe": {"total": 1.2, "merges": 9743, "peak_rss": 5e7},
                         "tokenizers-file": {"total": 12.25, "merges": 9743, "peak_rss": 1.5e8}},
                        {"v6": {"median": {"total": 3.0}}})
    rows = table.splitlines()[2:]
    assert len({row.index("s ") for row in rows}) == 1 and len({row.index(" merges") for row in rows}) == 1
    assert len({row.index(" MB") for row in rows}) == 1


def test_exercise_1_asks_for_the_methods_it_leaves():
    text = (REPO_ROOT / "exercises" / "start_v1.py").read_text()
    assert text.count("raise NotImplementedError") == 2 and "Write the two methods left" in text


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_echoes_one_line_per_command():
    bench = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "bench", "VARIANT=v2"],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=60).stdout
    echoed = [line for line in bench.splitlines() if line.startswith("echo")]
    assert echoed == ["echo '.venv/bin/python -m bpe bench --variant v2 --data gutenberg-sample --repeat 3'"]
    venv = subprocess.run(["make", "-n", "-B", "--no-print-directory", ".venv/.installed"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60).stdout
    assert "first run: creating .venv and installing bpe-lab with its dev extras" in venv
    assert re.search(r"pip install .*-e '\.\[dev\]'", venv) and "--quiet" not in venv
