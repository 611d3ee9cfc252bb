"""One recorder of a training run's merges, for ``bpe trace`` and the walkthrough's page.

:class:`Recorder` makes a merger's merges one at a time and records each (:class:`Merge`): the pair and its
count, the pairs tied with it, the words holding it before and after, the pair counts it changed.  It records
any merger, a rung or a student's: :func:`merger_state` reads its state by attribute, whatever it keeps,

==================  ======================================================================
``pair_counts``     ``{(bytes, bytes): count}`` kept between merges (v2+); else ``count_pairs()``
``words``           a list of words (tuples of ``bytes``), with ``word_counts`` beside it, or a
                    list of ``(word, count)`` tuples (v1), or a dict ``{word: count}``
``pair_to_words``   ``{pair: word ids}``, the inverted index (v2+)
``stale_pops``      an ``int`` that grows by one per stale heap entry popped (v5+)
``heap``            a list of heap entries, live and stale (v5+); only its length is read
==================  ======================================================================

or through its ``trace_state() -> dict`` of those keys (and ``heap_size``), where its internals differ.
Each merge is read from snapshots of the whole state, so what it changed is all that differs (the trace's
small examples); ``live`` reads v2's structures in place instead, and a merge costs what the merge visits:
the counts it changed are those of the pairs in the words it rewrote (the walkthrough's thousands of merges).

>>> from bpe.training.registry import VARIANTS
>>> recorder = Recorder(VARIANTS["v2"].Merger({b"low": 5, b"widest": 3, b"newest": 6, b"es": 2, b"st": 2}))
>>> merge = recorder.step()
>>> merge.pair, merge.count, merge.tied, merge.changed[:2]
((b's', b't'), 11, [(b's', b't'), (b'e', b's')], [((b's', b't'), 11, 0), ((b'e', b's'), 11, 2)])
>>> merge.words[0]
(1, (b'w', b'i', b'd', b'e', b's', b't'), (b'w', b'i', b'd', b'e', b'st'), 3)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bpe.errors import BPEError
from bpe.training.merge_loop import Pair, Word


@dataclass
class Merge:
    """One merge as recorded (``pair`` ``None``: no pair was left, nothing merged)."""

    pair: Pair | None
    states: tuple[dict, dict, dict]  # the state before the selection, after it, after the merge (``live``: as now)
    count: int | None = None  # the pair's count before the merge (``None``: the merger counted no such pair)
    tied: list[Pair] | None = None  # every pair at that count, larger pairs first
    words: list[tuple[int, Word, Word, int]] | None = None  # (id, before, after, count) of each word holding it
    changed: list[tuple[Pair, int, int]] | None = None  # (pair, before, after), the largest change first


def merger_state(merger) -> dict:
    """The merger's state in one form, whatever the merger keeps: ``trace_state()``'s keys first, then the
    attributes of the table above.  ``words`` is ``(word, count)`` for each word; ``pair_counts`` holds the
    live pairs (count > 0), and ``kept`` says whether the merger keeps them or they were recounted (by its
    ``count_pairs()``, else from its words)."""
    hook = getattr(merger, "trace_state", None)
    state = dict(hook()) if callable(hook) else {}
    for name in ("pair_counts", "pair_to_words", "stale_pops", "heap"):
        if name not in state:
            state[name] = getattr(merger, name, None)
    if "heap_size" not in state:
        state["heap_size"] = None if state["heap"] is None else len(state["heap"])
    words = state["words"] = _words(merger, state.get("words"))
    counts, state["kept"] = state["pair_counts"], True
    if counts is None:
        count_pairs, state["kept"] = getattr(merger, "count_pairs", None), False
        counts = count_pairs() if count_pairs is not None else _recount(words)
    state["pair_counts"] = {pair: count for pair, count in counts.items() if count > 0}
    return state


def _words(merger, listed) -> list[tuple[Word, int]]:
    """``(word, count)`` from ``trace_state()["words"]``, else ``words`` with ``word_counts``, a list of
    ``(word, count)`` or a dict ``{word: count}``."""
    if listed is not None:
        return [(tuple(w), c) for w, c in listed]
    words, counts = getattr(merger, "words", None), getattr(merger, "word_counts", None)
    try:
        if counts is not None:
            return list(zip(words, counts))
        if isinstance(words, Mapping):
            return [(tuple(w), c) for w, c in words.items()]
        return [(tuple(w), c) for w, c in words]
    except (TypeError, ValueError):
        raise BPEError(f"cannot trace {type(merger).__module__}: its Merger's words are not a list of "
                       f"words with word_counts, of (word, count) pairs, or a dict word -> count; define "
                       f"trace_state() (bpe/lab/teach/recorder.py)") from None


def _recount(words: Sequence[tuple[Word, int]]) -> dict[Pair, int]:
    counts: dict[Pair, int] = {}
    for word, count in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + count
    return counts


class _Live(Sequence):
    """v2's words read in place as :func:`merger_state` lists them, ``(word, count)``."""

    def __init__(self, merger):
        self.words, self.counts = merger.words, merger.word_counts

    def __getitem__(self, i):
        return self.words[i], self.counts[i]

    def __len__(self):
        return len(self.words)


def ranked(counts: Mapping[Pair, int]) -> list[tuple[Pair, int]]:
    """Pairs in selection order: higher count first, then the larger byte pair."""
    return sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)


class Recorder:
    """Makes ``merger``'s merges one at a time (:meth:`step`), each recorded; ``merges`` are those made, and
    ``state`` the merger's state now (at first: before any merge)."""

    def __init__(self, merger, live: bool = False):
        self.merger, self.live, self.merges = merger, live, []
        self.state = merger_state(merger)
        self.by_count: defaultdict[int, set[Pair]] = defaultdict(set)  # a tie is a lookup, not a scan
        for pair, count in self.state["pair_counts"].items():
            self.by_count[count].add(pair)

    def read(self) -> dict:
        """The merger's state now: a snapshot, or (``live``) v2's structures themselves."""
        if not self.live:
            return merger_state(self.merger)
        merger = self.merger
        return {"pair_counts": merger.pair_counts, "pair_to_words": merger.pair_to_words, "words": _Live(merger)}

    def step(self) -> Merge:
        """The next merge: the merger selects its pair and merges it."""
        before = self.state
        pair = self.merger.select_best_pair()
        selected = self.read()
        if pair is None:
            self.state = selected
            return Merge(None, (before, selected, selected))
        count, index, words = before["pair_counts"].get(pair), before["pair_to_words"], before["words"]
        tied = sorted(self.by_count[count], reverse=True)
        if index is not None:
            ids = sorted(index.get(pair, ()))
        else:
            ids = [i for i, (word, _) in enumerate(words) if pair in zip(word, word[1:])]
        held = [(i, *words[i]) for i in ids]
        self.merger.merge(pair)
        self.merges.append(pair)
        self.state = after = self.read()
        held = [(i, old, after["words"][i][0], n) for i, old, n in held]
        changed = self._changed(before["pair_counts"], after["pair_counts"], held)
        for changed_pair, old, new in changed:
            if old:
                self.by_count[old].discard(changed_pair)
            if new:
                self.by_count[new].add(changed_pair)
        return Merge(pair, (before, selected, after), count, tied, held, changed)

    def _changed(self, before: Mapping[Pair, int], after: Mapping[Pair, int], held) -> list[tuple[Pair, int, int]]:
        """The counts that changed, ``(pair, before, after)``: every difference of two snapshots, or (``live``,
        one dict before and after) the net change of the pairs in the words rewritten."""
        if self.live:
            net: dict[Pair, int] = {}
            for _, old, new, count in held:
                for pair in zip(old, old[1:]):
                    net[pair] = net.get(pair, 0) - count
                for pair in zip(new, new[1:]):
                    net[pair] = net.get(pair, 0) + count
            changes = [(pair, after.get(pair, 0) - d, after.get(pair, 0)) for pair, d in net.items() if d]
        else:
            changes = [(pair, before.get(pair, 0), after.get(pair, 0)) for pair in before.keys() | after.keys()
                       if before.get(pair, 0) != after.get(pair, 0)]
        return sorted(changes, key=lambda change: (-abs(change[2] - change[1]), change[0]))
