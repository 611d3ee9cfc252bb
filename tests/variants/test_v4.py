"""v3-v5: the cases each step's idea must get right, checked against v1/v2 and against a recount.

* v4's diff: overlapping occurrences (``a a a`` merging ``a a``), a pair occurring several times in
  one word, and the pair counts / inverted index staying exactly what a from-scratch recount gives.
* v5's heap: the same exactness, the byte-order tie rule, and stale entries being skipped.
* v3's pool: a file without special tokens, and a failing worker giving one clear BPEError.
"""

from collections import Counter, defaultdict
import functools
import multiprocessing
import os

import pytest

from bpe import VARIANTS, BPEError, train_bpe
from bpe.training.merge_loop import run_merges
from bpe.training.pretokenize import count_file_serial
from bpe.training.timer import NullTimer
from conftest import CORPUS_EN, DEFAULT_CORPUS, OVERLAPS, REPEATS, TIES, v1_merges_and_words

INDEXED = ["v4", "v5"]  # variants whose pair counts and index are updated incrementally by the diff

def recount(words, word_counts):
    pair_counts, pair_to_words = Counter(), defaultdict(set)
    for word_id, (word, count) in enumerate(zip(words, word_counts)):
        for pair in zip(word, word[1:]):
            pair_counts[pair] += count
            pair_to_words[pair].add(word_id)
    return dict(pair_counts), dict(pair_to_words)


def assert_index_exact(merger):
    expected_counts, expected_index = recount(merger.words, merger.word_counts)
    assert merger.pair_counts == expected_counts
    assert dict(merger.pair_to_words) == expected_index  # no stale word ids, no empty sets left


@pytest.mark.parametrize("variant", INDEXED)
@pytest.mark.parametrize("corpus", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
def test_diff_keeps_counts_and_index_exact_after_every_merge(variant, corpus):
    expected_merges, expected_words = v1_merges_and_words(corpus, 60)
    merger = VARIANTS[variant].Merger(corpus)
    for pair, words in zip(expected_merges, expected_words):
        assert merger.select_best_pair() == pair
        merger.merge(pair)
        assert list(merger.words) == words
        assert_index_exact(merger)
    assert merger.select_best_pair() is None  # both ran out of pairs at the same point


@pytest.mark.parametrize("variant", INDEXED)
def test_index_exact_on_real_text(variant):
    counts = count_file_serial(CORPUS_EN, ["<|endoftext|>"])
    expected_merges, _ = v1_merges_and_words(counts, 120)
    merger = VARIANTS[variant].Merger(counts)
    for step, pair in enumerate(expected_merges):
        assert merger.select_best_pair() == pair
        merger.merge(pair)
        if step % 10 == 0 or step == len(expected_merges) - 1:
            assert_index_exact(merger)


@pytest.mark.parametrize("variant", INDEXED)
def test_overlapping_occurrences_merge_left_to_right(variant):
    merger = VARIANTS[variant].Merger({b"aaa": 1, b"aaaa": 10})
    assert merger.pair_counts == {(b"a", b"a"): 2 + 30}
    merger.merge((b"a", b"a"))
    # aaa -> aa a ; aaaa -> aa aa
    assert merger.words == [(b"aa", b"a"), (b"aa", b"aa")]
    assert merger.pair_counts == {(b"aa", b"a"): 1, (b"aa", b"aa"): 10}
    assert dict(merger.pair_to_words) == {(b"aa", b"a"): {0}, (b"aa", b"aa"): {1}}


@pytest.mark.parametrize("variant", INDEXED)
def test_word_leaves_index_only_when_last_occurrence_is_gone(variant):
    # In "xabyxa" merging (a, b) removes one (x, a) but another (x, a) is still there.
    merger = VARIANTS[variant].Merger({b"xabyxa": 2})
    merger.merge((b"a", b"b"))
    assert merger.words == [(b"x", b"ab", b"y", b"x", b"a")]
    assert merger.pair_counts[(b"x", b"a")] == 2
    assert merger.pair_to_words[(b"x", b"a")] == {0}
    assert (b"b", b"y") not in merger.pair_counts and (b"b", b"y") not in merger.pair_to_words
    assert_index_exact(merger)


def test_heap_tie_rule_is_exact_byte_order():
    # Every pair has count 3 (abcd adds 1 to ab, bc, cd: so ab and cd reach 4 and tie there).
    merger = VARIANTS["v5"].Merger(TIES)
    expected, _ = v1_merges_and_words(TIES, 20)
    assert run_merges(merger, 20, NullTimer()) == expected
    assert expected[0] == (b"c", b"d")  # (a, b) and (c, d) both at 4: larger bytes win


def test_heap_skips_stale_entries_and_counts_them():
    merger = VARIANTS["v5"].Merger(REPEATS)
    assert merger.stale_pops == 0
    run_merges(merger, 100, NullTimer())
    assert isinstance(merger.stale_pops, int) and merger.stale_pops > 0
    live = {pair: count for pair, count in merger.pair_counts.items()}
    entries = {(entry[3], -entry[0]) for entry in merger.heap}
    assert all((pair, count) in entries for pair, count in live.items())  # every live count is in the heap


@functools.lru_cache(maxsize=None)
def v1_on_default_corpus():
    return train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant="v1")


@pytest.mark.parametrize("variant", ["v3", "v4", "v5"])
def test_default_corpus_matches_v1(variant):
    expected = v1_on_default_corpus()
    assert train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant=variant, workers=2) == expected


@pytest.mark.slow
def test_default_corpus_matches_v2_at_vocab_2000():
    expected = train_bpe(DEFAULT_CORPUS, 2000, ["<|endoftext|>"], variant="v2")
    for variant in ["v3", "v4", "v5"]:
        assert train_bpe(DEFAULT_CORPUS, 2000, ["<|endoftext|>"], variant=variant, workers=2) == expected


def test_v3_file_without_special_tokens(write_corpus):
    # ~300 KB, no special token anywhere: cut at safe newlines into several chunks.
    text = "".join(f"Line {i}: the quick brown fox, number {i * 37}!\n  and   more\n\n" for i in range(5000))
    path = write_corpus(text)
    expected = train_bpe(path, 400, ["<|endoftext|>"], variant="v2")
    assert train_bpe(path, 400, ["<|endoftext|>"], variant="v3", workers=2) == expected
    assert train_bpe(path, 400, [], variant="v3", workers=2) == train_bpe(path, 400, [], variant="v2")


def test_v3_file_with_no_safe_cut_is_one_chunk(write_corpus):
    path = write_corpus("ab cd  " * 30000)  # 210 KB on one line: no special token, no newline
    expected = train_bpe(path, 300, [], variant="v2")
    assert train_bpe(path, 300, [], variant="v3", workers=2) == expected


@pytest.mark.parametrize("variant", ["v3", "v5"])
def test_failing_worker_is_one_clear_error(write_corpus, variant):
    good = ("hello world, again<|endoftext|>" * 10000).encode()
    path = write_corpus(good + b"\xc3\x28" + good)  # an invalid 2-byte sequence in the middle
    with pytest.raises(BPEError, match=rf"invalid UTF-8 at byte offset {len(good)} \(byte 0xc3\)"):
        train_bpe(path, 300, ["<|endoftext|>"], variant=variant, workers=2)
    # No worker may outlive the call.  The executor's own thread may be reaping a worker at the same
    # moment as our join (then join returns before the exit status is recorded), so ask the OS.
    for child in multiprocessing.active_children():
        child.join(timeout=10)
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)


def test_chunk_cut_inside_a_longer_special_token_after_multibyte_text(tmp_path):
    # Regression: the cut was moved out of "<|x|><|y|>" using offsets of a window decoded from the
    # middle of a 2-byte character, landing 2 bytes into the special token.
    from bpe.training.chunking import find_chunk_boundaries
    from bpe.training.parallel import count_chunk

    specials = ["<|x|><|y|>", "<|y|>"]
    path = tmp_path / "c.txt"
    for prefix in range(12):
        data = ("é" * prefix + "ab<|x|><|y|>" + "cd" * 11).encode()
        path.write_bytes(data)
        for num_chunks in range(2, 8):
            bounds = find_chunk_boundaries(path, specials, num_chunks)
            counts = Counter()
            for start, end in zip(bounds, bounds[1:]):
                counts.update(count_chunk(str(path), start, end, specials, "strict"))
            assert counts == count_file_serial(path, specials), (prefix, num_chunks, bounds)
