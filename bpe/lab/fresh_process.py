"""Run one timed job in a fresh Python process, so its peak memory and heap are its own (a training run, a
peer's, ``merge-cost``'s).  The settings go in as JSON on stdin; the child hands its result back with
:func:`write_result`, as JSON in a file named by ``$BPE_LAB_RESULT``, not on stdout: the child may run code that
is not ours (a student's trainer), which may print.  The child, like ``bpe profile``'s scalene, runs in a session
of its own (:func:`start_child`): Ctrl-C, SIGTERM or SIGHUP to the parent ends its whole process group
(:func:`end_process_group`), a parent killed outright takes it along (:func:`dies_with_this_process`), and the
next lab run removes the folder it left (:func:`lab_tempdir`).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from bpe.running.leftovers import process_stat, remove_orphans, running
from bpe.running.workers import die_with_parent

RESULT_ENV = "BPE_LAB_RESULT"


@dataclass
class ChildRun:
    """What a child left: its exit status, what it printed, and its result (``None`` if it wrote none)."""
    returncode: int
    stdout: str
    stderr: str
    result: dict | None


def write_result(result: dict) -> None:
    """In the child: hand ``result`` back to the parent (call once, at the end)."""
    with open(os.environ[RESULT_ENV], "w", encoding="utf-8") as f:
        json.dump(result, f)


#: In the child: a file descriptor open on the parent's stderr (a terminal), for progress only.
PROGRESS_FD_ENV = "BPE_LAB_PROGRESS_FD"


def run_json_child(code: str, settings: dict, prefix: Sequence[str] = (), progress: bool = False,
                   **extra_env: str) -> ChildRun:
    """``python -c code`` with ``settings`` as JSON on stdin (:func:`start_child`); ``prefix`` runs it under
    another program (``python -m tools.merge_cost --instructions``: valgrind).  The child's stderr is captured for its
    errors, so with ``progress`` it gets this process's stderr under another number (:func:`progress_stream`)."""
    progress_fd = None
    try:
        progress_fd = os.dup(sys.stderr.fileno()) if progress else None
    except (AttributeError, OSError, ValueError):  # no file behind stderr (captured in a test)
        pass
    if progress_fd is not None:
        extra_env[PROGRESS_FD_ENV] = str(progress_fd)
    try:
        with lab_tempdir("lab-child") as tmp:
            result_path = Path(tmp) / "result.json"
            proc = start_child([*prefix, sys.executable, "-c", code], {RESULT_ENV: str(result_path), **extra_env},
                               stdin=subprocess.PIPE, errors="replace",
                               pass_fds=() if progress_fd is None else (progress_fd,))
            stdout, stderr = wait_alive(proc, input=json.dumps(settings))
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # none written, or cut short (the child was killed while writing)
                result = None
    finally:
        if progress_fd is not None:
            os.close(progress_fd)
    return ChildRun(proc.returncode, stdout, stderr, result)


def start_child(argv: Sequence[str], env: dict[str, str] | None = None, **popen) -> subprocess.Popen:
    """``argv`` started with the repo importable and ``env`` added to this process's, its output read as text,
    in a session of its own (its whole group can be ended: :func:`end_process_group`) that dies with this
    process (:func:`dies_with_this_process`)."""
    path = os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path, **(env or {}))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True, preexec_fn=dies_with_this_process(), **popen)


def wait_alive(proc: subprocess.Popen, alive=None, every: float = 10.0, input: str | None = None) -> tuple[str, str]:
    """``proc.communicate(input)``, calling ``alive(seconds)`` every ``every`` seconds until it ends; on
    Ctrl-C, SIGTERM or any error the process is ended, with its process group when it has one of its own
    (:func:`end_process_group`), so nothing is left running."""
    started = time.monotonic()
    try:
        while True:
            try:
                return proc.communicate(input, timeout=every if alive else None)
            except subprocess.TimeoutExpired:
                input = None  # sent with the first call
                alive(time.monotonic() - started)
    except BaseException:
        end_process_group(proc)
        raise


def dies_with_this_process():
    """A ``preexec_fn`` for a fresh process: the kernel SIGKILLs it when this process dies, even by ``kill -9``
    (Linux).  SIGKILL, not SIGTERM: the child may run code that handles SIGTERM (scalene, a student's trainer).
    Its own pool's workers die with it in turn (:func:`~bpe.running.workers.die_with_parent`).  The kernel ties
    it to the thread that starts the child: here always the one that then waits for it."""
    return functools.partial(die_with_parent, os.getpid(), signal.SIGKILL)


#: A lab run's temporary folder, ``bpe-KIND-PID-*``, names the process that made it: one whose process is gone
#: (killed outright, it could not remove it) is removed by the next run (:func:`remove_orphaned_folders`, the rule
#: of :mod:`bpe.running.leftovers`, whose :data:`LEFTOVERS` file names the files outside it a folder takes along).


def lab_tempdir(kind: str) -> tempfile.TemporaryDirectory:
    """A temporary folder ``bpe-KIND-PID-*`` for a ``with`` block (removed at its end, also on Ctrl-C or a
    signal); the folders that lab runs killed outright left behind are removed first."""
    remove_orphaned_folders()
    return tempfile.TemporaryDirectory(prefix=f"bpe-{kind}-{os.getpid()}-")


def remove_orphaned_folders(where: str | Path | None = None) -> None:
    """Remove this user's lab folders in ``where`` (default: the temporary folder) whose process has ended, and
    every process their :data:`LEFTOVERS` name too, with the files it names
    (:func:`bpe.running.leftovers.remove_orphans`)."""
    remove_orphans(where)


#: How long :func:`end_process_group` gives a group to end on SIGTERM before SIGKILL; it only bounds a wait.
END_GRACE_SECONDS = 1.0
#: How long it then waits for the group's processes, SIGKILLed, to be gone (the kernel takes a moment, more
#: on a loaded machine); it only bounds the wait.
GONE_WAIT_SECONDS = 10.0


def end_process_group(proc: subprocess.Popen) -> None:
    """End ``proc`` and everything in its process group (it was started with ``start_new_session=True``):
    a timed child's pool workers, the program scalene runs.  SIGTERM, then SIGKILL to whatever is left once
    ``proc`` has ended or :data:`END_GRACE_SECONDS` have passed; ``proc`` is reaped, and the group's other processes
    are waited for until gone (what they leave can then be removed).  The group is signalled only while
    ``proc`` is not yet reaped, so its number cannot have been given to another process."""
    group = None
    if proc.returncode is None:
        try:
            group = os.getpgid(proc.pid)
        except ProcessLookupError:
            group = None
        if group != proc.pid:  # not a group of its own: end the process alone
            group = None
            proc.kill()
        else:
            os.killpg(group, signal.SIGTERM)
            deadline = time.monotonic() + END_GRACE_SECONDS
            while time.monotonic() < deadline and running(proc.pid):  # a zombie has ended, not yet reaped
                time.sleep(0.01)
            os.killpg(group, signal.SIGKILL)  # a zombie leader still holds the group's number
    proc.wait()
    deadline = time.monotonic() + GONE_WAIT_SECONDS
    while group is not None and _group_lives(group) and time.monotonic() < deadline:
        time.sleep(0.01)


def _group_lives(group: int) -> bool:
    """Whether a process of process group ``group`` is still alive (not a zombie); Linux, elsewhere none is seen."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    return any((fields := process_stat(name)) and int(fields[2]) == group and fields[0] not in "ZX"
               for name in filter(str.isdigit, entries))


def progress_stream():
    """In the child: the parent's stderr for progress (``run_json_child(progress=True)``), else ``None``."""
    fd = os.environ.get(PROGRESS_FD_ENV)
    try:
        return os.fdopen(int(fd), "w", buffering=1, closefd=False) if fd else None
    except (OSError, ValueError):
        return None


def child_result(run: ChildRun, what: str) -> dict:
    """The result a child wrote, or a :class:`BPEError` with the end of its stderr if it failed."""
    if run.returncode != 0 or run.result is None:
        why = f"exit {run.returncode}" if run.returncode != 0 else "no result written"
        raise BPEError(f"{what} failed ({why}):\n{run.stderr.strip()[-2000:]}")
    return run.result
