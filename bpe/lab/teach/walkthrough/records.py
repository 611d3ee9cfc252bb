"""What each merge does, for the page: the pair, its count, the tie, the words holding it, the counts it changed.

The record is kept by v5's merger (exact index, heap selection) through v4's one hook, every change of
a pair count (``_change_pair_count``): the hook sums each pair's change over the merge and keeps the
pairs by count, so a tie is a lookup rather than a scan.  Tokens are shown as GPT-2's merges.txt writes
them (:func:`bpe.io.byte_unicode.encode_token`: a space is ``Ġ``).

>>> merges, records, start = record_merges({b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6, b"es": 2, b"st": 2}, 2)
>>> merges[0], records[0]["count"], records[0]["tie"]["pairs"]
((b's', b't'), 11, [['s', 't'], ['e', 's']])
>>> records[0]["changed"][:2]
[['s', 't', 11, 0], ['e', 's', 11, 2]]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from bpe.io.byte_unicode import encode_token
from bpe.training.merge_loop import Pair
from bpe.training.registry import VARIANTS

#: How many words, changed pairs and tied pairs a merge's record lists (the totals are always given).
WORDS_SHOWN, CHANGES_SHOWN, TIES_SHOWN, START_SHOWN = 6, 10, 6, 16


def shown(tokens) -> list[str]:
    return [encode_token(t) for t in tokens]


class Recorder(VARIANTS["v5"].Merger):
    """v5's merger, which also keeps each merge's net change per pair, and the pairs by count."""

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        super().__init__(pretoken_counts)
        self.by_count: defaultdict[int, set[Pair]] = defaultdict(set)
        for pair, count in self.pair_counts.items():
            self.by_count[count].add(pair)
        self.changes: dict[Pair, int] = {}

    def _change_pair_count(self, pair: Pair, change: int) -> int:
        old = self.pair_counts.get(pair, 0)
        new = super()._change_pair_count(pair, change)
        self.changes[pair] = self.changes.get(pair, 0) + change
        if old:
            self.by_count[old].discard(pair)
        if new:
            self.by_count[new].add(pair)
        return new


def _start(merger: Recorder) -> dict:
    order = sorted(range(len(merger.words)), key=lambda i: -merger.word_counts[i])
    top = sorted(merger.pair_counts.items(), key=lambda item: (item[1], item[0]), reverse=True)[:START_SHOWN]
    return {"n_words": len(merger.words), "n_pretokens": sum(merger.word_counts), "n_pairs": len(merger.pair_counts),
            "words": [[shown(merger.words[i]), merger.word_counts[i]] for i in order[:START_SHOWN]],
            "pairs": [[*shown(pair), count] for pair, count in top]}


def record_merges(pretoken_counts: Mapping[bytes, int], num_merges: int) -> tuple[list, list[dict], dict]:
    """``(merges, records, start)``: the merges, one record per merge, and the words before any merge."""
    merger = Recorder(pretoken_counts)
    start = _start(merger)
    merges, records = [], []
    for _ in range(num_merges):
        pair = merger.select_best_pair()
        if pair is None:
            break
        count = merger.pair_counts[pair]
        tied = sorted(merger.by_count[count], reverse=True)
        holders = sorted(merger.pair_to_words[pair], key=lambda i: (-merger.word_counts[i], i))
        before = {i: merger.words[i] for i in holders[:WORDS_SHOWN]}
        merger.changes = {}
        merger.merge(pair)
        changed = [(p, c) for p, c in merger.changes.items() if c]
        changed.sort(key=lambda item: (-abs(item[1]), item[0]))
        after = merger.pair_counts
        merges.append(pair)
        records.append({
            "count": count,
            "tie": {"pairs": [shown(p) for p in tied[:TIES_SHOWN]], "n": len(tied)} if len(tied) > 1 else None,
            "words": [[shown(old), shown(merger.words[i]), merger.word_counts[i]] for i, old in before.items()],
            "n_words": len(holders),
            "changed": [[*shown(p), after.get(p, 0) - c, after.get(p, 0)] for p, c in changed[:CHANGES_SHOWN]],
            "n_changed": len(changed),
        })
    return merges, records, start
