"""How many workers to start, and how many chunks to give them: the cores that are free now, not the cores
the machine has; a file cut into enough chunks that none is idle, none tiny, none huge.

A pool of ``os.cpu_count()`` workers on a machine where another job holds a core is slower than fewer
workers: the processes take turns on the busy core, and the parent waits for the slowest.  So when the
caller names no worker count, :func:`choose_workers` looks at what the cores are doing for a moment
before the pool starts:

* on Linux, two reads of ``/proc/stat`` :data:`SAMPLE_SECONDS` apart give the share of CPU time that
  was not idle over that window, which is the other processes' (this one sleeps meanwhile); the
  one-minute load average would react a minute late;
* elsewhere, ``os.getloadavg()`` where it exists (slow to react, but better than nothing), else
  every core is taken to be free.

An explicit worker count is always used as given, once :func:`check_workers` has found that a pool of
that many may be started here.  What this leaves out: cores that become busy or
free after the start (the pool does not grow or shrink), and hyper-threads, counted as cores.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

from bpe.errors import ArgumentError

#: Chunks smaller than this are not worth a process hop.
MIN_CHUNK_BYTES = 64 * 1024
#: Chunks larger than this would make a worker hold too much text at once.
MAX_CHUNK_BYTES = 32 * 1024 * 1024
#: More chunks than workers so a slow chunk does not leave the other workers idle.
CHUNKS_PER_WORKER = 8


def plan_chunk_count(file_size: int, workers: int) -> int:
    """How many chunks to aim for: enough for load balance, none tiny, none huge."""
    wanted = max(workers * CHUNKS_PER_WORKER, -(-file_size // MAX_CHUNK_BYTES))
    return max(1, min(wanted, file_size // MIN_CHUNK_BYTES))


#: How long the two reads of /proc/stat are apart.  Long enough that a process spinning on a core shows
#: as one busy core (the kernel's tick is 1-10 ms), short enough not to be felt at start.
SAMPLE_SECONDS = 0.05
#: A core counts as taken when other processes used at least this share of it over the sample: a
#: spinning job shows as about 1.0, the short bursts of an idle desktop as a few hundredths.  On a fully
#: used core a second worker was measured to lose (docs/v3.md); the threshold leaves light use alone.
BUSY_SHARE = 0.75


def _read_proc_stat() -> tuple[int, int] | None:
    """(busy, total) jiffies summed over all CPUs from the first line of /proc/stat; None where unreadable."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    values = [int(v) for v in fields[1:]]
    # user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return total - idle, total


def measure_busy_cores(*, sample_seconds: float = SAMPLE_SECONDS,
                       read_stat: Callable[[], tuple[int, int] | None] = _read_proc_stat,
                       sleep: Callable[[float], None] = time.sleep, cpu_count: int | None = None,
                       loadavg: Callable[[], tuple[float, float, float]] | None = getattr(os, "getloadavg", None),
                       ) -> float | None:
    """How many cores other processes keep busy now (a float), or None where it cannot be told.

    ``read_stat``, ``sleep``, ``loadavg`` and ``cpu_count`` are injectable for tests.

    >>> samples = iter([(100, 1000), (150, 1100)])  # half of the jiffies in the window were busy
    >>> measure_busy_cores(read_stat=lambda: next(samples), sleep=lambda s: None, cpu_count=2)
    1.0
    """
    cpu_count = cpu_count or os.cpu_count() or 1
    first = read_stat()
    if first is not None:
        sleep(sample_seconds)
        second = read_stat()
        if second is not None and second[1] > first[1]:
            return cpu_count * (second[0] - first[0]) / (second[1] - first[1])
    if loadavg is not None:
        try:
            return min(float(cpu_count), loadavg()[0])
        except OSError:
            return None
    return None


#: A second look at the cores this soon after the last one reuses it: one run may ask twice (v7: how
#: many processes to merge in, then how many workers to count with), and each look costs
#: :data:`SAMPLE_SECONDS` of waiting, which on a small corpus is a visible share of the run.
REUSE_SECONDS = 1.0
_last_look = [-math.inf, None]  # (time.monotonic() at the end of the last look, its busy cores)


def busy_cores_now() -> float | None:
    """:func:`measure_busy_cores`, or the last look's figure if it ended under :data:`REUSE_SECONDS` ago."""
    if time.monotonic() - _last_look[0] >= REUSE_SECONDS:
        taken = measure_busy_cores()
        _last_look[:] = [time.monotonic(), taken]
    return _last_look[1]


def choose_workers(requested: int | None = None, *, cpu_count: int | None = None,
                   busy: Callable[[], float | None] = busy_cores_now) -> int:
    """``requested`` when given; else the cores not kept busy by other processes (at least 1).

    >>> (choose_workers(3), choose_workers(None, cpu_count=2, busy=lambda: 0.97),
    ...  choose_workers(None, cpu_count=4, busy=lambda: 0.1))
    (3, 1, 4)
    >>> choose_workers(None, cpu_count=8, busy=lambda: None)  # cannot tell: every core
    8
    """
    if requested is not None:
        return requested
    cpu_count = cpu_count or os.cpu_count() or 1
    if cpu_count == 1:
        return 1
    taken = busy()
    if taken is None:
        return cpu_count
    # a core counts as taken once other processes use BUSY_SHARE of it
    return max(1, cpu_count - math.floor(taken + (1 - BUSY_SHARE)))


def workers_for(requested: int | None, size: int) -> int:
    """How many workers count a file of ``size`` bytes: the count asked for, or every CPU, never more than
    the file has chunks; and, where none was asked for and more than one would work, only the cores other
    processes leave free (:func:`choose_workers`, sampled only then).  The pool (v3-v8) and v9's threads
    both count with this many.

    >>> workers_for(4, 100_000), workers_for(3, 10**9)  # a file of two chunks at most; a large one
    (1, 3)
    """
    workers = requested if requested is not None else os.cpu_count() or 1
    workers = max(1, min(workers, plan_chunk_count(size, workers)))
    if requested is None and workers > 1:  # a worker on a busy core makes the count slower than fewer
        workers = min(workers, choose_workers(None))
    return workers


#: More pool workers than this many per CPU only add processes: refused as a likely typo.
WORKERS_PER_CPU = 16



def max_workers() -> int:
    """The most pool workers a run may ask for: :data:`WORKERS_PER_CPU` per CPU, and what the open-file
    limit allows (each worker holds about three descriptors in the parent: its pipe's ends, its sentinel)."""
    most = WORKERS_PER_CPU * (os.cpu_count() or 1)
    try:
        import resource  # noqa: PLC0415 (absent off POSIX, as caught below)

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft != resource.RLIM_INFINITY:
            most = min(most, max(1, (soft - 64) // 3))
    except (ImportError, OSError, ValueError):
        pass
    return most



def check_workers(workers) -> int | None:
    """``workers`` if a pool of that many may be started here, else a :class:`BPEError` naming the limit."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        why = f"must be at least 1, got {workers!r}"
        raise ArgumentError(f"workers {why} (or None for the default)",
                            f"--workers {why} (or omit it for the default: the CPU count, or the cores free as "
                            "the run starts)")
    limit = max_workers()
    if workers > limit:
        why = (f"{workers:,} is too many: at most {limit:,} here ({WORKERS_PER_CPU} per CPU on {os.cpu_count()} "
               "CPUs, within the open-file limit, ulimit -n); more workers than CPUs do not count faster")
        raise ArgumentError(f"workers {why}", f"--workers {why}")
    return workers
