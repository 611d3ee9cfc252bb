"""Reliability: bad input gets a defined result or one clear error; faults never leave orphans or hangs.

Inputs already covered in training/test_train.py (missing path, directory, vocab too small, empty and
duplicate special tokens, invalid UTF-8 with the default variant) are extended here to every variant,
to the pooled pre-tokenizer and to the command line.  Subprocess timeouts below only guard against a
hang; nothing asserts a duration.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections import Counter
from unittest import mock

import pytest

import bpe.running.cores as cores
import bpe.split.chunking as chunking
from bpe import VARIANTS, BPEError, train_bpe
from bpe.cli import main
from bpe.counting.parallel import count_file_parallel
from bpe.counting.plain import count_file_serial
from bpe.running.cores import plan_chunk_count
from bpe.running.workers import KILL_ON_TASK_ENV
from bpe.split.chunking import find_chunk_boundaries
from conftest import (
    CORPUS_EN,
    HANG_GUARD_SECONDS,
    REPO_ROOT,
    child_env,
    interrupt,
    live_processes,
    wait_for,
    without_bars,
    workers_running,
)

ALL_VARIANTS = list(VARIANTS)
EOT = "<|endoftext|>"


def pooled_counts(path, specials, workers=2):
    """Pooled counts with chunks small enough that even a tiny file is cut into several."""
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1), mock.patch.object(chunking, "SCAN_BLOCK_BYTES", 8):
        return count_file_parallel(path, specials, workers=workers)


# --- inputs with a defined result -------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_empty_file_every_variant(write_corpus, variant):
    path = write_corpus(b"")
    vocab, merges = train_bpe(path, 300, [EOT], variant=variant)
    assert merges == [] and vocab == {**{i: bytes([i]) for i in range(256)}, 256: EOT.encode()}


def test_empty_file_pooled(write_corpus, pool_variant_names):
    path = write_corpus(b"")
    assert count_file_parallel(path, [EOT], workers=2) == Counter()
    for name in pool_variant_names:
        assert train_bpe(path, 300, [EOT], variant=name, workers=2)[1] == []


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_file_without_the_special_token_trains_as_if_none_were_given(write_corpus, variant):
    path = write_corpus("the cat sat on the mat with the hat " * 30)
    vocab, merges = train_bpe(path, 320, [EOT], variant=variant)
    _, merges_without = train_bpe(path, 319, [], variant=variant)
    assert merges == merges_without and merges[:3] == [(b"t", b"h"), (b"a", b"t"), (b"th", b"e")]
    assert vocab[256] == EOT.encode()


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_nul_bytes_are_ordinary_bytes(write_corpus, variant):
    # NUL is neither letter, digit nor space: a run of them is one punctuation-class pre-token.
    path = write_corpus(b"a\x00\x00b a\x00\x00b")
    _, merges = train_bpe(path, 300, [], variant=variant)
    assert merges == [(b"\x00", b"\x00"), (b" ", b"a")]


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_crlf_is_kept_as_bytes(write_corpus, variant):
    path = write_corpus(b"a\r\nb\r\nc\r\n")
    _, merges = train_bpe(path, 257, [], variant=variant)
    assert merges == [(b"\r", b"\n")]


def test_nul_and_crlf_pooled(write_corpus):
    data = b"x\x00\x00y\r\nline two\r\n" * 50 + b"<|endoftext|>tail\r\n"
    path = write_corpus(data)
    counts = pooled_counts(path, [EOT])
    assert counts == count_file_serial(path, [EOT])
    assert counts[b"\x00\x00"] == 50
    # every CR survives (GPT-2 splits "\r\n" before a letter into "\r", "\n"; nothing is translated)
    assert sum(n * token.count(b"\r") for token, n in counts.items()) == data.count(b"\r")


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_invalid_utf8_every_variant(write_corpus, variant):
    path = write_corpus(b"caf\xc3\xa9 ok \xc3( bad")
    with pytest.raises(BPEError, match=r"invalid UTF-8 at byte offset 9 \(byte 0xc3\); fix the file or pass "
                                       r"errors='replace'$") as refused:
        train_bpe(path, 300, [], variant=variant)
    # the command line's wording travels with it, also from a pool worker or a thread
    assert refused.value.flagged.endswith("; fix the file or pass --errors replace (train and encode take it: bad "
                                          "bytes become U+FFFD)")
    # with errors="replace" each bad byte is U+FFFD (EF BF BD), trained on like any other character
    _, merges = train_bpe(write_corpus(b"\xff\xff \xff\xff"), 300, [], variant=variant, errors="replace")
    assert merges == [(b"\xef", b"\xbf"), (b"\xef\xbf", b"\xbd"), (b"\xef\xbf\xbd", b"\xef\xbf\xbd"),
                      (b" ", b"\xef\xbf\xbd\xef\xbf\xbd")]


def test_invalid_utf8_late_in_a_pooled_file_names_the_file_offset(write_corpus):
    good = b"hello world<|endoftext|>" * 10
    path = write_corpus(good + b"\x80" + good)
    with pytest.raises(BPEError, match=f"invalid UTF-8 at byte offset {len(good)} "):
        pooled_counts(path, [EOT])
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1):
        replaced = count_file_parallel(path, [EOT], workers=2, errors="replace")
    assert replaced == count_file_serial(path, [EOT], errors="replace")
    assert replaced["\ufffd".encode()] == 1


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_special_token_validation_every_variant(write_corpus, variant):
    path = write_corpus("hello")
    with pytest.raises(BPEError, match="must not be empty"):
        train_bpe(path, 300, ["<s>", ""], variant=variant)
    with pytest.raises(BPEError, match=r"listed more than once: '<s>'"):
        train_bpe(path, 300, ["<s>", "</s>", "<s>"], variant=variant)
    with pytest.raises(BPEError, match="at least 258"):
        train_bpe(path, 257, ["<s>", "</s>"], variant=variant)
    with pytest.raises(BPEError, match="vocab_size must be an integer"):
        train_bpe(path, 300.0, [], variant=variant)
    with pytest.raises(BPEError, match="not a single string: '<s>'"):
        train_bpe(path, 300, "<s>", variant=variant)
    with pytest.raises(BPEError, match=r"^input_path must be a file path, .* got None"):
        train_bpe(None, 300, [], variant=variant)


def test_overlapping_special_tokens_longest_wins_across_chunks(write_corpus):
    # Every evenly spaced offset is tried; <|a|> is found inside <|b|><|a|>, so the cut must move back.
    specials = ["<|a|>", "<|b|><|a|>"]
    path = write_corpus("xy<|b|><|a|>zz<|a|>" * 40)
    data = path.read_bytes()
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1):
        bounds = find_chunk_boundaries(path, specials, 200)
    assert len(bounds) > 20
    for cut in bounds[1:-1]:
        assert data[cut:].startswith(b"<|"), cut
        assert not data[:cut].endswith(b"<|b|>"), cut  # never between <|b|> and its <|a|>
    counts = pooled_counts(path, specials)
    assert counts == count_file_serial(path, specials) == Counter({b"xy": 40, b"zz": 40})


def test_special_token_straddling_the_even_offset(write_corpus):
    # Three documents; the halfway offset falls in the middle of the first separator, so the cut goes
    # forward (never inside one, never back): to the first space after it, the first safe cut.
    first = "word " * 4000
    rest = len(first) - 14  # makes the file 2 * len(first) + 12 bytes long
    second, third = "b " * (rest // 4), "c" * (rest - 2 * (rest // 4))
    path = write_corpus(first + EOT + second + EOT + third)
    middle = path.stat().st_size // 2
    assert len(first) < middle < len(first) + len(EOT)
    with mock.patch.object(chunking, "SCAN_BLOCK_BYTES", 16):
        assert find_chunk_boundaries(path, [EOT], 2) == [0, len(first + EOT + "b"), path.stat().st_size]
        assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])


def test_special_token_with_a_newline_is_never_cut(write_corpus):
    # "END\n" has a newline after a non-space byte: a safe-looking cut that lies inside the token.
    specials = ["END\n"]
    path = write_corpus("some text END\nmore text.\n" * 200)
    data = path.read_bytes()
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1), mock.patch.object(chunking, "SCAN_BLOCK_BYTES", 8):
        bounds = find_chunk_boundaries(path, specials, 100)
    assert len(bounds) > 10
    for cut in bounds[1:-1]:
        assert not data[:cut].endswith(b"END"), cut
    assert pooled_counts(path, specials) == count_file_serial(path, specials)


def test_self_overlapping_special_token_is_never_cut(write_corpus):
    # With "aa" special, "aaaaab" splits as aa|aa|"ab"; a cut at offset 3 would count "a" and "b" instead.
    path = write_corpus(b"aaaaab " * 50)
    data = path.read_bytes()
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1):
        for chunks in range(2, 40):
            for cut in find_chunk_boundaries(path, ["aa"], chunks)[1:-1]:
                assert data[cut - 1:cut] == b" ", (chunks, cut)
    assert pooled_counts(path, ["aa"]) == count_file_serial(path, ["aa"]) == Counter({b"ab": 50, b" ": 50})


def test_single_document_larger_than_a_chunk(write_corpus):
    # One 300 KB document: with newlines it is cut at safe newlines inside the document...
    lines = "".join(f"sentence {i} of the only document.\n" for i in range(8000))
    path = write_corpus(EOT + lines + EOT)
    bounds = find_chunk_boundaries(path, [EOT], 4)
    assert len(bounds) == 5
    assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])
    # ...one line is cut before a space that follows a non-space...
    path = write_corpus(EOT + "  ".join(f"word{i}" for i in range(40_000)) + EOT)
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, [EOT], 4)
    assert len(bounds) == 5 and all(data[cut - 1:cut + 1] in (b"0 ", b"1 ", b"2 ", b"3 ", b"4 ", b"5 ", b"6 ", b"7 ",
                                                                 b"8 ", b"9 ") for cut in bounds[1:-1])
    assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])
    # ...one without whitespace between two ASCII characters of different classes ("word1,word2")...
    path = write_corpus(EOT + ",".join(f"word{i}" for i in range(40_000)) + EOT)
    bounds = find_chunk_boundaries(path, [EOT], 4)
    assert len(bounds) == 5
    assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])
    # ...and a document without any safe cut inside (one 300 KB pre-token) is one chunk.
    path = write_corpus(EOT + "é" * 150_000 + EOT)
    assert find_chunk_boundaries(path, [EOT], 4) == [0, path.stat().st_size - len(EOT), path.stat().st_size]
    assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])


# --- the command line -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--data", "no-such-file.txt"], "no data set or file named 'no-such-file.txt'; data sets: gutenberg-sample, "),
        (["--data", "DIR"], "no file of text, JSON lines or Parquet in the directory"),  # a directory is a corpus
        (["--variant", "v99"], "unknown variant 'v99'; valid variants: v1, v2"),
        (["--vocab-size", "200"], "--vocab-size 200 is too small: it must be at least 257"),
        (["--special", ""], "special tokens must not be empty"),
        (["--special", "<s>", "--special", "<s>"], "special token listed more than once: '<s>'"),
        (["--data", "BAD_UTF8"], "invalid UTF-8 at byte offset 6 (byte 0xff)"),
        (["--workers", "0", "--variant", "v1"], "workers must be at least 1, got 0"),
        (["--workers", "-1", "--variant", "POOL"], "workers must be at least 1, got -1"),
        (["--data", "FIFO"], "input path is not a regular file"),
        (["--special", "\udcff"], "special token '\\udcff' cannot be encoded as UTF-8"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(args, message, write_corpus, tmp_path, capsys, pool_variant_names):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # reading it would block forever: rejected up front
    (tmp_path / "empty").mkdir()
    substitutions = {"DIR": str(tmp_path / "empty"), "BAD_UTF8": str(write_corpus(b"hello \xff")),
                     "POOL": pool_variant_names[0], "FIFO": str(fifo)}
    args = [substitutions.get(a, a) for a in args]
    if "--data" not in args:
        args += ["--data", "corpus-en"]
    assert main(["train", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and message in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_errors_replace_proceeds(write_corpus, capsys):
    path = write_corpus(b"hello \xff world hello")
    assert main(["train", "--data", str(path), "--vocab-size", "260", "--errors", "replace", "--variant", "v1"]) == 0
    assert "trained v1" in capsys.readouterr().out


def test_cli_os_error_mid_run_is_one_line(monkeypatch, capsys):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device", "out/vocab.json")

    monkeypatch.setattr("bpe.training.train.train_bpe", disk_full)
    assert main(["train", "--data", "corpus-en"]) == 2
    assert capsys.readouterr().err == "bpe: error: No space left on device: out/vocab.json\n"


def test_cli_debug_shows_the_exception(capsys):
    with pytest.raises(BPEError, match="unknown variant"):
        main(["--debug", "train", "--variant", "v99", "--data", "corpus-en"])


def test_cli_bench_names_the_unknown_variant(capsys):
    assert main(["bench", "--variant", "v1,v99", "--data", "corpus-en"]) == 2
    assert "unknown variant 'v99'; valid variants: v1, v2" in capsys.readouterr().err


def test_cli_in_a_real_process_prints_no_traceback_unless_debug():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "bpe", *args, "train", "--data", "no-such-name"], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)

    result = run()
    assert result.returncode == 2
    assert result.stderr.startswith("bpe: error: no data set or file named 'no-such-name'")
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1
    result = run("--debug")
    assert result.returncode != 0 and result.stderr.startswith("Traceback")
    assert result.stderr.rstrip().endswith("(or give a file path, a directory, a glob or a URL)")


# --- faults: a worker killed, Ctrl-C ----------------------------------------------------------------


def _many_documents(path, megabytes: float, seed: int = 0) -> None:
    """Documents of random words, so pre-tokenization takes a while and merges have many candidates."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(20_000)]
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < megabytes * 1e6:
            doc = " ".join(rng.choices(words, k=300)) + ".\n" + EOT
            f.write(doc)
            written += len(doc)


def test_killed_worker_is_one_clear_error_and_no_orphans(write_corpus, monkeypatch, pool_variant_names):
    path = write_corpus(("some words, and a number 42.\n" + EOT) * 20_000)  # 680 KB: 10 chunks
    assert len(find_chunk_boundaries(path, [EOT], plan_chunk_count(path.stat().st_size, 2))) > 4
    monkeypatch.setenv(KILL_ON_TASK_ENV, "3")
    with pytest.raises(BPEError, match=r"a pre-tokenization worker died \(killed by SIGKILL\) while counting"):
        count_file_parallel(path, [EOT], workers=2)
    assert live_processes(parent=os.getpid()) == []
    for name in pool_variant_names:
        with pytest.raises(BPEError, match="worker died"):
            train_bpe(path, 300, [EOT], variant=name, workers=2)
        assert live_processes(parent=os.getpid()) == []
    with pytest.raises(BPEError, match="workers must be at least 1, got 0"):
        count_file_parallel(path, [EOT], workers=0)
    monkeypatch.setenv(KILL_ON_TASK_ENV, "999")  # no such chunk: the hook stays silent
    assert count_file_parallel(path, [EOT], workers=2) == count_file_serial(path, [EOT])


def test_killed_worker_from_the_cli(write_corpus, pool_variant_names):
    path = write_corpus(("some words, and a number 42.\n" + EOT) * 20_000)
    argv = [sys.executable, "-m", "bpe", "train", "--variant", pool_variant_names[0], "--data", str(path),
            "--workers", "2", "--vocab-size", "300"]
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=child_env(**{KILL_ON_TASK_ENV: "0"}), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    out, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    assert proc.returncode == 2, err
    assert err.startswith("bpe: error: a pre-tokenization worker died (killed by SIGKILL)") and "Traceback" not in err
    assert live_processes(session=proc.pid) == []


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "docs.txt"
    _many_documents(path, 12)
    return path


#: Where each Ctrl-C test waits, and for what: its pool's workers (they exist only while pre-tokenizing),
#: or a progress bar's name on stderr (``--progress``): the merges have begun; v1 (no pool) is counting.
STAGES = {"pretokenizing": {}, "merging": {"ready": lambda proc: True, "stderr_shows": "merging"},
          "serial": {"ready": lambda proc: True, "stderr_shows": "pre-tokenizing"}}


def _interrupt(big_corpus, variant: str, when: str, times: int = 1) -> tuple[subprocess.Popen, str]:
    """Start `bpe train`, wait for the stage, Ctrl-C the process group as a terminal would (``times``
    Ctrl-Cs a few ms apart, as an impatient user would)."""
    argv = [sys.executable, "-m", "bpe", "train", "--variant", variant, "--data", str(big_corpus), "--workers", "2",
            "--vocab-size", "60000", "--force", "--progress"]  # long on purpose: it is interrupted
    proc, _, err = interrupt(argv, times=times, **STAGES[when])
    return proc, err


def test_kill_9_of_the_trainer_takes_its_workers_along(big_corpus, pool_variant_names):
    argv = [sys.executable, "-m", "bpe", "train", "--variant", pool_variant_names[0], "--data", str(big_corpus),
            "--workers", "2", "--vocab-size", "60000", "--force"]
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_for(lambda: workers_running(proc), "the pre-tokenization pool never started", proc)
        os.kill(proc.pid, signal.SIGKILL)  # no chance to clean up: the kernel must end the workers
        proc.wait()
        wait_for(lambda: not live_processes(session=proc.pid), "orphaned workers")
    finally:
        if live_processes(session=proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.parametrize("times", [1, 3])
@pytest.mark.parametrize("when", ["pretokenizing", "merging", "serial"])
def test_ctrl_c_exits_130_and_leaves_no_workers(big_corpus, pool_variant_names, when, times):
    proc, err = _interrupt(big_corpus, "v1" if when == "serial" else pool_variant_names[0], when, times)
    assert proc.returncode == 130, err
    assert without_bars(err) == "bpe: interrupted\n", err
    assert live_processes(session=proc.pid) == []


# --- determinism ------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_same_input_same_output_every_variant(variant):
    assert train_bpe(CORPUS_EN, 300, [EOT], variant=variant) == train_bpe(CORPUS_EN, 300, [EOT], variant=variant)


def test_same_output_for_1_2_4_workers(pool_variant_names):
    # Small chunks so that 1, 2 and 4 workers cut corpus.en into 8, 16 and 32 different chunks.
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 4096):
        counts = {w: count_file_parallel(CORPUS_EN, [EOT], workers=w) for w in (1, 2, 4)}
        assert counts[1] == counts[2] == counts[4] == count_file_serial(CORPUS_EN, [EOT])
        expected = train_bpe(CORPUS_EN, 400, [EOT], variant="v2")
        for name in pool_variant_names:
            for workers in (1, 2, 4):
                assert train_bpe(CORPUS_EN, 400, [EOT], variant=name, workers=workers) == expected, (name, workers)
