"""v7 (words sharded across worker processes) gives exactly v1's merges, and leaves no process behind.

The CS336, equivalence and ladder tests run v7 like every variant, but on corpora too small for
a shard process (``MIN_WORDS_PER_SHARD``): there v7 keeps one shard in the parent.  These tests force
the shard processes (and uneven shard counts) and check what the split adds: the deltas, the merge
channels, the clean-up when training ends, fails or a shard dies.
"""

import itertools
import os
import random
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import VARIANTS, BPEError, train_bpe
from bpe.counting.plain import count_file_serial
from bpe.lab.rung_states import shards_state as v7_state
from bpe.lab.rung_states import str_words_state as v6_state
from bpe.running.timer import NullTimer
from bpe.running.workers import KILL_ON_TASK_ENV
from bpe.training.merge_loop import run_merges
from bpe.training.observer import Observer
from bpe.variants import _v7_policy as shard_policy
from bpe.variants import _v7_shards as shards
from bpe.variants import v7_sharded
from bpe.variants._v7_policy import GatherWhenStalled, StallWatch
from bpe.variants.v6_tuned import count_pairs, pairs_of
from bpe.variants.v7_sharded import Merger, Shard, ShardedCounts, split_counts
from conftest import (
    CORPUS_EN,
    OVERLAPS,
    REPEATS,
    TIES,
    cs336_merges,
    interrupt,
    live_processes,
    v1_merges_and_words,
    without_bars,
)


@pytest.fixture
def shard_processes(monkeypatch):
    """Shard processes even for a handful of words."""
    monkeypatch.setattr(shard_policy, "MIN_WORDS_PER_SHARD", 1)


def no_process_left():
    return live_processes(parent=os.getpid()) == []


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_cs336_merges_with_shard_processes(shard_processes, workers):
    observer = Observer()
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant="v7", workers=workers, observer=observer)
    assert merges == cs336_merges()
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    assert (observer.corpus.distinct_pretokens, observer.corpus.pretokens) == (len(counts), counts.total())
    assert "gathered_at" in observer.summary  # the merge its shards came back to this process at, or None
    assert no_process_left()


@pytest.mark.parametrize("counts", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
@pytest.mark.parametrize("workers", [2, 3])
def test_a_plain_counter_is_sharded_by_the_merger(shard_processes, counts, workers):
    expected, _ = v1_merges_and_words(counts, 40)
    merger = Merger(counts, workers=workers)
    # one shard process fewer than shards: the parent holds one
    assert merger.shard_processes is not None and merger.shard_processes.pool.size == min(workers, len(counts)) - 1
    assert run_merges(merger, 40, NullTimer()) == expected
    assert no_process_left()


def test_too_few_words_for_a_shard_process_is_v6_in_this_process():
    merger = Merger(Counter({b"low": 5, b"lower": 2}), workers=4)
    assert merger.shard_processes is None and merger.words == ["low", "lower"]  # v6's own state
    assert run_merges(merger, 3, NullTimer()) == [(b"o", b"w"), (b"l", b"ow"), (b"low", b"e")]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.dictionaries(st.text(alphabet="abc é", min_size=1, max_size=9).map(str.encode),
                             st.integers(1, 5), min_size=1, max_size=25),
       workers=st.integers(2, 3))
def test_sharded_merges_match_v1(shard_processes, words, workers):
    expected, _ = v1_merges_and_words(words, 30)
    assert run_merges(Merger(words, workers=workers), 30, NullTimer()) == expected


@settings(max_examples=200, deadline=None)
@given(words=st.dictionaries(st.text(alphabet="abcA", min_size=2, max_size=10).map(str.encode),
                             st.integers(1, 5), min_size=1, max_size=20))
def test_a_shards_deltas_are_the_change_in_its_pair_counts(words):
    shard = Shard(words)
    before = dict(shard.initial_pair_counts)
    the_pair = max(before, key=before.get)
    lost, gained = shard.merge(the_pair, "\u0100", "")
    after = Counter()
    for word, count in zip(shard.words, shard.word_counts):
        for pair in pairs_of(word):
            after[pair] += count
    expected = Counter(before)
    del expected[the_pair]
    for pair, count in lost:
        expected[pair] -= count
    expected.update(gained)
    assert +expected == after
    assert all("\u0100" in pair for pair in gained) and all("\u0100" not in pair for pair, _ in lost)
    # the index lists every word holding each pair (perhaps some that no longer do, never one missing)
    for pair in after:
        assert {i for i, word in enumerate(shard.words) if pair in word} <= set(shard.pair_to_words[pair])


def test_split_is_stable_and_disjoint():
    counts = {b"a": 1, b"bb": 2, b" ccc": 3, "é".encode(): 4}
    parts = split_counts(counts, 3)
    assert parts == split_counts(counts, 3) and sum(len(p) for p in parts) == len(counts)
    assert {k: v for part in parts for k, v in part.items()} == counts
    assert count_pairs(["ab"], [1]) == ({"ab": 1}, {"ab": [0]})


def test_the_trace_state_gathers_every_shard(shard_processes):
    merger = Merger({b"low": 5, b"lower": 2, b"newest": 6, b"widest": 3}, workers=2)
    try:
        merger.merge(merger.select_best_pair())
        state = v7_state(merger)  # bpe trace's view of v7
        assert sorted(state["words"]) == sorted([((b"l", b"o", b"w"), 5), ((b"l", b"o", b"w", b"e", b"r"), 2),
                                                 ((b"n", b"e", b"w", b"e", b"st"), 6),
                                                 ((b"w", b"i", b"d", b"e", b"st"), 3)])
        assert state["pair_to_words"][(b"e", b"st")] and state["pair_counts"][(b"e", b"st")] == 9
        assert merger.select_best_pair() == (b"e", b"st")
        merger.merge((b"e", b"st"))  # merging goes on after the pool answered a task
        assert (merger.pair_counts["w\u0101"], merger.pair_counts["d\u0101"]) == (6, 3)  # (w, est), (d, est)
    finally:
        merger.close()
    assert no_process_left()


def test_a_failing_merge_stops_every_shard(shard_processes, monkeypatch):
    merger = Merger(count_file_serial(CORPUS_EN, ["<|endoftext|>"]), workers=2)
    calls = []

    def select_then_fail():
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(1)
        return Merger.select_best_pair(merger)

    monkeypatch.setattr(merger, "select_best_pair", select_then_fail)
    with pytest.raises(KeyboardInterrupt):
        run_merges(merger, 100, NullTimer())  # run_merges closes the merger in every case
    assert no_process_left()


def test_a_shard_killed_while_counting_is_one_clear_error_and_no_process_left(shard_processes, monkeypatch):
    monkeypatch.setenv(KILL_ON_TASK_ENV, "1")
    with pytest.raises(BPEError, match=r"^a shard worker died \(killed by SIGKILL\) while counting \S*corpus\.en; "):
        train_bpe(CORPUS_EN, 400, ["<|endoftext|>"], variant="v7", workers=2)
    assert no_process_left()


@pytest.mark.parametrize("task, phase", [(0, "building shards"), (1, "merging")])
def test_a_killed_shard_is_one_clear_error_and_no_process_left(shard_processes, monkeypatch, task, phase):
    # Pool tasks of Merger(counter, workers=2), one shard process beside the parent's: build (0), serve merges (1).
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    monkeypatch.setenv(KILL_ON_TASK_ENV, str(task))
    with pytest.raises(BPEError, match=rf"^a shard worker died \(killed by SIGKILL\) while {phase}; "):
        run_merges(Merger(counts, workers=2), 100, NullTimer())
    assert no_process_left()


def test_counts_left_in_workers_are_released_if_the_merger_is_never_built(shard_processes):
    counts = v7_sharded.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2)
    assert isinstance(counts, ShardedCounts) and counts.pool is not None
    counts.close()
    assert no_process_left()


# The bpe command itself (cli.run), with v7 tuned to keep its shards: run(), not main(), since a third
# Ctrl-C may land after main has returned and given the caller its signals back, where only the command's
# own exit keeps it from a traceback (a script calling main() handles its own late Ctrl-C).
CTRL_C_CALLER = """
import sys
from bpe.variants import _v7_policy as shard_policy
from bpe.cli import run
shard_policy.MIN_WORDS_PER_SHARD = 1  # shard processes even on this small corpus
shard_policy.STALL_RATIO = float("inf")  # and they stay until the end (see GatherWhenStalled)
sys.argv = ["bpe", "train", "--variant", "v7", "--data", sys.argv[1], "--workers", "2", "--vocab-size", "60000",
            "--force", "--progress"]
run()
"""


@pytest.mark.parametrize("times", [1, 3])
def test_ctrl_c_while_the_shards_merge_leaves_no_process(tmp_path, times):
    """The pool's Ctrl-C guarantee holds for v7's long-lived shards: once or three times, mid-merge."""
    rng = random.Random(0)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(20_000)]
    corpus = tmp_path / "words.txt"
    corpus.write_text("".join(" ".join(rng.choices(words, k=300)) + ".\n<|endoftext|>" for _ in range(1_500)))
    script = tmp_path / "caller.py"
    script.write_text(CTRL_C_CALLER)
    # the merge loop's progress bar ("merging") shows the shards are built and serving merges
    proc, out, err = interrupt([sys.executable, str(script), str(corpus)], times=times, stderr_shows="merging")
    assert proc.returncode == 130, err
    assert without_bars(err) == "bpe: interrupted\n", err
    assert live_processes(session=proc.pid) == []


# --- gathering the shards into this process (the fallback when round trips stall) ------------------


def fake_clock(per_merge: float):
    """A clock for the merger that advances ``per_merge`` seconds between the two reads of each merge."""
    steps = itertools.cycle([0.0, per_merge])
    now = [0.0]

    def clock():
        now[0] += next(steps)
        return now[0]

    return clock


@pytest.mark.parametrize("at", [1, 7, 60])
def test_a_gather_forced_at_merge_k_gives_v6s_merges(shard_processes, at):
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    merger = Merger(counts, workers=3, gather_when=lambda k, worked, waited: k == at)
    merges = run_merges(merger, 243, NullTimer())
    assert merger.gathered_at == at and merger.shard_processes is None
    assert merger.summary() == {"shards": 3, "gathered_at": at}  # what the run hands its observer
    assert merges == run_merges(VARIANTS["v6"].Merger(counts), 243, NullTimer()) == cs336_merges()[:243]
    assert no_process_left()


@pytest.mark.parametrize("counts", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
@pytest.mark.parametrize("at", [1, 2, 5])
def test_a_gathered_merger_is_v6s_state(shard_processes, counts, at):
    expected, words_after = v1_merges_and_words(counts, 40)
    merger = Merger(counts, workers=3, gather_when=lambda k, worked, waited: k == at)
    assert run_merges(merger, 40, NullTimer()) == expected
    v6 = VARIANTS["v6"].Merger(counts)
    run_merges(v6, 40, NullTimer())
    # the same words (in another order: shard by shard) and the same live index and counts
    assert sorted(zip(merger.words, merger.word_counts)) == sorted(zip(v6.words, v6.word_counts))
    assert merger.pair_counts == v6.pair_counts
    assert v7_state(merger)["pair_counts"] == v6_state(v6)["pair_counts"]


def test_the_default_rule_gathers_when_the_wall_time_outgrows_the_work(shard_processes):
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    # wall time per merge against the parent's CPU time (the shard's own, real, is a few microseconds)
    stalled = Merger(counts, workers=2, gather_when=StallWatch(GatherWhenStalled(window=4), clock=fake_clock(10.0),
                                                               cpu_clock=fake_clock(1.0)))
    busy = Merger(counts, workers=2, gather_when=StallWatch(GatherWhenStalled(window=4), clock=fake_clock(1.0),
                                                            cpu_clock=fake_clock(2.0)))
    assert run_merges(stalled, 100, NullTimer()) == run_merges(busy, 100, NullTimer()) == cs336_merges()[:100]
    assert stalled.gathered_at == 8 and busy.gathered_at is None  # two stalled windows of 4
    assert busy.summary() == {"shards": 2, "gathered_at": None}
    assert no_process_left()


@pytest.mark.parametrize("free, shards", [(1, 1), (2, 1), (3, 2), (4, 3)])
def test_with_no_worker_count_v7_leaves_a_core_spare(shard_processes, monkeypatch, free, shards):
    # The default rule (shard_policy.merge_processes): the free cores less SPARE_CORES.  On 2 free
    # cores that is one process: v6's merges in this process, counted as v6 counts them.
    monkeypatch.setattr(shard_policy, "choose_workers", lambda requested: free)
    observer = Observer()
    _, merges = train_bpe(CORPUS_EN, 400, ["<|endoftext|>"], variant="v7", observer=observer)
    assert merges == cs336_merges()[:400 - 257]
    assert observer.summary["shards"] == shards
    assert no_process_left()


def test_a_worker_count_given_is_used_as_given(shard_processes, monkeypatch):
    monkeypatch.setattr(shard_policy, "choose_workers", lambda requested: pytest.fail("the cores were sampled"))
    merger = Merger(count_file_serial(CORPUS_EN, ["<|endoftext|>"]), workers=2)
    try:
        assert merger.summary()["shards"] == 2
    finally:
        merger.close()


def test_gather_before_any_merge(shard_processes):
    merger = Merger(OVERLAPS, workers=2)
    merger.gather()
    assert merger.shard_processes is None and no_process_left()
    assert run_merges(merger, 40, NullTimer()) == v1_merges_and_words(OVERLAPS, 40)[0]


def test_without_fork_there_are_no_shard_processes(shard_processes, monkeypatch):
    """The merge channels are inherited through fork; without it v7 is v6, in this process."""
    monkeypatch.setattr(shards, "can_fork", lambda: False)
    merger = Merger(REPEATS, workers=2)
    assert merger.shard_processes is None and no_process_left()
    assert run_merges(merger, 40, NullTimer()) == v1_merges_and_words(REPEATS, 40)[0]
    counts = v7_sharded.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2)
    assert counts.pool is None and len(counts) == len(count_file_serial(CORPUS_EN, ["<|endoftext|>"]))


def test_a_shard_killed_while_gathering_is_one_clear_error_and_no_process_left(shard_processes, monkeypatch):
    # Pool tasks of Merger(counter, workers=2): build (0), serve merges (1), send the state back (2).
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    monkeypatch.setenv(KILL_ON_TASK_ENV, "2")
    merger = Merger(counts, workers=2, gather_when=lambda k, wall, cpu: k == 3)
    with pytest.raises(BPEError, match=r"^a shard worker died \(killed by SIGKILL\) while gathering shards; "):
        run_merges(merger, 100, NullTimer())
    assert no_process_left()
