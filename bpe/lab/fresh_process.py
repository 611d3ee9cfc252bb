"""Run one timed job in a fresh Python process, so its peak memory and heap are its own.

The bench (one training run per repeat), the peers (one peer run per repeat) and ``merge-cost`` all
use this: the settings go in as JSON on stdin, and the child hands its result back with
:func:`write_result`, as JSON in a file of its own (named by ``$BPE_LAB_RESULT``).  Not on stdout:
the child may run code that is not ours (a student's trainer) and that code may print, so stdout is
only captured and shown, never parsed.  The child runs in a session of its own: Ctrl-C, SIGTERM or SIGHUP
to the parent ends the child's whole process group (:func:`end_process_group`), its workers included.
"""

from __future__ import annotations

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
    """``python -c code`` with the repo importable and ``settings`` as JSON on stdin.

    ``prefix`` runs the child under another program (``bpe merge-cost --instructions``: valgrind).
    With ``progress``, this process's stderr is passed on to the child (:func:`progress_stream`):
    the child's own stderr is captured for its errors, so its progress goes there instead.
    """
    progress_fd = None
    try:  # a copy under another number: the child's own fd 2 is the captured pipe
        progress_fd = os.dup(sys.stderr.fileno()) if progress else None
    except (AttributeError, OSError, ValueError):  # no file behind stderr (captured in a test)
        pass
    if progress_fd is not None:
        extra_env[PROGRESS_FD_ENV] = str(progress_fd)
    try:
        return _run_child(code, settings, prefix, progress_fd, extra_env)
    finally:
        if progress_fd is not None:
            os.close(progress_fd)


def _run_child(code: str, settings: dict, prefix: Sequence[str], progress_fd: int | None,
               extra_env: dict[str, str]) -> ChildRun:
    with tempfile.TemporaryDirectory(prefix="bpe-lab-child-") as tmp:
        result_path = Path(tmp) / "result.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
                   **{RESULT_ENV: str(result_path)}, **extra_env)
        with subprocess.Popen([*prefix, sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, errors="replace", env=env, start_new_session=True,
                              pass_fds=() if progress_fd is None else (progress_fd,)) as proc:
            try:
                stdout, stderr = proc.communicate(json.dumps(settings))
            except BaseException:  # Ctrl-C, SIGTERM: the child and its workers go before the exception leaves
                end_process_group(proc)
                raise
        result = None
        if result_path.exists():
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except ValueError:  # cut short (the child was killed while writing)
                result = None
    return ChildRun(proc.returncode, stdout, stderr, result)


#: How long :func:`end_process_group` gives a group to end on SIGTERM before SIGKILL; it only bounds a wait.
END_GRACE_SECONDS = 1.0


def end_process_group(proc: subprocess.Popen, grace: float = END_GRACE_SECONDS) -> None:
    """End ``proc`` and everything in its process group (it was started with ``start_new_session=True``):
    a timed child's pool workers, the program scalene runs.  SIGTERM, then SIGKILL to whatever is left once
    ``proc`` has ended or ``grace`` seconds have passed; ``proc`` is reaped.  The group is signalled only
    while ``proc`` is not yet reaped, so its number cannot have been given to another process."""
    if proc.returncode is None:
        try:
            group = os.getpgid(proc.pid)
        except ProcessLookupError:
            group = None
        if group != proc.pid:  # not a group of its own: end the process alone
            proc.kill()
        else:
            os.killpg(group, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and not _ended(proc):
                time.sleep(0.01)
            os.killpg(group, signal.SIGKILL)  # a zombie leader still holds the group's number
    proc.wait()


def _ended(proc: subprocess.Popen) -> bool:
    """Whether ``proc`` has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


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
