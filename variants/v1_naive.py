"""v1 — naive: recount every pair after every merge, take ``max()``, rewrite every word.

v1 is the reference every later rung must equal: the algorithm itself, written as directly as the
CS336 handout states it, with nothing remembered between merges.  The
pre-tokens and their counts come from the plain serial counter (``count_file_serial`` in
``bpe/counting/plain.py``: split on the special tokens, ``findall`` of the GPT-2 pattern, a
``Counter``, one chunk of the file at a time); each distinct pre-token is a *word* of single-byte
tokens with a count.  Every merge then

1. counts every adjacent pair in every word, weighted by the word's count,
2. picks the most frequent pair (ties: the larger ``(bytes, bytes)`` tuple), and
3. rewrites every word with that pair merged.

Training's options call on two more methods, which state them as plainly: ``count_of`` recounts, and
``set_aside`` keeps a set of pairs never to be merged, which ``select_best_pair`` passes over (the rules
themselves are in ``bpe/training/merge_loop.py``).

What it leaves out: any memory between merges.  Item 1 redoes all the counting although one merge
changes only a few words; that is what v2 attacks.

Complexity: with W distinct words of total length L symbols, P distinct pairs and M merges, each merge
is O(L) to count, O(P) to select and O(L) to rewrite: O(M·L) in all.

Measured: what v1's merges cost against pre-tokenizing the corpus once, docs/v1.md, "Measured".

Walkthrough: docs/v1.md.

>>> from bpe.training.merge_loop import run_merges
>>> from bpe.running.timer import NullTimer
>>> merger = Merger({b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6})
>>> [a + b" " + b for a, b in run_merges(merger, 3, NullTimer())]
[b's t', b'e st', b'o w']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from bpe.counting.plain import count_file_serial
from bpe.training.merge_loop import Pair, merge_word, split_into_bytes

IDEA = "naive: recount every pair after every merge, max(), rewrite every word"
count_pretokens = count_file_serial


class Merger:
    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        self.words = [(split_into_bytes(token), count) for token, count in pretoken_counts.items()]
        self.set_aside_pairs: set[Pair] = set()  # never to be merged (max_token_length: bpe/training/merge_loop.py)

    def count_pairs(self) -> Counter[Pair]:
        pair_counts: Counter[Pair] = Counter()
        for word, count in self.words:
            for pair in zip(word, word[1:]):
                pair_counts[pair] += count
        return pair_counts

    def select_best_pair(self) -> Pair | None:
        pair_counts = self.count_pairs()
        candidates = [pair for pair in pair_counts if pair not in self.set_aside_pairs]
        if not candidates:
            return None
        return max(candidates, key=lambda pair: (pair_counts[pair], pair))

    def count_of(self, pair: Pair) -> int:
        return self.count_pairs()[pair]

    def set_aside(self, pair: Pair) -> None:
        self.set_aside_pairs.add(pair)

    def merge(self, pair: Pair) -> None:
        self.words = [(merge_word(word, pair), count) for word, count in self.words]
