"""v8, the compiled merge: exactly v1's merges on the cases where C arrays could go wrong (ties in byte
order, two merges making the same bytes, 64-bit counts), clear errors, and the one line it prints
where it was not built.  The ladder-wide tests (equivalence, the CS336 merges, reliability) run it too."""

import shutil
import sysconfig

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import VARIANTS, BPEError, train_bpe
from bpe.running.timer import NullTimer
from bpe.training import registry
from bpe.training.merge_loop import run_merges
from bpe.variants import v1_naive, v8_compiled, v9_counting_compiled, v10_threads_compact
from conftest import CORPUS_EN, OVERLAPS, REPEATS, TIES, cs336_merges

built = pytest.mark.skipif(v8_compiled.UNAVAILABLE is not None, reason=str(v8_compiled.UNAVAILABLE))


def merges_of(module, pretoken_counts, num_merges=10_000):
    return run_merges(module.Merger(pretoken_counts), num_merges, NullTimer())


def test_built_wherever_a_compiler_is():
    """A machine with a C compiler (CI's, a developer's) must have built v8: else its tests would skip
    quietly and the default fall back to v7 unnoticed."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) here: v8 is rightly not built")
    assert v8_compiled.UNAVAILABLE is None
    assert "v8" in VARIANTS and registry.best_variant() in ("v10", "v9", "v8")  # v9 merges with v8's code


@built
def test_cs336_merges():
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant="v8")
    assert merges == cs336_merges()


@built
@pytest.mark.parametrize("counts", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
def test_small_corpora_to_the_last_merge(counts):
    assert merges_of(v8_compiled, counts) == merges_of(v1_naive, counts)


@built
def test_tie_follows_byte_order_not_id_order():
    # zz is made before ab, so it has the smaller id; (zz, c) and (ab, c) tie at 3 and v1 takes the
    # larger *bytes*, (zz, c): the heap compares the tokens' bytes, not their ids.
    counts = {b"zzc": 3, b"abc": 3, b"zz": 5, b"ab": 2}
    assert merges_of(v8_compiled, counts, 4) == [(b"z", b"z"), (b"a", b"b"), (b"zz", b"c"), (b"ab", b"c")]


@built
def test_tie_prefers_the_longer_token_with_the_same_prefix():
    counts = {b"abx": 4, b"ax": 4, b"ab": 3, b"q": 1}
    assert merges_of(v8_compiled, counts, 4) == merges_of(v1_naive, counts, 4)


@built
def test_a_merge_into_an_existing_token_joins_its_pairs():
    # Should two merges ever make the same bytes ((a, bc) and (ab, c)), the second merge's token already
    # exists and so may its pairs: the compiled merge then finds them instead of making new slots (no
    # greedy run found here makes such a pair, so the state is driven directly).
    state = v8_compiled.MergeState({b"abcd": 5, b"xyd": 2, b"xy": 1})
    a, b, c, d, x, y = (ord(ch) for ch in "abcdxy")
    bc = state.add_token(b"bc")
    state.merge_ids(b, c, bc)
    abc = state.add_token(b"abc")
    state.merge_ids(a, bc, abc)
    assert state.add_token(b"abc") == abc  # one id per distinct byte string
    state.merge_ids(x, y, abc)  # not fresh: (abc, d) exists, with count 5
    assert state.live_pairs() == {(abc, d): 7}
    assert sorted(state.words()) == [([abc], 1), ([abc, d], 2), ([abc, d], 5)]
    assert state.select_best_pair() == (b"abc", b"d")


@built
def test_counts_past_32_bits():
    # One pre-token 3e9 times, a pair's count past 2**32: a 32-bit count would wrap and pick wrong.
    counts = {b"ab": 3_000_000_000, b"ba": 2_999_999_999, b"abab": 2**31, b"cd": 5}
    expected = merges_of(v1_naive, counts)
    merger = v8_compiled.Merger(counts)
    assert merger.pair_count(ord("a"), ord("b")) == 3_000_000_000 + 2 * 2**31
    assert run_merges(merger, 10, NullTimer()) == expected


@built
def test_a_count_beyond_64_bits_is_refused_clearly():
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        v8_compiled.Merger({b"ab": 2**64})


@built
def test_a_merge_of_an_absent_pair_changes_nothing():
    merger = v8_compiled.Merger({b"ab": 2})
    merger.merge((b"x", b"y"))
    assert merger.select_best_pair() == (b"a", b"b")


# --- hardening: faults that no real input causes are clear errors, never stray writes -------------------

@built
@pytest.mark.parametrize("counts, unfiled", [
    ({b"abc": 3}, (b"b", b"c")),    # one occurrence: the lost pair is lowered with the neighbour rows
    ({b"abab": 2}, (b"b", b"a")),   # several: the word's old pairs are lowered one by one
])
def test_a_pair_missing_from_the_table_is_an_internal_error(counts, unfiled):
    # A pair a word holds is always filed; were it not, the merge would have lowered pairs[-1].
    merger = v8_compiled.Merger(counts)
    ids = [merger.tokens.index(token) for token in unfiled]
    merger._unfile_pair_for_tests(*ids)
    with pytest.raises(RuntimeError, match=r"internal error .* missing from the pair table"):
        merger.merge((b"a", b"b"))
    with pytest.raises(RuntimeError, match="stopped partway through a merge"):  # and nothing more is merged
        merger.merge((b"a", b"b"))


def many_words():
    """20,000 words that hold (a, b): more than the 16,384 a merge's loop visits between two checks for a
    signal."""
    return {b"ab%05d" % i: 1 for i in range(20_000)}


BROKEN = ("this v8 merger stopped partway through a merge (interrupted, or an internal error), so its state "
          "is incomplete: build a new one from the pre-token counts")


@built
def test_a_merge_interrupted_partway_leaves_a_state_that_refuses_every_merge():
    # The merge's loop checks for a signal after 16,384 words, where the hook makes the check raise as a
    # Ctrl-C would: some words rewritten, the counts not yet lowered.
    counts = many_words()
    merger = v8_compiled.Merger(counts)
    a, b = ord("a"), ord("b")
    merger._interrupt_at_next_check_for_tests()
    with pytest.raises(KeyboardInterrupt):
        merger.merge((b"a", b"b"))
    rewritten = sum(1 for tokens, _ in merger.words() if tokens[0] not in (a, b))
    assert 0 < rewritten < len(counts)  # stopped partway, as an interrupt would
    # Every later merge is refused with the one line, whichever call makes it and whatever the pair.
    for merge in (lambda: merger.merge((b"a", b"b")), lambda: merger.merge((b"0", b"0")),
                  lambda: merger.merge_ids(ord("1"), ord("2"), merger.add_token(b"12"))):
        with pytest.raises(RuntimeError) as error:
            merge()
        assert str(error.value) == BROKEN


NEVER_BUILT = ("this v8 merge state was never built (its __init__ did not run, or failed partway): build a new one "
               "from the pre-token counts")


def unbuilt_states():
    """States whose build did not run, or failed partway (before its arrays, and after some of them)."""
    from bpe.variants._v8_merge import MergeState

    class SkipsTheBuild(MergeState):
        def __init__(self, counts):  # a subclass that forgets super().__init__
            pass

    failed_late = MergeState.__new__(MergeState)
    with pytest.raises(TypeError):
        failed_late.__init__({b"ab": 1, b"cd": "x"})  # the words' block made, a count not an integer
    failed_early = MergeState.__new__(MergeState)
    with pytest.raises(TypeError):
        failed_early.__init__(["ab"])  # refused before any array
    return {"__new__": MergeState.__new__(MergeState), "subclass": SkipsTheBuild({b"ab": 1}),
            "failed late": failed_late, "failed early": failed_early}


@built
@pytest.mark.parametrize("how", ["__new__", "subclass", "failed late", "failed early"])
def test_a_state_never_built_refuses_every_use(how):
    """``pair_count``, ``holders`` and ``select_best_pair`` read arrays not made (exit 139) before."""
    state = unbuilt_states()[how]
    calls = [state.select_best_pair, lambda: state.merge((b"a", b"b")), lambda: state.merge_ids(97, 98, 256),
             lambda: state.add_token(b"ab"), lambda: state.tokens, lambda: state.pair_count(97, 98),
             state.live_pairs, state.words, lambda: state.holders(97, 98), lambda: state.table_buckets,
             lambda: state.heap_entries, lambda: state.pair_slots, state.memory_bytes,
             state._interrupt_at_next_check_for_tests, state._fail_next_table_allocation_for_tests,
             lambda: state._unfile_pair_for_tests(97, 98)]
    for call in calls:
        with pytest.raises(RuntimeError) as error:
            call()
        assert str(error.value) == NEVER_BUILT
    if how == "failed early":  # nothing was made: the build may be tried again, and then it works
        state.__init__({b"ab": 3})
        assert state.select_best_pair() == (b"a", b"b")


@built
def test_a_state_is_built_once():
    """A second ``__init__`` would drop the first build's arrays (and lose its merges); one after a build that
    failed partway, the arrays it made."""
    state = v8_compiled.Merger({b"abab": 3})
    state.merge(state.select_best_pair())
    for counts in ({b"cd": 1}, {b"abab": 3}):
        with pytest.raises(RuntimeError, match="^this v8 merge state was built already"):
            state.__init__(counts)
    assert state.words() == [([256, 256], 3)]  # untouched
    failed = unbuilt_states()["failed late"]
    with pytest.raises(RuntimeError, match="^this v8 merge state was built already"):
        failed.__init__({b"ab": 1})


@built
def test_a_merge_that_finishes_clears_the_mark():
    # The mark is set for the length of every merge and cleared at its end: an uninterrupted run merges on.
    counts = many_words()
    assert merges_of(v8_compiled, counts, 5) == merges_of(v1_naive, counts, 5)


def table_filling_corpus():
    """Byte pairs that fill the pair table just under half, and a merge whose fresh pairs pass half:
    (x, 250) for 128 x, then (x, n) when (250, 251) becomes n."""
    counts = {bytes([i, j]): 1 for i in range(127) for j in range(256)}
    counts.update({bytes([x, 250, 251]): 2 for x in range(127, 255)})
    return counts


@built
def test_a_failed_table_growth_leaves_the_table_as_it_was():
    merger = v8_compiled.Merger(table_filling_corpus())
    buckets = merger.table_buckets
    assert merger.pair_slots * 2 <= buckets < (merger.pair_slots + 128) * 2  # the merge below must grow it
    merger._fail_next_table_allocation_for_tests()
    with pytest.raises(MemoryError):
        merger.merge((bytes([250]), bytes([251])))
    # The old table was kept, not freed: every lookup still reads it.
    assert merger.table_buckets == buckets
    assert merger.pair_count(0, 1) == 1 and merger.pair_count(250, 251) == 2 * 128  # (zeroed after filing)
    with pytest.raises(RuntimeError, match="stopped partway through a merge"):  # the merge itself is half-done
        merger.merge((b"\x00", b"\x01"))


@built
def test_the_table_grows_when_a_merge_passes_half():
    counts = table_filling_corpus()
    merger = v8_compiled.Merger(counts)
    buckets = merger.table_buckets
    merger.merge((bytes([250]), bytes([251])))
    assert merger.table_buckets == 2 * buckets and merger.pair_slots * 2 <= merger.table_buckets
    n = merger.tokens.index(bytes([250, 251]))
    assert all(merger.pair_count(x, n) == 2 for x in range(127, 255))
    assert merger.pair_count(0, 1) == 1
    assert merges_of(v8_compiled, counts, 50) == merges_of(v1_naive, counts, 50)


@built
def test_a_pre_token_past_32_bits_of_length_is_refused_not_dropped():
    # Checked without allocating 2 GiB: the check the build applies to every pre-token's length.
    from bpe.variants import _v8_merge
    assert _v8_merge.checked_word_length(2**31 - 1) == 2**31 - 1
    with pytest.raises(OverflowError, match=r"longer than v8's limit of 2\*\*31-1 bytes"):
        _v8_merge.checked_word_length(2**31)


@built
def test_a_capacity_that_would_pass_32_bits_when_doubled_is_refused():
    from bpe.variants import _v8_merge
    assert _v8_merge.doubled_capacity(2**30 - 1) == 2**31 - 2
    with pytest.raises(OverflowError, match=r"passes 2\*\*31-1"):
        _v8_merge.doubled_capacity(2**30)


@built
def test_memory_bytes_counts_every_block():
    # Every block the state holds, at its allocated size: words (records, offsets), tokens (bytes, starts,
    # lengths, neighbour rows, the rows touched, the lost pairs' slots and counts), pairs (slots, table,
    # the build's holders, each pair's own), the heap and the merge's lists.  Here: 3 words of 2 bytes
    # (3 records of 32 bytes, 3 offsets of 4), 3 byte pairs each held by one word, 512 tokens of room.
    merger = v8_compiled.Merger({b"ab": 1, b"cd": 2, b"ef": 3})
    words = 3 * 32 + 3 * 4
    tokens = 4096 + 512 * (8 + 4 + 32 + 2 * 4 + 2 * (4 + 8))
    pairs = 1024 * 32 + 65536 * 16 + 3 * 4
    heap_and_lists = 1024 * 16 + (1024 + 1024 + 256) * 4
    assert merger.memory_bytes() == words + tokens + pairs + heap_and_lists
    # Each pair a merge makes gets an array of holders of its own (8 to start) with its first word, and
    # it is counted: (x, ab) with three words here, (ab, p), (ab, q) and (ab, r) with one each.
    merger = v8_compiled.Merger({b"xabp": 1, b"xabq": 1, b"xabr": 1})
    before = merger.memory_bytes()
    merger.merge((b"a", b"b"))
    assert merger.holders(ord("x"), merger.tokens.index(b"ab")) == [0, 1, 2]
    assert merger.memory_bytes() - before == 4 * 8 * 4


@built
def test_summary_counts_the_index_work():
    merger = v8_compiled.Merger({b"abab": 1, b"abc": 2, b"bc": 7})
    run_merges(merger, 5, NullTimer())
    summary = merger.summary()
    assert summary["word_visits"] >= 3 and summary["merge_memory_bytes"] > 0
    assert set(summary) == {"word_visits", "stale_visits", "stale_pops", "merge_memory_bytes"}


pretokens = st.dictionaries(st.binary(min_size=1, max_size=6).map(lambda b: bytes(c % 4 + 97 for c in b)),
                            st.integers(1, 2**40), min_size=1, max_size=25)


@built
@settings(max_examples=300, deadline=None)
@given(pretokens)
def test_matches_v1_on_generated_counts(counts):
    # Four letters make repeats, overlaps and ties common; counts up to 2**40 keep 64-bit sums honest.
    assert merges_of(v8_compiled, counts) == merges_of(v1_naive, counts)


def test_unbuilt_v8_says_why_in_one_line(compiled_unbuilt):
    from bpe.interface import rebuild_hint

    assert "v8" not in VARIANTS and "v9" not in VARIANTS and "v7" in VARIANTS
    assert registry.best_variant() == "v6"  # the fastest pure-Python rung in one process
    # bench's and train's headers say why, once: the first choice's reason, which names v9 and v8 too
    assert registry.default_note() == f"default variant: v6 ({v10_threads_compact.NONE_BUILT})"
    assert v10_threads_compact.NONE_BUILT.startswith("v10, v9 and v8 are not built: their compiled merges")
    assert v9_counting_compiled.NEITHER_BUILT.startswith("v9 and v8 are not built: their compiled counter")
    for call in (lambda: registry.get_variant("v8"), lambda: v8_compiled.Merger({b"ab": 1}),
                 lambda: train_bpe(CORPUS_EN, 300, [], variant="v8")):
        with pytest.raises(BPEError) as error:
            call()
        assert str(error.value) == v8_compiled.NOT_BUILT
    assert "\n" not in v8_compiled.NOT_BUILT and "C compiler" in v8_compiled.NOT_BUILT
    assert v8_compiled.NOT_BUILT.endswith(f"then {rebuild_hint()}")  # in the words of this install


@built
def test_set_aside_pops_the_selected_pair_and_count_of_reads_the_state():
    """What training's options call on, in C: set_aside pops the live top (and only after it was selected),
    count_of reads a pair's count, 0 for a pair no word holds or a token never made."""
    merger = v8_compiled.Merger({b"low": 5, b"lower": 2, b"newest": 6})
    assert merger.select_best_pair() == (b"w", b"e") and merger.count_of((b"w", b"e")) == 8
    assert merger.count_of((b"x", b"y")) == 0 and merger.count_of((b"lo", b"w")) == 0
    with pytest.raises(ValueError, match=r"set_aside\(\(b'l', b'o'\)\) must follow select_best_pair\(\) returning"):
        merger.set_aside((b"l", b"o"))
    merger.set_aside((b"w", b"e"))
    assert merger.select_best_pair() == (b"o", b"w")  # the next best; (w, e) is never returned again
    merger.merge((b"o", b"w"))
    assert merger.count_of((b"l", b"ow")) == 7 and merger.count_of((b"o", b"w")) == 0


@built
@settings(max_examples=200, deadline=None)
@given(words=st.dictionaries(st.binary(min_size=1, max_size=10), st.integers(1, 5), max_size=20),
       longest=st.integers(1, 6), least=st.integers(1, 4))
def test_the_options_give_v1s_merges(words, longest, least):
    from bpe.training.merge_loop import Rules

    for rules in (dict(max_token_length=longest), dict(min_frequency=least), dict(max_token_length=longest,
                                                                                   min_frequency=least)):
        expected = run_merges(v1_naive.Merger(words), 40, NullTimer(), rules=Rules(**rules))
        assert run_merges(v8_compiled.Merger(words), 40, NullTimer(), rules=Rules(**rules)) == expected
