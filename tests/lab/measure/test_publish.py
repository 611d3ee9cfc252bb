"""Where a lab run writes (bpe/lab/measure/publish.py): out/ by default, the committed file with --publish, refused
from a tree with uncommitted changes; a JSON output checked before the run."""

from pathlib import Path

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab.measure import publish
from bpe.lab.measure.bench import header
from bpe.lab.measure.publish import check_json_path, output_path, write_json_atomic
from bpe.lab.measure.result import BenchResult

DEFAULT, PUBLISHED = Path("out/result.json"), Path("docs/result.json")


def test_the_run_writes_to_out_unless_told(monkeypatch):
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234")
    assert output_path(None, DEFAULT, PUBLISHED, False, "bpe x --publish") == DEFAULT
    assert output_path(None, DEFAULT, PUBLISHED, True, "bpe x --publish") == PUBLISHED
    assert output_path("elsewhere.json", DEFAULT, PUBLISHED, False, "bpe x --publish") == Path("elsewhere.json")
    assert output_path("elsewhere.json", DEFAULT, PUBLISHED, True, "bpe x --publish") == Path("elsewhere.json")


def test_publish_from_a_dirty_tree_is_refused_naming_the_command(monkeypatch):
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234-dirty")
    for given in (None, "docs/web"):  # an explicit path does not get round the check
        with pytest.raises(BPEError, match=r"bpe x --publish writes a committed result.*\(abc1234-dirty\)"):
            output_path(given, DEFAULT, PUBLISHED, True, "bpe x --publish")
    assert output_path(None, DEFAULT, PUBLISHED, False, "bpe x --publish") == DEFAULT  # not publishing: no check


def test_report_without_publish_writes_under_out(monkeypatch):
    from bpe.lab.measure.report import DEFAULT_OUT_DIR

    written = []
    monkeypatch.setattr("bpe.lab.measure.report.run_report",
                        lambda bench, own, out_dir: written.append((bench, own, out_dir)))
    assert main(["report", "--data", "corpus-en", "--v1-vocab-size", "280", "--no-scaling", "--repeat", "2"]) == 0
    (bench, own, out_dir), = written
    assert out_dir == DEFAULT_OUT_DIR and out_dir.parent.name == "out"
    assert (bench.data, bench.repeat, own.v1_vocab_size, own.scaling) == ("corpus-en", 2, 280, False)


def test_a_json_output_is_checked_before_and_written_whole(tmp_path):
    with pytest.raises(BPEError, match="is a directory; give a file name"):
        check_json_path(tmp_path)
    out = check_json_path(tmp_path / "r.json")
    write_json_atomic(out, {"a": 1})
    assert out.read_text() == '{\n  "a": 1\n}\n' and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_outside_a_checkout_no_commit_is_named_and_the_version_is(monkeypatch):
    """An installed copy has no commit of its own; the folder above it may be another project's repository
    (a venv inside it), whose commit is not this code's.  The stamp then holds the version, and the headers
    say so (tests/project/test_install.py checks the installed command for real)."""
    assert publish.git_commit() is not None  # this checkout's
    monkeypatch.setattr(publish, "IN_CHECKOUT", False)
    assert publish.git_commit() is None
    machine = publish.machine_info()
    assert machine["git_commit"] is None and machine["version"] == "0.1.0"
    assert publish.made_by(machine) == "bpe-lab 0.1.0 (installed, no git commit)"
    settings = {"data": "corpus-en", "corpus_bytes": 1000, "vocab_size": 300, "num_merges": 43,
                "special_tokens": [], "workers_from": "each run", "workers": None, "repeat": 1}
    assert header(BenchResult(machine, settings)).endswith(
        f"Python {machine['python']}, bpe-lab 0.1.0 (installed, no git commit)")
    assert publish.made_by({"git_commit": "abc1234", "version": "0.1.0"}) == "commit abc1234"
