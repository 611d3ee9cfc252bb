"""v10, the merge on threads and compact: exactly v9's merges however many threads rewrite the words, and
however the records hold them; the threads stopped and joined on an interrupt, an error and close; the
memory it says it holds counted exactly.  The ladder-wide tests (equivalence, the CS336 merges, the
rung contract) run it too.

The parallel path runs on small inputs through a test-only knob (``_set_parallel_words_for_tests``), and
the tests count the threads that took part from the state's own counters, never from a clock.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import VARIANTS, BPEError, train_bpe
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.registry import get_variant
from bpe.variants import v1_naive, v9_counting_compiled
from bpe.variants import v10_threads_compact as v10
from conftest import CORPUS_EN, DEFAULT_CORPUS, HANG_GUARD_SECONDS, OVERLAPS, REPEATS, TIES, cs336_merges, wait_for

pytestmark = pytest.mark.skipif(v10.UNAVAILABLE is not None, reason=str(v10.UNAVAILABLE))


def merges_of(merger, num_merges=10_000):
    try:
        return run_merges(merger, num_merges, NullTimer())
    finally:
        getattr(merger, "close", lambda: None)()


def v10_merger(counts, threads, *, parallel_words=0, block_words=1, own_first_block=True):
    """v10's merger with every merge of more than ``block_words`` words shared by ``threads`` threads (each
    taking its own first block, so that each takes part: ``own_first_block``)."""
    merger = v10.Merger(dict(counts), threads=threads)
    merger._set_parallel_words_for_tests(parallel_words, block_words, own_first_block)
    return merger


def merge_threads_alive() -> int:
    """v10's worker threads in this process, by the name they give themselves, from /proc (Linux): they are
    C threads, which Python's ``threading`` does not list."""
    count = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            count += (task / "comm").read_text().strip() == "bpe-v10-merge"
        except OSError:  # the thread ended as it was read
            pass
    return count


def no_merge_thread_left() -> None:
    """Wait until no worker thread is listed: a joined thread may stay listed in /proc for a moment after
    ``pthread_join`` returns (the kernel wakes the joiner before it lets the thread go)."""
    wait_for(lambda: merge_threads_alive() == 0, "a merge thread is still listed")


# --- the merges: v1's, v9's -----------------------------------------------------------------------------------

def test_cs336_merges():
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant="v10")
    assert merges == cs336_merges()


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("counts", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
def test_small_corpora_to_the_last_merge_on_threads(counts, threads):
    assert merges_of(v10_merger(counts, threads)) == merges_of(v1_naive.Merger(counts))


@pytest.fixture(scope="module")
def sample_counts():
    """The shipped corpus's pre-token counts, once, as v9 counts them (its arrays)."""
    counts = v9_counting_compiled.count_pretokens(DEFAULT_CORPUS, ["<|endoftext|>"], workers=1)
    return dict(counts)


@pytest.fixture(scope="module")
def sample_merges(sample_counts):
    return merges_of(v9_counting_compiled.Merger(sample_counts), 3000)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_gutenberg_sample_as_v9_merges_it(sample_counts, sample_merges, threads):
    # Merges of 64 words or more shared, in blocks of 16: most of the early merges run on every thread.
    merger = v10_merger(sample_counts, threads, parallel_words=64, block_words=16)
    assert merges_of(merger, 3000) == sample_merges
    summary = merger.summary()
    assert summary["merge_threads"] == threads
    if threads == 1:
        assert summary["parallel_merges"] == 0 and summary["most_threads_in_a_merge"] == 1
    else:
        assert summary["parallel_merges"] > 100
        assert summary["most_threads_in_a_merge"] == threads  # each thread takes its own first block
    assert summary["word_visits"] > 0 and summary["merge_memory_bytes"] > 0


@pytest.mark.parametrize("threads", [2, 3])
def test_blocks_taken_by_whichever_thread_is_free_give_the_same_merges(sample_counts, sample_merges, threads):
    # A real run's scheduling: no block is any thread's own, so how many threads take part in a merge is the
    # scheduler's affair, and so is how many merges are shared (after one that a busy machine made slow, the
    # next ones are not); the merges are v9's whatever it did.
    merger = v10_merger(sample_counts, threads, parallel_words=64, block_words=16, own_first_block=False)
    assert merges_of(merger, 3000) == sample_merges
    summary = merger.summary()
    assert summary["parallel_merges"] >= 1  # the first that can be shared is
    assert summary["parallel_merges"] + summary["merges_kept_on_one_thread"] > 100


def test_the_holders_are_the_same_whatever_the_threads(sample_counts):
    # The calling thread replays the events in the list's order: the state after a merge is one state.
    states = []
    for threads in (1, 2, 3):
        merger = v10_merger(sample_counts, threads, parallel_words=64, block_words=16)
        merges_of(merger, 200)
        live = merger.live_pairs()
        states.append((merger.words(), live, [merger.listed_refs(*pair) for pair in sorted(live)]))
    assert states[0] == states[1] == states[2]


pretokens = st.dictionaries(st.binary(min_size=1, max_size=7).map(lambda b: bytes(c % 4 + 97 for c in b)),
                            st.integers(1, 2**40), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(pretokens, st.integers(1, 4), st.integers(1, 3), st.booleans())
def test_matches_v1_on_generated_counts_on_any_threads(counts, threads, block_words, own_first_block):
    # Four letters make repeats, overlaps and ties common; counts up to 2**40 keep 64-bit sums honest.  Every
    # merge of more than `block_words` words is shared, and the lists are checked after each merge.
    merger = v10_merger(counts, threads, block_words=block_words, own_first_block=own_first_block)
    merges = []
    try:
        while (pair := merger.select_best_pair()) is not None:
            merger.merge(pair)
            merges.append(pair)
            assert merger._check_holders_for_tests()
    finally:
        merger.close()
    assert merges == merges_of(v1_naive.Merger(counts))


def test_a_merge_into_an_existing_token_joins_its_pairs():
    # As v8's test: two merges that make the same bytes make one token, and the second's pairs exist.
    state = v10.MergeState({b"abcd": 5, b"xyd": 2, b"xy": 1})
    a, b, c, d, x, y = (ord(ch) for ch in "abcdxy")
    bc = state.add_token(b"bc")
    state.merge_ids(b, c, bc)
    abc = state.add_token(b"abc")
    state.merge_ids(a, bc, abc)
    assert state.add_token(b"abc") == abc
    state.merge_ids(x, y, abc)  # not fresh: (abc, d) exists, with count 5
    assert state.live_pairs() == {(abc, d): 7}
    assert sorted(state.words()) == [([abc], 1), ([abc, d], 2), ([abc, d], 5)]
    assert state.select_best_pair() == (b"abc", b"d")
    assert state._check_holders_for_tests()


def test_counts_past_32_bits_are_several_records():
    # A word's count is 32-bit: a pre-token counted 3e9 times is kept as records of at most 2**32 - 1 each.
    counts = {b"ab": 3_000_000_000, b"ba": 2_999_999_999, b"abab": 2**33 + 5, b"cd": 5}
    merger = v10.Merger(counts, threads=1)
    assert merger.word_records == 1 + 1 + 3 + 1
    assert merger.pair_count(ord("a"), ord("b")) == 3_000_000_000 + 2 * (2**33 + 5)
    assert merges_of(merger, 10) == merges_of(v1_naive.Merger(counts), 10)


def test_a_count_beyond_64_bits_is_refused_clearly():
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        v10.Merger({b"ab": 2**64})


# --- 16-bit ids, then 32-bit ----------------------------------------------------------------------------------

def wide_corpus() -> dict[bytes, int]:
    """Every byte pair as a word of its own, counts 1 to 7: 65,536 merges of byte pairs, which make tokens
    256 to 65,791, so the 65,537th token (id 65,536) comes midway; and three-byte words whose merged first
    pair then meets their third byte, merges of ids past 65,535."""
    counts = {bytes([i, j]): 1 + (i * 256 + j) % 7 for i in range(256) for j in range(256)}
    counts.update({bytes([i, j, 7]): 3 for i in range(250, 256) for j in range(0, 256, 5)})
    return counts


@pytest.mark.parametrize("threads", [1, 2])
def test_ids_past_65535_widen_the_records(threads):
    counts = wide_corpus()
    expected = merges_of(v9_counting_compiled.Merger(counts), 70_000)
    assert len(expected) > 65_536
    merger = v10_merger(counts, threads, block_words=1)
    narrow = merger.block_bytes
    merges = []
    try:
        while (pair := merger.select_best_pair()) is not None:
            merger.merge(pair)
            merges.append(pair)
            assert merger.wide_ids == (len(merger.tokens) > 65_536)  # widened at the 65,537th token
    finally:
        merger.close()
    assert merges == expected
    assert merger.block_bytes > narrow  # 32-bit ids: every record rewritten wider
    assert any(token_id > 65_535 for tokens, _ in merger.words() for token_id in tokens)
    assert merger._check_holders_for_tests()


def test_a_failed_widening_leaves_the_state_as_it_was():
    # The new block is the widening's first allocation: when it fails, nothing has changed, not even the
    # token, and the same merge then goes through.
    counts = wide_corpus()
    expected = merges_of(v9_counting_compiled.Merger(counts), 70_000)
    merger = v10.Merger(counts, threads=1)
    merges = merges_of_until_tokens(merger, 65_536)
    pair = merger.select_best_pair()
    merger._fail_next_allocation_for_tests()
    with pytest.raises(MemoryError, match="injected by a test"):
        merger.merge(pair)
    assert not merger.wide_ids and len(merger.tokens) == 65_536
    merger.merge(pair)
    assert merger.wide_ids
    merges.append(pair)
    assert merges + merges_of(merger, 70_000) == expected


def merges_of_until_tokens(merger, tokens: int) -> list:
    merges = []
    while len(merger.tokens) < tokens:
        pair = merger.select_best_pair()
        merger.merge(pair)
        merges.append(pair)
    return merges


# --- the rung's fallback: a pre-token longer than a record holds ------------------------------------------------

def test_a_pre_token_past_16_bits_of_length_runs_v9s_merge():
    long_word = b"ab" * 40_000  # 80,000 bytes: longer than a record's 16-bit length
    counts = {long_word: 2, b"abc": 3, b"xy": 1}
    merger = v10.Merger(counts, threads=2)
    assert isinstance(merger, v10.LongWordsMerger)
    assert merges_of(merger, 20) == merges_of(v1_naive.Merger(counts), 20)
    assert merger.summary()["fallback"].startswith("a pre-token longer than 65,535 bytes")


def test_the_length_check_is_a_clear_error():
    from bpe.variants import _v10_merge
    assert _v10_merge.checked_word_length(65_535) == 65_535
    with pytest.raises(_v10_merge.WordTooLong, match="longer than v10's records hold"):
        _v10_merge.checked_word_length(65_536)
    with pytest.raises(_v10_merge.WordTooLong):
        _v10_merge.MergeState({b"a" * 70_000: 1})


# --- the threads: interrupts, failures, close ---------------------------------------------------------------

def many_words(several: int = 0):
    """20,000 words that hold (a, b) once, then ``several`` that hold it twice."""
    counts = {b"ab%05d" % i: 1 for i in range(20_000)}
    counts.update({b"abab%05d" % i: 1 for i in range(several)})
    return counts


BROKEN = ("this v10 merger stopped partway through a merge (interrupted, or an internal error), so its state "
          "is incomplete: build a new one from the pre-token counts")


def assert_refuses_every_merge(merger, message=BROKEN):
    for merge in (lambda: merger.merge((b"a", b"b")), lambda: merger.merge((b"0", b"0")),
                  merger.select_best_pair, lambda: merger.merge_ids(ord("1"), ord("2"), merger.add_token(b"12"))):
        with pytest.raises(RuntimeError) as error:
            merge()
        assert str(error.value) == message


@pytest.mark.parametrize("threads", [2, 4])
def test_an_interrupt_in_a_shared_merge_stops_and_joins_the_threads(threads):
    no_merge_thread_left()
    merger = v10_merger(many_words(), threads, block_words=64)
    merger._interrupt_at_next_check_for_tests()  # the calling thread checks after its share, at the latest
    with pytest.raises(KeyboardInterrupt):
        merger.merge((b"a", b"b"))
    assert merger.parallel_merges == 1  # the merge was shared ...
    assert merger.running_threads == 0  # ... and no thread outlived it
    no_merge_thread_left()
    rewritten = sum(1 for tokens, _ in merger.words() if tokens[0] >= 256)
    assert 0 < rewritten <= len(many_words())
    assert_refuses_every_merge(merger)


def test_a_real_sigint_during_the_merges_ends_them_with_no_thread_left(tmp_path):
    # A child merges 200,000 words on two threads, merge after merge; once it says the workers run, it gets
    # SIGINT, which lands in a merge (nearly all of its time) or between two: either way KeyboardInterrupt,
    # and no worker thread left.
    script = tmp_path / "merge.py"
    script.write_text(
        "import os\n"
        "from bpe.variants import v10_threads_compact as v10\n"
        "counts = {b'%c%c%05d' % (97 + i % 5, 97 + i % 7, i): 1 for i in range(200_000)}\n"
        "merger = v10.Merger(counts, threads=2)\n"
        "merger._set_parallel_words_for_tests(0, 64)\n"
        "try:\n"
        "    while (pair := merger.select_best_pair()) is not None:\n"
        "        merger.merge(pair)\n"
        "        if merger.running_threads == 1 and merger.parallel_merges == 1:\n"
        "            print('workers running', flush=True)\n"
        "    print('finished', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    merger.close()  # (joined already if the signal landed in a merge)\n"
        "    def alive():\n"
        "        tasks = [f'/proc/self/task/{t}/comm' for t in os.listdir('/proc/self/task')]\n"
        "        return sum(open(task).read().strip() == 'bpe-v10-merge' for task in tasks if os.path.exists(task))\n"
        "    while alive():  # a joined thread may stay listed for a moment\n"
        "        pass\n"
        "    print('interrupted', alive(), flush=True)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=Path.cwd())
    try:
        first = proc.stdout.readline().strip()
        if first == "finished":
            pytest.skip("the merges ended before the signal could be sent")
        assert first == "workers running"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = out.split()
    if lines[:1] == ["finished"]:
        pytest.skip("the merges ended before the signal landed")
    assert lines == ["interrupted", "0"]


def test_a_thread_that_cannot_allocate_is_a_memory_error_and_no_thread_is_left():
    # Block 0 (the calling thread's) holds the words with one (a, b); block 1, a worker's own first block,
    # those with two, whose old and new ids its thread logs: the log's first allocation fails there.
    no_merge_thread_left()
    counts = many_words(several=20_000)
    merger = v10_merger(counts, 2, block_words=20_000)
    merger._fail_next_thread_allocation_for_tests()
    with pytest.raises(MemoryError, match="thread could not allocate"):
        merger.merge((b"a", b"b"))
    assert merger.running_threads == 0
    no_merge_thread_left()
    assert_refuses_every_merge(merger)


def test_close_joins_the_threads_and_refuses_merges():
    no_merge_thread_left()
    merger = v10_merger(many_words(), 3, block_words=64)
    merger.merge((b"a", b"b"))
    assert merger.running_threads == 2 and merge_threads_alive() == 2
    merger.close()
    assert merger.running_threads == 0
    no_merge_thread_left()
    assert_refuses_every_merge(merger, "this v10 merger was closed (its threads are stopped): build a new one "
                                       "from the pre-token counts")
    merger.close()  # a second close does nothing
    assert merger.summary()["parallel_merges"] == 1  # what it did is still there to read


def test_a_dropped_merger_joins_its_threads():
    no_merge_thread_left()
    merger = v10_merger(many_words(), 2, block_words=64)
    merger.merge((b"a", b"b"))
    assert merge_threads_alive() == 1
    del merger
    no_merge_thread_left()


def test_a_forked_child_neither_joins_nor_waits_for_its_parents_workers():
    # A child forked while the workers run has the pool's memory but not its threads: its own shared merge
    # starts workers of its own, and closing forgets the parent's instead of joining them.
    merger = v10_merger(many_words(several=3), 2, block_words=64)
    merger.merge((b"a", b"b"))
    assert merger.running_threads == 1
    pid = os.fork()
    if pid == 0:  # the child: merge on, close, and say so through the exit status
        try:
            merger.merge((b"0", b"0"))
            ok = merger.parallel_merges == 2 and merger.running_threads == 1
            merger.close()
            os._exit(0 if ok and merger.running_threads == 0 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert merger.running_threads == 1  # the parent's own, untouched
    merger.close()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failed_table_growth_leaves_the_table_as_it_was(threads):
    # As v8's test: byte pairs that fill the table just under its load, and a merge whose new pairs pass it.
    # The growth fails after the words are rewritten (shared, with two threads): the workers are joined too.
    counts = {bytes([i, j]): 1 for i in range(127) for j in range(256)}
    counts.update({bytes([x, 250, 251]): 2 for x in range(127, 255)})
    merger = v10_merger(counts, threads, block_words=16)
    buckets = merger.table_buckets
    merger._fail_next_table_allocation_for_tests()
    with pytest.raises(MemoryError):
        merger.merge((bytes([250]), bytes([251])))
    assert merger.table_buckets == buckets
    assert merger.pair_count(0, 1) == 1
    assert merger.parallel_merges == (threads > 1) and merger.running_threads == 0
    assert_refuses_every_merge(merger)


@pytest.mark.parametrize("counts, unfiled", [
    ({b"abc": 3}, (b"b", b"c")),    # one occurrence: the lost pair is lowered with the neighbour rows
    ({b"abab": 2}, (b"b", b"a")),   # several: the word's old pairs are lowered one by one
])
def test_a_pair_missing_from_the_table_is_an_internal_error(counts, unfiled):
    merger = v10.Merger(counts, threads=1)
    merger._unfile_pair_for_tests(*[merger.tokens.index(token) for token in unfiled])
    with pytest.raises(RuntimeError, match=r"internal error .* missing from the pair table"):
        merger.merge((b"a", b"b"))
    with pytest.raises(RuntimeError, match="stopped partway through a merge"):
        merger.merge((b"a", b"b"))


def test_threads_are_checked():
    for bad in (0, -1, True, 1.5):
        with pytest.raises((BPEError, ValueError, TypeError)):
            v10.Merger({b"ab": 1}, threads=bad)
    with pytest.raises(ValueError, match="threads must be 1 to 256"):
        v10.MergeState({b"ab": 1}, 257)


def test_the_counts_carry_the_workers_to_the_merge(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(CORPUS_EN.read_bytes())
    counts = v10.count_pretokens(path, ["<|endoftext|>"], workers=3)
    assert counts.workers == 3 and v10.merge_threads(counts, None) == 3
    assert v10.merge_threads(counts, 2) == 2
    merger = v10.Merger(counts)
    assert merger.threads == 3
    merger.close()
    assert v10.merge_threads({b"ab": 1}, None) == 1  # too few words for a merge to be shared: no sampling


# --- memory ---------------------------------------------------------------------------------------------------

def test_a_record_is_an_8_byte_head_and_2_bytes_a_token_padded_to_4():
    assert v10.MergeState({b"ab": 1}).block_bytes == 8 + 4
    assert v10.MergeState({b"abc": 1}).block_bytes == 8 + 8  # 6 bytes of ids, padded
    assert v10.MergeState({b"abcdefghij": 1}).block_bytes == 8 + 20
    assert v10.MergeState({b"ab": 1, b"abcdefghij": 2, b"x": 9}).block_bytes == 12 + 28  # one byte: no record


@pytest.mark.parametrize("threads", [1, 3])
def test_memory_bytes_counts_every_block_exactly(sample_counts, threads):
    # The running count (kept as each block is allocated, grown and freed) against a count made again from
    # every structure's size, after the build and after merges that made, grew and freed holder arrays.
    merger = v10_merger(sample_counts, threads, parallel_words=64, block_words=16)
    built = merger.memory_bytes()
    assert built == merger._memory_bytes_recounted_for_tests()
    merges_of(merger, 1500)
    assert merger.memory_bytes() == merger._memory_bytes_recounted_for_tests()
    assert merger.peak_memory_bytes >= built


def test_memory_is_well_below_v9s(sample_counts):
    # The shipped corpus at vocab 3,256: v10's state beside v9's, each as its own memory_bytes() counts it (a
    # small corpus, where the fixed sizes weigh more: on web text v10 holds less than half of v9's).
    ours = v10.Merger(dict(sample_counts), threads=1)
    theirs = v9_counting_compiled.Merger(dict(sample_counts))
    merges_of(ours, 3000)
    merges_of(theirs, 3000)
    assert ours.memory_bytes() * 3 < theirs.memory_bytes() * 2


def test_summary_says_what_ran():
    merger = v10_merger(many_words(), 2, block_words=64)
    merges_of(merger, 5)
    summary = merger.summary()
    assert set(summary) == {"word_visits", "stale_visits", "stale_pops", "merge_memory_bytes",
                            "merge_memory_peak_bytes", "merge_threads", "parallel_merges", "most_threads_in_a_merge",
                            "merges_kept_on_one_thread", "dispatch_seconds", "wait_seconds"}
    assert summary["merge_threads"] == 2 and summary["parallel_merges"] >= 1 and summary["most_threads_in_a_merge"] == 2


# --- the rung ---------------------------------------------------------------------------------------------------

def test_the_rung_is_registered_and_counts_as_v9():
    assert "v10" in VARIANTS and get_variant("v10") is v10
    assert v10.COUNTS_IN == "threads" and v10.COUNTS_BYTES


@pytest.mark.parametrize("workers", [1, 2])
def test_train_gives_v9s_merges(tmp_path, workers):
    path = tmp_path / "text.txt"
    path.write_bytes(DEFAULT_CORPUS.read_bytes())
    assert (train_bpe(path, 1200, ["<|endoftext|>"], variant="v10", workers=workers)
            == train_bpe(path, 1200, ["<|endoftext|>"], variant="v9", workers=workers))


def test_unbuilt_v10_says_why_in_one_line(monkeypatch):
    monkeypatch.setattr(v10, "UNAVAILABLE", v10.NOT_BUILT)
    with pytest.raises(BPEError) as error:
        v10.Merger({b"ab": 1})
    assert str(error.value) == v10.NOT_BUILT and "\n" not in v10.NOT_BUILT
    assert v10.NOT_BUILT.startswith("v10 is not built: its compiled merge needs a C compiler")
