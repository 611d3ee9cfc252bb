"""The worker count chosen from what the cores are doing: sampling, fallbacks, and the explicit count winning."""

import math
import sys
import time
from collections import Counter

import pytest

import bpe.counting.parallel as parallel
from bpe.counting.plain import count_file_serial
from bpe.running import cores
from bpe.running.cores import _read_proc_stat, choose_workers, measure_busy_cores
from conftest import DEFAULT_CORPUS

EOT = ["<|endoftext|>"]


def _samples(*pairs):
    values = iter(pairs)
    return lambda: next(values)


def test_busy_cores_from_two_samples():
    slept = []
    # 2 cores, 100 jiffies in the window: 95 busy is one core spinning and most of the other
    assert measure_busy_cores(read_stat=_samples((0, 0), (95, 100)), sleep=slept.append,
                              cpu_count=2) == pytest.approx(1.9)
    assert slept == [0.05]
    assert measure_busy_cores(read_stat=_samples((10, 10), (10, 110)), sleep=slept.append, cpu_count=4) == 0


def test_busy_cores_falls_back_to_the_load_average_then_to_nothing():
    no_stat = lambda: None  # noqa: E731 - not Linux
    assert measure_busy_cores(read_stat=no_stat, cpu_count=2, loadavg=lambda: (1.2, 0.5, 0.1)) == 1.2
    assert measure_busy_cores(read_stat=no_stat, cpu_count=2, loadavg=lambda: (9.0, 0.5, 0.1)) == 2.0  # capped
    assert measure_busy_cores(read_stat=no_stat, cpu_count=2, loadavg=None) is None
    # a counter that did not move (a frozen /proc) is no sample either
    assert measure_busy_cores(read_stat=_samples((5, 50), (5, 50)), sleep=lambda s: None, cpu_count=2,
                              loadavg=None) is None


def test_choose_workers():
    never = lambda: pytest.fail("sampled although a count was given")  # noqa: E731
    assert choose_workers(2, cpu_count=2, busy=never) == 2  # the explicit count always wins
    assert choose_workers(7, cpu_count=2, busy=never) == 7
    assert choose_workers(None, cpu_count=1, busy=never) == 1
    assert choose_workers(None, cpu_count=2, busy=lambda: 0.03) == 2
    assert choose_workers(None, cpu_count=2, busy=lambda: 1.0) == 1
    assert choose_workers(None, cpu_count=2, busy=lambda: 2.0) == 1  # never fewer than one
    assert choose_workers(None, cpu_count=8, busy=lambda: 2.8) == 5  # the third core is three quarters used
    assert choose_workers(None, cpu_count=8, busy=lambda: 2.6) == 6  # a worker still gains there
    assert choose_workers(None, cpu_count=8, busy=lambda: None) == 8


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_proc_stat_is_read():
    busy, total = _read_proc_stat()
    assert 0 <= busy <= total


def test_default_worker_count_follows_the_free_cores(monkeypatch):
    # Every core busy: the file is counted in this process, with the same counts, and no pool starts.
    monkeypatch.setattr(cores.os, "cpu_count", lambda: 2)  # cores.workers_for: the one rule the counters share
    monkeypatch.setattr(cores, "choose_workers", lambda requested: 1)
    monkeypatch.setattr(parallel, "WorkerPool", lambda *a, **k: pytest.fail("started a pool on busy cores"))
    counts = parallel.count_file_parallel(DEFAULT_CORPUS, EOT)
    assert counts == count_file_serial(DEFAULT_CORPUS, EOT) and isinstance(counts, Counter)


def test_an_explicit_worker_count_is_never_second_guessed(monkeypatch):
    monkeypatch.setattr(cores, "choose_workers", lambda requested: pytest.fail("sampled the cores"))
    assert parallel.count_file_parallel(DEFAULT_CORPUS, EOT, workers=2) == count_file_serial(DEFAULT_CORPUS, EOT)


def test_a_second_look_soon_after_reuses_the_first(monkeypatch):
    looks = []
    monkeypatch.setattr(cores, "_last_look", [-math.inf, None])
    monkeypatch.setattr(cores, "measure_busy_cores", lambda: looks.append(1) or 0.9)
    assert cores.busy_cores_now() == cores.busy_cores_now() == 0.9
    assert len(looks) == 1  # v7 asks twice in one run: one sample of SAMPLE_SECONDS, not two
    monkeypatch.setattr(cores, "_last_look", [time.monotonic() - cores.REUSE_SECONDS, 0.9])
    assert cores.busy_cores_now() == 0.9 and len(looks) == 2  # an old look is taken again
