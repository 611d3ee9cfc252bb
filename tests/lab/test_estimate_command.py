"""``bpe estimate``'s table (bpe/lab/estimate_command.py): one row per candidate, the model's figures, JSON."""

import io
import json

from bpe.data.datasets import resolve_data
from bpe.lab.estimate import estimate_file
from bpe.lab.estimate_command import run_estimate

EOT = ["<|endoftext|>"]


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
    assert {name: v["seconds"] for name, v in saved["variants"].items()} == {e.variant: e.seconds for e in estimates}
