"""A timed run's live line (bpe/lab/measure/timed_run.py): what it says of the merges."""

from bpe.lab.measure.timed_run import RunningLine


def test_a_runs_live_line_never_counts_a_merge_past_the_last():
    line = RunningLine(None, "mine run 1/1: ")
    line.start_merges(243)
    for _ in range(243):
        line.on_merge()
    assert line.text().endswith("(merging, 243 of 243)")
    line.on_merge()  # a trainer of your own that merges once too often
    assert line.text().endswith("(merging, 244, past the 243 asked for)") and "of 243" not in line.text()
