"""``bpe encode`` and the fast Tokenizer: ids equal tiktoken's (same merges, GPT-2 pattern), whatever the
chunking, with either encoder (compiled on threads, Python in the pool), and the two encoders' ids equal
each other's on every kind of text; the .npy's dtype and length; atomic output; one clear line for every
bad input; Ctrl-C stops every thread."""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import threading

import numpy as np
import pytest
import tiktoken
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe import BPEError, Tokenizer
from bpe.cli import main
from bpe.io import compiled as compiled_module
from bpe.io.encode import encode_file
from bpe.io.npy import NPY_HEADER_BYTES, npy_header
from bpe.io.outputs import load_tokenizer, save_tokenizer
from bpe.lab.measure.peers import first_difference, tiktoken_encoding, tiktoken_ids
from bpe.running.workers import KILL_MID_ANSWER_ENV, KILL_ON_TASK_ENV, STALL_MID_ANSWER_ENV
from conftest import (
    DEFAULT_CORPUS,
    FIXTURES,
    a_worker_stalled,
    child_env,
    interrupt,
    live_processes,
    sigint_on_first_bytes,
    threads_running,
    workers_running,
    write_letter_runs,
)
from tools import text_kinds

EOT = "<|endoftext|>"
#: Needs the compiled encoder (bpe/io/_encoder.pyx), which an install without a C compiler lacks.
needs_compiled = pytest.mark.skipif(compiled_module.UNAVAILABLE is not None, reason="the compiled encoder is not built")
ENCODERS = [pytest.param("compiled", marks=needs_compiled), "python"]
ENCODER_NAMES = ["compiled", "python"]
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


def bpe_threads() -> list[threading.Thread]:
    """The compiled encoder's threads still alive (run_threads names them)."""
    return [t for t in threading.enumerate() if t.name.startswith("bpe-thread")]


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("chunk_bytes", [200, 1 << 20])
def test_file_ids_equal_tiktoken(gpt2_dir, gpt2_tiktoken, tmp_path, name, chunk_bytes, encoder):
    text = (FIXTURES / name).read_text(encoding="utf-8")
    out = tmp_path / "ids.npy"
    stats = encode_file(gpt2_dir, FIXTURES / name, out, workers=1, chunk_bytes=chunk_bytes, encoder=encoder)
    ids = np.load(out)
    assert ids.dtype == np.uint16 and len(ids) == stats.tokens and stats.encoder == encoder
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
    ids = tok.encode(text)  # compiled where it is built
    expected, _, _ = tiktoken_ids(tok, encoding, text, threads=1)  # special tokens split as ours, longest first
    assert ids == expected
    assert tok.encode_packed(text) == tok.encode_packed_python(text)
    assert tok.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_round_trips_and_equals_tiktoken(text):
    tok, encoding = _generated_case_tokenizers()
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    assert tok.encode_packed(text) == tok.encode_packed_python(text)
    if not any(s in text for s in tok.special_tokens):
        assert ids == encoding.encode_ordinary(text)


def test_a_full_cache_is_cleared_without_changing_ids(monkeypatch):
    import bpe.io.tokenizer as module

    tok, encoding = _generated_case_tokenizers()
    text = (FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8")
    monkeypatch.setattr(module, "CACHE_SIZE", 7)
    fresh = Tokenizer(tok.vocab, tok.merges, tok.special_tokens, compiled=False)
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
    expected = gpt2_tiktoken.encode(text, allowed_special="all")
    for encoder in available_encoders():
        encode_file(gpt2_dir, path, out, workers=1 if encoder == "python" else 1 + chunk_bytes % 2,
                    chunk_bytes=chunk_bytes, encoder=encoder)
        assert np.load(out).tolist() == expected, encoder


def available_encoders() -> list[str]:
    return ["python"] if compiled_module.UNAVAILABLE else ["compiled", "python"]


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
    import bpe.corpus.text_file
    from bpe.commands.encode import run_encode

    checked = []
    real = bpe.corpus.text_file.check_input_file
    monkeypatch.setattr(bpe.corpus.text_file, "check_input_file", lambda path: checked.append(path) or real(path))
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


def test_cli_writes_the_comparison_as_json(trained_dir, tmp_path, capsys):
    out, result = tmp_path / "ids.npy", tmp_path / "encode.json"
    assert main(["encode", "--tokenizer", str(trained_dir), "--data", "tinystories-sample", "--out", str(out),
                 "--workers", "1", "--peers", "--json", str(result)]) == 0
    written = json.loads(result.read_text())
    assert written["ids_identical"] is True and written["ours"]["ids"] == len(np.load(out))
    # both timings are recorded (their values are the bench's business, not a test's), with the machine
    assert all(isinstance(written[side][key], float)
               for side in ("ours", "tiktoken") for key in ("seconds", "cpu_seconds"))
    assert written["machine"]["cpu_count"] and written["ours"]["encoder"] in ("compiled", "python")
    assert main(["encode", "--tokenizer", str(trained_dir), "--data", "tinystories-sample", "--out", str(out),
                 "--json", str(result)]) == 2  # without --peers there is nothing to compare
    assert "give --peers too" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--tokenizer", "{tmp}/nowhere"], "tokenizer directory not found: .*nowhere"),
    (["--tokenizer", "{tmp}"], r"no saved tokenizer in .*: vocab\.json is missing"),
    (["--data", "no-such-data"], "no data set or file named 'no-such-data'"),
    (["--data", "{tmp}"], "no file of text, JSON lines or Parquet in the directory"),  # a folder is a corpus
    (["--out", "{tmp}/missing/ids.npy"], "directory .*missing does not exist"),
    (["--out", "{tmp}"], "is a directory; give a file name"),
    (["--workers", "0"], "workers must be at least 1"),
    (["--chunk-size", "lots"], "cannot read --chunk-size 'lots'"),
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


# --- In the process pool (--encoder python) or on threads (compiled): the same ids, and the failure cases ---

@pytest.mark.parametrize("encoder", ENCODERS)
def test_several_workers_give_the_same_ids_in_document_order(trained_dir, tmp_path, encoder, threads_ran):
    tokenizer = load_tokenizer(trained_dir)
    text = DEFAULT_CORPUS.read_text(encoding="utf-8")
    stats = encode_file(trained_dir, DEFAULT_CORPUS, tmp_path / "ids.npy", workers=3, chunk_bytes=64 * 1024,
                        encoder=encoder)
    expected, _, _ = tiktoken_ids(tokenizer, tiktoken_encoding(tokenizer), text, threads=3)
    assert stats.workers == 3 and stats.encoder == encoder
    assert threads_ran == ([3] if encoder == "compiled" else [])  # 36 chunks: one round, on 3 threads
    assert first_difference(np.load(tmp_path / "ids.npy"), expected) is None
    assert live_processes(parent=os.getpid()) == [] and not bpe_threads()


@pytest.mark.parametrize("encoder", ENCODERS)
def test_bad_utf8_in_a_worker_names_the_offset(gpt2_dir, tmp_path, write_corpus, encoder, threads_ran):
    data = write_corpus(b"hello world\n" * 1000 + b"bad \xff byte\n" + b"more\n" * 100)
    with pytest.raises(BPEError, match=r"invalid UTF-8 at byte offset 12004 \(byte 0xff\)"):
        encode_file(gpt2_dir, data, tmp_path / "ids.npy", workers=2, chunk_bytes=1000, encoder=encoder)
    assert threads_ran == ([2] if encoder == "compiled" else [])
    assert not (tmp_path / "ids.npy").exists() and live_processes(parent=os.getpid()) == [] and not bpe_threads()


@pytest.mark.parametrize("hook, task", [(KILL_ON_TASK_ENV, 0), (KILL_ON_TASK_ENV, 5), (KILL_MID_ANSWER_ENV, 3)])
def test_killed_worker_is_one_clear_error_no_output_no_process(trained_dir, tmp_path, monkeypatch, hook, task):
    monkeypatch.setenv(hook, str(task))
    out = tmp_path / "ids.npy"
    with pytest.raises(BPEError, match=r"^a tokenizer worker died \(killed by SIGKILL\) while encoding .*"
                                       r"gutenberg-sample.txt; worker \d of 2 \(pid \d+\) may have been killed "
                                       r"or run out of memory"):
        encode_file(trained_dir, DEFAULT_CORPUS, out, workers=2, chunk_bytes=64 * 1024, encoder="python")
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
            "--out", str(out), "--workers", "2", "--chunk-size", "64KiB", "--encoder", "python"]

    def writing(proc) -> bool:  # its workers run and the .npy is being written; with the hook, task 2 stalled
        return (workers_running(proc) and (tmp_path / f".ids.npy.{proc.pid}.tmp").exists()
                and (hook is None or a_worker_stalled(proc)))

    proc, _, err = interrupt(argv, times=times, env=child_env(**({hook: "2"} if hook else {})), ready=writing)
    assert proc.returncode == 130 and err == "bpe: interrupted\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    assert live_processes(session=proc.pid) == []


# --- The compiled encoder: the Python encoder's ids on every kind of text, its stop, its fallbacks ----------

@needs_compiled
@pytest.mark.parametrize("chunk_bytes", [100, 1 << 20])
def test_replace_gives_the_python_encoders_ids(gpt2_dir, gpt2_tiktoken, tmp_path, write_corpus, chunk_bytes,
                                               threads_ran):
    """--errors replace: bad bytes (a stray continuation, a cut character, an overlong form, a surrogate,
    past U+10FFFF) in several chunks, one next to a special token: Python's decoder decides, on both paths."""
    bad = (b"caf\xc3 ok \xff\xfe <|endoftext|>\x80x \xe4\xb8 end \xf0\x9f\x99\n\xc0\xaf \xed\xa0\x80 "
           b"\xf4\x90\x80\x80 \xe2\x80\x9cq\xe2\x80\x9d\n")
    raw = (b"hello world\n" * 20 + bad) * 15
    data = write_corpus(raw)
    ids = {}
    for encoder in ENCODER_NAMES:
        out = tmp_path / f"{encoder}.npy"
        encode_file(gpt2_dir, data, out, workers=2 if encoder == "compiled" else 1, chunk_bytes=chunk_bytes,
                    errors="replace", encoder=encoder)
        ids[encoder] = np.load(out).tolist()
    assert ids["compiled"] == ids["python"]
    assert ids["compiled"] == gpt2_tiktoken.encode(raw.decode("utf-8", "replace"), allowed_special="all")
    # 100-byte chunks: rounds of 32 on both threads; one chunk of 1 MiB holds the whole file: one thread
    assert threads_ran and set(threads_ran) == {2 if chunk_bytes < len(raw) else 1}


@needs_compiled
def test_strict_bad_utf8_is_the_same_line_on_both_encoders(gpt2_dir, tmp_path, write_corpus):
    data = write_corpus(b"fine text\n" * 30 + b"x<|endoftext|>\xe4\xb8 cut\n" + b"more \xff\n")
    messages = []
    for encoder in ENCODER_NAMES:
        with pytest.raises(BPEError) as error:
            encode_file(gpt2_dir, data, tmp_path / "ids.npy", workers=1, chunk_bytes=64, encoder=encoder)
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "invalid UTF-8 at byte offset 314 (byte 0xe4)" in messages[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus0.txt"]


@needs_compiled
@pytest.mark.parametrize("encoder", ENCODERS)
def test_uint32_ids_are_the_same_on_both_encoders(tmp_path, write_corpus, encoder, threads_ran):
    from bpe.training.train import build_vocab

    text_pairs = {b"ab", b"bc", b" a", b"ca"}
    filler = [(bytes([x]), bytes([y])) for x in range(256) for y in range(256) if bytes([x, y]) not in text_pairs]
    merges = [*filler, (b"a", b"b"), (b"ab", b"c")]
    save_tokenizer(tmp_path / "tok", build_vocab(["<|x|>"], merges), merges, ["<|x|>"])
    data = write_corpus("abc ab<|x|>abcabc\u00e9 c" * 50)
    stats = encode_file(tmp_path / "tok", data, tmp_path / "ids.npy", workers=2, chunk_bytes=40, encoder=encoder)
    ids = np.load(tmp_path / "ids.npy")
    assert ids.dtype == np.uint32 and stats.encoder == encoder
    assert threads_ran == ([2] if encoder == "compiled" else [])
    assert ids.tolist()[:4] == [65_790, 32, 65_789, 256]
    assert ids.tolist() == _python_ids(load_tokenizer(tmp_path / "tok"), data.read_text(encoding="utf-8"))


def _python_ids(tokenizer, text: str) -> list[int]:
    from array import array

    ids = array(tokenizer.typecode)
    ids.frombytes(tokenizer.encode_packed_python(text))
    return ids.tolist()


@needs_compiled
def test_ctrl_c_while_encoding_stops_every_thread(trained_dir, tmp_path, monkeypatch, threads_ran):
    """SIGINT is sent from the progress callback, in the main thread, once the first chunk is written: the
    other threads are mid-chunk then; each stops at its next look at its flag, and none takes a new
    chunk.  No thread is left, nor the temporary .npy."""
    big = tmp_path / "big.txt"
    big.write_bytes(DEFAULT_CORPUS.read_bytes() * 2)
    started = []
    real = compiled_module.CompiledEncoder.encode_bytes
    monkeypatch.setattr(compiled_module.CompiledEncoder, "encode_bytes",
                        lambda self, cache, data: started.append(len(data)) or real(self, cache, data))
    on_bytes, sent = sigint_on_first_bytes()
    with pytest.raises(KeyboardInterrupt):
        encode_file(trained_dir, big, tmp_path / "ids.npy", workers=2, chunk_bytes=64 * 1024, on_bytes=on_bytes,
                    encoder="compiled")
    chunks = -(-big.stat().st_size // (64 * 1024))
    assert sent and not bpe_threads() and len(started) < chunks // 2, (len(started), chunks)
    assert threads_ran == [2]  # both threads were encoding when the interrupt came
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


@needs_compiled
@pytest.mark.parametrize("text", [b"word " * 2_000_000,  # one piece: the scanner looks every 64 KB
                                  b"word<|endoftext|>" * 600_000,  # short documents: between the pieces
                                  b"ab" * 300_000],  # one long pre-token: BPE looks every 4,096 merges
                         ids=["one piece", "short documents", "one long pre-token"])
def test_a_stop_ends_an_encode_under_way(text):
    tok, _ = _generated_case_tokenizers()
    encoder = tok.compiled_encoder()
    cache = compiled_module.Cache()
    ready, failure = threading.Event(), []

    def encode():
        ready.set()
        try:
            encoder.encode_bytes(cache, text)
        except BaseException as caught:
            failure.append(caught)

    thread = threading.Thread(target=encode)
    thread.start()
    ready.wait()
    cache.stop()
    thread.join()
    assert len(failure) == 1 and isinstance(failure[0], KeyboardInterrupt), failure
    with pytest.raises(KeyboardInterrupt):  # stopped stays stopped, until resumed
        encoder.encode_bytes(cache, b"x")
    cache.resume()
    assert bytes(encoder.encode_bytes(cache, b"word<|e|>")) == tok.encode_packed_python("word<|e|>")


@needs_compiled
def test_a_full_compiled_cache_is_emptied_without_changing_ids():
    tok, _ = _generated_case_tokenizers()
    text = (FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8") + "x" * 300 + " \u00e9t\u00e9" * 40
    encoder, small = tok.compiled_encoder(), compiled_module.Cache(7)
    for _ in range(2):
        assert bytes(encoder.encode_bytes(small, text.encode())) == tok.encode_packed_python(text)
        assert 0 < len(small) <= 7


# Runs long enough that BPE merges within them for many rounds (spaces, digits, letters, "==", CJK), and a
# pre-token past the cache's 256-byte limit (encoded each time, never kept).
_LONG_RUNS = st.tuples(st.sampled_from(["a", " ", "  x", "1", "ab", "=", "\n", "\u4f60", "\U0001f642", "'s", "\t "]),
                       st.integers(1, 700))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(_LONG_RUNS, st.sampled_from(_ALPHABET).map(lambda p: (p, 1))), max_size=12))
def test_long_runs_equal_tiktoken_and_the_python_encoder(runs):
    tok, encoding = _generated_case_tokenizers()
    text = "".join(piece * times for piece, times in runs)
    assert tok.encode_packed(text) == tok.encode_packed_python(text)
    assert tok.encode(text) == encoding.encode_ordinary(text)


def _random_tokenizer(merge_pairs, order, special) -> Tokenizer:
    """Merges of tokens over ``a``, ``b`` and the space, in any order (a merge of two tokens may come before
    the merge that makes one of them; one whose tokens never exist never applies), ids numbered in a
    shuffled ``order`` unrelated to the ranks."""
    merges = [(x.encode(), y.encode()) for x, y in merge_pairs]
    tokens = [bytes([b]) for b in range(256)] + sorted({x + y for x, y in merges} - {bytes([b]) for b in range(256)})
    numbers = sorted(range(len(tokens)), key=lambda i: order[i % len(order)] * 10_000 + i)
    vocab = {numbers[i]: token for i, token in enumerate(tokens)}
    return Tokenizer(vocab, merges, [special] if special else [])


_PIECES = st.text(alphabet="ab ", min_size=1, max_size=3)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(merge_pairs=st.lists(st.tuples(_PIECES, _PIECES), max_size=25),
       order=st.lists(st.integers(0, 50), min_size=1, max_size=20),
       special=st.sampled_from(["", "ab", "<|e|>"]),
       text=st.text(alphabet="ab \u00e9<|e>", max_size=60))
@example(merge_pairs=[("b", "a"), ("a", "b"), ("ab", "a"), ("a", "a"), ("aa", "a")], order=[3, 1, 2],
         special="", text="aaaaab abaaba aaa")
@example(merge_pairs=[("ab", "b"), ("a", "b")], order=[1], special="", text="abbab")  # a lower rank made later
@example(merge_pairs=[("a", "a"), ("b", "aa"), ("aa", "aa"), ("ab", "a"), ("a", "b")], order=[5, 2],  # 32 bytes: on
         special="", text="ab" * 8 + "a" * 16 + " " + "ab" * 8 + "a" * 17)  # arrays; 33: on the heap
def test_any_merges_in_any_order_give_the_python_encoders_ids(merge_pairs, order, special, text):
    tok = _random_tokenizer(merge_pairs, order, special)
    assert tok.compiled_encoder() is not None
    assert tok.encode_packed(text) == tok.encode_packed_python(text)
    word = "".join(c for c in text if c in "ab") * 6  # one pre-token: past 32 bytes, BPE on the heap
    assert tok.encode_packed(word) == tok.encode_packed_python(word)


@needs_compiled
def test_a_byte_without_a_token_is_the_same_key_error():
    vocab = {i: bytes([i]) for i in range(256) if i != ord("z")}
    for tok in (Tokenizer(vocab, []), Tokenizer(vocab, [], compiled=False)):
        assert tok.encode("a b") == [97, 32, 98]
        with pytest.raises(KeyError, match="byte 0x7a has no token in the vocab"):
            tok.encode("ab zz")


@needs_compiled
def test_threads_may_share_a_tokenizer():
    tok, _ = _generated_case_tokenizers()
    texts = [(FIXTURES / name).read_text(encoding="utf-8") * 3 for name in FILES]
    expected = [tok.encode_packed_python(text) for text in texts]
    results: dict[int, bytes] = {}
    workers = [threading.Thread(target=lambda i=i: results.__setitem__(i, tok.encode_packed(texts[i % len(texts)])))
               for i in range(12)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [results[i] for i in range(12)] == [expected[i % len(texts)] for i in range(12)]


def test_what_the_compiled_encoder_cannot_hold_takes_the_python_path(gpt2_dir):
    tok = load_tokenizer(gpt2_dir)
    empty = Tokenizer(tok.vocab, tok.merges, ["", EOT])  # the Python split then puts "" between characters
    assert empty.compiled_encoder() is None
    assert empty.encode("ab") == Tokenizer(tok.vocab, tok.merges, ["", EOT], compiled=False).encode("ab")
    for each in (tok, Tokenizer(tok.vocab, tok.merges, [EOT], compiled=False)):
        with pytest.raises(UnicodeEncodeError):  # a lone surrogate: the Python path's own error
            each.encode("a \ud800 b")


def test_not_built_falls_back_to_the_python_encoder(gpt2_dir, gpt2_tiktoken, tmp_path, monkeypatch):
    from bpe.io.encode import choose_encoder

    monkeypatch.setattr(compiled_module, "Encoder", None)
    monkeypatch.setattr(compiled_module, "UNAVAILABLE", compiled_module.NOT_BUILT)
    copy = shutil.copytree(gpt2_dir, tmp_path / "gpt2")  # a folder of its own: a tokenizer not loaded before
    stats = encode_file(copy, FIXTURES / "german.txt", tmp_path / "ids.npy", workers=2)
    assert stats.encoder == "python"
    text = (FIXTURES / "german.txt").read_text(encoding="utf-8")
    assert np.load(tmp_path / "ids.npy").tolist() == gpt2_tiktoken.encode(text, allowed_special="all")
    with pytest.raises(BPEError) as error:
        choose_encoder(load_tokenizer(copy), "compiled")
    assert str(error.value) == compiled_module.NOT_BUILT and "\n" not in compiled_module.NOT_BUILT


@needs_compiled
def test_cli_names_the_encoder(trained_dir, tmp_path, capsys, threads_ran):
    for encoder, said in (("compiled", "2 threads (compiled encoder)"), ("python", "2 workers (python encoder)")):
        assert main(["encode", "--tokenizer", str(trained_dir), "--data", "tinystories-sample", "--out",
                     str(tmp_path / f"{encoder}.npy"), "--workers", "2", "--chunk-size", "1KiB",
                     "--encoder", encoder]) == 0
        assert said in capsys.readouterr().out
    assert threads_ran == [2]  # the compiled run's 4 chunks, on its 2 threads; the python run has none
    assert np.array_equal(np.load(tmp_path / "compiled.npy"), np.load(tmp_path / "python.npy"))


@needs_compiled
@pytest.mark.parametrize("kind", sorted(text_kinds.SOURCES))
def test_every_kind_of_text_gives_tiktokens_ids_on_threads(gpt2_dir, gpt2_tiktoken, tmp_path, kind, threads_ran):
    """The lab's kinds of text (tools.text_kinds: web text, other scripts, mixed, emoji, combining marks,
    digits, whitespace), ~40 KB each, cut in 2 KB chunks over 2 threads: tiktoken's ids, and the Python path's."""
    documents, text = text_kinds.SOURCES[kind](), ""
    while len(text) < 40_000:
        text += next(documents)
    path = tmp_path / f"{kind}.txt"
    path.write_text(text, encoding="utf-8", newline="")
    stats = encode_file(gpt2_dir, path, tmp_path / "ids.npy", workers=2, chunk_bytes=2048, encoder="compiled")
    ids = np.load(tmp_path / "ids.npy").tolist()
    assert stats.workers == 2 and ids == gpt2_tiktoken.encode(text, allowed_special="all")
    assert threads_ran and set(threads_ran) == {2}  # each round of 32 chunks (two for 3-byte characters) on both
    assert ids == _python_ids(load_tokenizer(gpt2_dir), text)


@needs_compiled
@pytest.mark.parametrize("times", [1, 3])
def test_ctrl_c_on_threads_is_one_line_no_output_no_thread(trained_dir, tmp_path, times):
    big = write_letter_runs(tmp_path / "big.txt", runs=24, run_bytes=512 * 1024)  # long words: slow chunks
    out = tmp_path / "ids.npy"
    argv = [sys.executable, "-m", "bpe", "encode", "--tokenizer", str(trained_dir), "--data", str(big),
            "--out", str(out), "--workers", "2", "--chunk-size", "64KiB", "--encoder", "compiled"]

    def writing(proc) -> bool:  # its threads run and the .npy is being written
        return threads_running(proc) and (tmp_path / f".ids.npy.{proc.pid}.tmp").exists()

    proc, _, err = interrupt(argv, times=times, ready=writing)
    assert proc.returncode == 130 and err == "bpe: interrupted\n", err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    assert live_processes(session=proc.pid) == []


# --- bpe encode's --allowed-special and --disallowed-special: tiktoken's settings, the same ids ---------------

@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("flags, setting", [
    ([], dict(allowed_special="all")),  # neither flag: every special token a token, as always
    (["--allowed-special", "all"], dict(allowed_special="all")),
    (["--disallowed-special", "none"], dict(disallowed_special=())),
    (["--allowed-special", "none", "--disallowed-special", "none"], dict(allowed_special=set(), disallowed_special=())),
    (["--allowed-special", EOT], dict(allowed_special={EOT})),
])
def test_encode_flags_give_tiktokens_ids(gpt2_dir, gpt2_tiktoken, tmp_path, flags, setting, encoder):
    text = (FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8") * 4
    source, out = tmp_path / "text.txt", tmp_path / "ids.npy"
    source.write_text(text, encoding="utf-8")
    assert main(["encode", "--tokenizer", str(gpt2_dir), "--data", str(source), "--out", str(out), "--workers", "2",
                 "--chunk-size", "500", "--encoder", encoder, *flags]) == 0
    assert np.load(out).tolist() == gpt2_tiktoken.encode(text, **setting)


@pytest.mark.parametrize("encoder", ENCODERS)
def test_a_disallowed_special_token_in_the_file_is_one_line_and_no_output(gpt2_dir, tmp_path, capsys, encoder):
    source, out = tmp_path / "text.txt", tmp_path / "ids.npy"
    source.write_text("plain text\n" * 500 + f"then {EOT} once\n", encoding="utf-8")
    for flags in (["--allowed-special", "none"], ["--disallowed-special", "all"]):
        assert main(["encode", "--tokenizer", str(gpt2_dir), "--data", str(source), "--out", str(out),
                     "--chunk-size", "300", "--encoder", encoder, *flags]) == 2
        err = capsys.readouterr().err
        assert err == (f"bpe: error: the text holds '{EOT}', a special token that is disallowed: allow it "
                       "(--allowed-special) to encode it as that token, or give --disallowed-special none to encode "
                       "it as plain text\n")
        assert not out.exists()


def test_special_token_flags_refuse_what_they_cannot_take(gpt2_dir, tmp_path, capsys):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps({"text": "one"}) + "\n" + json.dumps({"text": "two"}) + "\n")
    out = tmp_path / "ids.npy"
    for flags, message in [
        (["--data", str(corpus), "--allowed-special", "all"],
         "--allowed-special and --disallowed-special take one text file, not a corpus of documents"),
        (["--data", "tinystories-sample", "--allowed-special", "all", "--allowed-special", EOT],
         f"--allowed-special all or none stands alone: got all {EOT}"),
    ]:
        assert main(["encode", "--tokenizer", str(gpt2_dir), "--out", str(out), *flags]) == 2
        assert capsys.readouterr().err == f"bpe: error: {message}\n"


# --- The compiled objects used out of turn, a killed run's leftovers, memory running out ----------------------

@needs_compiled
def test_a_cache_holds_one_encoders_ids_and_the_output_is_its_own_buffer():
    """A cache filled by one encoder would hand another its ids (silently wrong, or cut to 16 bits): refused.
    An output laid over the text would be read as text while it is written: refused."""
    vocab = {i: bytes([i]) for i in range(256)}
    first, second = (Tokenizer(vocab, []).compiled_encoder().encoder for _ in range(2))
    cache, out = compiled_module.Cache(), bytearray(10)
    assert first.encode(cache, b"hello", out) == 5
    with pytest.raises(ValueError, match="^this cache holds another encoder's ids"):
        second.encode(cache, b"hello", out)
    assert first.encode(cache, b"again", out) == 5  # still its own encoder's
    shared = bytearray(b"hello world") + bytearray(40)
    with pytest.raises(ValueError, match="^the output overlaps the text"):
        first.encode(compiled_module.Cache(), memoryview(shared)[:11], memoryview(shared)[5:])


@needs_compiled
@pytest.mark.parametrize("before", [b"", b"word " * 3, b"a<|endoftext|>", "caf\u00e9 ".encode() * 40])
def test_a_bad_byte_is_its_offset_and_no_ids_are_promised(gpt2_dir, before):
    """``Encoder.encode`` returns ``-1 - offset`` at the first byte that is not UTF-8; what it wrote by then is
    some of the ids before it, not all (as its docstring says), so the caller reads none: it raises."""
    compiled = load_tokenizer(gpt2_dir).compiled_encoder()
    data = before + b"\xff tail"
    with compiled.cache() as cache:
        assert compiled.encoder.encode(cache, data, bytearray(len(data) * compiled.width)) == -1 - len(before)
        with pytest.raises(compiled_module.InvalidUTF8) as error:
            compiled.encode_bytes(cache, data)
    assert error.value.offset == len(before)
    assert "some of the pre-tokens before the bad\n        byte were written, not all" in \
        compiled_module.Encoder.encode.__doc__


def test_a_killed_runs_temporary_output_is_removed_by_the_next(gpt2_dir, tmp_path):
    """``.ids.npy.PID.tmp`` of a run killed outright (its process gone) goes with the next encode into the same
    file; one whose process runs, and another output's, stay (:mod:`bpe.running.leftovers`' rule)."""
    import subprocess

    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its pid names a process that has ended
    dead = tmp_path / f".ids.npy.{ended.pid}.tmp"
    live = tmp_path / f".ids.npy.{os.getppid()}.tmp"
    other = tmp_path / f".other.npy.{ended.pid}.tmp"
    for path in (dead, live, other):
        path.write_bytes(b"\0" * 128)
    encode_file(gpt2_dir, FIXTURES / "german.txt", tmp_path / "ids.npy", workers=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ids.npy", live.name, other.name])


@pytest.mark.parametrize("encoder", ENCODERS)
def test_out_of_memory_while_encoding_gives_encodes_advice(trained_dir, tmp_path, monkeypatch, capsys, encoder):
    """Memory running out in this process (the compiled encoder's threads, the writer) is encode's line, not
    train's (``--limit``, ``--vocab-size``): what encoding holds grows with the threads and the chunks."""
    from bpe.io import encode as encode_module

    def short(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(encode_module, "encode_on_threads", short)
    monkeypatch.setattr(encode_module, "encoded_in_order", short)
    assert main(["encode", "--tokenizer", str(trained_dir), "--data", str(FIXTURES / "german.txt"), "--out",
                 str(tmp_path / "ids.npy"), "--workers", "1", "--encoder", encoder]) == 2
    assert capsys.readouterr().err == "bpe: error: out of memory; try fewer --workers or a smaller --chunk-size\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
@pytest.fixture(scope="module", params=["cl100k", "o200k", r"\w+|[^\w\s]+|\s+"], ids=["cl100k", "o200k", "custom"])
def pattern_dir(request, tmp_path_factory):
    """``(pattern, directory)``: a 1,000-token vocab trained with the pattern on the default corpus's first 200 KB."""
    out = tmp_path_factory.mktemp("pattern")
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "1000", "--limit", "200KB", "--workers",
                 "1", "--pattern", request.param, "--out", str(out)]) == 0
    return request.param, out


@pytest.mark.parametrize("encoder", ENCODERS)
def test_bpe_encode_splits_by_the_saved_tokenizers_pattern(pattern_dir, tmp_path, encoder, capsys):
    """The pattern comes from the tokenizer's train.json; the file is cut by its rule into many chunks, on
    threads or in the pool, and the ids are tiktoken's with that pattern (--peers checks them; a custom regex,
    which has no scanner, is encoded in Python either way)."""
    pattern, directory = pattern_dir
    tokenizer = load_tokenizer(directory)
    assert tokenizer.pattern_name == ("custom" if "\\" in pattern else pattern)
    data = tmp_path / "data.txt"
    data.write_text(DEFAULT_CORPUS.read_text(encoding="utf-8")[-60_000:] + "HelloWorld 2024!\n\n  x/y\n",
                    encoding="utf-8")
    stats = encode_file(directory, data, tmp_path / "ids.npy", workers=2, chunk_bytes=4096,
                        encoder=None if "\\" in pattern else encoder)
    expected = tiktoken_encoding(tokenizer).encode(data.read_text(encoding="utf-8"), allowed_special="all")
    assert first_difference(np.load(tmp_path / "ids.npy"), expected) is None and stats.tokens == len(expected)
    assert main(["encode", "--tokenizer", str(directory), "--data", str(data), "--out", str(tmp_path / "cli.npy"),
                 "--workers", "1", "--peers"]) == 0
    assert "ids identical to tiktoken's" in capsys.readouterr().out


# --- A corpus of plain text files: encoded in place, with the ids of its joined copy ---

def _folder_of_plain_files(tmp_path):
    """Three small plain files in a folder (one with the separator in its text, one not ending in a newline, one
    not ASCII), and an empty one, which the joined copy leaves out."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text((FIXTURES / "tinystories_sample.txt").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "b.txt").write_text("no newline at the end" + EOT + "  after it", encoding="utf-8")
    (folder / "c.txt").write_text((FIXTURES / "german.txt").read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "d.txt").write_text("", encoding="utf-8")
    return folder


@pytest.mark.parametrize("piece_bytes", [None, 1000], ids=["whole", "pieces"])
@pytest.mark.parametrize("encoder", ENCODERS)
def test_a_folder_of_plain_files_gives_the_ids_of_its_joined_text(gpt2_dir, tmp_path, monkeypatch, encoder,
                                                                  piece_bytes):
    """Each file is encoded from its own path, the separator's id after each file with text, as the joined copy
    holds them; no joined copy is written, and the ids are those of the joined text encoded as one file.
    ``pieces``: the corpus reader cuts each file into many, and still the separator ends the file alone."""
    import bpe.io.encode
    import bpe.split.chunking
    from bpe.corpus.batches import documents_text
    from bpe.corpus.corpus import open_corpus

    if piece_bytes is not None:
        monkeypatch.setattr(bpe.split.chunking, "STREAM_CHUNK_BYTES", piece_bytes)
    folder = _folder_of_plain_files(tmp_path)
    joined = tmp_path / "joined.txt"
    joined.write_bytes("".join(documents_text(open_corpus(folder), [EOT])).encode("utf-8"))
    expected = encode_file(gpt2_dir, joined, tmp_path / "joined.npy", workers=2, chunk_bytes=512, encoder=encoder)

    def no_copy(*args, **kwargs):
        raise AssertionError("a corpus of plain text files was written as one text file")

    monkeypatch.setattr(bpe.io.encode, "text_file_of", no_copy)
    stats = encode_file(gpt2_dir, folder, tmp_path / "ids.npy", workers=2, chunk_bytes=512, encoder=encoder)
    ids = np.load(tmp_path / "ids.npy")
    assert first_difference(ids, np.load(tmp_path / "joined.npy")) is None
    assert stats.tokens == expected.tokens and stats.path == "4 files"
    assert stats.bytes == sum(p.stat().st_size for p in folder.iterdir())  # the files' bytes, no separator's
    separators = int((ids == load_tokenizer(gpt2_dir).token_ids[EOT.encode()]).sum())
    in_text = sum(p.read_text(encoding="utf-8").count(EOT) for p in folder.iterdir())
    # Three documents' ends besides those in their text (the empty file has none), however the reader cuts them.
    assert separators == in_text + 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "ids.npy", "joined.npy", "joined.txt"]
