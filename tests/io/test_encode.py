"""``bpe encode`` and the fast Tokenizer: ids equal tiktoken's (same merges, GPT-2 pattern), whatever the
chunking; the .npy's dtype and length; atomic output; one clear line for every bad input."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys

import numpy as np
import pytest
import tiktoken
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe import BPEError, Tokenizer
from bpe.cli import main
from bpe.io.encode import NPY_HEADER_BYTES, encode_file, npy_header
from bpe.io.outputs import load_tokenizer, save_tokenizer
from bpe.lab.measure.peers import first_difference, tiktoken_encoding, tiktoken_ids
from bpe.training.pool import KILL_MID_ANSWER_ENV, KILL_ON_TASK_ENV, STALL_MID_ANSWER_ENV
from conftest import (DEFAULT_CORPUS, FIXTURES, a_worker_stalled, child_env, interrupt, live_processes,
                      workers_running)

EOT = "<|endoftext|>"
FILES = ["address.txt", "german.txt", "special_token_double_newlines_non_whitespace.txt",
         "special_token_trailing_newlines.txt", "tinystories_sample.txt", "corpus.en"]


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """GPT-2's vocab and merges (the CS336 fixtures) saved as a tokenizer directory."""
    out = tmp_path_factory.mktemp("gpt2")
    shutil.copy(FIXTURES / "gpt2_vocab.json", out / "vocab.json")
    shutil.copy(FIXTURES / "gpt2_merges.txt", out / "merges.txt")
    (out / "train.json").write_text(json.dumps({"special_tokens": [EOT],
                                                "result": {"merges": 50_000, "vocab_size": 50_257}}))
    return out


@pytest.fixture(scope="module")
def gpt2_tiktoken(gpt2_dir):
    return tiktoken_encoding(load_tokenizer(gpt2_dir))


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    """A 1,000-token vocab trained on the first ~400 KB of the default corpus."""
    out = tmp_path_factory.mktemp("trained")
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "1000", "--limit", "400KB",
                 "--workers", "1", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("chunk_bytes", [200, 1 << 20])
def test_file_ids_equal_tiktoken(gpt2_dir, gpt2_tiktoken, tmp_path, name, chunk_bytes):
    text = (FIXTURES / name).read_text(encoding="utf-8")
    out = tmp_path / "ids.npy"
    stats = encode_file(gpt2_dir, FIXTURES / name, out, workers=1, chunk_bytes=chunk_bytes)
    ids = np.load(out)
    assert ids.dtype == np.uint16 and len(ids) == stats.tokens
    assert ids.tolist() == gpt2_tiktoken.encode(text, allowed_special="all")
    assert stats.bytes == len(text.encode("utf-8"))


def test_trained_vocab_on_the_default_corpus_equals_tiktoken(trained_dir, tmp_path):
    tokenizer = load_tokenizer(trained_dir)
    text = DEFAULT_CORPUS.read_text(encoding="utf-8")
    out = tmp_path / "ids.npy"
    stats = encode_file(trained_dir, DEFAULT_CORPUS, out, workers=1, chunk_bytes=256 * 1024)
    expected, _, _ = tiktoken_ids(tokenizer, tiktoken_encoding(tokenizer), text, threads=2)
    assert first_difference(np.load(out), expected) is None
    assert stats.tokens == len(expected) and 2 < stats.bytes_per_token < 3


# ASCII of every class, curly quotes and dashes, control characters, non-ASCII whitespace, other unicode.
_ALPHABET = ["a", "b", "ll", "'s", " ", "  ", "\n", "\n\n", "\t", "1", "x.", "!\n", "é", "你好", "🙂", "\u200b",
             "\u201c", "\u201d", "\u2019", "\u2018", "\u2014", "\u2013", "\x01", "\x0b", "\xa0", "\u3000", "\r\n"]


@functools.lru_cache(maxsize=None)
def _generated_case_tokenizers() -> tuple[Tokenizer, tiktoken.Encoding]:
    raw = json.loads((FIXTURES / "gpt2_vocab.json").read_text(encoding="utf-8"))
    from bpe.io.byte_unicode import decode_token
    from bpe.io.formats import load_merges

    vocab = {token_id: decode_token(token) for token, token_id in raw.items()}
    tok = Tokenizer(vocab, load_merges(FIXTURES / "gpt2_merges.txt"), ["<|e|>", "<|e|><|d|>", "<|\u201c|>"])
    return tok, tiktoken_encoding(tok)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET + ["<|e|>", "<|e|><|d|>", "<|e|><|e|>", "<|", "|>", "<|\u201c|>"]),
                max_size=50))
@example(["<|e|>", "<|e|>", "<|e|><|d|>"])  # empty documents between special tokens
@example(["\u201c", "a", "\x01"])  # a control character next to a non-ASCII mark
@example(["\u2019", "s"])  # a curly apostrophe: "'s" must not become one pre-token
def test_generated_text_equals_tiktoken(pieces):
    tok, encoding = _generated_case_tokenizers()
    text = "".join(pieces)
    ids = tok.encode(text)
    expected, _, _ = tiktoken_ids(tok, encoding, text, threads=1)  # special tokens split as ours, longest first
    assert ids == expected
    assert tok.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_round_trips_and_equals_tiktoken(text):
    tok, encoding = _generated_case_tokenizers()
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    if not any(s in text for s in tok.special_tokens):
        assert ids == encoding.encode_ordinary(text)


def test_a_full_cache_is_cleared_without_changing_ids(monkeypatch):
    import bpe.io.tokenizer as module

    tok, encoding = _generated_case_tokenizers()
    text = (FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")
    monkeypatch.setattr(module, "CACHE_SIZE", 7)
    fresh = Tokenizer(tok.vocab, tok.merges, tok.special_tokens)
    assert fresh.encode(text) == tok.encode(text)
    assert len(fresh._cache) <= 7


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.sampled_from(["", "Once upon a time.\n", "\u201cHi,\u201d she said \u2014 ok.\n", "x\n\n",
                                      "caf\u00e9 \u00fcber 5\n", "  \n"]), max_size=30),
       chunk_bytes=st.integers(1, 300))
def test_chunking_never_changes_the_ids(gpt2_dir, gpt2_tiktoken, tmp_path, docs, chunk_bytes):
    text = EOT.join(docs)
    path = tmp_path / "docs.txt"
    path.write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "ids.npy"
    encode_file(gpt2_dir, path, out, workers=1, chunk_bytes=chunk_bytes)
    assert np.load(out).tolist() == gpt2_tiktoken.encode(text, allowed_special="all")


def test_uint32_when_the_vocab_passes_65536(tmp_path, write_corpus):
    from bpe.training.train import build_vocab

    # A saved vocab numbers its tokens 0 to N-1 (the load checks it), so the ids pass 65,535 only after
    # 65,532 merges of byte pairs the text does not hold; the two merges it uses come last.
    text_pairs = {b"ab", b"bc", b" a", b"ca"}
    filler = [(bytes([x]), bytes([y])) for x in range(256) for y in range(256) if bytes([x, y]) not in text_pairs]
    merges = [*filler, (b"a", b"b"), (b"ab", b"c")]
    save_tokenizer(tmp_path / "tok", build_vocab(["<|x|>"], merges), merges, ["<|x|>"])
    data = write_corpus("abc ab<|x|>abcabc")
    stats = encode_file(tmp_path / "tok", data, tmp_path / "ids.npy", workers=1)
    ids = np.load(tmp_path / "ids.npy")
    assert ids.dtype == np.uint32 and stats.dtype == "uint32"
    assert ids.tolist() == [65_790, 32, 65_789, 256, 65_790, 65_790]


def test_empty_file_gives_an_empty_array(gpt2_dir, tmp_path, write_corpus):
    encode_file(gpt2_dir, write_corpus(""), tmp_path / "ids.npy", workers=1)
    ids = np.load(tmp_path / "ids.npy")
    assert ids.dtype == np.uint16 and ids.shape == (0,)


def test_an_empty_file_says_so_instead_of_a_ratio(gpt2_dir, tmp_path, write_corpus, capsys):
    assert main(["encode", "--tokenizer", str(gpt2_dir), "--data", str(write_corpus("")),
                 "--out", str(tmp_path / "ids.npy")]) == 0
    printed = capsys.readouterr().out
    assert "0 bytes -> 0 tokens (an empty file)" in printed and "nan" not in printed, printed


def test_a_file_size_limit_names_the_output_and_leaves_nothing(trained_dir, tmp_path):
    """A real write refused by the kernel (RLIMIT_FSIZE: EFBIG, as a full disk gives ENOSPC)."""
    import resource
    import subprocess

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    out = tmp_path / "ids.npy"
    proc = subprocess.run([sys.executable, "-m", "bpe", "encode", "--tokenizer", str(trained_dir), "--data",
                           str(DEFAULT_CORPUS), "--out", str(out), "--workers", "2", "--chunk-size", "64KiB"],
                          env=child_env(), capture_output=True, text=True, preexec_fn=limited, timeout=120)
    assert proc.returncode == 2 and proc.stderr == f"bpe: error: cannot write {out}: File too large\n", proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root, where mounting is allowed; skipped elsewhere)."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_real_full_disk_names_the_output_and_leaves_nothing(trained_dir, tiny_disk, capsys):
    out = tiny_disk / "ids.npy"
    assert main(["encode", "--tokenizer", str(trained_dir), "--data", str(DEFAULT_CORPUS), "--out", str(out),
                 "--workers", "1"]) == 2
    assert capsys.readouterr().err == f"bpe: error: cannot write {out}: No space left on device\n"
    assert list(tiny_disk.iterdir()) == []


def test_npy_header_has_a_fixed_size():
    for length in (0, 1, 10**9, 10**19 - 1):
        for dtype in (np.uint16, np.uint32):
            assert len(npy_header(dtype, length)) == NPY_HEADER_BYTES


def test_bad_utf8_leaves_no_output(gpt2_dir, tmp_path, write_corpus):
    data = write_corpus(b"hello world\n" * 100 + b"bad \xff byte\n" + b"more\n" * 100)
    out = tmp_path / "ids.npy"
    out.write_bytes(b"old")
    with pytest.raises(BPEError, match=r"invalid UTF-8 at byte offset 1204 \(byte 0xff\)"):
        encode_file(gpt2_dir, data, out, workers=1, chunk_bytes=100)
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus0.txt", "ids.npy"]


def test_interrupted_encoding_leaves_no_output(gpt2_dir, tmp_path):
    out = tmp_path / "ids.npy"

    def ctrl_c_now(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        encode_file(gpt2_dir, DEFAULT_CORPUS, out, workers=1, chunk_bytes=64 * 1024, on_bytes=ctrl_c_now)
    assert list(tmp_path.iterdir()) == []


def test_the_data_path_is_checked_once_with_a_progress_bar(trained_dir, tmp_path, monkeypatch, capsys):
    import bpe.training.pretokenize
    from bpe.io.encode import run_encode

    checked = []
    real = bpe.training.pretokenize.check_input_file
    monkeypatch.setattr(bpe.training.pretokenize, "check_input_file", lambda path: checked.append(path) or real(path))
    stats = run_encode(trained_dir, "tinystories-sample", tmp_path / "ids.npy", workers=1, progress=True)
    assert len(checked) == 1 and stats.tokens == len(np.load(tmp_path / "ids.npy"))
    bar = capsys.readouterr().err  # the bar's total is the file's size, learnt from that one check
    assert "encoding: 100%" in bar


def test_cli_prints_the_figures_and_peers_agree(trained_dir, tmp_path, capsys):
    out = tmp_path / "ids.npy"
    assert main(["encode", "--tokenizer", str(trained_dir), "--data", "tinystories-sample", "--out", str(out),
                 "--workers", "1", "--peers"]) == 0
    printed = capsys.readouterr().out
    tokens = len(np.load(out))
    assert f"-> {tokens:,} tokens" in printed and "bytes/token" in printed and "MB/s" in printed
    assert "ours / tiktoken" in printed and f"ids identical to tiktoken's ({tokens:,} ids)" in printed


@pytest.mark.parametrize("args, message", [
    (["--tokenizer", "{tmp}/nowhere"], "tokenizer directory not found: .*nowhere"),
    (["--tokenizer", "{tmp}"], r"no saved tokenizer in .*: vocab\.json is missing"),
    (["--data", "no-such-data"], "no data set or file named 'no-such-data'"),
    (["--data", "{tmp}"], "input path is a directory"),
    (["--out", "{tmp}/missing/ids.npy"], "directory .*missing does not exist"),
    (["--out", "{tmp}"], "is a directory; give a file name"),
    (["--workers", "0"], "workers must be at least 1"),
    (["--chunk-size", "lots"], "cannot read size 'lots'"),
])
def test_bad_input_is_one_clear_line(trained_dir, tmp_path, capsys, args, message):
    import re

    base = {"--tokenizer": str(trained_dir), "--data": "tinystories-sample", "--out": str(tmp_path / "x.npy")}
    extra = [a.replace("{tmp}", str(tmp_path)) for a in args]
    for flag in list(base):
        if flag in extra:
            del base[flag]
    argv = ["encode", *(part for item in base.items() for part in item), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and err.count("\n") == 1 and re.search(message, err), err
    assert not (tmp_path / "x.npy").exists()


# --- In the process pool: the same ids, and the pool's failure cases -----------------------------------

def test_pool_gives_the_same_ids_in_document_order(trained_dir, tmp_path):
    tokenizer = load_tokenizer(trained_dir)
    text = DEFAULT_CORPUS.read_text(encoding="utf-8")
    stats = encode_file(trained_dir, DEFAULT_CORPUS, tmp_path / "ids.npy", workers=3, chunk_bytes=64 * 1024)
    expected, _, _ = tiktoken_ids(tokenizer, tiktoken_encoding(tokenizer), text, threads=3)
    assert stats.workers == 3 and first_difference(np.load(tmp_path / "ids.npy"), expected) is None
    assert live_processes(parent=os.getpid()) == []


def test_bad_utf8_in_a_worker_names_the_offset(gpt2_dir, tmp_path, write_corpus):
    data = write_corpus(b"hello world\n" * 1000 + b"bad \xff byte\n" + b"more\n" * 100)
    with pytest.raises(BPEError, match=r"invalid UTF-8 at byte offset 12004 \(byte 0xff\)"):
        encode_file(gpt2_dir, data, tmp_path / "ids.npy", workers=2, chunk_bytes=1000)
    assert not (tmp_path / "ids.npy").exists() and live_processes(parent=os.getpid()) == []


@pytest.mark.parametrize("hook, task", [(KILL_ON_TASK_ENV, 0), (KILL_ON_TASK_ENV, 5), (KILL_MID_ANSWER_ENV, 3)])
def test_killed_worker_is_one_clear_error_no_output_no_process(trained_dir, tmp_path, monkeypatch, hook, task):
    monkeypatch.setenv(hook, str(task))
    out = tmp_path / "ids.npy"
    with pytest.raises(BPEError, match=r"^a tokenizer worker died \(killed by SIGKILL\) while encoding .*"
                                       r"gutenberg-sample.txt; worker \d of 2 \(pid \d+\) may have been killed or run out "
                                       r"of memory"):
        encode_file(trained_dir, DEFAULT_CORPUS, out, workers=2, chunk_bytes=64 * 1024)
    assert list(tmp_path.iterdir()) == [] and live_processes(parent=os.getpid()) == []


@pytest.mark.parametrize("times", [1, 3])
@pytest.mark.parametrize("hook", [None, STALL_MID_ANSWER_ENV])
def test_ctrl_c_is_one_line_no_output_no_process(trained_dir, tmp_path, times, hook):
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:  # long enough to be still running when Ctrl-C comes
        for _ in range(20):
            f.write(DEFAULT_CORPUS.read_bytes())
    out = tmp_path / "ids.npy"
    argv = [sys.executable, "-m", "bpe", "encode", "--tokenizer", str(trained_dir), "--data", str(big),
            "--out", str(out), "--workers", "2", "--chunk-size", "64KiB"]

    def writing(proc) -> bool:  # its workers run and the .npy is being written; with the hook, task 2 stalled
        return (workers_running(proc) and (tmp_path / f".ids.npy.{proc.pid}.tmp").exists()
                and (hook is None or a_worker_stalled(proc)))

    proc, _, err = interrupt(argv, times=times, env=child_env(**({hook: "2"} if hook else {})), ready=writing)
    assert proc.returncode == 130 and err == "bpe: interrupted\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    assert live_processes(session=proc.pid) == []
