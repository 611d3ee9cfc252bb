"""``python -m bpe handout``: the CS336 tokenizer questions answered in one run (bpe/lab/teach/handout.py)."""

import json

from bpe.cli import main
from bpe.lab.measure import publish
from bpe.lab.teach.handout import longest_tokens, worked_example
from bpe.training.registry import VARIANTS

#: The handout's worked example: its twelve merges, and "newest" with the first six.
HANDOUT_MERGES = ["s t", "e st", "o w", "l ow", "w est", "n e", "ne west", "w i", "wi d", "wid est", "low e", "lowe r"]


def test_quick_answers_every_question(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "answers.json"
    assert main(["handout", "--quick", "--out", str(out)]) == 0
    answers = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert answers["stand_ins"] is True
    assert answers["example"]["merges"] == HANDOUT_MERGES and "'newest' encodes as ['ne', 'west']" in printed
    # Every answer it computes is printed, the longest tokens and both budgets included.
    for name in ("tinystories", "owt"):
        assert all(repr(t["text"]) in printed for t in answers["train"][name]["longest"])
    assert "budget 30 minutes, 30 GB" in printed and "budget 12 hours, 100 GB" in printed
    assert "--size 2.2GB --vocab-size 10000" in printed and "the largest id is 799" in printed
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


def test_the_worked_example_is_the_handouts_on_every_rung():
    for variant in VARIANTS:
        example = worked_example(variant)
        assert example["counts"] == {"low": 5, "lower": 2, "widest": 3, "newest": 6}
        assert example["merges"] == HANDOUT_MERGES, variant
        assert example["added_tokens"] == ["st", "est", "ow", "low", "west", "ne"]
        assert example["newest"] == ["ne", "west"]


def test_the_example_alone_from_the_command_line(capsys):
    assert main(["handout", "--example", "--variant", "v1"]) == 0
    assert "merges: 's t', 'e st', 'o w'" in capsys.readouterr().out
    assert main(["handout", "--example", "--variant", "v99"]) == 2
    assert "unknown variant 'v99'" in capsys.readouterr().err
