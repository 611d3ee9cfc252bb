"""A saved tokenizer's files checked before use (bpe/io/checks.py): a folder trained on corpus.en, then
corrupted one way per test, is refused by ``bpe encode`` with the exact one line naming the file and the
problem and exit status 2, no output written; the good folder encodes as before, checked once per load."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from bpe import BPEError, Tokenizer, load_tokenizer, train_bpe
from bpe.cli import main
from bpe.io.encode import encode_file
from bpe.io.formats import load_vocab
from conftest import CORPUS_EN, TINYSTORIES_SAMPLE, child_env

EOT = "<|endoftext|>"
AGAIN = "the file was cut or edited, or comes from another run"


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """vocab 300 trained by v2 on corpus.en (the CS336 assignment's merges: 43 of them, ``Ġ t`` first)."""
    out = tmp_path_factory.mktemp("good") / "tok"
    assert main(["train", "--variant", "v2", "--data", str(CORPUS_EN), "--vocab-size", "300", "--out", str(out)]) == 0
    return out


def edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def edit_json(path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def merge_lines(d) -> list[str]:
    return (d / "merges.txt").read_text(encoding="utf-8").splitlines(keepends=True)


def cut_merges_in_half(d):
    (d / "merges.txt").write_text("".join(merge_lines(d)[:21]), encoding="utf-8")
    return f"{d}/merges.txt has 21 merges but {d}/train.json records 43; {AGAIN}"


def cut_a_merge_line(d):
    (d / "merges.txt").write_text("".join(merge_lines(d)[:4]) + "Ġt", encoding="utf-8")
    return f"{d}/merges.txt:5: expected two tokens separated by one space, got 'Ġt'"


def merge_of_a_token_not_in_the_vocab(d):
    edit(d / "merges.txt", "Ġt he\n", "Ġt hx\n")
    return f"{d}/merges.txt: merge 5 (Ġt hx) uses 'hx', but it is not in {d}/vocab.json"


def merge_making_a_token_not_in_the_vocab(d):
    edit(d / "merges.txt", "Ġt he\n", "Ġ he\n")
    return f"{d}/merges.txt: merge 5 (Ġ he) makes 'Ġhe', which is not in {d}/vocab.json"


def merges_out_of_order(d):
    lines = merge_lines(d)
    lines[2], lines[4] = lines[4], lines[2]  # "Ġt he" before "h e" makes "he"
    (d / "merges.txt").write_text("".join(lines), encoding="utf-8")
    return f"{d}/merges.txt: merge 3 (Ġt he) uses 'he', but no earlier merge makes it"


def random_bytes_in_merges(d):
    offset = len("".join(merge_lines(d)[:4]).encode("utf-8"))
    data = (d / "merges.txt").read_bytes()
    (d / "merges.txt").write_bytes(data[:offset] + b"\x8f\x00\xc3(\xfe\x17" + data[offset:])
    return f"{d}/merges.txt: not UTF-8 text (byte 0x8f at offset {offset})"


def foreign_text_in_merges(d):
    edit(d / "merges.txt", "Ġt he\n", "中文 he\n")
    return f"{d}/merges.txt:5: the token '中文' has the character '中', which stands for no byte in GPT-2's " \
           f"byte-to-unicode form"


def delete_train_json(d):
    (d / "train.json").unlink()
    return (f"no saved tokenizer in {d}: train.json is missing (it records the special tokens and the merge "
            f"count; see docs/outputs.md)")


def duplicate_id(d):
    edit(d / "vocab.json", '"he": 259', '"he": 258')
    return f"{d}/vocab.json: the id 258 is given twice, to 'Ġa' and 'he'"


def swapped_ids(d):
    edit(d / "vocab.json", '"Ġa": 258', '"Ġa": 259')
    edit(d / "vocab.json", '"he": 259', '"he": 258')
    return (f"{d}/vocab.json: 'he', made by merge 3 (h e) of {d}/merges.txt, has the id 258, not after the id 259 "
            f"of the token the merge before makes; a trained vocab numbers its merges' tokens in merge order")


def id_gap(d):
    edit(d / "vocab.json", '"Ġy": 299', '"Ġy": 305')
    return f"{d}/vocab.json: the ids of its 300 tokens should be 0 to 299, but 299 is missing and 305 is there"


def id_not_an_integer(d):
    edit(d / "vocab.json", '"he": 259', '"he": "259"')
    return f"{d}/vocab.json: the token 'he' has the id '259', not a non-negative integer"


def byte_without_a_token(d):
    edit(d / "vocab.json", '"Ġ": 32', '"ĠĠĠĠĠĠĠĠ": 32')
    return f"{d}/vocab.json: the byte 0x20 ('Ġ') has no token; every one of the 256 bytes must have one"


def vocab_a_list(d):
    pairs = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
    (d / "vocab.json").write_text(json.dumps(list(pairs.items())), encoding="utf-8")
    return f"{d}/vocab.json: expected a JSON object, got a list"


def vocab_token_in_raw_form(d):
    edit(d / "vocab.json", '"Ġt": 257', '" t": 257')
    return (f"{d}/vocab.json: the token ' t' has the character ' ', which stands for no byte in GPT-2's "
            f"byte-to-unicode form")


def train_json_not_json(d):
    (d / "train.json").write_text("settings: v2\n", encoding="utf-8")
    return f"{d}/train.json: not valid JSON (Expecting value at line 1, column 1)"


def train_json_a_list(d):
    (d / "train.json").write_text("[]", encoding="utf-8")
    return f"{d}/train.json: expected a JSON object, got a list"


def train_json_without_special_tokens(d):
    edit_json(d / "train.json", lambda info: info.pop("special_tokens"))
    return f'{d}/train.json: "special_tokens" must be a list of the special tokens as strings (no such field)'


def train_json_without_result(d):
    edit_json(d / "train.json", lambda info: info.pop("result"))
    return (f'{d}/train.json: "result" must record "merges" and "vocab_size" as integers (the counts the other '
            f"files are checked against)")


def special_token_not_in_the_vocab(d):
    edit_json(d / "train.json", lambda info: info.update(special_tokens=["<|other|>"]))
    return f"{d}/train.json: the special token '<|other|>' is not in {d}/vocab.json"


def special_token_a_lone_surrogate(d):
    (d / "train.json").write_text('{"special_tokens": ["\\ud800"], "result": {"merges": 43, "vocab_size": 300}}')
    return f"{d}/train.json: the special token '\\ud800' is not in {d}/vocab.json"


def special_token_dropped(d):
    edit_json(d / "train.json", lambda info: info.update(special_tokens=[]))
    return f"{d}/vocab.json has 300 tokens, but 256 bytes + 0 special + 43 merged make 299"


def vocab_size_recorded_otherwise(d):
    edit_json(d / "train.json", lambda info: info["result"].update(vocab_size=301))
    return f"{d}/vocab.json has 300 tokens but {d}/train.json records 301; {AGAIN}"


CORRUPTIONS = [cut_merges_in_half, cut_a_merge_line, merge_of_a_token_not_in_the_vocab,
               merge_making_a_token_not_in_the_vocab, merges_out_of_order, random_bytes_in_merges,
               foreign_text_in_merges, delete_train_json, duplicate_id, swapped_ids, id_gap, id_not_an_integer,
               byte_without_a_token, vocab_a_list, vocab_token_in_raw_form, train_json_not_json, train_json_a_list,
               train_json_without_special_tokens, train_json_without_result, special_token_not_in_the_vocab,
               special_token_a_lone_surrogate, special_token_dropped, vocab_size_recorded_otherwise]


def corrupt(good, tmp_path, corruption) -> tuple:
    d = tmp_path / "tok"
    shutil.copytree(good, d)
    return d, corruption(d)


@pytest.mark.parametrize("corruption", CORRUPTIONS, ids=[c.__name__ for c in CORRUPTIONS])
def test_encode_refuses_a_corrupted_folder_in_one_line(good, tmp_path, capsys, corruption):
    d, message = corrupt(good, tmp_path, corruption)
    capsys.readouterr()
    out = tmp_path / "ids.npy"
    assert main(["encode", "--tokenizer", str(d), "--data", str(TINYSTORIES_SAMPLE), "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"bpe: error: {message}\n"
    assert not out.exists()
    with pytest.raises(BPEError) as caught:  # the library says the same
        load_tokenizer(d)
    assert str(caught.value) == message


def test_the_command_exits_2_without_a_traceback(good, tmp_path):
    d, message = corrupt(good, tmp_path, duplicate_id)
    proc = subprocess.run([sys.executable, "-m", "bpe", "encode", "--tokenizer", str(d), "--data",
                           str(TINYSTORIES_SAMPLE), "--out", str(tmp_path / "ids.npy")],
                          capture_output=True, text=True, env=child_env(), timeout=120)
    assert proc.returncode == 2 and proc.stderr == f"bpe: error: {message}\n", proc.stderr


def test_from_files_checks_the_merges_against_the_vocab(good, tmp_path):
    d, message = corrupt(good, tmp_path, merges_out_of_order)
    with pytest.raises(BPEError) as caught:
        Tokenizer.from_files(d / "vocab.json", d / "merges.txt", [EOT])
    assert str(caught.value) == message
    d, message = corrupt(good, tmp_path / "list", vocab_a_list)
    with pytest.raises(BPEError) as caught:
        load_vocab(d / "vocab.json")
    assert str(caught.value) == message


def test_a_good_folder_encodes_as_the_tokenizer_it_was_saved_from(good, tmp_path):
    vocab, merges = train_bpe(CORPUS_EN, 300, [EOT], variant="v2")
    text = TINYSTORIES_SAMPLE.read_text(encoding="utf-8")
    expected = Tokenizer(vocab, merges, [EOT]).encode(text)
    assert main(["encode", "--tokenizer", str(good), "--data", str(TINYSTORIES_SAMPLE),
                 "--out", str(tmp_path / "ids.npy"), "--workers", "1"]) == 0
    assert np.load(tmp_path / "ids.npy").tolist() == expected
    assert Tokenizer.from_files(good / "vocab.json", good / "merges.txt", [EOT]).encode(text) == expected


def test_the_check_runs_once_per_load_not_per_chunk(good, tmp_path, monkeypatch):
    import bpe.io.outputs

    calls = []
    check = bpe.io.outputs.check_merges
    monkeypatch.setattr(bpe.io.outputs, "check_merges", lambda *args: calls.append(1) or check(*args))
    d = tmp_path / "tok"
    shutil.copytree(good, d)  # a folder no earlier test loaded in this process
    stats = encode_file(d, TINYSTORIES_SAMPLE, tmp_path / "ids.npy", workers=1, chunk_bytes=256)
    assert stats.tokens > 0 and calls == [1]
