"""v2 — inverted index ``pair_to_words``: only touch the words that contain the merged pair.

Unlike v1: pair counts are kept between merges instead of recounted, and an inverted index maps
each pair to the ids of the words it occurs in.  Merging pair p then visits only
``pair_to_words[p]``; for each such word it subtracts all of the word's old pairs (times the word's
count), rewrites the word, and adds all of its new pairs.

What it leaves out: the subtract-everything/add-everything update also touches pairs the merge did
not change (v4 touches only the neighbours of merged positions); the pre-tokenizer is still v1's
plain serial counter (``count_file_serial``; v3 runs it in processes); selection is still a
``max()`` over every live pair, O(P) per merge (v5).

Complexity: build O(L); per merge O(P) to select plus O(sum of lengths of the affected words).
Affected words are usually a tiny fraction of all words, so ``update`` collapses; ``select`` is now
the dominant stage.

Measured: v2 against v1 on the shipped corpus, docs/v2.md, "Measured".

Walkthrough: docs/v2.md.

>>> merger = Merger({b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6})
>>> merger.select_best_pair(), merger.pair_counts[(b"s", b"t")], sorted(merger.pair_to_words[(b"s", b"t")])
((b's', b't'), 9, [2, 3])
>>> merger.merge((b"s", b"t"))  # visits words 2 and 3 only: widest and newest
>>> merger.words[3], sorted(merger.pair_to_words[(b"e", b"st")])
((b'n', b'e', b'w', b'e', b'st'), [2, 3])
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from bpe.counting.plain import count_file_serial
from bpe.training.merge_loop import Pair, Word, merge_word, split_into_bytes

IDEA = "inverted index pair -> words: only touch words containing the merged pair"
count_pretokens = count_file_serial


class Merger:
    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        self.words: list[Word] = []
        self.word_counts: list[int] = []
        self.pair_counts: dict[Pair, int] = {}
        self.pair_to_words: defaultdict[Pair, set[int]] = defaultdict(set)
        self.set_aside_pairs: set[Pair] = set()  # as v1's: never to be merged (max_token_length)
        for word_id, (token, count) in enumerate(pretoken_counts.items()):
            word = split_into_bytes(token)
            self.words.append(word)
            self.word_counts.append(count)
            self._add_pairs(word_id, word, count)

    def _add_pairs(self, word_id: int, word: Word, count: int) -> None:
        for pair in zip(word, word[1:]):
            self.pair_counts[pair] = self.pair_counts.get(pair, 0) + count
            self.pair_to_words[pair].add(word_id)

    def _remove_pairs(self, word_id: int, word: Word, count: int) -> None:
        for pair in zip(word, word[1:]):
            remaining = self.pair_counts[pair] - count
            if remaining:
                self.pair_counts[pair] = remaining
            else:  # a pair with no occurrence left must not be selectable
                del self.pair_counts[pair]
            word_ids = self.pair_to_words.get(pair)
            if word_ids is not None:
                word_ids.discard(word_id)
                if not word_ids:
                    del self.pair_to_words[pair]

    def select_best_pair(self) -> Pair | None:
        pair_counts, aside = self.pair_counts, self.set_aside_pairs
        candidates = (pair for pair in pair_counts if pair not in aside) if aside else pair_counts
        return max(candidates, key=lambda pair: (pair_counts[pair], pair), default=None)

    def count_of(self, pair: Pair) -> int:
        return self.pair_counts.get(pair, 0)

    def set_aside(self, pair: Pair) -> None:
        self.set_aside_pairs.add(pair)

    def merge(self, pair: Pair) -> None:
        for word_id in self.pair_to_words.pop(pair):
            old_word, count = self.words[word_id], self.word_counts[word_id]
            new_word = merge_word(old_word, pair)
            self._remove_pairs(word_id, old_word, count)
            self._add_pairs(word_id, new_word, count)
            self.words[word_id] = new_word
