"""``python -m bpe reproduce``: every step of the articles, measured on the ladder (bpe/lab/reproduce.py)."""

import json
import subprocess

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab import publish
from bpe.lab.reproduce import STEPS
from bpe.lab.spread import compare, ratio_text
from conftest import REPO_ROOT


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
        assert step["clear"] is None and step["verdict"] == ratio_text(step["ratio"]) and step["verdict"] in printed
    assert "(one run of a rung: no spread to judge its ratios by)" in printed
    assert result["article"]["lili_part2"]["tinystories"]["merge"][0] == 118


def test_a_gain_within_the_spread_is_not_a_ratio():
    assert compare([2.0, 2.2, 2.1], [1.0, 1.1, 1.05])["verdict"] == "2.00x faster"
    assert compare([1.0, 1.4, 1.2], [1.3, 0.9, 1.0])["verdict"] == "within spread"
    slower = compare([1.0, 1.05, 1.1], [2.0, 2.1, 2.2])
    assert slower["clear"] and slower["verdict"] == "2.00x slower"


def test_publish_is_refused_from_a_dirty_tree(monkeypatch, capsys):
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert main(["reproduce", "--publish"]) == 2
    assert "uncommitted changes (abc1234-dirty)" in capsys.readouterr().err
    with pytest.raises(BPEError, match="full plan"):
        from bpe.cli import build_parser, cmd_reproduce
        cmd_reproduce(build_parser().parse_args(["reproduce", "--publish", "--quick"]))


def test_the_default_output_is_not_a_tracked_file(tmp_path, monkeypatch):
    """Without --publish the result goes where git ignores it; with it, to the committed file the pages quote."""
    written = []
    monkeypatch.setattr("bpe.lab.reproduce.run_reproduce", lambda out, **kwargs: written.append(out))
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234")
    assert main(["reproduce", "--quick"]) == 0 and main(["reproduce", "--publish"]) == 0
    default, published = written

    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True).returncode

    assert git("check-ignore", "-q", str(default)) == 0  # ignored: a run never dirties the tree
    assert git("ls-files", "--error-unmatch", str(published)) == 0  # tracked: docs/articles.md quotes it
    quoted = published.resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    assert f"<!--fig {quoted} " in (REPO_ROOT / "docs" / "articles.md").read_text()  # the page quotes it
