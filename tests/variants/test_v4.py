"""v4 (variants/v4_fine_grained_diff.py), and v5 which inherits its diff: overlapping occurrences (``a a a``
merging ``a a``), a pair occurring several times in one word, and the pair counts / inverted index staying
exactly what a from-scratch recount gives after every merge.  v5's heap: test_v5.py; v3's pool: test_v3.py.
"""

import sys
from collections import Counter, defaultdict

import pytest

from bpe import VARIANTS
from bpe.counting.plain import count_file_serial
from conftest import CORPUS_EN, OVERLAPS, REPEATS, TIES, v1_merges_and_words


def keeps_exact_diffed_structures(rung) -> bool:
    """Whether a rung updates v2's pair counts and index incrementally by v4's diff: its ``Merger``, or a base,
    comes from a module defining ``merge_word_with_changes`` (v4's diff of one word), as the trace finds it."""
    return any(callable(getattr(sys.modules.get(cls.__module__), "merge_word_with_changes", None))
               for cls in rung.Merger.__mro__)


INDEXED = [name for name in VARIANTS if keeps_exact_diffed_structures(VARIANTS[name])]  # v4 and its followers

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
    for i, pair in enumerate(expected_merges):
        assert merger.select_best_pair() == pair
        merger.merge(pair)
        if i % 10 == 0 or i == len(expected_merges) - 1:
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
