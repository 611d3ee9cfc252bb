"""The one process pool: ``workers`` persistent forked processes, one pipe each, and no threads.

What this adds over ``concurrent.futures.ProcessPoolExecutor``: nothing in the happy path (tasks go
out, answers come back), everything on the unhappy ones.  An executor reads answers in a manager
*thread*; when a worker is killed half-way through writing an answer, or Ctrl-C tears the pool down
at the wrong moment, that thread stays blocked in ``recv()`` on a message that will never be
finished, and the interpreter joins it at exit forever.  Here the parent is the only reader and it
never blocks on one worker alone: it waits with :func:`multiprocessing.connection.wait` on the
pipes *and* the process sentinels, so a worker that dies is seen at once (EOF on its pipe or its
sentinel firing), never waited for.

Protocol (the rule that makes a deadlock impossible): the parent sends to a worker only when that
worker is idle (waiting for a task), and always reads a worker's answer before sending it anything
else; so there is at most one message in flight per worker, in one direction.  Big payloads are fine:
the pipe streams them while the other side reads.

Guarantees (``tests/running/test_pool.py``):

* a task that raises sends back one line; the parent raises :class:`~bpe.errors.BPEError` (a
  ``BPEError`` raised in the worker, e.g. invalid UTF-8 with its file offset, comes back as is);
* a worker that runs out of memory (``MemoryError``, in a task or receiving one) becomes the
  out-of-memory sentence the parent's own would give, naming the worker and the phase;
* a worker that dies (``kill -9``, the OOM killer), even half-way through writing its answer, becomes
  one ``BPEError`` naming the signal, the phase (``doing``) and the worker (its number and pid, which
  the kernel's log names if the OOM killer took it);
* any failure, Ctrl-C (or SIGTERM, SIGHUP) included, terminates and reaps every worker before the
  exception leaves; those signals are held back while forking and while cleaning up, so a second one
  cannot break either;
* workers ignore SIGINT and SIGHUP (a terminal sends them to the whole process group: only the parent
  reacts), die of SIGTERM and, on Linux, die with the parent even if it is killed with SIGKILL.

A worker may also get a *channel*: a pipe of its own beside the task pipe, for a long task that talks
with the parent many times (v7's merges: :mod:`bpe.variants._v7_shards`).  Each channel is made just before its
worker forks, and every worker closes the parent's ends it inherits, so only its worker holds the other
end: a worker's death is EOF on its channel too, at once.

The worker's side (its start, its loop, the test-only faults it injects) is :mod:`bpe.running.workers`.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import wait

from bpe.errors import BPEError, out_of_memory, stop_signals_held
from bpe.running.workers import worker_main

#: How long close() waits for workers to exit on their own, and terminate() for SIGTERM to work,
#: before SIGKILL.  Both only bound a wait; a healthy pool is gone in milliseconds.
CLOSE_WAIT_SECONDS = 5.0
TERMINATE_WAIT_SECONDS = 1.0


def default_workers() -> int:
    return os.cpu_count() or 1


_watchers: list[list[int]] = []  # one list per open pools_started() block


@contextmanager
def pools_started() -> Iterator[list[int]]:
    """The sizes of the pools started in this process while the block runs, in order (empty: none).

    How ``train_bpe`` learns how many processes a rung counted in without the rung saying so: the
    count it was given may be cut for a small file, and one not given is chosen inside the rung.
    """
    sizes: list[int] = []
    _watchers.append(sizes)
    try:
        yield sizes
    finally:
        _watchers[:] = [watcher for watcher in _watchers if watcher is not sizes]  # by identity, not by value


def record_workers(count: int) -> None:
    """Tell every open :func:`pools_started` block that ``count`` workers counted: a pool says so as it
    starts, and so does a rung that counts on threads of its own (v9)."""
    for sizes in _watchers:
        sizes.append(count)


def _context():
    # fork starts a worker in milliseconds with every module already imported; spawn where it is missing
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


class WorkerPool:
    """``workers`` persistent forked processes, each with its own pipe; no threads.

    Use it as a context manager: leaving the block normally closes the pool (workers exit, are
    joined); leaving it with any exception, KeyboardInterrupt included, terminates it.

    >>> with WorkerPool(2) as pool:
    ...     pool.broadcast(abs, -3), sorted(pool.imap_unordered(pow, [(2, 3), (3, 2)]))
    ([3, 3], [(0, 8), (1, 9)])

    ``what``, ``doing`` and ``source`` only shape error messages: "a pre-tokenization worker died
    (killed by SIGKILL) while counting FILE; ...", and so does ``memory_advice``, what to try when a
    worker runs out of memory (default: the trainer's advice, :func:`~bpe.errors.out_of_memory`).
    ``doing`` may be changed as the owner moves from one phase to the next.  ``channels=True`` gives each
    worker a channel: ``channels[i]`` here, the other end in worker ``i``'s :func:`worker_state`
    (``CHANNEL_KEY``).
    """

    def __init__(self, workers: int, *, what: str = "pre-tokenization", source: str | None = None,
                 doing: str = "counting", channels: bool = False, memory_advice: str | None = None):
        if not isinstance(workers, int) or workers < 1:
            raise BPEError(f"workers must be at least 1, got {workers}")
        self.size = workers
        self.doing = doing
        self._what, self._source = what, source
        self._memory_advice = memory_advice
        self._processes: list = []
        self._conns: list = []
        self.channels: list = []
        self._busy: list[bool] = []
        self._tasks_sent = 0
        self._closed = False
        self._early: dict[int, object] = {}  # answers read while waiting for another worker's
        ctx = _context()
        forking = ctx.get_start_method() == "fork"
        try:
            with stop_signals_held():  # no worker may see a stop signal before it sets its own handling
                for _ in range(workers):
                    parent_end, child_end = ctx.Pipe(duplex=True)
                    ours, theirs = ctx.Pipe(duplex=True) if channels else (None, None)
                    mine = [parent_end] + ([ours] if channels else [])
                    inherited = self._conns + self.channels + mine if forking else []
                    process = ctx.Process(target=worker_main, args=(child_end, inherited, os.getpid(), theirs),
                                          daemon=True, name="bpe-worker")
                    process.start()
                    # Only the worker may hold its ends: then the worker's death is EOF on ours.
                    for end in (child_end, theirs):
                        if end is not None:
                            end.close()
                    self._processes.append(process)
                    self._conns.append(parent_end)
                    if channels:
                        self.channels.append(ours)
                    self._busy.append(False)
        except BaseException:
            self.terminate()
            raise
        record_workers(workers)

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()

    # --- tasks ------------------------------------------------------------------------------------

    def submit(self, worker: int, fn: Callable, *args) -> None:
        """Send one task to worker ``worker``, which must be idle: it will run ``fn(*args)``."""
        if self._closed or self._conns[worker].closed:
            raise RuntimeError("the worker pool is closed" if self._closed else f"worker {worker} was retired")
        if self._busy[worker]:
            raise RuntimeError(f"worker {worker} is busy: read its result first")
        try:
            self._conns[worker].send((self._tasks_sent, fn, args))
        except (OSError, ValueError):  # it died while idle: report it as such
            self._fail(self._death(worker))
        except BaseException:
            self.terminate()
            raise
        self._busy[worker] = True
        self._tasks_sent += 1

    def result(self, worker: int):
        """Wait for worker ``worker``'s answer; its death or any worker's failure raises BPEError."""
        if not self._busy[worker]:
            raise RuntimeError(f"worker {worker} has no task")
        while worker not in self._early:
            waiting = [w for w, busy in enumerate(self._busy) if busy and w not in self._early]
            for ready in self._ready(waiting):
                self._early[ready] = self._receive(ready)
                self._busy[ready] = True  # until result(ready) takes it
        self._busy[worker] = False
        return self._early.pop(worker)

    def run_all(self, fn: Callable, args_per_worker: Sequence[tuple]) -> list:
        """Worker ``i`` runs ``fn(*args_per_worker[i])``; the results in worker order."""
        if len(args_per_worker) > self.size:
            raise ValueError(f"{len(args_per_worker)} tasks for {self.size} workers")
        for worker, args in enumerate(args_per_worker):
            self.submit(worker, fn, *args)
        return [self.result(worker) for worker in range(len(args_per_worker))]

    def broadcast(self, fn: Callable, *args) -> list:
        """Every worker runs ``fn(*args)``; the results in worker order."""
        return self.run_all(fn, [args] * self.size)

    def imap_unordered(self, fn: Callable, tasks: Sequence[tuple]) -> Iterator[tuple[int, object]]:
        """Each idle worker takes the next task; yields ``(task index, result)`` as they finish."""
        todo = iter(enumerate(tasks))
        running: dict[int, int] = {}  # worker -> task index

        def give(worker: int) -> None:
            task = next(todo, None)
            if task is not None:
                running[worker] = task[0]
                self.submit(worker, fn, *task[1])

        for worker in range(self.size):
            if not self._busy[worker]:
                give(worker)
        while running:
            for worker in self._ready(list(running)):
                value = self._receive(worker)
                index = running.pop(worker)
                give(worker)  # keep it busy while the caller uses the answer
                yield index, value

    # --- shutting down ----------------------------------------------------------------------------

    def close(self) -> None:
        """Ask every worker to exit and join them (a bounded wait, then SIGKILL)."""
        if self._closed:
            return
        if any(self._busy):  # an answer nobody will read: do not wait for it
            self.terminate()
            return
        self._closed = True
        with stop_signals_held():
            for conn in self._conns:
                try:
                    conn.send(None)
                except OSError:
                    pass
            self._reap(within=CLOSE_WAIT_SECONDS)

    def retire(self, worker: int) -> None:
        """Stop idle worker ``worker`` for good while the others go on: a worker with nothing left to do
        is then no process to watch (or to be killed unseen) and no memory held."""
        if self._busy[worker]:
            raise RuntimeError(f"worker {worker} is busy: read its result first")
        with stop_signals_held():
            try:
                self._conns[worker].send(None)
            except OSError:
                pass
            process = self._processes[worker]
            process.join(CLOSE_WAIT_SECONDS)
            if process.exitcode is None:
                process.kill()
                process.join(TERMINATE_WAIT_SECONDS)
            self._conns[worker].close()
            if self.channels:
                self.channels[worker].close()

    def terminate(self) -> None:
        """SIGTERM every worker, SIGKILL those still alive after a short wait, reap all; never blocks
        for long, and SIGINT is held back meanwhile so a second Ctrl-C cannot break the clean-up."""
        self._closed = True
        with stop_signals_held():
            for process in self._processes:
                if process.exitcode is None:
                    try:
                        process.terminate()
                    except OSError:
                        pass
            self._reap(within=TERMINATE_WAIT_SECONDS)

    def _reap(self, *, within: float) -> None:
        """Join every worker, giving them ``within`` seconds in all to exit; then SIGKILL the rest."""
        deadline = time.monotonic() + within
        for process in self._processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in self._processes:
            if process.exitcode is None:  # ignored SIGTERM (stuck in C code): it must not outlive us
                try:
                    process.kill()
                except OSError:
                    pass
                process.join(TERMINATE_WAIT_SECONDS)
        for conn in self._conns + self.channels:
            conn.close()
        self._busy = [False] * len(self._busy)

    # --- internals ---------------------------------------------------------------------------------

    def _ready(self, workers: list[int]) -> list[int]:
        """Those of ``workers`` with an answer ready (or dead): waits on pipes and sentinels together."""
        owner = {}
        for w in workers:
            owner[self._conns[w]] = w
            owner[self._processes[w].sentinel] = w
        try:
            ready = wait(list(owner))
        except BaseException:
            self.terminate()
            raise
        return sorted({owner[r] for r in ready})

    def _receive(self, worker: int):
        """Read worker ``worker``'s answer (it is ready, or the worker is dead: neither blocks)."""
        try:
            data = self._conns[worker].recv_bytes()
            ok, value = pickle.loads(data)
        except (EOFError, OSError):  # EOF, at once or half-way through the answer: it died
            self._fail(self._death(worker))
        except BaseException:
            self.terminate()
            raise
        self._busy[worker] = False
        if ok:
            return value
        if isinstance(value, MemoryError):
            self._fail(BPEError(out_of_memory(f" in a {self._what} worker{self._while()} (worker {worker} of "
                                              f"{self.size}, pid {self._processes[worker].pid})",
                                              advice=self._memory_advice)))
        self._fail(value if isinstance(value, BPEError) else BPEError(
            f"a {self._what} worker failed{self._while()}: {value}"))

    def _while(self) -> str:
        """" while counting FILE": the phase, and the file if known."""
        if not self.doing:
            return ""
        return f" while {self.doing} {self._source}" if self._source else f" while {self.doing}"

    def _death(self, worker: int) -> BPEError:
        process = self._processes[worker]
        process.join(TERMINATE_WAIT_SECONDS)  # it closed its pipe: it is dead or about to be
        code = process.exitcode
        how = ""
        if code is not None and code < 0:
            try:
                how = f" (killed by {signal.Signals(-code).name})"
            except ValueError:
                how = f" (killed by signal {-code})"
        elif code:
            how = f" (exit status {code})"
        return BPEError(f"a {self._what} worker died{how}{self._while()}; worker {worker} of {self.size} "
                        f"(pid {process.pid}) may have been killed or run out of memory (try fewer --workers)")

    def _fail(self, error: BPEError):
        self.terminate()
        raise error

