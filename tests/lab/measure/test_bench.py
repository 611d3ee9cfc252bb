"""The bench harness (bpe/lab/measure/bench.py) reports every stage for every variant and checks the variants agree;
a comparison gives every rung the same worker count and each run's table the processes it used; a rung
benched alone is checked against another rung's cached merges; a run estimated past the budget needs
--force; --json is checked before the bench; --limit is recorded; --pattern splits every run and the
reference.
Your own trainers in the bench (their estimates and progress included): test_candidates.py.
`bench --busy N`: test_busy.py."""

import json
import os
import sys

import pytest

import bpe.lab.measure.bench as bench_module
from bpe import VARIANTS, BPEError, train_bpe
from bpe.cli import main
from bpe.data.datasets import resolve_data
from bpe.lab.judge.correctness import reference_cache, reference_rung
from bpe.lab.judge.diagnose import encode_merges, merges_digest
from bpe.lab.measure import timed_run
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.lab.measure.timed_run import run_once
from bpe.split.chunking import find_limit_end
from conftest import CORPUS_EN, DEFAULT_CORPUS, REPO_ROOT

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
    assert report.variants["v2"].median.merges_sha256 == report.variants["v1"].median.merges_sha256
    assert report.to_json() == saved  # the result is what --json wrote


def test_the_candidates_take_turns(monkeypatch):
    # A drift of the machine during the bench falls on every candidate alike: v1, v2, v1, v2, not v1, v1, v2, v2.
    order = []
    real_run_once = timed_run.run_once

    def recorded(path, candidate, *args, **kwargs):
        order.append(candidate.label)
        return real_run_once(path, candidate, *args, **kwargs)

    monkeypatch.setattr(timed_run, "run_once", recorded)
    report = run_bench(BenchSettings("v1,v2", "tinystories-sample", 300, 2, [EOT], 2))
    assert order == ["v1", "v2", "v1", "v2"]
    assert [len(report.variants[name].runs) for name in ("v1", "v2")] == [2, 2]


def test_a_comparison_gives_every_rung_the_same_workers_and_records_what_each_used(monkeypatch, capsys):
    # No --workers: the bench decides once (the CPU count, the header's) and gives it to every run, rather
    # than leaving each to size its pool to the cores free at its start, which a busy moment cuts.
    given = []
    real_run_once = timed_run.run_once

    def recorded(path, candidate, vocab_size, special_tokens, workers, *args, **kwargs):
        given.append((candidate.label, workers))
        return real_run_once(path, candidate, vocab_size, special_tokens, workers, *args, **kwargs)

    monkeypatch.setattr(timed_run, "run_once", recorded)
    report = run_bench(BenchSettings("v2,v3,v7", "corpus-en", 300, 2, [EOT]))
    cpus = os.cpu_count()
    assert report.settings["workers"] == cpus and report.settings["workers_from"] == "bench"
    assert given == [(name, cpus) for _ in range(2) for name in ("v2", "v3", "v7")]
    # corpus.en (130 KB) makes two chunks: the pooled rungs count in min(CPUs, 2) processes, v2 in its own
    used = {name: [run.facts["workers"] for run in entry.runs] for name, entry in report.variants.items()}
    assert used == {"v2": [1, 1], "v3": [min(cpus, 2)] * 2, "v7": [min(cpus, 2)] * 2}
    assert all(run.facts["shards"] == 1 for run in report.variants["v7"].runs)  # too few words to shard
    printed = capsys.readouterr().out
    assert f"workers {cpus} (the CPU count, given to every run alike)" in printed.splitlines()[0]
    v7_table = printed[printed.index("\nv7: "):]
    assert v7_table.splitlines()[3].endswith(f"{min(cpus, 2)}, 1 shard")  # run 1, under the title and header


def test_one_candidate_or_auto_lets_each_run_choose_its_workers(monkeypatch):
    given = []  # what the runs are given (the runs themselves left out)
    monkeypatch.setattr(bench_module, "measure", lambda tag, p, *a, **k: given.append(p.workers) or {})
    for variants, workers in (("v6", None), ("v6,v7", "auto"), ("v6,v7", 1)):
        report = run_bench(BenchSettings(variants, "corpus-en", 300, 1, [EOT], workers))
        settings = report.settings
        assert (settings["workers"], settings["workers_given"]) == (None if workers == "auto" else workers,
                                                                    workers not in (None, "auto"))
    assert given == [None, None, 1]
    assert bench_module.header(report).count("workers 1 (every run, as asked)") == 1


def test_a_rung_benched_alone_is_checked_against_another_rungs_cached_merges(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    path, rung = resolve_data("corpus-en"), reference_rung(besides="v2")
    assert rung != "v2"
    report = run_bench(BenchSettings("v2", "corpus-en", 300, 1, [EOT]))
    assert report.reference["name"] == rung and report.reference["source"].startswith("computed now, cached in")
    assert report.verdicts["v2"]["verdict"] == "identical"
    assert f"against {rung}'s (computed now, cached in " in capsys.readouterr().out
    # A reference that differs from v2's own merges makes v2's verdict differ: its own run is not the reference.
    _, merges = train_bpe(path, 300, [EOT], variant="v2")
    cache = reference_cache(path, 300, [EOT], None, rung)
    cache.write_text(json.dumps(encode_merges([merges[1], merges[0], *merges[2:]])))
    report = run_bench(BenchSettings("v2", "corpus-en", 300, 1, [EOT]))
    assert report.verdicts["v2"]["verdict"] == "differs" and report.verdicts["v2"]["step"] == 1
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("correctness:"))
    assert line == (f"correctness: each run's merges against {rung}'s (cached in {cache}; v2 ran alone: checked "
                    "against another rung, not its own run)")


def test_a_run_records_its_mergers_summary_beside_the_timings():
    # v7's Merger.summary() gives its shards and gathered_at (None: its shards never came back); v2 has none.
    v7 = run_once(CORPUS_EN, "v7", 300, ["<|endoftext|>"], 2)
    v2 = run_once(CORPUS_EN, "v2", 300, ["<|endoftext|>"], 2)
    assert "gathered_at" in v7 and "gathered_at" not in v2
    assert v7["merges_sha256"] == v2["merges_sha256"] and set(v7) - set(v2) == {"shards", "gathered_at"}


def test_a_very_long_bench_needs_force(monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.measure.timed_run.run_once", lambda *a, **k: runs.append(a) or {})
    assert main(["bench", "--variant", "v1,v6", "--repeat", "1"]) == 2  # v1 at vocab 10,000 on 2.3 MB
    err = capsys.readouterr().err
    assert "estimated v1 ~" in err and "pass --force to run it anyway" in err
    assert runs == []


def test_variant_all_skips_the_long_runs_with_a_note(monkeypatch, capsys):
    from bpe.lab.measure import bench
    from bpe.lab.measure import candidate_estimate as estimate_command
    from bpe.lab.measure.estimate import Estimate

    def estimate(variant, shape, merges, workers):  # v1 past the budget, the rest a second
        return Estimate(variant, merges, 1_000.0 if variant == "v1" else 1.0, 1e6)

    monkeypatch.setattr(estimate_command, "estimate_run", estimate)  # what the bench estimates each rung by
    report = bench.run_bench(bench.BenchSettings("all", "tinystories-sample", 300, 1, [EOT], 1, budget=60),
                             out=sys.stdout)
    assert "v1" in report.skipped and "--variant v1 --force" in report.skipped["v1"]
    assert list(report.variants) == [name for name in VARIANTS if name != "v1"]
    assert "estimate per run, on idle cores (a busy machine takes longer): v1 ~17 min" in capsys.readouterr().out
    with pytest.raises(BPEError, match=r"bench of v1 on tinystories-sample .* pass --force"):
        bench.run_bench(bench.BenchSettings("v1,v6", "tinystories-sample", 300, 1, [EOT], 1, budget=60), out=sys.stdout)


def test_bench_json_into_a_directory_fails_before_the_bench(tmp_path, monkeypatch, capsys):
    runs = []
    monkeypatch.setattr("bpe.lab.measure.timed_run.run_once", lambda *a, **k: runs.append(a))
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
    assert report.variants["v2"].median.merges == 300 - 257
    assert (settings["workers"], settings["workers_from"]) == (None, "each run")  # one rung: as users run it
    assert report.variants["v2"].runs[0].facts["workers"] == 1  # v2 counts in its own process


@pytest.mark.parametrize("quiet", [False, True])
def test_a_bench_into_a_log_says_each_run_as_it_ends_in_one_line(capsys, quiet):
    # stderr is not a terminal here (captured): no live line, but one line a run, so that a log or a pipe
    # hears from a long bench before its tables; --quiet says none
    assert main(["bench", "--variant", "v2,v6", "--data", "corpus-en", "--vocab-size", "260", "--repeat", "2",
                 "--workers", "1", *(["--quiet"] if quiet else [])]) == 0
    err = capsys.readouterr().err
    ran = [line.split(":")[0].strip() for line in err.splitlines() if " run " in line]
    assert ran == ([] if quiet else ["v2 run 1/2", "v6 run 1/2", "v2 run 2/2", "v6 run 2/2"])
    assert "\r" not in err and "\033[" not in err
def test_a_bench_with_a_pattern_checks_every_run_against_that_patterns_reference(tmp_path, monkeypatch, capsys):
    """Every run splits by the pattern, the reference too, cached apart from GPT-2's; a trainer of your own
    that cannot take the pattern fails in one line instead of being judged on GPT-2's split."""
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    report = run_bench(BenchSettings("v2", "corpus-en", 300, 1, [EOT], pattern="o200k"))
    assert report.verdicts["v2"]["verdict"] == "identical" and report.settings["pattern"] == "o200k"
    path, rung = resolve_data("corpus-en"), report.reference["name"]
    assert reference_cache(path, 300, [EOT], None, rung, "o200k").exists()
    assert not reference_cache(path, 300, [EOT], None, rung).exists()
    _, merges = train_bpe(path, 300, [EOT], variant="v1", pattern="o200k")
    assert report.variants["v2"].median.merges_sha256 == merges_digest(merges)
    assert "special ['<|endoftext|>'], pattern o200k, " in capsys.readouterr().out
    candidates = REPO_ROOT / "tests" / "fixtures" / "candidates"
    report = run_bench(BenchSettings(f"v2,{candidates / 'correct.py'},{candidates / 'bare_counter.py'}", "corpus-en",
                                     300, 1, [EOT], 1, pattern=r"\w+|\S"))
    assert report.verdicts["v2"]["verdict"] == "identical"
    assert report.failed == {
        "correct": "correct: a train_bpe function takes no pattern, so it cannot be run with --pattern \\w+|\\S; "
                   "give a file that defines Merger",
        "bare_counter": "its count_pretokens takes no pattern, so it cannot count by --pattern \\w+|\\S; add a "
                        "pattern parameter, or leave the counting to the lab"}


def test_a_corpus_s_reference_is_cached_under_its_files_as_they_are(tmp_path, monkeypatch):
    """A corpus's cached reference is keyed by each of its files (path, size, time of change), its text column and
    the settings: a file changed, or another limit or column, is another key; the same files, the same key."""
    import os

    from bpe.corpus.corpus import open_corpus

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("one two", encoding="utf-8")
    (folder / "b.txt").write_text("three", encoding="utf-8")
    key = reference_cache(open_corpus(folder), 300, [EOT], None, "v9")
    assert key == reference_cache(open_corpus(folder), 300, [EOT], None, "v9")
    assert key.parent == tmp_path / "data" / "reference-merges"
    assert key != reference_cache(open_corpus(folder), 300, [EOT], 4, "v9")
    assert key != reference_cache(open_corpus(folder, text_column="body"), 300, [EOT], None, "v9")
    assert key != reference_cache(folder / "a.txt", 300, [EOT], None, "v9")
    os.utime(folder / "b.txt", ns=(1, 1))  # the same bytes, changed (as far as the key can know)
    assert key != reference_cache(open_corpus(folder), 300, [EOT], None, "v9")
