"""The bench's typed result (bpe/lab/measure/result.py) writes the JSON shape the committed results hold: every bench
table in docs/*.json reads back and writes the same dict, and a result written and read again is equal."""

import json

import pytest

from bpe.data.datasets import REPO_ROOT
from bpe.lab.measure.result import BenchResult, CandidateResult, PeerResult, Run

#: Every committed bench table (a bench's --json, or a table of the report's).
TABLES = [(path.name, i, table) for path in sorted((REPO_ROOT / "docs").glob("*.json"))
          for i, table in enumerate((lambda d: d.get("tables", [d]) if isinstance(d, dict) else [])(
              json.loads(path.read_text()))) if isinstance(table, dict) and "estimates" in table]


def test_the_committed_report_reads_back_as_it_is_written():
    written = json.loads((REPO_ROOT / "docs" / "report-bench.json").read_text())
    tables = [BenchResult.from_json(t) for t in written["tables"]]
    assert tables[0].variants["v8"].median.stages["select"] > 0 and tables[0].peers["rustbpe"].merges > 0
    assert [t.to_json() for t in tables] == written["tables"]
    assert json.dumps([t.to_json() for t in tables]) == json.dumps(written["tables"])  # the keys in their order too


@pytest.mark.parametrize("name, i, table", TABLES, ids=[f"{name}:{i}" for name, i, _ in TABLES])
def test_every_committed_bench_table_reads_back_the_same(name, i, table):
    assert BenchResult.from_json(table).to_json() == table


def test_a_result_written_and_read_again_is_equal():
    run = {"workers": None, "stages": None, "merge_phase": None, "total": 2.5, "merges": 43,
           "checkpoints": [[43, 2.5]], "peak_rss": {"self": 1e7, "children": 0}, "merges_sha256": "abc",
           "vocab_problems": []}
    median = Run.from_json({k: v for k, v in run.items() if k not in ("workers", "vocab_problems")})
    result = BenchResult({"cpu_count": 2}, {"data": "corpus-en", "vocab_size": 300},
                         {"mine": CandidateResult("function", "mine.py", "my own", [Run.from_json(run)], median, [])},
                         failed={"raises": "raises raised ValueError"}, merges_identical=True,
                         verdicts={"mine": {"verdict": "identical", "merges": 43}},
                         peers={"rustbpe": PeerResult(0.3, 43, 5e7, [{"total": 0.3, "merges": 43, "peak_rss": 5e7}]),
                                "bpeasy": PeerResult(missing="bpeasy is not installed")})
    again = BenchResult.from_json(json.loads(json.dumps(result.to_json())))
    assert again == result and again.variants["mine"].runs[0].facts == {"workers": None, "vocab_problems": []}
    assert "reference" not in result.to_json() and result.to_json()["peers"]["bpeasy"] == {
        "missing": "bpeasy is not installed"}
