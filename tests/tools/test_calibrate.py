"""The cost model against measured runs: every calibration point within 2x, and a scan below a recount.

``docs/estimate-calibration.json`` (``python -m tools.calibrate``) holds one-worker training runs'
CPU seconds with their corpus shapes; the test re-estimates each point under the current model, so
it reads no clock and fails when a change of the model drifts from what was measured.
"""

from __future__ import annotations

import json

import pytest

from bpe.lab.measure.estimate import CorpusShape, estimate_run, live_pairs
from tools.calibrate import DEFAULT_OUT, POINTS, estimate_point

CALIBRATION = json.loads(DEFAULT_OUT.read_text())["points"]


def test_calibration_covers_every_rung_on_every_kind_of_text():
    assert {p["variant"] for p in CALIBRATION} == {f"v{i}" for i in range(1, 9)}  # v8's too, built here or not
    kinds = {p["data"].split("-")[0].split("/")[-1] for p in CALIBRATION}
    assert {"gutenberg", "tinystories", "webtext"} <= kinds
    assert {(p["data"], p["variant"], p["vocab"]) for p in CALIBRATION} <= set(POINTS)


@pytest.mark.parametrize("point", CALIBRATION, ids=lambda p: f"{p['variant']}-{p['data'].split('/')[-1]}-{p['vocab']}")
def test_every_calibration_point_is_estimated_within_2x(point):
    ratio = estimate_point(point) / point["measured"]
    assert 0.5 <= ratio <= 2, f"estimated/measured {ratio:.2f}: refit bpe/lab/measure/estimate.py's constants"


def test_the_committed_ratios_are_the_current_models():
    # re-made by python -m tools.calibrate --reestimate after a change of the model
    for point in CALIBRATION:
        assert point["estimated"] == pytest.approx(estimate_point(point), rel=1e-3, abs=1e-3)


@pytest.mark.parametrize("shape", [CorpusShape(2_000_000, 800_000, 90_000),  # web-like, 2 MB
                                   CorpusShape(12_000_000_000, 3e8, 3e7),  # OpenWebText-sized
                                   CorpusShape(2_000_000_000, 5e5, 5e4)])  # TinyStories-like
def test_a_scan_never_costs_more_than_a_recount(shape):
    # the live pairs never pass the pair positions, which v1 recounts after every merge
    for merges in (300, 9_743, 31_743):
        assert live_pairs(shape.distinct_length, shape.distinct_words, merges) <= shape.distinct_length
        v2_model, v1_model = (estimate_run(v, shape, merges, 4).seconds for v in ("v2", "v1"))  # predictions
        assert v2_model < v1_model


def test_the_web_report_runs_v2_to_v5_at_a_reduced_vocab(tmp_path, monkeypatch):
    # webtext-synth-20MB's shape is its first 2 MB extrapolated, so the 2 MB file stands in for it
    from bpe.data.datasets import resolve_data
    from bpe.lab.measure.estimate import shape_range
    from bpe.lab.measure.report import plan

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    shape = shape_range(resolve_data("webtext-synth-2MB"), ["<|endoftext|>"], assume_bytes=20_004_892)[1]
    ladder = [f"v{i}" for i in range(1, 8)]
    tables, _ = plan(lambda v, vocab: estimate_run(v, shape, vocab - 257, 2).seconds, [32_000, 2_000, 300], ladder)
    reduced = {v for vocab, names in tables if vocab < 32_000 for v in names}
    assert tables[0] == (32_000, ["v6", "v7"])
    assert {"v2", "v3", "v4", "v5"} <= reduced
