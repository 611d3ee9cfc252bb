"""One rule for two sets of runs (a ratio unless they overlap) and one summary of a set (bpe/lab/measure/spread.py),
the same in the bench's table, the report's markdown and reproduce's steps."""

from bpe.lab.measure.bench import comparison_columns, comparison_rows, comparison_table
from bpe.lab.measure.result import BenchResult, CandidateResult, Run
from bpe.lab.measure.spread import (
    WITHIN_SPREAD,
    compare,
    median_run,
    range_text,
    ratio_range_text,
    ratio_text,
    summarize_runs,
    summary,
)
from bpe.lab.measure.table import markdown_lines
from tools.reproduce import step_table


def timed_run(total: float, checkpoints=((10, 0.5), (20, 0.9))) -> dict:
    stages = {"pretokenize": 0.1 * total, "pair_count": 0.2 * total, "select": 0.3 * total, "update": 0.4 * total}
    return {"stages": stages, "merge_phase": 0.9 * total, "total": total, "merges": 20,
            "checkpoints": [list(c) for c in checkpoints], "peak_rss": {"self": 1e6, "children": 0},
            "merges_sha256": "abc"}


def bench_of(runs: dict[str, list[dict]]) -> BenchResult:
    """A bench of these candidates' runs."""
    return BenchResult({}, {}, {name: CandidateResult("variant", name, name, [Run.from_json(r) for r in rs],
                                                      Run.from_json(median_run(rs)), []) for name, rs in runs.items()})


def table_rows(bench: BenchResult) -> list[str]:
    """The report's table: the comparison in Markdown."""
    return markdown_lines(comparison_columns(bench), comparison_rows(bench))


def test_overlapping_runs_give_no_ratio_and_clear_ones_do():
    overlap = compare([1.0, 1.4, 1.2], [1.3, 0.9, 1.0])
    assert overlap["verdict"] == WITHIN_SPREAD == "within spread" and overlap["clear"] is False
    faster = compare([2.0, 2.2, 2.1], [1.0, 1.1, 1.05])
    assert faster["clear"] is True and faster["verdict"] == "2.00x faster"
    assert faster["low"] == 2.0 / 1.1 and faster["high"] == 2.2 / 1.0  # slowest against fastest, both ways
    slower = compare([1.0, 1.05, 1.1], [2.0, 2.1, 2.2])
    assert slower["clear"] is True and slower["verdict"] == "2.00x slower"  # a loss stands clear too


def test_one_run_of_either_side_has_no_spread_to_judge_by():
    for before, after in (([3.0], [1.0]), ([3.0, 3.1], [1.0]), ([3.0], [1.0, 0.9])):
        result = compare(before, after)
        assert result["clear"] is None and result["verdict"] == ratio_text(result["ratio"])
        assert result["verdict"].endswith("x faster")


def test_a_set_of_runs_is_its_median_with_its_range():
    assert summary([1.2, 1.0, 1.5, 1.1]) == {"median": 1.15, "min": 1.0, "max": 1.5}
    assert range_text([1.2, 1.0, 1.5]) == "1.00-1.50" and range_text([1.2]) == ""
    runs = [timed_run(1.0), timed_run(3.0, checkpoints=((10, 1.5), (20, 2.9))), timed_run(2.0)]
    spread = summarize_runs(runs)
    assert spread["total"] == {"median": 2.0, "min": 1.0, "max": 3.0}
    assert set(spread) == {"total", "merge_phase", "pretokenize", "pair_count", "select", "update"}
    med = median_run(runs)
    assert med["total"] == 2.0 and med["stages"]["update"] == spread["update"]["median"]
    assert med["checkpoints"] == [[10, 0.5], [20, 0.9]]  # each checkpoint its own median
    function = {"stages": None, "merge_phase": None, "total": 4.0, "merges": 20, "checkpoints": [[20, 4.0]],
                "peak_rss": {"self": 1e6}, "merges_sha256": "abc"}
    assert set(summarize_runs([function])) == {"total"}  # a train_bpe function has its total alone
    assert median_run([function, {**function, "total": 6.0}])["stages"] is None


def test_bench_report_and_reproduce_say_the_same_thing():
    """Two candidates whose runs overlap, and a third clear of both: the same verdicts everywhere."""
    bench = bench_of({"v4": [timed_run(1.0), timed_run(1.4)], "v5": [timed_run(1.2), timed_run(1.3)],
                      "v6": [timed_run(0.3), timed_run(0.35)]})
    printed = comparison_table(bench).splitlines()
    assert "'within spread': the two candidates' runs overlap" in printed[1]
    v5_vs_v4, v6_vs_v5 = compare([1.0, 1.4], [1.2, 1.3])["verdict"], compare([1.2, 1.3], [0.3, 0.35])["verdict"]
    assert (v5_vs_v4, v6_vs_v5) == ("within spread", "3.85x faster")
    assert printed[4].startswith("v5") and printed[4].endswith(
        "1.20-1.30 s       0.125 s      1.125 s  0.375 s  0.500 s       1.0 MB  within spread  within spread")
    assert printed[5].startswith("v6") and printed[5].endswith(f"{v6_vs_v5}   3.69x faster")
    markdown = table_rows(bench)
    assert markdown[3].endswith("| 1.20-1.30 s | 0.125 s | 1.125 s | 0.375 s | 0.500 s | 1.0 MB | within spread | "
                                "within spread |")
    assert markdown[4].endswith(f"| {v6_vs_v5} | 3.69x faster |")
    step = {"before": "v4", "after": "v5", "stage": "total", "set": "s", "step": "a heap", "theirs": [],
            "why": "because", **compare([1.0, 1.4], [1.2, 1.3])}
    assert f"    ladder  {v5_vs_v4}  (ratio of medians" in step_table({"steps": {"s:v4-v5:total": step}})


def test_no_ratio_prints_as_zero():
    """A candidate ~200x slower than the one it is compared with: "215x slower" in every table, never 0.00x."""
    slow = compare([0.1, 0.1], [21.4, 21.6])
    assert slow["verdict"] == "215x slower" and ratio_text(0.001) == "1,000x slower"
    assert ratio_range_text(slow["low"], slow["high"]) == "214-216x slower"
    bench = bench_of({"v6": [timed_run(0.1), timed_run(0.1)], "mine": [timed_run(21.4), timed_run(21.6)]})
    printed, markdown = comparison_table(bench), "\n".join(table_rows(bench))
    step = {"before": "v6", "after": "mine", "stage": "total", "set": "s", "step": "s", "theirs": [], "why": "w",
            **slow}
    for text in (printed, markdown, step_table({"steps": {"s:v6-mine:total": step}})):
        assert "215x slower" in text and "0.00x" not in text, text
