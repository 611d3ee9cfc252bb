"""v6 without the lazy index: an exact index, each rewritten word removed from the pairs it lost.

The plain alternative (v2-v5 keep their index exact): ``pair_to_words[p]`` is a set of exactly the
words that hold ``p``.  After each merge, every rewritten word leaves the sets of the pairs it no
longer holds (its old pairs less its new ones), so no visit is ever stale; that is a set update per
lost pair per word, and the word's pairs listed twice, which the lazy index does without.
Everything else is v6's.
"""

from __future__ import annotations

from bpe.variants.v6_tuned import Merger as V6Merger
from bpe.variants.v6_tuned import count_pretokens, pairs_of  # noqa: F401  (count_pretokens: v6's)

IDEA = "v6 with an exact index (a set per pair; words leave the pairs they lost) instead of the lazy one"


class Merger(V6Merger):
    def build_structures(self, words: list[str], counts: list[int]) -> None:
        super().build_structures(words, counts)
        self.pair_to_words = {pair: set(ids) for pair, ids in self.pair_to_words.items()}

    def rewrite(self, listed, the_pair: str, new_char: str):
        words = self.words
        self._rewritten = [(word_id, words[word_id]) for word_id in listed]  # every one holds the pair
        return super().rewrite(listed, the_pair, new_char)

    def update_index(self, gained: dict[str, list], gone: list[str]) -> None:
        index, words = self.pair_to_words, self.words
        for word_id, old in self._rewritten:
            for pair in set(pairs_of(old)).difference(pairs_of(words[word_id])):
                holders = index.get(pair)  # None for the merged pair, already taken out
                if holders is not None:
                    holders.discard(word_id)
        for pair in gone:  # at zero: no word held it before this merge's gains, added next
            index.pop(pair, None)
        for pair, (_, holders) in gained.items():
            listed = index.get(pair)
            if listed is None:
                index[pair] = set(holders)
            else:
                listed.update(holders)
