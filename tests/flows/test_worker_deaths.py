"""A pool worker killed in any phase of a pooled rung: one clear error naming the phase and the worker,
at once, with no process left (none running, none unreaped) and no output half-written.

The pooled rungs (v3 onward) count in a process pool; v7 then keeps its shards in that pool's workers
until the last merge (forced here into shard processes on a small corpus, as ``tests/variants/test_v7.py``
does, and made to gather them after merge 5 for the gathering phase).  Each worker in turn is killed
from outside, as the OOM killer or ``kill`` would, with SIGKILL or SIGTERM: as the parent gives it a
task of the phase (counting a chunk, handing over its part, building its shard, sending its shard
home); while counting, also once the first chunk is counted (the others are being counted); while
merging, after merge 3 (the shard is then serving merges over its channel).  The parent must see
the death at once; a parent waiting for a pipe that another process still holds open would wait
forever, so a SIGALRM guard ends such a hang (failing the test).  Nothing asserts a duration.

One case per rung and phase runs in ``make test``; the other workers and signals are marked slow.
``bpe train --out`` killed the same way leaves the previous tokenizer in ``--out`` as it was.

A worker that runs out of memory (``MemoryError``; the parent gives it a task that raises one, or, while
merging, its shard raises one at merge 3) is said as the parent's own out-of-memory would be, with the
worker and the phase named.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from bpe import BPEError, train_bpe
from bpe.running import pool as pool_module
from bpe.running import workers as pool_worker
from bpe.running.progress import Progress
from bpe.training.observer import Observer
from bpe.variants import _v7_policy as shard_policy
from bpe.variants import _v7_shards as shards
from conftest import CORPUS_EN, HANG_GUARD_SECONDS, REPO_ROOT, child_env, cs336_merges, live_processes, pooled_variants

EOT = "<|endoftext|>"
SIGNALS = [signal.SIGKILL, signal.SIGTERM]
#: The phases a v7 worker lives through, with the workers alive in each (3 workers: worker 0's part goes
#: to the parent and it is retired while the shards are built; workers 1 and 2 hold shards).  v3-v6
#: only count in their pool (2 workers), and stop it before the merges.
V7_PHASES = {"counting": [0, 1, 2], "building shards": [0, 1, 2], "merging": [1, 2], "gathering shards": [1, 2]}
KILL_AT_MERGE, GATHER_AFTER = 3, 5


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


def children(*, zombies: bool) -> set[int]:
    """This process's children: running ones, or those that have exited and are not reaped (zombies)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and (fields[0] == "Z") == zombies:
                found.add(int(entry.name))
    return found


@pytest.fixture
def pools(monkeypatch):
    """Every WorkerPool made during the test, in order; v7's shard processes even for a few words.

    Afterwards no child of this process is left, running or unreaped (zombies from before are allowed).
    """
    made = []
    original = pool_module.WorkerPool.__init__

    def record(self, *args, **kwargs):
        original(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(pool_module.WorkerPool, "__init__", record)
    monkeypatch.setattr(shard_policy, "MIN_WORDS_PER_SHARD", 1)
    unreaped = children(zombies=True)
    yield made
    assert children(zombies=False) == set(), "a worker outlived the run"
    assert children(zombies=True) <= unreaped, "a worker was left unreaped (a zombie)"


def gather_after(monkeypatch, merges: int) -> None:
    """v7's default rule gathers the shards after merge ``merges`` (a wall time over -1x the CPU time is
    always a stall)."""
    monkeypatch.setattr(shard_policy, "STALL_RATIO", -1.0)
    monkeypatch.setattr(shard_policy, "STALL_WINDOW", merges)
    monkeypatch.setattr(shard_policy, "STALLED_WINDOWS", 1)


class KillWorker(Progress):
    """Kills worker ``worker`` of the last pool made with ``signum`` once, in ``phase``: as the parent
    submits it its first task of the phase; for ``merging``, after merge 3 (the shards are gathered after
    5); for ``mid-count``, once the first chunk is counted.

    Killed just before the task is sent, not after: a worker that had already sent its last answer of
    the run (worker 0 hands over its part, then retires) would have died with nothing lost, and no
    error is then the right outcome; killed before, every case must end in the phase's error."""

    def __init__(self, pools: list, phase: str, worker: int | None, signum: int, monkeypatch):
        self.pools, self.phase, self.worker, self.signum = pools, phase, worker, signum
        self.merges, self.killed_pid, self.alive_while_merging = 0, None, None
        submit = pool_module.WorkerPool.submit

        def kill_then_submit(pool, worker, fn, *args):
            if phase != "merging" and pool.doing == phase and worker == self.worker:
                self.kill(pool)
            submit(pool, worker, fn, *args)

        monkeypatch.setattr(pool_module.WorkerPool, "submit", kill_then_submit)

    def on_bytes(self, done: int) -> None:
        if self.phase == "mid-count":  # the first chunk is counted: the others are being counted now
            self.kill(self.pools[-1])

    def kill(self, pool) -> None:
        if self.killed_pid is None:
            self.killed_pid = pool._processes[self.worker].pid
            os.kill(self.killed_pid, self.signum)

    def on_merge(self) -> None:
        self.merges += 1
        if self.merges == KILL_AT_MERGE and self.phase == "merging":
            self.alive_while_merging = sorted(live_processes(parent=os.getpid()))
            if self.worker is not None:
                self.kill(self.pools[-1])


def expected_message(variant: str, phase: str, worker: int, workers: int, signum: int, pid: int) -> str:
    what = "shard" if variant == "v7" else "pre-tokenization"
    return (f"a {what} worker died (killed by {signum.name}) while {phase} {CORPUS_EN}; worker {worker} of {workers} "
            f"(pid {pid}) may have been killed or run out of memory (try fewer --workers)")


def cases():
    """(variant, phase, worker, signal), one per rung and phase in ``make test`` (the last worker, SIGKILL),
    the others slow."""
    for variant in pooled_variants():
        phases = V7_PHASES if variant == "v7" else {"counting": [0, 1]}
        for phase, workers in phases.items():
            for worker in workers:
                for signum in SIGNALS:
                    quick = worker == workers[-1] and signum == signal.SIGKILL
                    yield pytest.param(variant, phase, worker, signum, marks=() if quick else pytest.mark.slow,
                                       id=f"{variant}-{phase.replace(' ', '_')}-worker{worker}-{signum.name}")


@pytest.mark.parametrize("variant, phase, worker, signum", list(cases()))
def test_a_worker_killed_in_any_phase(pools, monkeypatch, variant, phase, worker, signum):
    workers = 3 if variant == "v7" else 2  # corpus.en is two chunks: v3-v6 would start two workers of three
    killer = KillWorker(pools, phase, worker, signum, monkeypatch)
    gather_after(monkeypatch, GATHER_AFTER)
    with hang_guard(), pytest.raises(BPEError) as raised:
        train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=workers, observer=Observer(progress=killer))
    assert killer.killed_pid is not None
    assert str(raised.value) == expected_message(variant, phase, worker, workers, signum, killer.killed_pid)


def mid_count_cases():
    """(variant, worker, signal): the second worker with SIGKILL in ``make test``, the others slow."""
    for variant in pooled_variants():
        for worker in (0, 1):
            for signum in SIGNALS:
                quick = worker == 1 and signum == signal.SIGKILL
                yield pytest.param(variant, worker, signum, marks=() if quick else pytest.mark.slow,
                                   id=f"{variant}-worker{worker}-{signum.name}")


@pytest.mark.parametrize("variant, worker, signum", list(mid_count_cases()))
def test_a_worker_killed_mid_count(pools, monkeypatch, variant, worker, signum):
    """Killed while the chunks are being counted (the first one is done), not between two tasks."""
    killer = KillWorker(pools, "mid-count", worker, signum, monkeypatch)
    with hang_guard(), pytest.raises(BPEError) as raised:
        train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=2, observer=Observer(progress=killer))
    assert killer.killed_pid is not None
    assert str(raised.value) == expected_message(variant, "counting", worker, 2, signum, killer.killed_pid)


def test_the_phases_are_seen_without_a_kill(pools, monkeypatch):
    """The hooks above reach every phase: unkilled, v7 gives each of them its tasks and gathers after merge 5."""
    seen = []
    submit = pool_module.WorkerPool.submit

    def submit_and_note(pool, worker, fn, *args):
        submit(pool, worker, fn, *args)
        seen.append((pool.doing, worker))

    monkeypatch.setattr(pool_module.WorkerPool, "submit", submit_and_note)
    gather_after(monkeypatch, GATHER_AFTER)
    observer = Observer()
    with hang_guard():
        _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant="v7", workers=3, observer=observer)
    assert merges == cs336_merges()
    assert observer.summary == {"shards": 3, "gathered_at": GATHER_AFTER}
    for phase, workers in V7_PHASES.items():
        assert {w for doing, w in seen if doing == phase} >= set(workers), phase


@pytest.mark.parametrize("variant", pooled_variants())
def test_while_merging_only_v7s_shard_workers_are_alive(pools, monkeypatch, variant):
    """No idle worker is left to die unseen while the merges run: v3-v6 have stopped their pool, v7
    has retired worker 0 (its part went to the parent) and keeps the shard workers, each watched."""
    watcher = KillWorker(pools, "merging", None, signal.SIGKILL, monkeypatch)
    with hang_guard():
        _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=3, observer=Observer(progress=watcher))
    assert merges == cs336_merges()
    shard_workers = sorted(p.pid for p in pools[-1]._processes[1:]) if variant == "v7" else []
    assert watcher.alive_while_merging == shard_workers


# --- a worker out of memory: the parent's out-of-memory line, naming the worker and the phase ---------

def run_out_of_memory(*args):
    """A worker's task in place of the phase's own: it runs out of memory."""
    raise MemoryError


def serve_merges_then_run_out():
    """v7's merge task, on a shard that runs out of memory at merge 3 (after serving two merges)."""
    shard = pool_worker.worker_state()["shard"]
    merges, merge = itertools.count(1), shard.merge

    def merge_or_run_out(*args):
        if next(merges) == KILL_AT_MERGE:
            raise MemoryError
        return merge(*args)

    shard.merge = merge_or_run_out
    shards._serve_merges()


class RunOutOfMemory:
    """Worker ``worker`` of the last pool runs out of memory in ``phase``: in the first task the parent gives
    it in the phase, or, while merging, at merge 3.  ``pid``: that worker's."""

    def __init__(self, phase: str, worker: int, monkeypatch):
        self.pid = None
        submit = pool_module.WorkerPool.submit

        def submit_one_that_runs_out(pool, w, fn, *args):
            if self.pid is None and pool.doing == phase and w == worker:
                self.pid = pool._processes[w].pid
                fn = serve_merges_then_run_out if phase == "merging" else run_out_of_memory
            submit(pool, w, fn, *args)

        monkeypatch.setattr(pool_module.WorkerPool, "submit", submit_one_that_runs_out)


def out_of_memory_message(variant: str, phase: str, worker: int, workers: int, pid: int) -> str:
    what = "shard" if variant == "v7" else "pre-tokenization"
    return (f"out of memory in a {what} worker while {phase} {CORPUS_EN} (worker {worker} of {workers}, pid {pid}); "
            "train on less (--limit 100MB), with fewer workers (--workers 1), with a smaller --vocab-size N, or with "
            "a variant that needs less (python -m bpe estimate shows each one's peak)")


def out_of_memory_cases():
    """(variant, phase, worker): every pooled rung while counting, v7 in each of its phases; the last worker
    alive in the phase."""
    for variant in pooled_variants():
        phases = V7_PHASES if variant == "v7" else {"counting": [0, 1]}
        for phase, workers in phases.items():
            yield pytest.param(variant, phase, workers[-1], id=f"{variant}-{phase.replace(' ', '_')}")


@pytest.mark.parametrize("variant, phase, worker", list(out_of_memory_cases()))
def test_a_worker_out_of_memory_in_any_phase(pools, monkeypatch, variant, phase, worker):
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)  # the hint in the command line's words
    workers = 3 if variant == "v7" else 2
    runs_out = RunOutOfMemory(phase, worker, monkeypatch)
    gather_after(monkeypatch, GATHER_AFTER)
    with hang_guard(), pytest.raises(BPEError) as raised:
        train_bpe(CORPUS_EN, 500, [EOT], variant=variant, workers=workers)
    assert runs_out.pid is not None
    assert str(raised.value) == out_of_memory_message(variant, phase, worker, workers, runs_out.pid)


RUNS_OUT = """
import itertools, sys
from bpe.cli import main
from bpe.running import pool, workers as pool_worker
from bpe.variants import _v7_policy as shard_policy, _v7_shards as shards

variant, phase, workers, data = sys.argv[1:5]
shard_policy.MIN_WORDS_PER_SHARD = 1  # shard processes even on this small corpus
shard_policy.STALL_RATIO = float("inf")  # and they stay until the end
submit = pool.WorkerPool.submit


def run_out_of_memory(*args):
    raise MemoryError


def serve_merges_then_run_out():  # the shard runs out of memory at its third merge
    shard, merges = pool_worker.worker_state()["shard"], itertools.count(1)
    merge = shard.merge

    def merge_or_run_out(*args):
        if next(merges) == 3:
            raise MemoryError
        return merge(*args)

    shard.merge = merge_or_run_out
    shards._serve_merges()


def submit_one_that_runs_out(self, w, fn, *args):
    if self.doing == phase and w == 1 and not getattr(pool, "ran_out", False):
        pool.ran_out = True
        fn = serve_merges_then_run_out if phase == "merging" else run_out_of_memory
    submit(self, w, fn, *args)


pool.WorkerPool.submit = submit_one_that_runs_out
sys.exit(main(["train", "--variant", variant, "--data", data, "--workers", workers, "--vocab-size", "500", "--quiet"]))
"""


def run_to_the_end(argv: list[str], env: dict) -> tuple[subprocess.Popen, str]:
    """``argv`` run in a session of its own until it exits, and its stderr (the timeout only guards
    against a hang; the whole session is killed if it comes)."""
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, err


@pytest.mark.parametrize("variant, phase", [("v6", "counting"), ("v7", "merging")])
def test_bpe_train_says_a_worker_ran_out_of_memory_in_one_line(tmp_path, variant, phase):
    script = tmp_path / "runs_out.py"
    script.write_text(RUNS_OUT)
    workers = 3 if variant == "v7" else 2
    env = {name: value for name, value in child_env().items() if name != "BPE_VIA_MAKE"}
    proc, err = run_to_the_end([sys.executable, str(script), variant, phase, str(workers), str(CORPUS_EN)], env)
    assert proc.returncode == 2, err
    what = "shard" if variant == "v7" else "pre-tokenization"
    assert err.startswith(f"bpe: error: out of memory in a {what} worker while {phase} {CORPUS_EN} (worker 1 of "
                          f"{workers}, pid "), err
    assert err.endswith("); train on less (--limit 100MB), with fewer workers (--workers 1), with a smaller "
                        "--vocab-size N, or with a variant that needs less (python -m bpe estimate shows each one's "
                        "peak)\n"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert live_processes(session=proc.pid) == []


# --- bpe train --out: the previous tokenizer stays whole ---------------------------------------------

CALLER = """
import os, sys
from bpe.cli import main
from bpe.running import pool, workers as pool_worker
from bpe.variants import _v7_policy as shard_policy

variant, phase, worker, workers, out, data = sys.argv[1:7]
worker = int(worker)
shard_policy.MIN_WORDS_PER_SHARD = 1  # shard processes even on this small corpus
shard_policy.STALL_RATIO, shard_policy.STALL_WINDOW, shard_policy.STALLED_WINDOWS = -1.0, 5, 1  # gather after merge 5
submit = pool.WorkerPool.submit


def kill_then_submit(self, w, fn, *args):  # as a kill from outside would, at a moment in the phase
    if self.doing == phase and w == worker and not os.environ.get("KILLED"):
        os.environ["KILLED"] = "1"
        os.kill(self._processes[w].pid, 9)
    submit(self, w, fn, *args)


pool.WorkerPool.submit = kill_then_submit
sys.exit(main(["train", "--variant", variant, "--data", data, "--workers", workers, "--vocab-size", "500",
               "--out", out, "--quiet"]))
"""


@pytest.mark.parametrize("variant, phase", [
    ("v7", "gathering shards"), ("v6", "counting"),
    pytest.param("v7", "counting", marks=pytest.mark.slow),
    pytest.param("v7", "building shards", marks=pytest.mark.slow),
    pytest.param("v3", "counting", marks=pytest.mark.slow),
])
def test_bpe_train_leaves_the_previous_output_whole(tmp_path, variant, phase):
    out = tmp_path / "tok"
    out.mkdir()
    before = {"vocab.json": "{}", "merges.txt": "#version: 0.2\n", "train.json": "{}"}
    for name, text in before.items():
        (out / name).write_text(text)
    script = tmp_path / "caller.py"
    script.write_text(CALLER)
    workers = 3 if variant == "v7" else 2
    proc, err = run_to_the_end([sys.executable, str(script), variant, phase, "1", str(workers), str(out),
                                str(CORPUS_EN)], child_env())
    assert proc.returncode == 2, err
    assert err.startswith(f"bpe: error: a {'shard' if variant == 'v7' else 'pre-tokenization'} worker died "
                          f"(killed by SIGKILL) while {phase} {CORPUS_EN}; worker 1 of {workers} (pid ")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert live_processes(session=proc.pid) == []
    assert {p.name: p.read_text() for p in out.iterdir()} == before  # the old tokenizer, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["caller.py", "tok"]  # no half-made one
