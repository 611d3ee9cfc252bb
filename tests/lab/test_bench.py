"""The bench harness (bpe/lab/bench.py) reports every stage for every variant and checks the variants agree;
a run estimated past the budget needs --force; --json is checked before the bench; --limit is recorded.
Your own trainers in the bench (their estimates and progress included): test_candidates.py.
`bench --busy N`: N spinning processes for the measurement's length, none left after, bad N named."""

import json
import os
import sys
from pathlib import Path

import pytest

from bpe import VARIANTS, BPEError
from bpe.cli import main
import bpe.lab.bench as bench_module
from bpe.lab.bench import BenchSettings, parse_busy, run_bench, run_once, spin_on_cores
from bpe.training.chunking import find_limit_end
from conftest import CORPUS_EN, DEFAULT_CORPUS, live_processes, sleeping, wait_for

EOT = "<|endoftext|>"


def test_bench_json_has_every_figure(tmp_path, capsys):
    out = tmp_path / "bench.json"
    report = run_bench(BenchSettings("v1,v2", "tinystories-sample", 300, 2, ["<|endoftext|>"], 2, json_out=str(out)))
    saved = json.loads(out.read_text())
    assert saved["settings"]["corpus_bytes"] == 3794 and saved["settings"]["num_merges"] == 43
    assert saved["machine"]["cpu_count"] >= 1 and saved["machine"]["python"]
    assert saved["merges_identical"] is True
    for name in ("v1", "v2"):
        variant = saved["variants"][name]
        assert len(variant["runs"]) == 2
        median = variant["median"]
        assert set(median["stages"]) == {"pretokenize", "pair_count", "select", "update"}
        assert median["merges"] == 43 and median["checkpoints"][-1][0] == 43
        assert median["peak_rss"]["self"] > 0
    printed = capsys.readouterr().out
    assert "comparison" in printed and "median" in printed
    assert report["variants"]["v2"]["median"]["merges_sha256"] == report["variants"]["v1"]["median"]["merges_sha256"]


def test_the_candidates_take_turns(monkeypatch):
    # A drift of the machine during the bench falls on every candidate alike: v1, v2, v1, v2, not v1, v1, v2, v2.
    order = []
    real_run_once = bench_module.run_once

    def recorded(path, candidate, *args, **kwargs):
        order.append(candidate.label)
        return real_run_once(path, candidate, *args, **kwargs)

    monkeypatch.setattr(bench_module, "run_once", recorded)
    report = run_bench(BenchSettings("v1,v2", "tinystories-sample", 300, 2, [EOT], 2))
    assert order == ["v1", "v2", "v1", "v2"]
    assert [len(report["variants"][name]["runs"]) for name in ("v1", "v2")] == [2, 2]


def test_a_run_records_its_mergers_summary_beside_the_timings():
    # v7's Merger.summary() gives its shards and gathered_at (None: its shards never came back); v2 has none.
    v7 = run_once(CORPUS_EN, "v7", 300, ["<|endoftext|>"], 2)
    v2 = run_once(CORPUS_EN, "v2", 300, ["<|endoftext|>"], 2)
    assert "gathered_at" in v7 and "gathered_at" not in v2
    assert v7["merges_sha256"] == v2["merges_sha256"] and set(v7) - set(v2) == {"shards", "gathered_at"}


def test_a_very_long_bench_needs_force(monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.bench.run_once", lambda *a, **k: runs.append(a) or {})
    assert main(["bench", "--variant", "v1,v6", "--repeat", "1"]) == 2  # v1 at vocab 10,000 on 2.3 MB
    err = capsys.readouterr().err
    assert "estimated v1 ~" in err and "pass --force to run it anyway" in err
    assert runs == []


def test_variant_all_skips_the_long_runs_with_a_note(monkeypatch, capsys):
    from bpe.lab import bench
    from bpe.lab import estimate as cost_model
    from bpe.lab.estimate import Estimate

    def estimate(variant, shape, merges, workers):  # v1 past the budget, the rest a second
        return Estimate(variant, merges, 1_000.0 if variant == "v1" else 1.0, 1e6)

    monkeypatch.setattr(cost_model, "estimate_run", estimate)
    report = bench.run_bench(bench.BenchSettings("all", "tinystories-sample", 300, 1, [EOT], 1, budget=60), out=sys.stdout)
    assert "v1" in report["skipped"] and "--variant v1 --force" in report["skipped"]["v1"]
    assert list(report["variants"]) == [name for name in VARIANTS if name != "v1"]
    assert "estimate per run: v1 ~17 min" in capsys.readouterr().out
    with pytest.raises(BPEError, match=r"bench of v1 on tinystories-sample .* pass --force"):
        bench.run_bench(bench.BenchSettings("v1,v6", "tinystories-sample", 300, 1, [EOT], 1, budget=60), out=sys.stdout)


def test_bench_json_into_a_directory_fails_before_the_bench(tmp_path, monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.bench.run_once", lambda *a, **k: runs.append(a))
    assert main(["bench", "--data", "corpus-en", "--json", str(tmp_path)]) == 2
    assert f"--json {tmp_path} is a directory" in capsys.readouterr().err
    assert runs == []


def test_bench_json_goes_beside_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("a file that is not a tokenizer's")
    assert main(["bench", "--variant", "v6", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "1",
                 "--workers", "1", "--quiet", "--json", str(tmp_path / "bench.json")]) == 0
    assert json.loads((tmp_path / "bench.json").read_text())["settings"]["vocab_size"] == 300
    assert (tmp_path / "notes.txt").is_file()


def test_bench_records_the_limit(tmp_path, capsys):
    out = tmp_path / "bench.json"
    report = run_bench(BenchSettings("v2", "gutenberg-sample", 300, 1, [EOT], None, json_out=str(out), limit="100KB"))
    settings = json.loads(out.read_text())["settings"]
    end = find_limit_end(DEFAULT_CORPUS, 100_000, [EOT])
    assert settings["limit"] == 100_000 and settings["corpus_bytes"] == end
    assert settings["file_bytes"] == DEFAULT_CORPUS.stat().st_size
    assert f"({end:,} bytes of {DEFAULT_CORPUS.stat().st_size:,}, --limit 100,000)" in capsys.readouterr().out
    assert report["variants"]["v2"]["median"]["merges"] == 300 - 257


def test_spinners_run_for_the_block_and_are_gone_after():
    with spin_on_cores(2) as pids:
        assert len(pids) == 2 and set(pids) <= set(live_processes(parent=os.getpid()))
    assert live_processes(parent=os.getpid()) == []
    with spin_on_cores(0) as pids:
        assert pids == []


def test_spinners_are_gone_after_an_error_too():
    with pytest.raises(KeyboardInterrupt):
        with spin_on_cores(1):
            raise KeyboardInterrupt
    assert live_processes(parent=os.getpid()) == []


def test_bursty_spinners_take_part_of_a_core_and_are_gone_after():
    """Part of a core: it spins (its CPU time grows) and it sleeps (seen in ``time.sleep``), in turns."""
    with spin_on_cores(1, "bursty") as pids:
        before = _cpu_ticks(pids[0])
        wait_for(lambda: _cpu_ticks(pids[0]) > before + 2, "the bursty spinner never spun")
        wait_for(lambda: sleeping(pids[0]), "the bursty spinner never slept")
    assert live_processes(parent=os.getpid()) == []


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.parametrize("spec, parsed", [("0", (0, "spin")), ("1", (1, "spin")), ("2:bursty", (2, "bursty"))])
def test_busy_takes_a_count_and_a_load(spec, parsed):
    assert parse_busy(spec) == parsed


@pytest.mark.parametrize("spec", ["-1", "x", "1:sleepy"])
def test_a_bad_busy_is_named(spec):
    with pytest.raises(BPEError, match="--busy takes N or N:bursty"):
        parse_busy(spec)


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_a_bad_count_is_named(count):
    with pytest.raises(BPEError, match="--busy must be 0 or more processes"):
        with spin_on_cores(count):
            pass
