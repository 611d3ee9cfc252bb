"""The default's table on docs/v7.md (the committed result files, not a run of this machine): every
regime and load measured as users run it, and in each the default v7 no slower than v6 beyond noise.

Two kinds of noise bound the comparison.  Where v7 split its words (shards > 1), its runs must not
stand clear of v6's on the slow side: the bench's one spread rule.  Where it ran v6's own code in one
process (shards = 1 in every run), the two are the same algorithm in two processes, whose times still
differ by where their objects land in memory; that difference is bounded by :data:`SAME_CODE_BAND`,
the most it was seen to reach in this table (docs/v7.md, "The default on a busy machine").
"""

import json
from pathlib import Path

import pytest

from bpe.lab.measure.spread import compare

REPO = Path(__file__).resolve().parents[2]
TABLE = sorted((REPO / "docs").glob("default-*.json"))
CONDITIONS = {"idle": (0, "spin"), "busy": (1, "spin"), "bursty": (1, "bursty")}
#: Two processes running v6's code differ by up to this share of v6's time, either way.
SAME_CODE_BAND = 0.10


def test_every_condition_and_regime_is_measured():
    names = {path.stem for path in TABLE}
    assert names == {f"default-{data}-{condition}" for data in ("gutenberg-books", "web-20MB", "web-100MB")
                     for condition in CONDITIONS}


@pytest.mark.parametrize("path", TABLE, ids=lambda p: p.stem)
def test_the_default_is_no_slower_than_v6_beyond_noise(path):
    result = json.loads(path.read_text())
    settings = result["settings"]
    condition = path.stem.rsplit("-", 1)[1]
    assert (settings["busy"], settings.get("load", "spin")) == CONDITIONS[condition]
    assert settings["workers_given"] is False  # as users run it: v7 chooses its own process count
    assert {result["verdicts"][name]["verdict"] for name in ("v6", "v7")} == {"identical"}
    totals = {name: [run["total"] for run in result["variants"][name]["runs"]] for name in ("v6", "v7")}
    verdict = compare(totals["v6"], totals["v7"])  # v6's time over v7's: below 1, v7 is slower
    shards = {run["shards"] for run in result["variants"]["v7"]["runs"]}
    if shards == {1}:  # v6's code: the same algorithm, so only the band of two processes remains
        assert 1 / verdict["ratio"] <= 1 + SAME_CODE_BAND, f"{path.name}: {1 / verdict['ratio']:.2f}x v6's time"
    else:
        assert verdict["ratio"] >= 1 or not verdict["clear"], (
            f"{path.name}: v7 took {1 / verdict['ratio']:.2f}x v6's time, clear of the spread")
