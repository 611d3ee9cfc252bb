"""``bpe bench --busy N``: measure with N other processes each spinning on a core, as a student's
machine running something else would be.

A spinner is ``while True: pass`` in a child Python, so a reader reproduces the "one core busy" state
of a published figure with the same command that measured it.  Spinners ignore Ctrl-C (the bench
itself stops them), are killed when the block ends, and leave on their own if the bench dies
(they check that their parent is still the same process every few million steps).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from bpe.errors import BPEError

_SPIN = """
import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
parent = os.getppid()
while os.getppid() == parent:
    for _ in range(2_000_000):
        pass
"""


@contextmanager
def spin_on_cores(count: int) -> Iterator[list[int]]:
    """Run the block with ``count`` spinning processes; their pids."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise BPEError(f"--busy must be 0 or more processes, got {count!r}")
    spinners = []
    try:
        for _ in range(count):
            spinners.append(subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield [p.pid for p in spinners]
    finally:
        for process in spinners:
            process.kill()
        for process in spinners:
            process.wait()


def describe(count: int) -> str:
    """The state a bench ran in, for its header."""
    cores = os.cpu_count() or 1
    return "idle" if not count else f"{count} spinning process(es) on {cores} core(s)"
