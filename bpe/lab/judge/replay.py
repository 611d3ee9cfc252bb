"""Merges replayed on pre-token counts, what the diagnosis (:mod:`bpe.lab.judge.diagnose`) weighs a trainer's
choice against: each word split as training had split it, the true pair counts after any number of merges, and the counts the
usual miscounting trainers see (merging from the right, a pair counted where it overlaps itself).  Replaying
merges by rank (earliest learned first) gives each word exactly the segmentation training had reached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from bpe.training.merge_loop import Pair, Word, merge_word, split_into_bytes


def segment(token: bytes, ranks: Mapping[Pair, int]) -> Word:
    """``token`` split as training had split it after the merges in ``ranks`` (pair -> its rank, the merge's 0-based number).

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


def pair_counts_after(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair]) -> Counter[Pair]:
    """The pair counts training sees after ``merges``: every adjacent pair, overlaps included, in the order
    a trainer's words meet them (the pre-tokens' order, each word left to right)."""
    ranks = {pair: i for i, pair in enumerate(merges)}
    counts: Counter[Pair] = Counter()
    for token, n in pretoken_counts.items():
        word = segment(token, ranks)
        for pair in zip(word, word[1:]):
            counts[pair] += n
    return counts


def merge_word_from_right(word: Word, pair: Pair) -> Word:
    """``word`` with ``pair`` merged scanning from the right (wrong: CS336 merges from the left).

    >>> merge_word_from_right((b"a", b"a", b"a"), (b"a", b"a"))
    (b'a', b'aa')
    """
    out: list[bytes] = []
    i = len(word) - 1
    while i >= 0:
        if i > 0 and (word[i - 1], word[i]) == pair:
            out.append(pair[0] + pair[1])
            i -= 2
        else:
            out.append(word[i])
            i -= 1
    return tuple(reversed(out))


def pair_counts_merging_from_right(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair],
                                   counts: Counter[Pair]) -> tuple[Counter[Pair], Pair] | None:
    """``counts`` (the true ones after ``merges``) as a trainer that merges from the right would have them.

    Only a pair of equal tokens ``(x, x)`` can overlap itself, and only in a word with ``x`` three
    times in a row, so only those words are replayed.  Returns those counts and the first such pair
    met in a word; ``None`` when no merge so far could differ.
    """
    doubles = [pair[0] for pair in merges if pair[0] == pair[1]]
    met = None
    ranks = {pair: i for i, pair in enumerate(merges)}
    adjusted = Counter(counts)
    for token, n in pretoken_counts.items():
        found = next((x for x in doubles if x * 3 in token), None)
        if found is None:
            continue
        met = met or (found, found)
        right = split_into_bytes(token)
        for pair in merges:
            right = merge_word_from_right(right, pair)
        left = segment(token, ranks)
        for pair in zip(left, left[1:]):
            adjusted[pair] -= n
        for pair in zip(right, right[1:]):
            adjusted[pair] += n
    return None if met is None else (+adjusted, met)


def best_pair(counts: Mapping[Pair, int]) -> Pair | None:
    return max(counts, key=lambda pair: (counts[pair], pair)) if counts else None


def non_overlapping_count(pretoken_counts: Mapping[bytes, int], merges: Sequence[Pair], pair: Pair) -> int:
    """Occurrences of ``pair`` after ``merges`` counted as a merge would take them (``aaa``: once)."""
    ranks = {p: i for i, p in enumerate(merges)}
    total = 0
    for token, n in pretoken_counts.items():
        word = segment(token, ranks)
        total += n * (len(word) - len(merge_word(word, pair)))
    return total
