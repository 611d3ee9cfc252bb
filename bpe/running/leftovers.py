"""What a run killed outright leaves behind, and the one rule that removes it.

A process killed with ``kill -9`` (or by the OOM killer) runs none of its clean-up: the temporary files and
folders it was writing stay.  So each one is named by the pid of the process that made it, and a later run
removes those of this user whose process is gone:

* the lab's and a local Dask cluster's temporary folders, ``$TMPDIR/bpe-KIND-PID-*`` (:data:`FOLDER`:
  ``bpe-bench-4711-x8k2``, ``bpe-dask-4711-q0z1``), each removed by the next run of its kind; a folder may
  hold a file :data:`LEFTOVERS` naming more processes it serves, one a line (``PID``, or ``PID GLOB``: files
  outside the folder that process makes, such as scalene's in /tmp), and is kept while one of them runs;
* ``bpe encode``'s output as it is written, ``.NAME.PID.tmp`` beside ``NAME``, removed by the next encode
  into the same folder.

A process that still runs keeps its files, whoever started it; a pid the system has given to another process
since keeps them too, until that one ends: the rule errs on the side of keeping.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
from pathlib import Path

#: A temporary folder of a lab run or of a local Dask cluster: ``bpe-KIND-PID-``, then tempfile's letters.
FOLDER = re.compile(r"bpe-(?:bench|bench-corpus|cluster-bench|dask|lab-child|merge-cost|probe|profile)-(\d+)-")
#: A file in such a folder: lines ``PID`` or ``PID GLOB``, processes the folder serves besides its owner (a local
#: Dask cluster's process, scalene's), and the files outside it that each makes; kept while one runs.
LEFTOVERS = "leftovers"


def remove_orphans(where: str | Path | None = None, pattern: re.Pattern = FOLDER) -> None:
    """Remove this user's files and folders in ``where`` (default: the temporary folder) whose name ``pattern``
    matches from its start, its first group the pid of the process that made it, once that process is gone;
    a folder's :data:`LEFTOVERS` keeps it while a process it names runs, and names the files it takes along."""
    try:
        entries = list(Path(where or tempfile.gettempdir()).iterdir())
    except OSError:
        return
    for entry in entries:
        owner = pattern.match(entry.name)
        if owner is None or running(int(owner.group(1))):
            continue
        try:
            if entry.is_symlink() or entry.lstat().st_uid != os.getuid():
                continue
            if not entry.is_dir():
                entry.unlink()
                continue
            listed = entry / LEFTOVERS
            leftovers = listed.read_text().splitlines() if listed.exists() else []
        except OSError:
            continue
        made_by = [line.partition(" ") for line in leftovers]
        if any(pid.isdigit() and running(int(pid)) for pid, _, _ in made_by):
            continue  # a process it names runs on: kept, with its record, for a later run
        for _, _, pattern_of_files in made_by:
            for path in glob.glob(pattern_of_files) if pattern_of_files else ():
                try:
                    os.remove(path)
                except OSError:
                    pass
        shutil.rmtree(entry, ignore_errors=True)


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, waiting to be reaped)."""
    try:
        os.kill(pid, 0)  # signal 0 only asks whether the process is there
    except ProcessLookupError:
        return False
    except OSError:  # there, and someone else's
        return True
    fields = process_stat(pid)
    return fields is None or fields[0] != "Z"  # no /proc (not Linux), or it has just gone: taken as running


def process_stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after ``pid (comm)``: state, ppid, pgrp, ...; ``None`` where unread."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
