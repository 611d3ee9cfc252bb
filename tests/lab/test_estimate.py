"""The cost model (bpe/lab/estimate.py): its predictions order the ladder and grow with the data, and
`bpe estimate` prints every variant, its table and JSON holding the model's estimates.  Its calibration against measured runs: test_calibrate.py."""

from __future__ import annotations

import io
import json

from bpe import VARIANTS
from bpe.cli import main
from bpe.data.datasets import resolve_data
from bpe.lab.estimate import CorpusShape, corpus_shape, estimate_file, estimate_record, estimate_run, run_estimate

EOT = ["<|endoftext|>"]


def predicted_cost(variant: str, shape: CorpusShape) -> float:
    """The cost model's prediction for a fixed, made-up corpus shape: arithmetic, no clock is read."""
    return estimate_run(variant, shape, 9_743, 2).seconds


def test_estimate_orders_the_ladder_and_grows_with_the_data():
    small, large = CorpusShape(2_000_000, 200_000, True), CorpusShape(2_000_000_000, 5_000_000, True)
    for shape in (small, large):
        cost = {v: predicted_cost(v, shape) for v in ("v1", "v2", "v5", "v6")}
        assert cost["v1"] > cost["v2"] > cost["v5"] > cost["v6"]
    # 25 times the distinct words' length: the scan's live pairs and the rewrites grow about as much
    assert predicted_cost("v2", large) > 10 * predicted_cost("v2", small)
    assert estimate_run("v2", large, 9_743, 2).peak_bytes > estimate_run("v6", large, 9_743, 2).peak_bytes


def test_estimate_command_prints_every_variant(capsys):
    assert main(["estimate", "--data", "corpus-en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cost estimate: corpus-en (133,027 bytes), vocab 10,000, special ['<|endoftext|>']")
    assert [line.split()[0] for line in out.splitlines()[2:]] == list(VARIANTS)


def test_the_table_and_the_json_hold_the_models_estimates(tmp_path):
    out = io.StringIO()
    estimates = run_estimate("tinystories-sample", "v1,v6", 300, EOT, workers=1, json_out=str(tmp_path / "e.json"),
                             out=out)
    assert estimates == estimate_file(resolve_data("tinystories-sample"), ["v1", "v6"], 300, EOT, workers=1)
    rows = out.getvalue().splitlines()
    assert rows[0].startswith("cost estimate: tinystories-sample") and rows[1].split() == ["variant", "time", "peak",
                                                                                            "memory"]
    assert [row.split()[0] for row in rows[2:4]] == ["v1", "v6"] and rows[4] == f"wrote {tmp_path / 'e.json'}"
    saved = json.loads((tmp_path / "e.json").read_text())
    assert saved["variants"] == {e.variant: estimate_record(e) for e in estimates}  # the model's output, written whole


def test_a_file_of_special_tokens_only_is_estimated_and_trained_without_a_traceback(write_corpus, capsys):
    # At least 4 KB, so the estimate measures how the pre-tokens grow, and finds none at all.
    path = write_corpus("<|endoftext|>" * 400)
    assert corpus_shape(path, EOT).distinct_length == 0  # no pre-token outside the special tokens
    assert [e.variant for e in estimate_file(path, list(VARIANTS), 300, EOT, 2, None)] == list(VARIANTS)
    for argv in (["estimate"], ["train", "--vocab-size", "300"], ["bench", "--vocab-size", "300", "--repeat", "1"]):
        assert main([*argv, "--data", str(path)]) == 0, argv
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "stopped early: 0 of 43 merges" in out
