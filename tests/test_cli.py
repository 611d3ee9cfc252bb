"""The command line (bpe/cli.py): the header every command prints, the train summary (early stops, nothing
saved, peak memory, longest tokens), sizes read with units, bad values and contradictions refused in one line,
out of memory said, results saved when the reader of stdout leaves."""

import json
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
    assert "stopped early, 0 of 243 merges" in report.variants["v2"].notes[0]
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
    (["train", "--data", "corpus-en", "--pattern", "(a"], "--pattern '(a' is not a regex: missing ) at position 2"),
    (["bench", "--data", "corpus-en", "--pattern", "[z-a]"], "--pattern '[z-a]' is not a regex: bad character range"),
    (["train", "--data", "corpus-en", "--pattern", r"(\w+)"], r"--pattern '(\\w+)' has 1 capturing group(s)"),
    (["train", "--data", "corpus-en", "--pattern", "o200k", "--cluster", "local"],
     "--cluster counts by GPT-2's pattern alone, not --pattern 'o200k': count locally"),
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
    assert out.startswith(f"bpe-lab train: {best_variant()} on corpus-en (133,027 bytes), vocab 300, special []; "
                          f"estimate {best_variant()} ~")


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


def cli_error(*argv: str) -> str:
    """What a real ``python -m bpe ARGV`` says on stderr, which must be one line, with status 2."""
    proc = subprocess.run([sys.executable, "-m", "bpe", *argv], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (proc.returncode, proc.stderr)
    return proc.stderr.rstrip("\n")


#: What a --workers under 1 is told, by every command that takes it.
WORKERS_FIX = "(or omit it for the default: the CPU count, or the cores free as the run starts)"


@pytest.mark.parametrize("argv, line", [
    (["train", "--data", "corpus-en", "--workers", "0"], f"--workers must be at least 1, got 0 {WORKERS_FIX}"),
    (["train", "--data", "corpus-en", "--vocab-size", "100"],
     "--vocab-size 100 is too small: it must be at least 257 (256 byte tokens + 1 special token(s))"),
    (["train", "--data", "corpus-en", "--limit", "0"], "--limit must be at least 1 byte, got '0'"),
    (["estimate", "--data", "corpus-en", "--memory", "lots"],
     "cannot read --memory 'lots': use a number of bytes or e.g. 50MB, 1.5GB, 64KiB"),
    (["encode", "--tokenizer", "{tmp}", "--data", "corpus-en", "--out", "{tmp}/ids.npy", "--chunk-size", "0"],
     "--chunk-size must be at least 1 byte, got '0'"),
])
def test_a_refused_value_is_named_by_its_flag_with_the_fix(argv, line, tmp_path):
    assert cli_error(*(arg.replace("{tmp}", str(tmp_path)) for arg in argv)) == f"bpe: error: {line}"


def test_the_library_names_its_parameters_and_the_error_survives_a_worker():
    import pickle

    from bpe import train_bpe
    from bpe.errors import ArgumentError, BPEError
    from conftest import CORPUS_EN

    with pytest.raises(BPEError) as refused:
        train_bpe(CORPUS_EN, 300, EOT, workers=0)
    assert str(refused.value) == "workers must be at least 1, got 0 (or None for the default)"
    with pytest.raises(BPEError, match=r"^limit must be at least 1 byte, got '0'$"):
        train_bpe(CORPUS_EN, 300, EOT, limit="0")
    back = pickle.loads(pickle.dumps(refused.value))  # as a pool worker sends it
    assert isinstance(back, ArgumentError) and (str(back), back.flagged) == (str(refused.value), refused.value.flagged)


def test_a_binary_file_is_called_binary_and_bad_text_is_told_the_flag(tmp_path):
    import gzip

    from bpe import train_bpe
    from bpe.errors import BPEError
    from conftest import CORPUS_EN

    packed = tmp_path / "corpus.en.bin"  # gzip's bytes under a name that says nothing (a .gz is read as a corpus)
    packed.write_bytes(gzip.compress(CORPUS_EN.read_bytes(), mtime=0))
    image = tmp_path / "pixel.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")
    for path, byte in ((packed, 0x8B), (image, 0x89)):
        offset = path.read_bytes().index(bytes([byte]))
        assert cli_error("train", "--data", str(path), "--vocab-size", "300") == (
            f"bpe: error: {path} looks like a binary file, not text: it has NUL bytes and is not UTF-8 at byte "
            f"offset {offset} (byte 0x{byte:02x}); give a UTF-8 text file (decompress or convert it first)")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello \xff there")
    assert cli_error("train", "--data", str(bad), "--vocab-size", "300") == (
        f"bpe: error: {bad}: invalid UTF-8 at byte offset 6 (byte 0xff); fix the file or pass --errors replace "
        "(train and encode take it: bad bytes become U+FFFD)")
    with pytest.raises(BPEError, match=r"; fix the file or pass errors='replace'$"):  # a library call: its parameter
        train_bpe(bad, 300, EOT)


def test_every_subcommand_help_opens_with_its_one_line_description():
    import argparse

    from bpe.cli import build_parser

    def described(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for listed in action._choices_actions:
                    child = action.choices[listed.dest]
                    assert child.description == listed.help and listed.help, f"{path} {listed.dest}"
                    found += [f"{path} {listed.dest}", *described(child, f"{path} {listed.dest}")]
        return found

    assert "bpe train" in described(build_parser(), "bpe") and "bpe data get" in described(build_parser(), "bpe")
    shown = subprocess.run([sys.executable, "-m", "bpe", "train", "--help"], cwd=REPO_ROOT, capture_output=True,
                           text=True, timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    assert shown.split("\n\n")[1] == ("train a tokenizer on a data set or text file and print its stage times "
                                      "(--out DIR saves it)")


def test_min_frequency_stops_training_and_the_summary_says_why(capsys):
    assert main(["train", "--data", "corpus-en", "--vocab-size", "500", "--min-frequency", "100", "--variant", "v6",
                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "trained v6 on corpus-en: 163 merges, vocab 420" in out
    assert ("stopped early: 163 of 243 merges: the most frequent pair left is counted 99 times, fewer than the "
            "minimum frequency 100") in out


def test_max_token_length_keeps_every_token_short(tmp_path, capsys):
    out_dir = tmp_path / "short"
    assert main(["train", "--data", "corpus-en", "--vocab-size", "500", "--max-token-length", "3",
                 "--out", str(out_dir)]) == 0
    assert "longest tokens: ' of' (3 bytes" in capsys.readouterr().out
    from bpe import load_tokenizer

    tokenizer = load_tokenizer(out_dir)
    assert len(tokenizer.merges) == 243 and max(len(a + b) for a, b in tokenizer.merges) == 3
    settings = json.loads((out_dir / "train.json").read_text())["settings"]
    assert settings["max_token_length"] == 3 and settings["min_frequency"] is None


def test_continue_learns_more_and_equals_one_run(tmp_path, capsys):
    first, more, one = tmp_path / "first", tmp_path / "more", tmp_path / "one"
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(first)]) == 0
    assert main(["train", "--data", "corpus-en", "--vocab-size", "400", "--continue", str(first),
                 "--out", str(more)]) == 0
    out = capsys.readouterr().out
    assert (f"--continue {first}: its 43 merges are made first, every id and its special tokens kept, then more "
            "are learned") in out
    assert main(["train", "--data", "corpus-en", "--vocab-size", "400", "--out", str(one)]) == 0
    for name in ("vocab.json", "merges.txt"):
        assert (more / name).read_text() == (one / name).read_text()
    info = json.loads((more / "train.json").read_text())
    assert info["settings"]["continued_from"] == str(first) and info["special_tokens"] == EOT
    capsys.readouterr()
    one_line_error(capsys, ["train", "--data", "corpus-en", "--vocab-size", "400", "--continue", str(first),
                            "--special", "<|x|>"],
                   "--special ['<|x|>'] differs from the special tokens of the tokenizer being continued, "
                   "['<|endoftext|>']: continued training keeps them and their ids (omit --special to take them)")
    one_line_error(capsys, ["train", "--data", "corpus-en", "--vocab-size", "299", "--continue", str(first)],
                   "--vocab-size 299 is smaller than the tokenizer being continued, which holds 300 tokens")
    one_line_error(capsys, ["train", "--data", "corpus-en", "--continue", str(tmp_path / "none")],
                   f"no saved tokenizer in {tmp_path / 'none'}: the directory is missing")


@pytest.mark.parametrize("value", ["0", "-2", "ten", "1.5"])
def test_the_new_flags_refuse_a_bad_value_in_one_line(capsys, monkeypatch, value):
    calls = _no_training(monkeypatch)
    shown = value if value.lstrip("-").isdigit() else repr(value)
    one_line_error(capsys, ["train", "--data", "corpus-en", "--min-frequency", value],
                   f"--min-frequency must be a count of at least 1, got {shown} (or omit it")
    one_line_error(capsys, ["train", "--data", "corpus-en", "--max-token-length", value],
                   f"--max-token-length must be a number of bytes of at least 1, got {shown} (or omit it for no limit)")
    assert calls == []
