"""``python -m bpe reproduce``: every step of the articles, measured on the ladder (bpe/lab/reproduce.py)."""

import json

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab import reproduce, runinfo
from bpe.lab.reproduce import STEPS, compare


def test_quick_mode_measures_every_step_on_both_regimes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "articles.json"
    assert main(["reproduce", "--quick", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert result["mode"] == "quick" and result["machine"]["git_commit"]
    # The real data sets are not in the temporary data dir: their sets are skipped, the rest all ran.
    assert set(result["sets"]) == {"tinystories", "tinystories-reduced", "tinystories-v1", "web", "web-reduced"}
    assert "skipped: tinystories is not in data/" in printed
    for name, run_set in result["sets"].items():
        for variant, summary in run_set["variants"].items():
            assert len(summary["runs"]) == 1
            assert summary["total"]["min"] <= summary["total"]["median"] <= summary["total"]["max"]
    expected = [s for s in STEPS if s.run_set in result["sets"]]
    assert len(result["steps"]) == len(expected)
    for step in result["steps"].values():
        assert step["ratio"] > 0 and step["low"] <= step["ratio"] <= step["high"]
        assert step["verdict"].endswith("(one run: no spread)") and step["verdict"] in printed
    assert result["article"]["lili_part2"]["tinystories"]["merge"][0] == 118


def test_a_gain_inside_the_spread_is_not_a_ratio():
    assert compare([2.0, 2.2, 2.1], [1.0, 1.1, 1.05])["verdict"] == "2.00x"
    assert compare([1.0, 1.4, 1.2], [1.3, 0.9, 1.0])["verdict"] == "inside the spread"
    slower = compare([1.0, 1.05, 1.1], [2.0, 2.1, 2.2])
    assert slower["clear"] and slower["verdict"] == "0.50x"


def test_publish_is_refused_from_a_dirty_tree(monkeypatch, capsys):
    monkeypatch.setattr(runinfo, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert main(["reproduce", "--publish"]) == 2
    assert "uncommitted changes (abc1234-dirty)" in capsys.readouterr().err
    with pytest.raises(BPEError, match="full plan"):
        from bpe.cli import build_parser, cmd_reproduce
        cmd_reproduce(build_parser().parse_args(["reproduce", "--publish", "--quick"]))


def test_the_default_output_is_not_a_tracked_file():
    assert reproduce.DEFAULT_OUT.parent.name == "out"
    assert reproduce.PUBLISHED_OUT.relative_to(reproduce.REPO_ROOT).as_posix() == "docs/articles-bench.json"
