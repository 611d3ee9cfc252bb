"""``bpe bench`` and ``bpe profile`` killed outright (``kill -9``: none of their clean-up runs).  Their fresh
processes, in sessions of their own where no terminal's signal reaches them, die with them (the kernel's
parent-death signal); the temporary folders they leave name them, and the next lab run removes those whose
process is gone, with scalene's files in /tmp.

Each command runs in a real process with a temporary folder of its own (``TMPDIR``).  The test waits until it
is in the phase under test (the bench's timed child runs its workers; scalene runs the training, its files in
/tmp), SIGKILLs the command alone, waits for every process it had started to be gone, then runs a quick bench
in this process on the same temporary folder.  Waits are bounded by ``HANG_GUARD_SECONDS``; nothing asserts a
duration.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile

import pytest

from bpe.lab.fresh_process import remove_orphaned_folders
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.running.leftovers import LEFTOVERS
from conftest import (
    DEFAULT_CORPUS,
    REPO_ROOT,
    alive,
    child_env,
    descendants,
    scalene_files,
    scalene_runs_the_training,
    timed_child_has_workers,
    wait_for,
)


def kill_9_in_phase(argv: list[str], in_phase, scratch) -> tuple[subprocess.Popen, list[int]]:
    """Run ``bpe argv`` with ``scratch`` as its temporary folder; once ``in_phase(proc)`` holds, SIGKILL it alone
    and wait until every process it had started is gone.  The process and those it had started."""
    proc = subprocess.Popen([sys.executable, "-m", "bpe", *argv], cwd=REPO_ROOT, env=child_env(TMPDIR=str(scratch)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    started = []
    try:
        wait_for(lambda: in_phase(proc), "the command never reached the phase", proc)
        started = descendants(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        wait_for(lambda: not [pid for pid in started if alive(pid)],
                 f"processes outlived the killed command: {[pid for pid in started if alive(pid)]}")
    finally:
        for pid in [proc.pid, *started]:  # a failed test leaves nothing running either
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
    return proc, started


def next_lab_run(scratch, monkeypatch) -> None:
    """A quick bench in this process, with ``scratch`` as the temporary folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("TMPDIR", str(scratch))
    report = run_bench(BenchSettings(["v2"], "corpus-en", 260, 1, ["<|endoftext|>"], 1))
    assert report.variants["v2"].median.merges == 260 - 257


def test_a_killed_bench_takes_its_timed_child_along_and_the_next_run_removes_its_folders(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc, started = kill_9_in_phase(
        ["bench", "--variant", "v6", "--data", str(DEFAULT_CORPUS), "--vocab-size", "2000", "--workers", "2",
         "--repeat", "3"], timed_child_has_workers, scratch)
    assert len(started) >= 3, f"the timed child and its workers were not all seen: {started}"
    left = sorted(p.name for p in scratch.iterdir())  # killed outright, it removed nothing
    assert [name.split("-")[-2] for name in left] == [str(proc.pid)] * 2, left
    assert [name.rsplit("-", 2)[0] for name in left] == ["bpe-bench", "bpe-lab-child"], left
    next_lab_run(scratch, monkeypatch)
    assert list(scratch.iterdir()) == []


def test_a_killed_profile_takes_scalene_along_and_the_next_run_removes_what_it_left(tmp_path, monkeypatch):
    pytest.importorskip("scalene")
    scratch = tmp_path / "tmp"
    scratch.mkdir()

    def training(proc) -> bool:  # the run is tied to scalene once it has written its line in LEFTOVERS
        # the line whole, not the file alone: the target creates the file before it writes the line, and a
        # kill between the two would leave nothing to say which of scalene's files are its own
        written = [path.read_text() for path in scratch.glob(f"bpe-profile-*/{LEFTOVERS}")]
        return scalene_runs_the_training(proc) and any(text.endswith("\n") for text in written)

    # v1 at vocab 10,000 runs for minutes under scalene: only being killed ends it within the hang guard
    proc, started = kill_9_in_phase(
        ["profile", "--variant", "v1", "--data", str(DEFAULT_CORPUS), "--vocab-size", "10000", "--force",
         "--out-dir", str(tmp_path / "out")], training, scratch)
    assert len(started) >= 2, f"scalene and the run it profiles were not both seen: {started}"
    left = [p.name for p in scratch.iterdir()]
    assert len(left) == 1 and left[0].startswith(f"bpe-profile-{proc.pid}-"), left
    assert scalene_files(started), "the killed run left no scalene file in /tmp: nothing to remove was tested"
    next_lab_run(scratch, monkeypatch)
    assert list(scratch.iterdir()) == []
    assert not scalene_files(started), f"scalene's files in /tmp were left behind: {scalene_files(started)}"


def test_a_folder_is_removed_only_once_every_process_it_names_has_ended(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its pid names a process that has ended
    dead, live = ended.pid, os.getpid()
    kept_for_its_owner = tmp_path / f"bpe-bench-{live}-abc"
    kept_for_its_run = tmp_path / f"bpe-profile-{dead}-def"
    removed = tmp_path / f"bpe-profile-{dead}-ghi"
    not_a_lab_folder = tmp_path / f"bpe-other-{dead}-jkl"
    for folder in (kept_for_its_owner, kept_for_its_run, removed, not_a_lab_folder):
        folder.mkdir()
    left_by_the_run = tmp_path / f"scalene-malloc-init{dead}"
    left_by_the_run.write_text("")
    (kept_for_its_run / LEFTOVERS).write_text(f"{live} {tmp_path}/nothing-of-{live}\n")
    (removed / LEFTOVERS).write_text(f"{dead} {tmp_path}/scalene-*[!0-9]{dead}\n")
    remove_orphaned_folders(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [kept_for_its_owner.name, kept_for_its_run.name, not_a_lab_folder.name])
