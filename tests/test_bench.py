"""The bench harness reports every stage for every candidate and checks the rungs agree."""

import json

from bpe.lab.bench import BenchSettings, run_bench
from bpe.cli import main


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


def test_cli_reports_bad_input_without_traceback(capsys):
    assert main(["bench", "--data", "no-such-corpus"]) == 2
    err = capsys.readouterr().err
    assert "no data set or file named 'no-such-corpus'" in err and "Traceback" not in err


def test_missing_download_says_how_to_get_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["train", "--data", "tinystories", "--vocab-size", "300"]) == 2
    assert "make data DATA=tinystories" in capsys.readouterr().err
