"""The cost model (bpe/lab/estimate.py): its predictions order the ladder and grow with the data, and
`bpe estimate` prints every variant.  Its calibration against measured runs: test_calibrate.py."""

from __future__ import annotations

from bpe import VARIANTS
from bpe.cli import main
from bpe.lab.estimate import CorpusShape, estimate_run


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
