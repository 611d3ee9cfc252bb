"""Exercise 1 (v1, naive): your first BPE merge loop.  Write the two methods left; nothing else changes.

The lab gives your ``Merger`` the pre-token counts (``{b" the": 1523, b"low": 5, ...}``, made by the
project's GPT-2 pre-tokenizer with the special tokens split out) and drives it with
``bpe.training.merge_loop.run_merges``, timing each stage::

    merger = Merger(pretoken_counts)     # "pair count": build your words
    pair = merger.select_best_pair()     # "select": the most frequent pair, or None when none is left
    merger.merge(pair)                   # "update": merge that pair everywhere

Rules (CS336): a pair is two adjacent tokens (``bytes``) inside one pre-token, counted once per
occurrence times the pre-token's count; ties go to the larger pair (``max`` by ``(count, pair)``);
a merge replaces occurrences left to right without overlap (``aaa`` -> ``aa a``).

Check it (it reports "not implemented" until you write the methods, then the first wrong merge)::

    python -m bpe bench --variant v1,exercises/start_v1.py --data corpus-en --vocab-size 500 --repeat 1
    BPE_CANDIDATE=exercises/start_v1.py python -m pytest -q tests/student/test_own_trainer.py

Copy this file before you start (``cp exercises/start_v1.py mine_v1.py``) and run the commands on the copy.
"""

from __future__ import annotations

from collections.abc import Mapping

Pair = tuple[bytes, bytes]

IDEA = "exercise 1: the naive merge loop (your code)"


class Merger:
    def __init__(self, pretoken_counts: Mapping[bytes, int]) -> None:
        # Each pre-token as a word of one-byte tokens, with its count:
        # b"low" -> (b"l", b"o", b"w"); note that bytes([x]), not x, is a one-byte token.
        self.words = [(tuple(bytes([b]) for b in token), count) for token, count in pretoken_counts.items()]

    def select_best_pair(self) -> Pair | None:
        """Count every adjacent pair in every word (times the word's count); return the most
        frequent, ties to the larger pair; ``None`` when there is no pair at all."""
        raise NotImplementedError("select_best_pair is yours to write (exercises/start_v1.py)")

    def merge(self, pair: Pair) -> None:
        """Rewrite every word with each occurrence of ``pair`` replaced by ``pair[0] + pair[1]``,
        left to right, without overlap."""
        raise NotImplementedError("merge is yours to write (exercises/start_v1.py)")
