"""The worker pool: tasks and per-worker state; a failed task, a killed worker (before a task or half-way
through its answer), a worker out of memory and Ctrl-C (once, or three times in a few ms) each end in one
clear result and leave no process behind.

The bad moments are made to happen on purpose (the pool's test-only fault hooks); the subprocess
timeouts below only guard against a hang, nothing asserts a duration.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap

import pytest

from bpe import BPEError
from bpe.running.pool import WorkerPool
from bpe.running.workers import CHANNEL_KEY, KILL_MID_ANSWER_ENV, KILL_ON_TASK_ENV, STALL_MID_ANSWER_ENV, worker_state
from conftest import HANG_GUARD_SECONDS, a_worker_stalled, child_env, interrupt, live_processes, workers_running


def add_to_state(x):
    state = worker_state()
    state["total"] = state.get("total", 0) + x
    return state["total"], os.getpid()


def fail(kind):
    if kind == "bpe":
        raise BPEError("input.txt: invalid UTF-8 at byte offset 7 (byte 0xff)")
    raise ValueError("no good")


def big_answer(n):
    return b"x" * n


def echo(x):
    return x


def test_tasks_and_worker_state():
    with WorkerPool(3) as pool:
        assert pool.size == 3
        first = pool.broadcast(add_to_state, 1)
        pids = [pid for _, pid in first]
        assert [total for total, _ in first] == [1, 1, 1] and len(set(pids)) == 3 and os.getpid() not in pids
        # state survives between tasks, and is each worker's own
        assert pool.run_all(add_to_state, [(10,), (20,), (30,)]) == [(11, pids[0]), (21, pids[1]), (31, pids[2])]
        pool.submit(1, add_to_state, 5)
        assert pool.result(1) == (26, pids[1])
        results = dict(pool.imap_unordered(echo, [(i,) for i in range(50)]))
        assert results == {i: i for i in range(50)}
        # big payloads both ways, several in flight at once
        blob = bytes(range(256)) * 20_000
        assert pool.broadcast(echo, blob) == [blob] * 3
        assert [len(x) for x in pool.run_all(big_answer, [(3 << 20,), (1,), (2 << 20,)])] == [3 << 20, 1, 2 << 20]
    assert live_processes(parent=os.getpid()) == []
    assert worker_state() == {}  # the parent's own is untouched by the workers


def test_result_of_another_worker_first():
    with WorkerPool(2) as pool:
        pool.submit(0, big_answer, 1 << 20)
        pool.submit(1, echo, "quick")
        assert pool.result(1) == "quick"
        assert len(pool.result(0)) == 1 << 20


@pytest.mark.parametrize("kind, message", [
    ("value", r"^a pre-tokenization worker failed while counting data.txt: ValueError: no good$"),
    ("bpe", r"^input.txt: invalid UTF-8 at byte offset 7 \(byte 0xff\)$"),
])
def test_failed_task_is_one_bpe_error_and_no_process_left(kind, message):
    with pytest.raises(BPEError, match=message):
        with WorkerPool(2, source="data.txt") as pool:
            list(pool.imap_unordered(fail, [(kind,)] * 5))
    assert live_processes(parent=os.getpid()) == []


def run_out_of_memory(*args):
    raise MemoryError


class TooBigToReceive:
    """A task argument the worker runs out of memory unpickling, before the task can start."""

    def __reduce__(self):
        return run_out_of_memory, ()


@pytest.mark.parametrize("where", ["task", "receiving"])
def test_a_worker_out_of_memory_is_the_out_of_memory_line(monkeypatch, where):
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    task, args = (run_out_of_memory, ()) if where == "task" else (echo, (TooBigToReceive(),))
    with pytest.raises(BPEError) as raised:
        with WorkerPool(2, source="f.txt") as pool:
            pids = [process.pid for process in pool._processes]
            pool.submit(0, echo, 1)
            pool.submit(1, task, *args)
            pool.result(1)
    assert str(raised.value) == (
        f"out of memory in a pre-tokenization worker while counting f.txt (worker 1 of 2, pid {pids[1]}); train on "
        "less (--limit 100MB), with fewer workers (--workers 1), with a smaller --vocab-size N, or with a variant "
        "that needs less (python -m bpe estimate shows each one's peak)")
    assert live_processes(parent=os.getpid()) == []


def test_a_pool_gives_its_own_advice_for_memory():
    with pytest.raises(BPEError, match=r"^out of memory in a tokenizer worker while encoding f.txt \(worker 0 of 1, "
                                       r"pid \d+\); try fewer --workers$"):
        with WorkerPool(1, what="tokenizer", doing="encoding", source="f.txt",
                        memory_advice="try fewer --workers") as pool:
            pool.broadcast(run_out_of_memory)


def test_bad_worker_count():
    with pytest.raises(BPEError, match="workers must be at least 1, got 0"):
        WorkerPool(0)


@pytest.mark.parametrize("hook, task", [(KILL_ON_TASK_ENV, 0), (KILL_ON_TASK_ENV, 3), (KILL_MID_ANSWER_ENV, 0),
                                        (KILL_MID_ANSWER_ENV, 5)])
def test_killed_worker_is_one_clear_error_and_no_process_left(monkeypatch, hook, task):
    monkeypatch.setenv(hook, str(task))
    with pytest.raises(BPEError, match=r"^a pre-tokenization worker died \(killed by SIGKILL\) while counting "
                                       r"f.txt; worker [01] of 2 \(pid \d+\) may have been killed or run out of memory "
                                       r"\(try fewer --workers\)$"):
        with WorkerPool(2, source="f.txt") as pool:
            list(pool.imap_unordered(big_answer, [(1 << 20,)] * 8))
    assert live_processes(parent=os.getpid()) == []


def echo_over_channel():
    conn = worker_state()[CHANNEL_KEY]
    conn.send(conn.recv())


@pytest.mark.parametrize("worker", [0, 1, 2])
def test_a_channel_is_held_by_its_worker_alone(worker):
    with WorkerPool(3, channels=True) as pool:
        pool.submit(worker, echo_over_channel)
        pool.channels[worker].send("hello")
        assert pool.channels[worker].recv() == "hello" and pool.result(worker) is None
        # killed, the worker closes the channel's only other end: EOF at once, whichever workers forked around it
        os.kill(pool._processes[worker].pid, signal.SIGKILL)
        assert pool.channels[worker].poll(HANG_GUARD_SECONDS)  # the timeout only guards against a hang
        with pytest.raises(EOFError):
            pool.channels[worker].recv()
        pool.doing = "merging"  # the owner names its phase in the pool's error
        with pytest.raises(BPEError, match=r"^a pre-tokenization worker died \(killed by SIGKILL\) while merging; "):
            pool.submit(worker, echo, 1)
            pool.result(worker)
    assert live_processes(parent=os.getpid()) == []


def test_a_retired_worker_is_gone_and_the_others_go_on():
    with WorkerPool(3) as pool:
        pids = [pid for _, pid in pool.broadcast(add_to_state, 1)]
        pool.retire(0)
        assert sorted(live_processes(parent=os.getpid())) == sorted(pids[1:])
        pool.submit(1, add_to_state, 2)
        assert pool.result(1) == (3, pids[1])
        with pytest.raises(RuntimeError, match="worker 0 was retired"):
            pool.submit(0, echo, 1)
    assert live_processes(parent=os.getpid()) == []


def test_hooks_stay_silent_for_tasks_that_do_not_exist(monkeypatch):
    monkeypatch.setenv(KILL_ON_TASK_ENV, "999")
    monkeypatch.setenv(KILL_MID_ANSWER_ENV, "999")
    with WorkerPool(2) as pool:
        assert sorted(i for i, _ in pool.imap_unordered(echo, [(0,)] * 10)) == list(range(10))


# --- Ctrl-C, in a real process ---------------------------------------------------------------------

#: A caller of the library: Ctrl-C reaches it as KeyboardInterrupt, which it reports.  Like the CLI it
#: ignores further Ctrl-Cs once the first has been raised.
CALLER = textwrap.dedent("""
    import signal, sys
    from bpe.running.pool import WorkerPool

    def interrupt_once(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    def big_answer(n):
        return b"x" * n

    signal.signal(signal.SIGINT, interrupt_once)
    try:
        with WorkerPool(2) as pool:
            print("ready", flush=True)
            for _ in pool.imap_unordered(big_answer, [(8 << 20,)] * 100000):
                pass
    except KeyboardInterrupt:
        print("caller saw KeyboardInterrupt", file=sys.stderr)
        sys.exit(130)
""")


@pytest.mark.parametrize("times", [1, 3])
@pytest.mark.parametrize("hook", [None, STALL_MID_ANSWER_ENV])
def test_ctrl_c_reaches_the_caller_and_leaves_no_process(tmp_path, times, hook):
    script = tmp_path / "caller.py"
    script.write_text(CALLER)
    env = child_env(**({hook: "1"} if hook else {}))  # task 1: the parent blocks reading half an answer
    proc, out, err = interrupt([sys.executable, str(script)], times=times, env=env,
                               ready=a_worker_stalled if hook else workers_running)
    assert proc.returncode == 130, err
    assert err == "caller saw KeyboardInterrupt\n"
    assert live_processes(session=proc.pid) == []
