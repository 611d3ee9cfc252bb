"""v6 without the diff grouped by neighbour: every rewritten word diffs its own pairs.

The plain alternative: each rewritten word's change is worked out on its own, as v4 does, here by
v6's ``diff_word``: the word is merged with ``str.replace`` and its pair multisets before and after
are diffed (what v6 itself does for the rare words with several occurrences).  A word with one
occurrence then costs two passes over its pairs and a dict update per changed pair, where v6 files
it under its two neighbour tokens and sums each neighbour's counts once per merge.  Everything else
is v6's.
"""

from __future__ import annotations

from bpe.variants.v6_tuned import Merger as V6Merger
from bpe.variants.v6_tuned import count_pretokens, diff_word  # noqa: F401  (count_pretokens: v6's)

IDEA = "v6 with a per-word diff of every rewritten word instead of the diff grouped by neighbour"


class Merger(V6Merger):
    def rewrite(self, listed, the_pair: str, new_char: str):
        words, word_counts = self.words, self.word_counts
        lost: dict[str, int] = {}
        gained: dict[str, list] = {}
        for word_id in set(listed):
            word = words[word_id]
            if the_pair not in word:
                continue  # a stale index entry
            merged = words[word_id] = word.replace(the_pair, new_char)
            diff_word(word, merged, word_id, word_counts[word_id], the_pair, lost, gained)
        return list(lost.items()), gained
