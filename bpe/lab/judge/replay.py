"""Merges replayed on pre-token counts: the true pair counts after any number of merges, and the counts
the usual miscounting trainers see (merging from the right, a pair counted where it overlaps itself).
Replaying merges by rank (earliest learned first) gives each word exactly the segmentation training had
reached.  The diagnosis (:mod:`bpe.lab.judge.diagnose`) compares a trainer's choice with these.

Example: ``pair_counts_after({b"low": 5, b"lower": 2}, [(b"l", b"o")])[(b"lo", b"w")]`` is 7.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from bpe.training.merge_loop import Pair, Word, merge_word, split_into_bytes


def segment(token: bytes, ranks: Mapping[Pair, int]) -> Word:
    """``token`` split as training had split it after the merges in ``ranks`` (pair -> its 0-based rank).

    >>> segment(b"aaab", {(b"a", b"a"): 0, (b"aa", b"a"): 1})
    (b'aaa', b'b')
    """
    word = split_into_bytes(token)
    while len(word) > 1:
        pair = min(zip(word, word[1:]), key=lambda p: ranks.get(p, len(ranks)))
        if pair not in ranks:
            break
        word = merge_word(word, pair)
    return word


def words_after(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair]) -> Iterator[tuple[bytes, Word, int]]:
    """Each pre-token, its word after ``merges`` and its count, in the order a trainer's words meet them."""
    ranks = {pair: i for i, pair in enumerate(merges)}
    for token, n in pretoken_counts.items():
        yield token, segment(token, ranks), n


def pair_counts_after(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair]) -> Counter[Pair]:
    """The pair counts training sees after ``merges``: every adjacent pair, overlaps included."""
    counts: Counter[Pair] = Counter()
    for _, word, n in words_after(pretoken_counts, merges):
        for pair in zip(word, word[1:]):
            counts[pair] += n
    return counts


def merge_word_from_right(word: Word, pair: Pair) -> Word:
    """``word`` with ``pair`` merged scanning from the right (wrong: CS336 merges from the left).  Only a
    pair of equal tokens can overlap itself; any other pair merges alike from either end.

    >>> merge_word_from_right((b"a", b"a", b"a"), (b"a", b"a"))
    (b'a', b'aa')
    """
    return merge_word(word[::-1], pair)[::-1] if pair[0] == pair[1] else merge_word(word, pair)


def pair_counts_merging_from_right(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair],
                                   counts: Counter[Pair]) -> tuple[Counter[Pair], Pair] | None:
    """``counts`` (the true ones after ``merges``) as a trainer that merges from the right would have them,
    and the first pair ``(x, x)`` met in a word; ``None`` when no merge so far could differ.  Only a word
    with some merged ``x`` three times in a row can differ, so only those are replayed.
    """
    doubles = [pair[0] for pair in merges if pair[0] == pair[1]]
    tripled = {token: n for token, n in pretoken_counts.items() if any(x * 3 in token for x in doubles)}
    if not tripled:
        return None
    adjusted = Counter(counts)
    for token, left, n in words_after(tripled, merges):
        right = split_into_bytes(token)
        for pair in merges:
            right = merge_word_from_right(right, pair)
        for pair in zip(left, left[1:]):
            adjusted[pair] -= n
        for pair in zip(right, right[1:]):
            adjusted[pair] += n
    first = next(x for x in doubles if x * 3 in next(iter(tripled)))
    return +adjusted, (first, first)


def best_pair(counts: Mapping[Pair, int]) -> Pair | None:
    return max(counts, key=lambda pair: (counts[pair], pair)) if counts else None


def non_overlapping_count(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair], pair: Pair) -> int:
    """Occurrences of ``pair`` after ``merges`` counted as a merge would take them (``aaa``: once)."""
    return sum(n * (len(word) - len(merge_word(word, pair))) for _, word, n in words_after(pretoken_counts, merges))
