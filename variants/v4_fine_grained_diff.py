"""v4 — fine-grained diff: when a pair merges, change only the pairs that touch merged positions.

Unlike v3: a merge changes only the pairs next to the merged positions. v2 (and v3, which uses v2's
merge code unchanged) updates a word by subtracting *all* of its old pairs and adding *all* of its
new ones, so every untouched pair of an affected word is taken out of and put back into the global
counts and index. v4 computes, while it rewrites the word, the exact change of each pair the merge
affects. For an occurrence of ``(a, b)`` between ``x`` and ``y``::

    x a b y   ->   x ab y       (x, a) -1   (a, b) -1   (b, y) -1
                                (x, ab) +1              (ab, y) +1

Adjacent occurrences share a boundary: in ``a b a b`` the middle ``(b, a)`` becomes ``(ab, ab)``
once, not ``(ab, a)`` and ``(b, ab)``.  Each boundary is therefore handled once, by the occurrence to
its right when there is one.  Overlapping occurrences follow ``merge_word``'s left-to-right rule:
``a a a`` merging ``(a, a)`` is ``aa a``, i.e. ``(a, a) -2, (aa, a) +1``.  The changes of one word
are summed (a pair may go down in one place and up in another), multiplied by the word's count and
applied to ``pair_counts``.

The inverted index stays exact by counting: a word is added to ``pair_to_words[p]`` when ``p``
gains an occurrence in it, and leaves ``pair_to_words[p]`` only when ``p`` lost occurrences *and*
has no occurrence left in the rewritten word.

``Merger`` subclasses v2's merger directly (v3 adds no merger of its own, only the pool, which v4
keeps as its ``count_pretokens``): ``__init__`` and ``select_best_pair`` are v2's, only ``merge`` is
new.  Every change of a pair count goes through
``_change_pair_count``; that is where v5 hooks in, to learn which pairs to push on its heap.

What it leaves out: selection is still v2's ``max()`` over every live pair, O(P) per merge (v5);
rewriting a word is still an O(length) loop in Python (v6 moves it into C).

Complexity: per merge O(P) select plus, for every affected word, O(length) to rewrite it and
O(occurrences of the pair) dictionary updates, instead of O(length) dictionary updates.

Measured: the update stage against v3's, and select (untouched) as the largest stage, docs/v4.md.

Walkthrough: docs/v4.md.

>>> word, changes = merge_word_with_changes((b"a", b"a", b"a"), (b"a", b"a"))
>>> word, dict(changes)
((b'aa', b'a'), {(b'a', b'a'): -2, (b'aa', b'a'): 1})
>>> word, changes = merge_word_with_changes((b"x", b"a", b"b", b"a", b"b", b"y"), (b"a", b"b"))
>>> word, sorted(changes.items())  # doctest: +NORMALIZE_WHITESPACE
((b'x', b'ab', b'ab', b'y'), [((b'a', b'b'), -2), ((b'ab', b'ab'), 1), ((b'ab', b'y'), 1), ((b'b', b'a'), -1),
                              ((b'b', b'y'), -1), ((b'x', b'a'), -1), ((b'x', b'ab'), 1)])
"""

from __future__ import annotations

from bpe.counting.parallel import count_file_parallel
from bpe.training.merge_loop import Pair, Word

from .v2_inverted_index import Merger as V2Merger

IDEA = "fine-grained diff: only pairs touching merged positions change"
count_pretokens = count_file_parallel


def merge_word_with_changes(word: Word, pair: Pair) -> tuple[Word, dict[Pair, int]]:
    """``word`` with every occurrence of ``pair`` merged (as ``merge_word``), and the change in the
    number of occurrences of each pair the merge touched."""
    first, second = pair
    merged = first + second
    changes: dict[Pair, int] = {}
    out: list[bytes] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == first and word[i + 1] == second:
            changes[pair] = changes.get(pair, 0) - 1
            if out:  # boundary on the left: (x, a) -> (x, ab); x may itself be a just-merged ab
                left_old, left_new = (word[i - 1], first), (out[-1], merged)
                changes[left_old] = changes.get(left_old, 0) - 1
                changes[left_new] = changes.get(left_new, 0) + 1
            next_is_merged = i + 3 < n and word[i + 2] == first and word[i + 3] == second
            if i + 2 < n and not next_is_merged:  # boundary on the right, unless the next occurrence owns it
                right_old, right_new = (second, word[i + 2]), (merged, word[i + 2])
                changes[right_old] = changes.get(right_old, 0) - 1
                changes[right_new] = changes.get(right_new, 0) + 1
            out.append(merged)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out), changes


class Merger(V2Merger):
    def _change_pair_count(self, pair: Pair, change: int) -> int:
        """Add ``change`` to the count of ``pair``; a pair whose count reaches 0 is removed.

        The one place a count changes: v5 overrides it to note the pairs its heap must hear about.
        """
        count = self.pair_counts.get(pair, 0) + change
        if count:
            self.pair_counts[pair] = count
        else:
            del self.pair_counts[pair]
        return count

    def merge(self, pair: Pair) -> None:
        pair_to_words = self.pair_to_words
        for word_id in pair_to_words.pop(pair):
            new_word, changes = merge_word_with_changes(self.words[word_id], pair)
            self.words[word_id] = new_word
            word_count = self.word_counts[word_id]
            pairs_left = None  # the rewritten word's pairs, built only if some pair lost occurrences
            for changed, change in changes.items():
                if change == 0:  # went down in one place, up in another: nothing to do
                    continue
                self._change_pair_count(changed, change * word_count)
                if change > 0:
                    pair_to_words[changed].add(word_id)
                elif changed != pair:  # the merged pair's whole entry was popped above
                    if pairs_left is None:
                        pairs_left = set(zip(new_word, new_word[1:]))
                    if changed not in pairs_left:  # its last occurrence in this word is gone
                        word_ids = pair_to_words[changed]
                        word_ids.discard(word_id)
                        if not word_ids:
                            del pair_to_words[changed]
