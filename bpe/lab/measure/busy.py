"""``bpe bench --busy N``: N processes keeping a core each busy while the bench measures, as on a machine
doing something else: spinning (a child Python in a busy loop), or, ``--busy N:bursty``,
spinning and sleeping in bursts, as a browser does (:data:`BURST_MS`).  They ignore Ctrl-C, are killed
when the block ends, and leave on their own if the bench dies.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from bpe.errors import BPEError

# A browser or a noisy VM does not hold a core: it takes it in bursts of a few milliseconds to a few
# tens, and sleeps between them.  With bursts, each burst spins and each pause sleeps for a time drawn
# between BURST_MS (seeded: the same load each run), about half of the core in all; without, it only spins.
BURST_MS = (2, 40)
_LOAD = """
import os, random, signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
parent, draw, bursts = os.getppid(), random.Random({seed}).uniform, {bursts}
while os.getppid() == parent:
    until = time.perf_counter() + (draw({low}, {high}) / 1000 if bursts else 0.1)
    while time.perf_counter() < until:
        pass
    if bursts:
        time.sleep(draw({low}, {high}) / 1000)
"""

#: The kinds of load ``--busy`` can make: a process spinning on a core, or one spinning in bursts.
LOADS = ("spin", "bursty")


def parse_busy(spec: str | int) -> tuple[int, str]:
    """``--busy``'s value: ``N`` processes spinning, or ``N:bursty`` processes spinning in bursts.

    >>> parse_busy("1"), parse_busy("2:bursty"), parse_busy(0)
    ((1, 'spin'), (2, 'bursty'), (0, 'spin'))
    """
    count, _, load = str(spec).partition(":")
    load = load or "spin"
    if not count.strip().isdigit() or load not in LOADS:
        raise BPEError(f"--busy takes N or N:bursty (N processes, each spinning on a core, or in bursts), got {spec!r}")
    return int(count), load


@contextmanager
def spin_on_cores(count: int, load: str = "spin") -> Iterator[list[int]]:
    """Run the block with ``count`` processes of ``load`` (the module's words); their pids."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise BPEError(f"--busy must be 0 or more processes, got {count!r}")
    if load not in LOADS:
        raise BPEError(f"--busy: the load is one of {', '.join(LOADS)}, got {load!r}")
    spinners = []
    try:
        for i in range(count):
            code = _LOAD.format(seed=i, low=BURST_MS[0], high=BURST_MS[1], bursts=load == "bursty")
            spinners.append(subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield [p.pid for p in spinners]
    finally:
        for process in spinners:
            process.kill()
        for process in spinners:
            process.wait()
