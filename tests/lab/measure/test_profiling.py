"""The profile summary ranks scalene's lines by CPU and by memory; `make profile` names files by settings;
profiles keep no path of the machine they were made on; a run leaves no file of scalene's native library in /tmp."""

import glob
import json
import re
import threading
from contextlib import contextmanager

import pytest

from bpe.data.datasets import REPO_ROOT
from bpe.lab.measure.profiling import clean_profile, profile_stem, run_profile, summarize
from conftest import cmdline, scalene_files

MACHINE_PATH = re.compile(r"/(?:work|home|tmp|root|usr|opt)/|(?<!<)(?:site|dist)-packages")


def line(lineno, code, python=0.0, c=0.0, malloc=0.0, peak=0.0):
    return {"lineno": lineno, "line": code + "\n", "n_cpu_percent_python": python, "n_cpu_percent_c": c,
            "n_sys_percent": 0.0, "n_malloc_mb": malloc, "n_peak_mb": peak}


def test_summary_orders_lines_by_cpu_and_memory():
    profile = {
        "elapsed_time_sec": 3.5, "max_footprint_mb": 28.25,
        "max_footprint_fname": str(REPO_ROOT / "variants" / "v2_inverted_index.py"), "max_footprint_lineno": 50,
        "files": {str(REPO_ROOT / "variants" / "v2_inverted_index.py"): {"lines": [
            line(50, "self.pair_to_words[pair].add(word_id)", python=1.0, c=0.5, malloc=19.9, peak=1.4),
            line(69, "return max(pair_counts, key=lambda pair: (pair_counts[pair], pair))", python=40.9, c=44.6),
            line(70, "pass"),
        ]}},
        "bpe_lab": {"stem": "v2-x-2000", "variant": "v2", "data": "x", "vocab_size": 2000,
                    "special_tokens": ["<|endoftext|>"], "date": "2026-01-01", "commit": "abc"},
    }
    text = summarize(profile)
    assert text.startswith("# Profile v2-x-2000\n")
    assert "Peak footprint: 28.2 MB at `variants/v2_inverted_index.py:50`" in text
    cpu = text.split("## Top 2 lines by CPU time")[1].split("## ")[0]
    rows = [r for r in cpu.splitlines() if r.startswith("| 8") or r.startswith("| 1")]
    assert rows == ["| 85.5 | 40.9 | `variants/v2_inverted_index.py:69` | "
                    "`return max(pair_counts, key=lambda pair: (pair_counts[pair], pair))` |",
                    "| 1.5 | 1.0 | `variants/v2_inverted_index.py:50` | `self.pair_to_words[pair].add(word_id)` |"]
    assert "## Top 1 lines by memory allocated" in text
    assert "| 19.9 | 1.4 | `variants/v2_inverted_index.py:50` |" in text


def test_profile_stem():
    assert profile_stem("v2", None, 2000) == "v2-gutenberg-sample-2000"
    assert profile_stem("v1", "corpus-en", 500) == "v1-corpus-en-500"


@contextmanager
def scalene_files_watched(marker: str):
    """The pids of the files scalene's native library makes in /tmp during the block, for processes whose command
    line holds ``marker`` (this run's, not another's running beside it); watched from a thread."""
    pids, stop = set(), threading.Event()

    def watch():
        while not stop.is_set():
            for path in glob.glob("/tmp/scalene-*"):
                pid = re.search(r"(\d+)$", path)
                if pid and int(pid.group(1)) not in pids and marker in cmdline(int(pid.group(1))):
                    pids.add(int(pid.group(1)))
            stop.wait(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield pids
    finally:
        stop.set()
        watcher.join()


@pytest.mark.slow
def test_scalene_run_writes_both_files(tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where this process's temporary folders go
    monkeypatch.setenv("TMPDIR", str(scratch))  # and its children's
    with scalene_files_watched(str(scratch)) as pids:
        json_out, md_out = run_profile("v2", "tinystories-sample", 300, ["<|endoftext|>"], out_dir=tmp_path)
    assert list(scratch.iterdir()) == []  # nothing left behind, scalene's own folder included
    assert pids, "no file of scalene's native library was seen in /tmp during the run"
    assert not scalene_files(pids), f"scalene's files in /tmp were left behind: {scalene_files(pids)}"
    assert json_out.name == "v2-tinystories-sample-300.json" and md_out.name == "v2-tinystories-sample-300.md"
    assert json.loads(json_out.read_text())["bpe_lab"]["variant"] == "v2"
    assert md_out.read_text().startswith("# Profile v2-tinystories-sample-300")


def test_bpe_profile_subcommand(tmp_path, capsys):
    from bpe.cli import main

    assert main(["profile"]) == 2
    assert "bpe profile needs --variant vN" in capsys.readouterr().err
    assert main(["profile", "--variant", "v1", "--force", "--summarize", str(tmp_path / "none.json")]) == 2
    assert "no such profile:" in capsys.readouterr().err
    assert main(["profile", "--variant", "v1"]) == 2  # v1 at the default vocab 10,000 on 2.3 MB: minutes
    err = capsys.readouterr().err
    assert "profiling v1 on gutenberg-sample at vocab 10,000: estimated v1 ~" in err and "--force" in err


def test_clean_profile_rewrites_every_machine_path():
    root = "/home/someone/checkout"
    profile = {
        "filename": root, "program": "/tmp/bpe-profile-x1y2/train_for_profile.py",
        "files": {f"{root}/variants/v2_inverted_index.py": {"lines": [line(69, "return max(...)", python=1.0)]},
                  "/usr/lib/python3.11/site-packages/regex/regex.py": {"lines": []},
                  "/opt/python/lib/python3.11/collections/__init__.py": {"lines": []}},
        "stacks": [[[f"{root}/bpe/training/train.py train_bpe:117;",
                     "/tmp/bpe-profile-x1y2/train_for_profile.py <module>:4;"],
                    {"count": 1}]],
        "args": ['{"path": "%s/corpora/gutenberg-sample.txt"}' % root],
    }
    cleaned = clean_profile(profile)
    assert cleaned["filename"] == "."
    assert cleaned["program"] == "<target>/train_for_profile.py"
    assert set(cleaned["files"]) == {"variants/v2_inverted_index.py", "<site-packages>/regex/regex.py",
                                     "<stdlib>/collections/__init__.py"}
    assert cleaned["stacks"][0][0] == ["bpe/training/train.py train_bpe:117;",
                                       "<target>/train_for_profile.py <module>:4;"]
    assert cleaned["args"] == ['{"path": "corpora/gutenberg-sample.txt"}']
    assert not MACHINE_PATH.search(json.dumps(cleaned))


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "profiles").glob("*.*")), ids=lambda p: p.name)
def test_committed_profiles_name_no_machine_path(path):
    found = MACHINE_PATH.findall(path.read_text())
    assert not found, f"{path.name} names paths of the machine it was made on: {sorted(set(found))}"


def test_a_long_profile_says_it_is_alive(tmp_path):
    import subprocess
    import sys

    from bpe.lab.fresh_process import wait_alive

    beats = []
    # the child ends only once it has been told of the second beat (a file appears): two beats, whatever the load
    told = tmp_path / "beaten twice"
    child = ("import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.01)\nprint('done')")
    proc = subprocess.Popen([sys.executable, "-c", child, str(told)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)

    def beat(seconds: float) -> None:
        beats.append(seconds)
        if len(beats) == 2:
            told.touch()

    out, _ = wait_alive(proc, beat, every=0.1)
    assert out.strip() == "done" and len(beats) >= 2 and beats == sorted(beats)


def test_unpublished_profiles_and_reports_go_where_git_ignores_them():
    """Trying a profile or a report never dirties the tree: without --publish they land in an ignored folder."""
    import shutil
    import subprocess

    from bpe.lab.measure import profiling, report
    from bpe.lab.measure.publish import output_path

    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    places = [(profiling.PROFILES_DIR, profiling.DEFAULT_OUT_DIR), (report.DOCS_DIR, report.DEFAULT_OUT_DIR)]
    for committed, default in places:
        where = output_path(None, default, committed, False, "unused")
        ignored = subprocess.run(["git", "check-ignore", "-q", str(where / "v2-x-300.json")], cwd=REPO_ROOT)
        assert ignored.returncode == 0, f"{where} is not ignored by git"
        tracked = subprocess.run(["git", "check-ignore", "-q", str(committed / "v2-x-300.json")], cwd=REPO_ROOT)
        assert tracked.returncode == 1, f"{committed} is ignored by git"


def test_committed_profiles_and_reports_only_from_a_clean_tree(monkeypatch, capsys):
    from bpe.cli import main
    from bpe.lab.measure import publish

    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert main(["profile", "--variant", "v2", "--publish"]) == 2
    assert "uncommitted changes (abc1234-dirty)" in capsys.readouterr().err
    assert main(["report", "--publish"]) == 2
    assert "bpe report --publish writes a committed result" in capsys.readouterr().err
