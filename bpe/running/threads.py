"""Threads for compiled work: a list of items, each handled by a call that releases the GIL.

The process pool (:mod:`bpe.running.pool`) exists because Python code holds the GIL: two processes,
and every count pickled between them.  Code that drops the GIL for a whole chunk (v9's counter) runs
on N cores from N threads of one process, sharing its memory, with nothing to send.  What this module
adds is what a pool gave for free:

* **order:** the items are taken in order, one at a time, by whichever thread is free (a slow chunk
  does not hold the others up), and the results come back by item;
* **the first failure wins, deterministically:** an item that fails stops the taking of any later
  item, items before it still finish, and the failure of the *earliest* failed item is raised; so a
  file with two bad bytes names the first, however the threads raced;
* **interrupts:** only the main thread sees a signal.  It waits on a queue (a wait Ctrl-C interrupts,
  as ``bpe/console.py`` makes SIGTERM do too), and on an interrupt it calls ``stop()``, which the
  compiled loops poll, waits for the threads, and re-raises: no thread outlives the call.

>>> run_threads(lambda thread, item: item * item, [1, 2, 3], threads=2)
[1, 4, 9]
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from bpe.dependencies import address_space_limit
from bpe.errors import BPEError, stop_signals_held

Item = TypeVar("Item")
Result = TypeVar("Result")


def run_threads(work: Callable[[int, Item], Result], items: Sequence[Item], *, threads: int,
                stop: Callable[[], None] = lambda: None,
                on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
    """``[work(thread, item) for item in items]``, run on ``threads`` threads (``thread``: 0 to threads - 1,
    so that each may own a table); ``on_result(i, result)`` is called in this thread as item ``i`` ends."""
    results: list = [None] * len(items)
    failures: dict[int, BaseException] = {}
    taken = itertools.count()  # next() on it is atomic under the GIL: each item is taken once
    ended: queue.SimpleQueue = queue.SimpleQueue()

    def loop(thread: int) -> None:
        try:
            for i in taken:
                if i >= len(items) or (failures and i > min(failures)):
                    return
                try:
                    results[i] = work(thread, items[i])
                except BaseException as failure:  # kept for the caller's thread, which raises it
                    failures[i] = failure
                    if not isinstance(failure, KeyboardInterrupt):
                        continue  # earlier items still run: the first failure is the one raised
                    return
                ended.put(i)
        finally:
            ended.put(None)

    workers = [threading.Thread(target=loop, args=(t,), name=f"bpe-thread-{t}", daemon=True)
               for t in range(max(1, min(threads, len(items))))]
    started: list[threading.Thread] = []  # only these can be joined
    try:
        # Started with the stop signals held: a Ctrl-C that came while start() waits for a thread would
        # leave a thread begun but not yet joinable; it interrupts once every thread is up.  (The threads
        # inherit the blocked mask, so the kernel hands those signals to this thread alone.)
        # The mask does not hold Python's own handler, which runs in this thread whichever thread the kernel
        # chose (a caller's timer thread, say): so each thread is listed before its start(), and the
        # clean-up below joins whichever of them did start.
        with stop_signals_held():
            for worker in workers:
                started.append(worker)
                try:
                    worker.start()
                except RuntimeError as exc:  # the system refused it: no room for its stack, or no thread left
                    started.pop()
                    raise BPEError(_no_thread(len(started), len(workers), exc)) from None
        running = len(workers)
        while running:
            i = ended.get()
            if i is None:
                running -= 1
            elif on_result is not None and i not in failures:
                on_result(i, results[i])
    except BaseException:  # Ctrl-C (or SIGTERM made one) in this thread: the threads stop, then it goes on
        stop()
        for worker in started:
            _join_if_started(worker)
        raise
    for worker in workers:
        worker.join()
    if failures:
        raise failures[min(failures)]
    return results


def _join_if_started(worker: threading.Thread) -> None:
    """Join ``worker`` if it was started, also where an interrupt cut its ``start()`` short: a thread the
    system launched is listed by ``threading.enumerate()`` until it ends, and ``join()`` refuses it only
    until it has told ``start()`` that it runs.  One never launched is not listed: nothing to join."""
    while worker in threading.enumerate():
        try:
            worker.join()
            return
        except RuntimeError:  # launched, not yet running: it is a moment away
            time.sleep(0.001)


def _no_thread(started: int, wanted: int, exc: BaseException) -> str:
    """The one line for a thread the system would not start, ``started`` of ``wanted`` being up.

    A thread reserves its stack's size of address space as it starts (``ulimit -s``: 8 MiB by default), so
    under an address-space limit (``ulimit -v``) that room is what is missing.  Fewer ``--workers`` is no way
    out: the run with fewer threads meets the same limit a little later (measured: under ``ulimit -v 180000``,
    2 workers failed on the second thread and 1 worker on its only one); a larger limit, or smaller stacks
    (``ulimit -s 1024``: the same runs then trained), is."""
    limit, stack = address_space_limit(), _stack_bytes()
    said = f"could not start a thread ({exc}; {started} of {wanted} running)"
    if limit is None:
        return (f"{said}: the system gives no more threads: this user's processes and threads are limited "
                "(ulimit -u), or memory is short; raise that limit or free some memory")
    smaller = ("" if stack is None or stack <= 1 << 20 else
               f", or give each thread a smaller stack (ulimit -s 1024: 1 MiB, where each reserves {stack >> 20} "
               "MiB now)")
    return (f"{said}: the address-space limit, {limit >> 20} MiB (ulimit -v {limit >> 10}), leaves no room for "
            f"its stack; raise the limit or lift it{smaller}")


def _stack_bytes() -> int | None:
    """The address space a new thread's stack reserves: Python's own setting, else the C library's default,
    which on Linux is the stack limit (``ulimit -s``); None where it cannot be told."""
    size = threading.stack_size()
    if size:
        return size
    try:
        import resource  # noqa: PLC0415 (absent off POSIX, as caught below)
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def read_span(path: str | Path, start: int, stop: int, buffers: list[bytearray], thread: int) -> memoryview:
    """The file's bytes ``start:stop`` in the thread's own buffer, read without the GIL (v9's counting and
    the compiled encoder: each thread reads its chunk, the parent reads nothing).

    The buffer is replaced by a larger one when a chunk needs it, never resized: a view of the old one may
    still be alive.
    """
    buffer = buffers[thread]
    if len(buffer) < stop - start:
        buffer = buffers[thread] = bytearray(stop - start)
    view = memoryview(buffer)[: stop - start]
    with open(path, "rb") as f:
        f.seek(start)
        got = f.readinto(view)
    if got != stop - start:
        raise BPEError(f"{path} changed while it was read: {got:,} bytes at offset {start:,}, "
                       f"{stop - start:,} expected")
    return view

