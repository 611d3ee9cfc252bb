"""A pool worker killed in any phase of a pooled rung: one clear error naming the phase, and no process left.

The pooled rungs (v3 onward) count in a process pool; v7 then keeps its shards in that pool's workers
until the last merge (forced here into shard processes on a small corpus, as ``tests/variants/test_v7.py``
does).  Each worker in turn is killed from outside, as the OOM killer or ``kill`` would, with SIGKILL
or SIGTERM, at a moment the run reports to its progress: the first chunk counted, or merge 5.  The
parent must see the death at once; a parent waiting for a pipe that another process still holds open
would wait forever, so a SIGALRM guard ends such a hang (failing the test).  Nothing asserts a
duration.  v7's other phases (building and gathering the shards) are killed with the pool's fault
hook in ``tests/variants/test_v7.py``.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager

import pytest

from bpe import BPEError, train_bpe
from bpe.training import pool as pool_module
from bpe.training import shard_policy
from bpe.training.observer import Observer
from bpe.training.progress import Progress
from conftest import CORPUS_EN, HANG_GUARD_SECONDS, live_processes, pooled_variants, reference_merges

EOT = "<|endoftext|>"
SIGNALS = [signal.SIGKILL, signal.SIGTERM]


@contextmanager
def hang_guard(seconds: float = HANG_GUARD_SECONDS):
    """Fail the block if it has not ended within ``seconds``: a hang, not a slow run."""
    def hung(signum, frame):
        raise AssertionError(f"no answer within {seconds} s: the parent is waiting for a dead worker")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def pools(monkeypatch):
    """Every WorkerPool made during the test, in order; v7's shard processes even for a few words."""
    made = []
    original = pool_module.WorkerPool.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(pool_module.WorkerPool, "__init__", record)
    monkeypatch.setattr(shard_policy, "MIN_WORDS_PER_SHARD", 1)
    return made


class KillWorker(Progress):
    """Kills worker ``worker`` of the last pool made, with ``signum``: at the first chunk counted, or
    after merge ``at_merge``."""

    def __init__(self, pools: list, worker: int, signum: int, at_merge: int | None = None):
        self.pools, self.worker, self.signum, self.at_merge = pools, worker, signum, at_merge
        self.merges, self.killed, self.alive_while_merging = 0, False, None

    def kill(self) -> None:
        if not self.killed:
            self.killed = True
            os.kill(self.pools[-1]._processes[self.worker].pid, self.signum)

    def on_bytes(self, done: int) -> None:
        if self.at_merge is None:
            self.kill()

    def on_merge(self) -> None:
        self.merges += 1
        if self.merges == self.at_merge:
            self.alive_while_merging = sorted(live_processes(parent=os.getpid()))
            if self.worker is not None:
                self.kill()


def no_process_left() -> bool:
    return live_processes(parent=os.getpid()) == []


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("worker", [0, 1])
@pytest.mark.parametrize("variant", pooled_variants())
def test_a_worker_killed_while_counting(pools, variant, worker, signum):
    killer = KillWorker(pools, worker, signum)
    with hang_guard(), pytest.raises(BPEError) as raised:
        train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=2, observer=Observer(progress=killer))
    assert killer.killed
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"a {'shard' if variant == 'v7' else 'pre-tokenization'} worker died "
                              f"(killed by {signum.name}) while counting {CORPUS_EN}; "), message
    assert no_process_left()


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("worker", [1, 2])
def test_a_v7_shard_killed_while_merging(pools, worker, signum):
    # 3 workers: worker 0's part goes to the parent, workers 1 and 2 hold shards until the last merge
    killer = KillWorker(pools, worker, signum, at_merge=5)
    with hang_guard(), pytest.raises(BPEError) as raised:
        train_bpe(CORPUS_EN, 500, [EOT], variant="v7", workers=3, observer=Observer(progress=killer))
    assert killer.killed
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"a shard worker died (killed by {signum.name}) while merging {CORPUS_EN}; "), message
    assert no_process_left()


@pytest.mark.parametrize("variant", pooled_variants())
def test_while_merging_only_v7s_shard_workers_are_alive(pools, variant):
    """No idle worker is left to die unseen while the merges run: v3-v6 have stopped their pool, v7
    has retired worker 0 (its part went to the parent) and keeps the shard workers, each watched."""
    watcher = KillWorker(pools, None, signal.SIGKILL, at_merge=5)
    with hang_guard():
        _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=3, observer=Observer(progress=watcher))
    assert merges == reference_merges()
    shard_workers = sorted(p.pid for p in pools[-1]._processes[1:]) if variant == "v7" else []
    assert watcher.alive_while_merging == shard_workers
    assert no_process_left()
