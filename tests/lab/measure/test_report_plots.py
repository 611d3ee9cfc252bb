"""The report's plots (bpe/lab/measure/report_plots.py): each axis holds every bar it draws, and the scaling
plot says when its runs shared the machine with other processes."""

import io
import json

import pytest

from bpe.lab.measure import report, report_plots
from bpe.lab.measure.bench import BenchSettings
from bpe.lab.measure.report import ReportSettings, run_report
from bpe.lab.measure.result import BenchResult
from conftest import REPO_ROOT

pytest.importorskip("matplotlib")


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plots would save, kept open instead."""
    figures = []
    monkeypatch.setattr(report_plots, "save_figure", lambda fig, out, title: figures.append(fig))
    return figures


def _committed_report() -> dict:
    saved = json.loads((REPO_ROOT / "docs" / "report-bench.json").read_text())
    return {**saved, "tables": [BenchResult.from_json(t) for t in saved["tables"]]}


def test_no_bar_of_the_stages_plot_is_cut_by_its_axis(drawn, tmp_path):
    result = _committed_report()
    table = result["tables"][1]
    # a rung whose stages' medians sum past its median total (each median is of other runs)
    run = next(iter(table.variants.values())).median
    run.stages = {stage: 2 * seconds for stage, seconds in run.stages.items()}
    report_plots.plot_stages(result, tmp_path / "stages.png")
    for ax in drawn[0].axes:
        tops = [patch.get_y() + patch.get_height() for patch in ax.patches]
        assert tops and ax.get_ylim()[1] >= max(tops)


@pytest.mark.parametrize("busy, noted", [(1.0, True), (0.2, False), (None, False)])
def test_the_scaling_plot_says_when_its_runs_shared_the_machine(drawn, tmp_path, busy, noted):
    result = _committed_report()
    if busy is not None:
        result["scaling"] = {**result["scaling"], "busy_cores": busy}
    report_plots.plot_scaling(result, tmp_path / "scaling.png")
    texts = [t.get_text() for ax in drawn[0].axes for t in ax.texts]
    assert any("not an idle machine" in t and "2 cores" in t for t in texts) is noted


def test_a_report_records_the_busy_cores_its_scaling_runs_saw(monkeypatch, tmp_path):
    monkeypatch.setattr("bpe.running.cores.measure_busy_cores", lambda: 1.0)
    md = run_report(BenchSettings(["v5", "v6"], "tinystories-sample", 300, 1, ["<|endoftext|>"], 1),
                    ReportSettings(), out_dir=tmp_path, log=io.StringIO())
    saved = json.loads((tmp_path / "report-bench.json").read_text())
    assert saved["scaling"]["busy_cores"] == 1.0
    assert all(run["busy_cores"] == 1.0 for run in saved["tables"][0]["variants"]["v6"]["runs"])
    assert report.shared_note(saved) in md.read_text()
