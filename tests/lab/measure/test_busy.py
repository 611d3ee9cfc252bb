"""``bench --busy N`` (bpe/lab/measure/busy.py): N processes keeping cores busy for the measurement's length,
spinning or in bursts, none left after (an error included), bad N named."""

import os
from pathlib import Path

import pytest

from bpe import BPEError
from bpe.lab.measure.busy import parse_busy, spin_on_cores
from conftest import live_processes, sleeping, wait_for


def test_spinners_run_for_the_block_and_are_gone_after():
    with spin_on_cores(2) as pids:
        assert len(pids) == 2 and set(pids) <= set(live_processes(parent=os.getpid()))
    assert live_processes(parent=os.getpid()) == []
    with spin_on_cores(0) as pids:
        assert pids == []


def test_spinners_are_gone_after_an_error_too():
    with pytest.raises(KeyboardInterrupt):
        with spin_on_cores(1):
            raise KeyboardInterrupt
    assert live_processes(parent=os.getpid()) == []


def test_bursty_spinners_take_part_of_a_core_and_are_gone_after():
    """Part of a core: it spins (its CPU time grows) and it sleeps (seen in ``time.sleep``), in turns."""
    with spin_on_cores(1, "bursty") as pids:
        before = _cpu_ticks(pids[0])
        wait_for(lambda: _cpu_ticks(pids[0]) > before + 2, "the bursty spinner never spun")
        wait_for(lambda: sleeping(pids[0]), "the bursty spinner never slept")
    assert live_processes(parent=os.getpid()) == []


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.mark.parametrize("spec, parsed", [("0", (0, "spin")), ("1", (1, "spin")), ("2:bursty", (2, "bursty"))])
def test_busy_takes_a_count_and_a_load(spec, parsed):
    assert parse_busy(spec) == parsed


@pytest.mark.parametrize("spec", ["-1", "x", "1:sleepy"])
def test_a_bad_busy_is_named(spec):
    with pytest.raises(BPEError, match="--busy takes N or N:bursty"):
        parse_busy(spec)


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_a_bad_count_is_named(count):
    with pytest.raises(BPEError, match="--busy must be 0 or more processes"):
        with spin_on_cores(count):
            pass
