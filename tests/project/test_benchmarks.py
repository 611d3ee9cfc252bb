"""The pytest-benchmark suite (tools/benchmarks/): timed when asked, what a saved run holds, comparing two runs.

The benchmarks themselves run untimed on tiny data in every ``make test`` (pyproject's testpaths); here,
what is around them: ``pytest tools/benchmarks --benchmark-only --benchmark-json`` times them directly, each
record carries its stage times; every regime has its reference merges; ``tools.benchmarks.compare`` finds two
saved runs and fails past a threshold by pytest-benchmark's own rule; the make targets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO_ROOT
from tools.benchmarks import compare
from tools.benchmarks.references import reference
from tools.benchmarks.regimes import PEERS, REGIMES, SIZES


def test_every_regime_and_size_has_its_reference():
    for regime in REGIMES:
        for size in SIZES:
            known = reference(regime.setting(size))
            assert known["merges"] > 0 and len(known["digest"]) == 16


def test_benchmark_only_times_directly_and_records_the_stages(tmp_path):
    """pyproject's addopts disables timing; asking for --benchmark-only and a JSON is enough to time."""
    out = tmp_path / "new" / "b.json"  # a folder pytest-benchmark itself would not make
    proc = subprocess.run([sys.executable, "-m", "pytest", "tools/benchmarks", "-q", "-p", "no:cacheprovider",
                           "--benchmark-only", "--benchmark-min-rounds=2", "--benchmark-json", str(out),
                           "-k", "gutenberg-like-v6 or gutenberg-like-v7"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "BPE_BENCH_SIZE": "tiny"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    saved = json.loads(out.read_text())
    tiny = REGIMES[0].tiny
    assert [b["name"] for b in saved["benchmarks"]] == ["test_ladder[gutenberg-like-v6]",
                                                        "test_ladder[gutenberg-like-v7]"]
    for bench in saved["benchmarks"]:
        info = bench["extra_info"]
        assert bench["group"] == f"gutenberg-like: {tiny.label} at vocab {tiny.vocab_size:,}"
        assert bench["stats"]["rounds"] == 2
        assert set(info["stages"]) == {"pretokenize", "pair_count", "select", "update"}
        assert info["merges_digest"] == reference(tiny)["digest"] and info["merges"] == reference(tiny)["merges"]
        assert info["data"] == tiny.label and info["data_bytes"] > 60_000 and info["vocab_size"] == tiny.vocab_size
        assert info["peak_rss_bytes"] > 0 and info["commit"]


def _saved_run(folder, number: int, when: str, medians: dict[str, float], data: str = "d", vocab: int = 400) -> None:
    benches = [{"name": f"test_ladder[{name}]", "fullname": f"benchmarks/test_ladder.py::test_ladder[{name}]",
                "extra_info": {"data": data, "vocab_size": vocab},
                "stats": {"median": median, "min": median, "max": median, "mean": median, "stddev": 0, "iqr": 0}}
               for name, median in medians.items()]
    (folder / f"{number:04d}_abc_{when}.json").write_text(json.dumps({"datetime": when, "benchmarks": benches}))


def test_the_last_two_runs_or_two_named(tmp_path):
    machine = tmp_path / "Linux-CPython-3.11-64bit"
    machine.mkdir()
    for number, when in ((1, "2026-01-01"), (2, "2026-01-03"), (3, "2026-01-02")):
        _saved_run(machine, number, when, {"a": 1.0})
    earlier, later = compare.pick_runs([], tmp_path)
    assert (earlier.name[:4], later.name[:4]) == ("0003", "0002")  # by the time saved
    assert [p.name[:4] for p in compare.pick_runs(["1", "0003"], tmp_path)] == ["0001", "0003"]
    with pytest.raises(compare.CompareError, match="saved run 0009: 0 files match"):
        compare.pick_runs(["1", "9"], tmp_path)
    with pytest.raises(compare.CompareError, match="name two saved runs"):
        compare.pick_runs(["1"], tmp_path)
    (tmp_path / "one" / "m").mkdir(parents=True)
    _saved_run(tmp_path / "one" / "m", 1, "2026-01-01", {"a": 1.0})
    with pytest.raises(compare.CompareError, match="1 saved run"):
        compare.pick_runs([], tmp_path / "one")


def test_a_threshold_fails_by_pytest_benchmarks_own_rule(tmp_path):
    _saved_run(tmp_path, 1, "1", {"v6": 1.0, "v7": 1.0, "v5": 1.0})
    _saved_run(tmp_path, 2, "2", {"v6": 1.15, "v7": 1.05, "v5": 0.5})
    before, after = sorted(tmp_path.glob("*.json"))
    failed, skipped = compare.regressions(before, after, "median:10%")
    assert failed == ["test_ladder[v6]: median 1.0000s -> 1.1500s (+15.0%)"]
    assert skipped == []
    assert compare.regressions(before, after, "median:20%")[0] == []
    assert compare.regressions(before, after, "median:0.1")[0] == [
        "test_ladder[v6]: median 1.0000s -> 1.1500s (+0.1500s)"]
    with pytest.raises(compare.CompareError, match="threshold 'median:ten'"):
        compare.regressions(before, after, "median:ten")


def test_runs_on_other_data_or_vocab_are_not_checked(tmp_path):
    _saved_run(tmp_path, 1, "1", {"v6": 1.0})
    _saved_run(tmp_path, 2, "2", {"v6": 9.0}, data="webtext-synth-64KB")
    _saved_run(tmp_path, 3, "3", {"v6": 9.0}, data="webtext-synth-64KB", vocab=500)
    runs = sorted(tmp_path.glob("*.json"))
    assert compare.regressions(runs[0], runs[1], "median:10%") == ([], ["test_ladder[v6]"])
    assert compare.regressions(runs[1], runs[2], "median:10%") == ([], ["test_ladder[v6]"])


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_targets():
    def dry_run(*args):
        return subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", *args], cwd=REPO_ROOT,
                              capture_output=True, text=True, timeout=60).stdout

    def echoed(*args):
        return [line for line in dry_run(*args).splitlines() if line.startswith("echo")]

    [run] = echoed("benchmark")
    assert "-m pytest tools/benchmarks" in run and "--benchmark-autosave" in run and "--benchmark-min-rounds=3" in run
    assert echoed("benchmark-compare") == ["echo '.venv/bin/python -m tools.benchmarks.compare'"]
    assert echoed("benchmark-compare", "RUNS=0001 0002", "THRESHOLD=median:10%", "HISTOGRAM=1") == [
        "echo '.venv/bin/python -m tools.benchmarks.compare 0001 0002 --fail median:10% "
        "--histogram out/benchmarks/histogram'"]


def test_the_peers_are_the_labs():
    from bpe.lab.measure.peers import PEERS as LAB_PEERS

    assert set(PEERS) <= set(LAB_PEERS)
