"""The default's table on docs/v7.md: in every condition measured, the default v7 is no slower than
v6 beyond the spread of their runs (the committed result files, not a run of this machine)."""

import json
from pathlib import Path

import pytest

from bpe.lab.spread import compare

REPO = Path(__file__).resolve().parents[2]
TABLE = sorted((REPO / "docs").glob("default-*.json"))
CONDITIONS = {"idle": (0, "spin"), "busy": (1, "spin"), "bursty": (1, "bursty")}


def test_every_condition_and_regime_is_measured():
    names = {path.stem for path in TABLE}
    assert names == {f"default-{data}-{condition}" for data in ("gutenberg-books", "web-20MB", "web-100MB")
                     for condition in CONDITIONS}


@pytest.mark.parametrize("path", TABLE, ids=lambda p: p.stem)
def test_the_default_is_no_slower_than_v6_beyond_the_spread(path):
    result = json.loads(path.read_text())
    settings = result["settings"]
    condition = path.stem.rsplit("-", 1)[1]
    assert (settings["busy"], settings.get("load", "spin")) == CONDITIONS[condition]
    assert settings["workers_given"] is False  # as users run it: v7 chooses its own process count
    totals = {name: [run["total"] for run in result["variants"][name]["runs"]] for name in ("v6", "v7")}
    verdict = compare(totals["v6"], totals["v7"])  # v6's time over v7's: below 1, v7 is slower
    assert verdict["ratio"] >= 1 or not verdict["clear"], (
        f"{path.name}: v7 took {1 / verdict['ratio']:.2f}x v6's time, clear of the spread")
    assert {result["verdicts"][name]["verdict"] for name in ("v6", "v7")} == {"identical"}
