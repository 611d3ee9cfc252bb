"""Saved tokenizers (bpe/io/outputs.py): exact round-trip, tiktoken and Hugging Face exports loaded by the real
libraries (with each pattern, split as ours), the token report, and --out: checked before training, replaced
as one unit (a re-train, a signal between the two renames, a concurrent run, a directory in the way, a full
disk), nothing partial left; an interrupt once the new set is in place names what was saved."""

from __future__ import annotations

import base64
import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
import tokenizers

from bpe import BPEError, Tokenizer, load_tokenizer, train_bpe
from bpe.cli import main
from bpe.io.outputs import OutputLock, save_tokenizer, tiktoken_encoding, token_report
from bpe.split.pattern_classes import tiktoken_disagreements
from bpe.split.patterns import GPT2_PATTERN, resolve_pattern
from conftest import (
    CORPUS_EN,
    DEFAULT_CORPUS,
    FIXTURES,
    HANG_GUARD_SECONDS,
    REPO_ROOT,
    cs336_merges,
    cs336_vocab,
    read_stderr_until,
    without_bars,
)

EOT = "<|endoftext|>"


def vocab_from(specials, merges):
    from bpe.training.train import build_vocab

    return build_vocab(specials, merges)


def test_round_trip_of_bytes_that_need_escaping(tmp_path):
    merges = [(b" ", b" "), (b"\n", b"\n"), (b"\x00", b"\x00"), (b"\x80", b"\xff"), (b"\xe4", b"\xbd"),
              (b"\xe4\xbd", b"\xa0"), (b" ", b"\xe4\xbd\xa0"), (b"\xf0", b"\x9f"), (b"\x99", b"\x82"),
              (b"\xf0\x9f", b"\x99\x82"), (b"a", b"\t"), (b"\"", b"\\"), (b"\r", b"\x7f")]
    merges = [(a, b) for a, b in merges]
    specials = [EOT, "<|é\u00a0|>"]
    vocab = vocab_from(specials, merges)
    save_tokenizer(tmp_path, vocab, merges, specials)
    loaded = load_tokenizer(tmp_path)
    assert loaded.vocab == vocab and loaded.merges == merges and loaded.special_tokens == specials
    # the GPT-2 form has no raw space/newline/NUL: one merge per line, two fields
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(merges) and all(len(line.split(" ")) == 2 for line in lines)
    assert lines[0] == "Ġ Ġ" and lines[1] == "Ċ Ċ"


def test_round_trip_keeps_two_ids_with_the_same_bytes(tmp_path):
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")]  # "abc" made twice
    vocab = vocab_from([], merges)
    save_tokenizer(tmp_path, vocab, merges, [])
    assert load_tokenizer(tmp_path).vocab == vocab


def test_cs336_training_saved_and_loaded(tmp_path):
    vocab, merges = train_bpe(CORPUS_EN, 500, [EOT], variant="v2")
    save_tokenizer(tmp_path, vocab, merges, [EOT])
    loaded = load_tokenizer(tmp_path)
    assert loaded.merges == cs336_merges()
    assert set(loaded.vocab.values()) == set(cs336_vocab().values())


def test_load_errors(tmp_path):
    with pytest.raises(BPEError, match=r"no saved tokenizer in .*: vocab\.json is missing"):
        load_tokenizer(tmp_path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tokenizer trained on the first ~400 KB of the default corpus, saved in every format."""
    out = tmp_path_factory.mktemp("tok")
    assert main(["train", "--variant", "v2", "--data", str(DEFAULT_CORPUS), "--vocab-size", "1000",
                 "--limit", "400KB", "--out", str(out), "--format", "tiktoken", "--format", "hf"]) == 0
    return out


def held_out_text() -> str:
    # Beyond the 400 KB the tokenizer saw, plus text of another kind with multi-byte characters.
    data = DEFAULT_CORPUS.read_bytes()[-30_000:].decode("utf-8", errors="ignore")
    return data + (FIXTURES / "german.txt").read_text(encoding="utf-8") + "\n你好，世界 🙂 " + EOT + " end"


def test_cli_writes_all_files(trained):
    names = sorted(p.name for p in trained.iterdir())
    assert names == ["merges.txt", "special_tokens_map.json", "tiktoken.json", "tokenizer.json", "tokenizer.tiktoken",
                     "tokenizer_config.json", "train.json", "vocab.json"]
    info = json.loads((trained / "train.json").read_text())
    assert info["settings"]["limit"] == "400KB" and info["settings"]["variant"] == "v2"
    assert 400_000 <= info["corpus"]["bytes_used"] < 420_000 < info["corpus"]["file_bytes"]
    assert info["result"] == {"merges": 1000 - 257, "vocab_size": 1000}
    assert info["merger"] == {}  # v2's Merger has no summary()
    assert info["special_tokens"] == [EOT] and info["timings"]["stages"]["pretokenize"] > 0


def test_saved_files_equal_the_training_result(trained):
    vocab, merges = train_bpe(DEFAULT_CORPUS, 1000, [EOT], variant="v2", limit="400KB")
    tok = load_tokenizer(trained)
    assert tok.vocab == vocab and tok.merges == merges


def test_tiktoken_loads_the_export(trained):
    from tiktoken.load import load_tiktoken_bpe

    ours = load_tokenizer(trained)
    ranks = load_tiktoken_bpe(str(trained / "tokenizer.tiktoken"))
    assert len(ranks) == 999 and ranks[b" "] == 32
    enc = tiktoken.Encoding("bpe-lab", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={EOT: 256})
    text = held_out_text()
    ids = enc.encode(text, allowed_special="all")
    assert enc.decode(ids) == text
    assert ids == ours.encode(text)


def test_the_one_line_loader_builds_tiktokens_encoding_from_the_export(trained):
    """docs/outputs.md's loader: the ranks and tiktoken.json beside them are the whole encoding."""
    from tiktoken.load import load_tiktoken_bpe

    settings = json.loads((trained / "tiktoken.json").read_text())
    assert settings == {"name": trained.name, "pat_str": GPT2_PATTERN, "special_tokens": {EOT: 256}}
    enc = tiktoken.Encoding(**json.loads((trained / "tiktoken.json").read_text()),
                            mergeable_ranks=load_tiktoken_bpe(str(trained / "tokenizer.tiktoken")))
    text = held_out_text()
    assert enc.encode(text, allowed_special="all") == load_tokenizer(trained).encode(text)


def test_transformers_knows_the_special_tokens_of_the_export(tmp_path):
    """AutoTokenizer reads tokenizer.json and, beside it, which tokens are special: the first is the end of text."""
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    out = tmp_path / "two"
    vocab, merges = train_bpe(DEFAULT_CORPUS, 400, [EOT, "<|pad|>"], limit="100KB")
    save_tokenizer(out, vocab, merges, [EOT, "<|pad|>"], formats=["hf"])
    hf = transformers.AutoTokenizer.from_pretrained(str(out))
    assert hf.eos_token == EOT and hf.eos_token_id == 256
    assert sorted(hf.all_special_tokens) == sorted([EOT, "<|pad|>"])
    text = f"the cat{EOT}sat<|pad|> on the mat"
    ids = hf(text).input_ids
    assert ids == load_tokenizer(out).encode(text)
    assert hf.decode(ids, skip_special_tokens=True) == "the catsat on the mat"
    assert json.loads((out / "special_tokens_map.json").read_text()) == {
        "eos_token": EOT, "additional_special_tokens": ["<|pad|>"]}


def test_hf_tokenizers_loads_the_export(trained):
    ours = load_tokenizer(trained)
    hf = tokenizers.Tokenizer.from_file(str(trained / "tokenizer.json"))
    assert hf.get_vocab_size() == 1000
    text = held_out_text()
    ids = hf.encode(text).ids
    assert hf.decode(ids, skip_special_tokens=False) == text
    assert ids == ours.encode(text)


# --- A tokenizer trained with another pattern: saved with it, loaded with it, exported with it ---------------

CUSTOM = r"\w+|[^\w\s]+|\s+"


@pytest.fixture(scope="module", params=["cl100k", "o200k", CUSTOM], ids=["cl100k", "o200k", "custom"])
def trained_with(request, tmp_path_factory):
    """``(pattern, directory)``: a tokenizer trained with the pattern on the default corpus's first 300 KB and
    books' worth of numbers and code-like lines, saved in every format."""
    folder = tmp_path_factory.mktemp("pattern-tok")
    data = folder / "data.txt"
    lines = "".join(f"Call getValue({i}, 'X'): 20{i % 100:02d}!\n\n  if x/y:\r\n" for i in range(400))
    data.write_bytes(DEFAULT_CORPUS.read_bytes()[:300_000] + lines.encode())
    out = folder / "tok"
    assert main(["train", "--variant", "v6", "--data", str(data), "--vocab-size", "900", "--pattern", request.param,
                 "--out", str(out), "--format", "tiktoken", "--format", "hf"]) == 0
    return request.param, out


def pattern_text() -> str:
    """Held-out text with what the patterns decide on (case changes, digit runs, newlines after punctuation,
    contractions in any case, paths), in the scripts both other engines class as ``regex`` does."""
    return (held_out_text() + "\nHelloWorld DON'T (see 2024): iPhone!\n\n  x/y\r\n12345678 don'T 'S\t end  \n"
            + "getValue(7, 'X'): 2031!\n\n  if a/b:\r\n  ")


def test_the_saved_tokenizer_records_its_pattern_and_splits_by_it(trained_with):
    pattern, out = trained_with
    info = json.loads((out / "train.json").read_text(encoding="utf-8"))
    assert info["settings"]["pattern"] == pattern and info["pattern"] == resolve_pattern(pattern)[1]
    assert info["pattern_name"] == resolve_pattern(pattern)[0]
    ours = load_tokenizer(out)
    assert ours.pattern == info["pattern"]
    text = pattern_text()
    assert ours.encode(text) == Tokenizer(ours.vocab, ours.merges, [EOT], pattern=pattern).encode(text)
    assert ours.encode(text) != Tokenizer(ours.vocab, ours.merges, [EOT]).encode(text)  # GPT-2's cuts differ


def test_tiktoken_and_tokenizers_load_the_export_and_split_the_same(trained_with):
    _, out = trained_with
    ours, text = load_tokenizer(out), pattern_text()
    expected = ours.encode(text)
    encoding = tiktoken_encoding(out)
    assert encoding.encode(text, allowed_special="all") == expected
    hf = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    assert hf.encode(text).ids == expected
    assert hf.decode(expected, skip_special_tokens=False) == text


def test_a_tokenizer_saved_without_a_pattern_is_gpt2s(trained_with, tmp_path):
    _, out = trained_with
    copy = tmp_path / "old"
    copy.mkdir()
    for name in ("vocab.json", "merges.txt"):
        (copy / name).write_bytes((out / name).read_bytes())
    info = json.loads((out / "train.json").read_text(encoding="utf-8"))
    del info["pattern"], info["pattern_name"]
    (copy / "train.json").write_text(json.dumps(info), encoding="utf-8")
    assert load_tokenizer(copy).pattern_name == "gpt2"
    info["pattern"] = "(a"
    (copy / "train.json").write_text(json.dumps(info), encoding="utf-8")
    with pytest.raises(BPEError, match=r"train.json: the recorded pattern '\(a' is not a regex: missing \)"):
        load_tokenizer(copy)


def test_the_tiktoken_export_warns_of_a_code_point_tiktoken_classes_otherwise(tmp_path, capsys):
    letter = chr(min(tiktoken_disagreements("gpt2")))  # a letter to regex, "other" to tiktoken
    data = tmp_path / "data.txt"
    data.write_text(f"a{letter}{letter}b " * 50, encoding="utf-8")
    assert main(["train", "--data", str(data), "--vocab-size", "260", "--out", str(tmp_path / "tok"),
                 "--format", "hf"]) == 0
    assert "warning" not in capsys.readouterr().err  # no tiktoken export, nothing to warn of
    assert main(["train", "--data", str(data), "--vocab-size", "260", "--out", str(tmp_path / "tok"),
                 "--format", "tiktoken"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [f"bpe: warning: the vocab holds U+{ord(letter):04X} ({letter!r}), which tiktoken's "
                        "Unicode classes otherwise than regex's: tiktoken may split text holding such characters "
                        "differently (docs/patterns.md#unicode)"]


def test_tiktoken_file_format(trained):
    first = (trained / "tokenizer.tiktoken").read_text().splitlines()[0]
    assert first == f"{base64.b64encode(bytes([0])).decode()} 0"


def test_token_report_counts_tokens_that_are_not_utf8(write_corpus):
    path = write_corpus(("你好世界 " * 50 + "héllo " * 30) + EOT)
    vocab, merges = train_bpe(path, 270, [EOT], variant="v2")
    lines = token_report(vocab, [EOT])
    invalid = sum(1 for t in list(vocab.values())[257:] if not _valid(t))
    assert invalid > 0
    assert lines[1] == f"learned tokens that are not valid UTF-8 on their own: {invalid} of {len(merges)}"
    longest = max(list(vocab.values())[257:], key=len)
    assert lines[0].startswith(f"longest tokens: {longest.decode('utf-8', errors='replace')!r} ({len(longest)} bytes")


def _valid(token: bytes) -> bool:
    try:
        token.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_output_dir_that_is_a_file_fails_before_training(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    calls = []
    monkeypatch.setattr("bpe.training.train.train_bpe", lambda *a, **k: calls.append(1))
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(blocker / "sub")]) == 2
    assert f"cannot create output directory {blocker / 'sub'}: {blocker} is a file" in capsys.readouterr().err
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(blocker)]) == 2
    assert f"--out {blocker} exists and is not a directory" in capsys.readouterr().err
    assert calls == []


@pytest.fixture
def unwritable_dir(tmp_path):
    """A directory nobody can create files in: chmod 500 for a normal user; for root, read-only /sys."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        yield locked
        locked.chmod(0o700)
        return
    sysfs = Path("/sys")
    if not sysfs.is_dir() or os.access(sysfs, os.W_OK) and _can_create_in(sysfs):
        pytest.skip("no directory that root cannot write to")
    yield sysfs


def _can_create_in(directory: Path) -> bool:
    try:
        (directory / ".bpe-probe").touch()
    except OSError:
        return False
    (directory / ".bpe-probe").unlink()
    return True


def test_output_dir_not_writable_fails_before_training(unwritable_dir, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr("bpe.training.train.train_bpe", lambda *a, **k: calls.append(1))
    out = unwritable_dir / "bpe-out"
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"bpe: error: cannot create directory {out}: {unwritable_dir} is not "
                                       "writable (permission denied)\n")
    assert calls == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_an_output_under_proc_is_said_unwritable_not_missing():
    """/proc answers "No such file or directory" to a new file in it, which is not the problem."""
    proc = subprocess.run([sys.executable, "-m", "bpe", "train", "--data", "corpus-en", "--vocab-size", "300",
                           "--out", "/proc/bpe-out"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=HANG_GUARD_SECONDS)
    assert (proc.returncode, proc.stderr) == (2, "bpe: error: cannot create directory /proc/bpe-out: /proc is not "
                                                 "writable\n")


@pytest.mark.parametrize("code, why", [(errno.EROFS, "read-only file system"), (errno.EACCES, "permission denied")])
def test_the_reason_a_directory_refuses_a_file_is_said(code, why, monkeypatch):
    from bpe.running import files as outputs

    monkeypatch.setattr(Path, "exists", lambda self: str(self) in ("/mnt/ro", "/mnt", "/"))
    monkeypatch.setattr(Path, "is_dir", lambda self: True)
    monkeypatch.setattr(outputs.tempfile, "mkstemp",
                        lambda **k: (_ for _ in ()).throw(OSError(code, os.strerror(code))))
    with pytest.raises(BPEError) as refused:
        outputs.check_writable_dir("/mnt/ro/tok")
    assert str(refused.value) == f"cannot create directory /mnt/ro/tok: /mnt/ro is not writable ({why})"


def test_error_during_training_leaves_no_output(tmp_path, write_corpus, capsys):
    bad = write_corpus(b"good text\n\xff\xfe bad bytes")
    out = tmp_path / "out"
    assert main(["train", "--data", str(bad), "--vocab-size", "300", "--out", str(out)]) == 2
    assert "invalid UTF-8 at byte offset 10" in capsys.readouterr().err
    assert not out.exists()


def test_error_while_writing_leaves_no_partial_file(tmp_path, monkeypatch):
    import bpe.io.outputs as outputs

    vocab, merges = train_bpe(CORPUS_EN, 300, [EOT], variant="v2")

    def broken(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs, "hf_tokenizer_json", broken)
    with pytest.raises(OSError):
        save_tokenizer(tmp_path, vocab, merges, [EOT], formats=["hf"])
    assert list(tmp_path.iterdir()) == []  # vocab.json etc. were only temporary, and removed


def test_ctrl_c_during_training_leaves_no_output(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bpe", "train", "--variant", "v1", "--data", str(DEFAULT_CORPUS),
         "--vocab-size", "5000", "--progress", "--force", "--out", str(out)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = read_stderr_until(proc, "merging")  # the merge loop runs (its progress bar appears)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and without_bars(seen + err) == "bpe: interrupted\n", seen + err
    assert not out.exists()


def test_format_without_out_is_an_error(capsys):
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--format", "hf"]) == 2
    assert "--format needs --out DIR" in capsys.readouterr().err


@pytest.fixture(scope="module")
def small_result():
    return train_bpe(CORPUS_EN, 300, [EOT], variant="v6")


def _no_training(monkeypatch):
    calls = []
    monkeypatch.setattr("bpe.training.train.train_bpe", lambda *a, **k: calls.append(1))
    return calls


def test_retrain_leaves_one_consistent_tokenizer(tmp_path, capsys):
    out = tmp_path / "tok"
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--out", str(out), "--format", "hf",
                 "--format", "tiktoken"]) == 0
    assert main(["train", "--data", "corpus-en", "--vocab-size", "280", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["merges.txt", "train.json", "vocab.json"]
    assert json.loads((out / "train.json").read_text())["settings"]["vocab_size"] == 280
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]  # no temporary directory left


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


_SIGNAL_IN_THE_SWAP = """
import os, signal, sys
from bpe import train_bpe
from bpe.io import outputs
vocab, merges = train_bpe(sys.argv[1], int(sys.argv[3]), ["<|endoftext|>"], variant="v6")
sent = getattr(signal, sys.argv[4])
if sys.argv[5] == "renames":  # a system without the one-step swap: two renames, the signal between them
    outputs.exchange = lambda first, second: False
    real_rename = os.rename
    def rename_then_signal(src, dst):
        real_rename(src, dst)
        os.kill(os.getpid(), sent)  # the worst moment: between the two renames
    outputs.os.rename = rename_then_signal
else:  # the one-step swap, the signal right after it
    real_exchange = outputs.exchange
    def exchange_then_signal(first, second):
        swapped = real_exchange(first, second)
        assert swapped, "this system cannot swap two folders in one step"
        os.kill(os.getpid(), sent)
        return swapped
    outputs.exchange = exchange_then_signal
outputs.save_tokenizer(sys.argv[2], vocab, merges, ["<|endoftext|>"])
"""


def swap_interrupted(out: Path, signame: str, swap: str, merges: int = 280) -> subprocess.CompletedProcess:
    """A save over ``out`` in a fresh process (``merges`` + 257 tokens), ``signame`` sent to it in the middle of
    its swap: between its two renames, or right after the one-step swap (``swap``)."""
    return subprocess.run([sys.executable, "-c", _SIGNAL_IN_THE_SWAP, str(CORPUS_EN), str(out), str(merges), signame,
                           swap], cwd=REPO_ROOT, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)


def skip_without_one_step_swap(folder: Path) -> None:
    """Skip where ``folder``'s file system (or the system) cannot swap two folders in one step."""
    from bpe.running.files import exchange

    (folder / "a").mkdir()
    (folder / "b").mkdir()
    try:
        if not exchange(folder / "a", folder / "b"):
            pytest.skip("no one-step swap here (Linux's renameat2, on a file system that has it)")
    finally:
        (folder / "a").rmdir()
        (folder / "b").rmdir()


@pytest.mark.parametrize("swap", ["renames", "exchange"])
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_signal_in_the_swap_leaves_old_or_new_never_a_mix(tmp_path, signame, swap, small_result):
    if swap == "exchange":
        skip_without_one_step_swap(tmp_path)
    out = tmp_path / "tok"
    vocab, merges = small_result
    save_tokenizer(out, vocab, merges, [EOT], formats=["hf"])  # the old tokenizer, with an export
    proc = swap_interrupted(out, signame, swap)
    assert proc.returncode != 0, proc.stderr  # the signal did end it
    names = sorted(p.name for p in out.iterdir())
    assert names == ["merges.txt", "train.json", "vocab.json"]  # the new set whole: no old tokenizer.json
    assert len((out / "merges.txt").read_text().splitlines()) == 280 - 257
    leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("tok", ".tok.lock")]
    save_tokenizer(out, vocab, merges, [EOT])  # the next save clears what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"], leftovers


def test_kill_9_in_the_one_step_swap_leaves_a_whole_set_at_the_name(tmp_path, small_result):
    """No clean-up runs after SIGKILL: where the system swaps two folders in one step (Linux), the name holds
    the new set the moment after, and the old one sits beside it until the next save removes it."""
    skip_without_one_step_swap(tmp_path)
    out = tmp_path / "tok"
    save_tokenizer(out, *small_result, [EOT], formats=["hf"])
    proc = swap_interrupted(out, "SIGKILL", "exchange")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["merges.txt", "train.json", "vocab.json"]
    assert len(load_tokenizer(out).merges) == 280 - 257
    save_tokenizer(out, *small_result, [EOT])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]


def killed_between_the_renames(out: Path, small_result) -> Path:
    """``out`` saved, then a save over it killed (SIGKILL, so none of its clean-up runs) between its two
    renames, as a system without the one-step swap does them: no ``out``, the old set at ``.NAME.old-PID``."""
    save_tokenizer(out, *small_result, [EOT], formats=["hf"])
    proc = swap_interrupted(out, "SIGKILL", "renames")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    aside = list(out.parent.glob(f".{out.name}.old-*"))
    assert not out.exists() and len(aside) == 1 and aside[0].is_dir()
    return aside[0]


def test_a_save_killed_between_its_renames_is_named_by_a_reader(tmp_path, small_result, capsys):
    out = tmp_path / "tok"
    aside = killed_between_the_renames(out, small_result)
    hint = (f"a run killed while saving it left the previous tokenizer at {aside}: the next bpe train --out {out} "
            f"puts it back first, or move it back yourself (mv {aside} {out})")
    with pytest.raises(BPEError) as error:
        load_tokenizer(out)
    assert str(error.value) == f"no saved tokenizer in {out}: the directory is missing; {hint}"
    assert main(["encode", "--tokenizer", str(out), "--data", str(FIXTURES / "german.txt"), "--out",
                 str(tmp_path / "ids.npy")]) == 2
    assert capsys.readouterr().err == (f"bpe: error: tokenizer directory not found: {out} (train one with: python -m "
                                       f"bpe train --out DIR); {hint}\n")
    assert aside.is_dir() and not out.exists()  # a reader moves nothing


def test_a_save_killed_between_its_renames_is_put_back_by_the_next_run(tmp_path, small_result, capsys, write_corpus):
    """The next ``bpe train --out`` puts the old set back as it takes the output's lock, before it trains: a run
    that then fails (here, on a bad byte) leaves the tokenizer the user had, whole."""
    out = tmp_path / "tok"
    aside = killed_between_the_renames(out, small_result)
    before = {p.name: p.read_bytes() for p in aside.iterdir()}
    bad = write_corpus(b"a few words \xff")
    assert main(["train", "--data", str(bad), "--vocab-size", "300", "--out", str(out), "--quiet"]) == 2
    assert "invalid UTF-8" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old set, its export too
    assert load_tokenizer(out).merges == small_result[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus0.txt", "tok"]
    killed_between_the_renames(out, small_result)  # and once more: a run that trains replaces it, nothing left
    assert main(["train", "--data", str(CORPUS_EN), "--vocab-size", "270", "--out", str(out), "--quiet"]) == 0
    assert len(load_tokenizer(out).merges) == 270 - 257
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus0.txt", "tok"]


def test_an_interrupt_held_back_during_the_swap_carries_what_was_saved(tmp_path, monkeypatch, small_result):
    """A Ctrl-C that waited for the swap interrupts once the new set is in place: the KeyboardInterrupt
    names the files, which are whole (a caller such as ``bpe train`` says what it wrote)."""
    from contextlib import contextmanager

    from bpe.io import outputs

    real_held = outputs.stop_signals_held

    @contextmanager
    def held_then_ctrl_c():
        with real_held():
            yield
            os.kill(os.getpid(), signal.SIGINT)  # after the renames, while the signals are held

    monkeypatch.setattr(outputs, "stop_signals_held", held_then_ctrl_c)
    out = tmp_path / "tok"
    with pytest.raises(KeyboardInterrupt) as raised:
        save_tokenizer(out, *small_result, [EOT])
    assert raised.value.saved == [out / "vocab.json", out / "merges.txt", out / "train.json"]
    assert load_tokenizer(out).merges == small_result[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]


def test_disk_full_names_the_file_and_leaves_no_directory(tmp_path, monkeypatch, small_result):
    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("bpe.io.outputs.os.fsync", full)
    out = tmp_path / "tok"
    with pytest.raises(BPEError, match=f"cannot write {out / 'vocab.json'}: No space left on device"):
        save_tokenizer(out, *small_result, [EOT])
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_lock_is_removed_when_the_run_ends_and_a_killed_runs_lock_is_reused(tmp_path):
    # no .tok.lock is left beside the output; one left by a killed run (nobody holds it) is taken and removed
    out = tmp_path / "tok"
    with OutputLock(out):
        assert (tmp_path / ".tok.lock").exists()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / ".tok.lock").write_text("")
    with OutputLock(out):
        pass
    assert list(tmp_path.iterdir()) == []
