"""`bench --busy N`: N spinning processes for the measurement's length, none left after, bad N named."""

import os

import pytest

from bpe import BPEError
from bpe.lab.busy import spin_on_cores
from conftest import live_processes


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


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_a_bad_count_is_named(count):
    with pytest.raises(BPEError, match="--busy must be 0 or more processes"):
        with spin_on_cores(count):
            pass
