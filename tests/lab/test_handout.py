"""``python -m bpe handout``: the CS336 tokenizer questions answered in one run (bpe/lab/handout.py)."""

import json

from bpe.cli import main
from bpe.lab import publish
from bpe.lab.handout import longest_tokens


def test_quick_answers_every_question(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "answers.json"
    assert main(["handout", "--quick", "--out", str(out)]) == 0
    answers = json.loads(out.read_text())
    assert answers["stand_ins"] is True
    for name in ("tinystories", "owt"):
        train = answers["train"][name]
        took = train["seconds"]  # recorded, not compared with any bound
        assert took > 0 and train["peak_rss_mb"] > 0 and train["largest_stage"] in train["stages"]
        lengths = [t["bytes"] for t in train["longest"]]
        assert lengths == sorted(lengths, reverse=True) and lengths[0] > 1
    assert set(answers["compression"]) == {f"{t}_tokenizer_on_{d}" for t in ("tinystories", "owt")
                                           for d in ("tinystories", "owt")}
    for e in answers["compression"].values():
        assert e["tokens"] > 0 and e["bytes_per_token"] == e["bytes"] / e["tokens"]
    # A tokenizer compresses the text it was trained on better than the other tokenizer does.
    c = answers["compression"]
    assert c["tinystories_tokenizer_on_tinystories"]["bytes_per_token"] > c["owt_tokenizer_on_tinystories"]["bytes_per_token"]
    assert c["owt_tokenizer_on_owt"]["bytes_per_token"] > c["tinystories_tokenizer_on_owt"]["bytes_per_token"]
    assert answers["uint16"] == {"largest_id": 799, "fits": True, "uint16_max": 65535}
    assert answers["throughput"]["pile_days"] > 0


def test_longest_tokens_leave_out_the_specials():
    vocab = {0: b"a", 1: b"<|endoftext|>", 2: b"abc", 3: b"ab"}
    assert longest_tokens(vocab, ["<|endoftext|>"], 2) == [{"text": "abc", "bytes": 3}, {"text": "ab", "bytes": 2}]


def test_publish_only_from_a_clean_tree(monkeypatch, capsys):
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert main(["handout", "--publish"]) == 2
    assert "uncommitted changes" in capsys.readouterr().err
