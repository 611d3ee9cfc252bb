"""bpe/running/leftovers.py: the one rule for what a run killed outright leaves.  A file or folder named by its
process's pid goes once that process is gone, never while it runs; a folder's ``leftovers`` keeps it while a process it
names runs (a local Dask cluster's, scalene's) and takes the files it names along.  Each user of the rule (the
lab's folders, a local cluster's, ``bpe encode``'s temporary output) is tested where it is used:
flows/test_parent_killed.py, corpus/test_scheduler.py, io/test_encode.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from bpe.running.leftovers import FOLDER, LEFTOVERS, remove_orphans, running


def ended_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()
    return ended.pid


def test_a_process_runs_until_it_has_ended():
    assert running(os.getpid()) and running(os.getppid())
    assert not running(ended_pid())


def test_every_kind_of_folder_is_named_by_its_process():
    for kind in ("bench", "bench-corpus", "cluster-bench", "dask", "lab-child", "merge-cost", "probe", "profile"):
        assert FOLDER.match(f"bpe-{kind}-4711-x8k2").group(1) == "4711", kind
    for name in ("bpe-other-4711-x", "bpe-dask-x8k2", "dask-scratch-space", "bpe-dask-4711"):
        assert FOLDER.match(name) is None, name


def test_folders_go_once_every_process_they_name_has_ended(tmp_path):
    dead, live = ended_pid(), os.getpid()
    gone = tmp_path / f"bpe-dask-{dead}-a"
    kept_for_owner = tmp_path / f"bpe-dask-{live}-b"
    kept_for_cluster = tmp_path / f"bpe-dask-{dead}-c"
    takes_files = tmp_path / f"bpe-profile-{dead}-d"
    for folder in (gone, kept_for_owner, kept_for_cluster, takes_files):
        folder.mkdir()
    (gone / "scratch").write_text("a worker's file")
    (kept_for_cluster / LEFTOVERS).write_text(f"{live}\n")  # a line that names a process, no files
    made_outside = tmp_path / f"scalene-malloc-{dead}"
    made_outside.write_text("")
    (takes_files / LEFTOVERS).write_text(f"{dead} {tmp_path}/scalene-*-{dead}\n")
    remove_orphans(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([kept_for_owner.name, kept_for_cluster.name])


def test_files_go_by_a_pattern_of_their_own_and_a_link_is_never_followed(tmp_path):
    dead, live = ended_pid(), os.getppid()
    pattern = re.compile(r"\.ids\.npy\.(\d+)\.tmp\Z")
    names = {f".ids.npy.{dead}.tmp": "gone", f".ids.npy.{live}.tmp": "kept", f".ids.npy.{dead}.tmp.x": "kept",
             f".other.npy.{dead}.tmp": "kept"}
    for name in names:
        (tmp_path / name).write_bytes(b"\0")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "kept").write_text("")
    link = tmp_path / f".ids.npy.{ended_pid()}.tmp"  # a name the rule would take, on a link to a folder
    link.symlink_to(target)
    remove_orphans(tmp_path, pattern)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [name for name, fate in names.items() if fate == "kept"] + ["elsewhere", link.name])
    assert (target / "kept").exists()
