"""A worker of the process pool, from its side: how it starts, the tasks it runs and how it answers.

A worker forked by :class:`bpe.running.pool.WorkerPool` closes the parent's ends it inherited, arranges to
die with its parent (:func:`die_with_parent`), leaves Ctrl-C and a closed terminal to the parent, then
runs tasks until told to stop: each answer, a result or one line of failure, pickled before it is sent.
Out of memory it answers with a sentence made before it was needed, so the answer needs no memory.

Test-only fault injection, read by the workers from the environment: see :data:`KILL_ON_TASK_ENV`,
:data:`KILL_MID_ANSWER_ENV` and :data:`STALL_MID_ANSWER_ENV`.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import sys
import time

from bpe.errors import STOP_SIGNALS, BPEError

#: TEST-ONLY: the worker that picks up task number N (tasks are numbered from 0 in the order the pool
#: sends them) SIGKILLs itself before running it, as the OOM killer would.
KILL_ON_TASK_ENV = "BPE_TEST_KILL_WORKER_ON_TASK"
#: TEST-ONLY: the worker that answers task number N writes the first 4 KiB (at most half) of its answer,
#: then SIGKILLs itself: the parent is left holding part of a message.
KILL_MID_ANSWER_ENV = "BPE_TEST_KILL_WORKER_MID_ANSWER"
#: TEST-ONLY: like :data:`KILL_MID_ANSWER_ENV`, but the worker then waits forever: the parent is blocked
#: reading part of a message when Ctrl-C comes.
STALL_MID_ANSWER_ENV = "BPE_TEST_STALL_WORKER_MID_ANSWER"
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)
_state: dict = {}  # the running worker's state (see worker_state)


# A worker out of memory answers with this, made before it is needed: then the answer needs no memory.
_OUT_OF_MEMORY_ANSWER = pickle.dumps((False, MemoryError()), pickle.HIGHEST_PROTOCOL)
#: The key of a worker's own end of its channel in :func:`worker_state` (pools made with ``channels=True``).
CHANNEL_KEY = "channel"


def worker_state() -> dict:
    """A dict that lives as long as the worker process: tasks keep what the next task needs there.

    Inside a task it is the worker's own; each worker starts with an empty one.
    """
    return _state


def die_with_parent(parent_pid: int, signum: int = signal.SIGTERM) -> None:
    """Linux: have the kernel send this process ``signum`` when its parent ``parent_pid`` dies (even by
    SIGKILL); if the parent is already gone, exit at once.  Called first thing in the child.

    Without it a worker of a ``kill -9``-ed parent would wait forever for a task that never comes, and
    the lab's fresh processes (a timed run, scalene) would run on with nobody to read their result.
    """
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _env_number(name: str) -> int | None:
    value = os.environ.get(name)
    return int(value) if value and value.lstrip("-").isdigit() else None


def worker_main(conn, inherited, parent_pid: int, channel=None) -> None:
    for other in inherited:  # forked copies of the parent's ends of its own and earlier workers' pipes
        other.close()
    die_with_parent(parent_pid)
    # Ctrl-C in a terminal signals the whole process group, and so does a closed terminal (SIGHUP).  Only the
    # parent reacts (it terminates the pool); a worker that also raised KeyboardInterrupt would print its
    # own traceback.  SIGTERM is how the pool (and the kernel, when the parent dies) stops a worker: the
    # default action, not the parent's handler inherited through fork.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    global _state
    _state = {} if channel is None else {CHANNEL_KEY: channel}  # not a copy of the parent's
    kill_on_task, kill_mid_answer = _env_number(KILL_ON_TASK_ENV), _env_number(KILL_MID_ANSWER_ENV)
    stall_mid_answer = _env_number(STALL_MID_ANSWER_ENV)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        except MemoryError:  # too little left to take the task: say so, then stop
            # The rest of the message may still be in the pipe, so nothing more can be read from it; a
            # parent still sending sees this worker gone instead (its message names memory too).
            _answer(conn, _OUT_OF_MEMORY_ANSWER)
            return
        if message is None:  # close()
            return
        number, fn, args = message
        if number == kill_on_task:
            os.kill(os.getpid(), _SIGKILL)
        try:
            answer = pickle.dumps((True, fn(*args)), pickle.HIGHEST_PROTOCOL)
        except MemoryError:  # the exception is not kept: its traceback's frames, and what they held, go
            answer = _OUT_OF_MEMORY_ANSWER
        except BaseException as exc:  # noqa: BLE001 - every failure goes back as one line
            error = exc if isinstance(exc, BPEError) else f"{type(exc).__name__}: {exc}"
            try:
                answer = pickle.dumps((False, error), pickle.HIGHEST_PROTOCOL)
            except Exception:  # an unpicklable BPEError subclass: its text is enough
                answer = pickle.dumps((False, str(exc)), pickle.HIGHEST_PROTOCOL)
        del message, fn, args
        if number in (kill_mid_answer, stall_mid_answer):
            # the frame multiprocessing writes (a 4-byte length, then the bytes), cut short
            os.write(conn.fileno(), struct.pack("!i", len(answer)) + answer[:min(4096, len(answer) // 2)])
            if number == kill_mid_answer:
                os.kill(os.getpid(), _SIGKILL)
            while True:
                time.sleep(3600)
        if not _answer(conn, answer):
            return


def _answer(conn, answer: bytes) -> bool:
    """Send a pickled answer; False if the parent is gone."""
    try:
        conn.send_bytes(answer)
    except OSError:
        return False
    return True
