"""``python -m bpe reproduce``: every step of the articles, measured on the ladder (bpe/lab/reproduce.py)."""

import json
import subprocess

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab import publish
from bpe.lab.articles import THEIRS, their_ratio
from bpe.lab.reproduce import STEPS, compare_steps, names
from bpe.lab.spread import compare, ratio_text
from conftest import REPO_ROOT


def test_quick_mode_measures_every_step_on_both_regimes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "articles.json"
    assert main(["reproduce", "--quick", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert result["mode"] == "quick" and result["machine"]["git_commit"]
    # A quick run says on its first and last lines that its ratios are not measurements.
    lines = printed.strip().splitlines()
    assert "not measurements" in lines[0] and "not measurements" in lines[-1]
    # The real data sets are not in the temporary data dir: their sets are skipped, the rest all ran.
    assert set(result["sets"]) == {"cs336-speed", "tinystories", "tinystories-reduced", "tinystories-v1", "web",
                                   "web-reduced"}
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
    # Each step prints the articles' ratio of its stage beside the ladder's, and why they differ.
    v1_v2 = result["steps"]["tinystories-v1:v1-v2:merge_phase"]
    assert [t["ratio"] for t in v1_v2["theirs"]] == [1565 / 118] and "theirs  13.3x faster" in printed
    assert all(f"why     {s['why']}" in printed for s in result["steps"].values())
    # The coursework table and the merge-cost plot go beside the JSON, from this run alone.
    table = (tmp_path / "articles.md").read_text()
    assert "not measurements" in table.splitlines()[2] and "not measurements" in table.splitlines()[-1]
    assert "| their ratio | your ratio | range over runs | why it differs | machine and commit |" in table
    assert sum(line.startswith("| v") for line in table.splitlines()) == len(result["steps"])
    assert "13.3x faster" in table and result["machine"]["git_commit"] in table
    assert (tmp_path / "articles-merge-cost.png").read_bytes()[:4] == b"\x89PNG"


def test_every_step_compares_one_stage_on_both_sides():
    """Their counting stands beside the ladder's pre-tokenizing, their max() beside select, merge beside merge."""
    used = set()
    for step in STEPS:
        assert step.why
        for name in names(step.theirs):
            assert THEIRS[name].stage == step.stage, (step.name, name)
            used.add(name)
    assert used == set(THEIRS)  # every ratio of the articles stands beside a step


def test_a_step_below_one_or_within_the_spread_says_why():
    def run(seconds):
        return {"total": seconds, "merge_phase": seconds, "stages": {"update": seconds, "select": seconds}}

    sets = {"web": {"variants": {"v6": {"runs": [run(1.0), run(1.1), run(1.2)]},
                                 "v7": {"runs": [run(1.05), run(1.15), run(1.25)]}}}}
    step = compare_steps(sets)["web:v6-v7:merge_phase"]
    assert step["verdict"] == "within spread" and "round trip" in step["why"]
    assert [t["ratio"] for t in step["theirs"]] == [their_ratio("omp_merge")["ratio"]]


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
