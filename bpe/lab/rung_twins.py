"""The work a rung does, counted on its own code: counting twins of its structures, swapped in by a subclass.

A rung's ``Merger`` is subclassed here, for the walkthrough only (:mod:`bpe.lab.teach.walkthrough.counting`),
and the subclass swaps the structures the rung keeps (its pair counts, its index, its word list, its heap
functions) for counting twins: a dict whose writes add to a tally, an index whose ``pop`` adds the words it
hands back, a heap push that adds one.  The algorithm that runs is the rung's, line for line; the rung's
files are not touched, so a normal training run never meets a counter (nothing here is imported by training).

Two kinds of swap, as ``tools/ablation/`` swaps v6's techniques:

* an **attribute** the rung keeps on ``self`` (``pair_counts``, ``pair_to_words``, ``words``) is
  replaced after the rung's own build by a counting subclass of the same type holding the same items;
* a **name** a rung's method looks up in its module (``merge_word``, ``Counter``, ``heapq``,
  ``heappush``) is replaced in a copy of that method (:func:`rebound`): the same code object, run with
  the counting name, so the method's bytecode is the rung's own.

Each twin below is written for one kind of rung's structures and takes the rung's module: a rung's row in the
lab's table (:mod:`bpe.lab.rungs`) names the twin that fits it.  Every counter is an operation on a structure,
never a formula: what a metric says is what the rung did.

>>> from bpe import VARIANTS
>>> merger = indexed_twin(VARIANTS["v2"], tally := Tally())({b"low": 5, b"lower": 2, b"newest": 6})
>>> pair = merger.select_best_pair(); merger.merge(pair)
>>> pair, tally["words visited"], tally["pairs scanned"]
((b'w', b'e'), 2, 8)
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from types import FunctionType, ModuleType, SimpleNamespace

Tally = Counter  # how many times each counted operation ran


def rebound(function: FunctionType, **names) -> FunctionType:
    """``function``'s own code object, run with some of the global names it looks up replaced.

    >>> def twice(x): return double(x)
    >>> double = lambda x: 2 * x
    >>> rebound(twice, double=lambda x: -x)(3), twice(3)
    (-3, 6)
    """
    copy = FunctionType(function.__code__, {**function.__globals__, **names}, function.__name__,
                        function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


def counted_call(function, tally: Tally, metric: str):
    """``function``, adding one to ``tally[metric]`` per call."""
    def counting(*args):
        tally[metric] += 1
        return function(*args)
    return counting


def counting_dict(base: type, tally: Tally, *, writes: str | None = None, scans: str | None = None,
                  popped: str | None = None) -> type:
    """A subclass of the dict type ``base`` that counts: each write (set, delete, pop) in ``writes``,
    each key a full scan walks in ``scans``, the size of what ``pop`` returns in ``popped``."""
    class Counting(base):
        def __setitem__(self, key, value):
            if writes:
                tally[writes] += 1
            base.__setitem__(self, key, value)

        def __delitem__(self, key):
            if writes:
                tally[writes] += 1
            base.__delitem__(self, key)

        def pop(self, key, *default):
            found = base.pop(self, key, *default)
            if writes:
                tally[writes] += 1
            if popped and found is not None:
                tally[popped] += len(found)
            return found

        def __iter__(self):
            if scans:
                tally[scans] += len(self)
            return base.__iter__(self)

    Counting.__name__ = Counting.__qualname__ = f"Counting{base.__name__.capitalize()}"
    return Counting


def counting_list(tally: Tally, reads: str, writes: str) -> type:
    """A list that counts its item reads (``words[i]``) in ``reads`` and its item writes in ``writes``."""
    class CountingList(list):
        def __getitem__(self, index):
            tally[reads] += 1
            return list.__getitem__(self, index)

        def __setitem__(self, index, value):
            tally[writes] += 1
            list.__setitem__(self, index, value)

    return CountingList


def recount_twin(rung: ModuleType, tally: Tally) -> type:
    """A rung that recounts every pair after every merge (the reference)."""
    # count_pairs builds a local Counter: its twin counts each `pair_counts[pair] += count` and the
    # pairs max() walks; merge calls merge_word on every word.
    counter = counting_dict(Counter, tally, writes="pairs recounted", scans="pairs scanned")

    class Merger(rung.Merger):
        count_pairs = rebound(rung.Merger.count_pairs, Counter=counter)
        merge = rebound(rung.Merger.merge,
                        merge_word=counted_call(rung.merge_word, tally, "words rewritten"))
    return Merger


def indexed_twin(rung: ModuleType, tally: Tally, *, scans: bool = True, **methods) -> type:
    """A rung that keeps v2's structures (``pair_counts``, ``pair_to_words``): both swapped after the rung's
    build; ``methods`` are the rung's methods to run with some names swapped (a heap's functions)."""
    counts = counting_dict(dict, tally, writes="pair counts written", scans="pairs scanned" if scans else None)
    index = counting_dict(defaultdict, tally, popped="words visited")

    def __init__(self, pretoken_counts):
        rung.Merger.__init__(self, pretoken_counts)
        self.pair_counts = counts(self.pair_counts)
        self.pair_to_words = index(set, self.pair_to_words)

    return type("Merger", (rung.Merger,), {"__init__": __init__, **methods})


def heap_twin(rung: ModuleType, tally: Tally) -> type:
    """v2's structures and a ``heapq`` heap with lazy deletion: the heap's pushes and stale pops counted too."""
    # the live top is peeked at, never popped, so each heappop is a stale pop
    heap = SimpleNamespace(heappush=counted_call(heapq.heappush, tally, "heap pushes"),
                           heappop=counted_call(heapq.heappop, tally, "stale pops"), heapify=heapq.heapify)
    return indexed_twin(rung, tally, scans=False, merge=rebound(rung.Merger.merge, heapq=heap),
                    select_best_pair=rebound(rung.Merger.select_best_pair, heapq=heap))


def str_words_twin(rung: ModuleType, tally: Tally) -> type:
    """Words as ``str`` of token characters in a list, a lazy index and a floored heap (v6's structures)."""
    stale = counted_call(heapq.heappop, tally, "stale pops")
    rekeyed = counted_call(heapq.heapreplace, tally, "stale pops")
    pushed = counted_call(heapq.heappush, tally, "heap pushes")

    class Heap(rung.FlooredHeap):
        offer = rebound(rung.FlooredHeap.offer, heappush=pushed)
        pop_live = rebound(rung.FlooredHeap.pop_live, heappop=stale, heapreplace=rekeyed)

    counts = counting_dict(dict, tally, writes="pair counts written")
    words = counting_list(tally, reads="words visited", writes="words rewritten")

    class Merger(rung.Merger):
        def build_structures(self, word_list, word_counts):
            super().build_structures(word_list, word_counts)
            # rewrite_words reads words[i] once per distinct listed id and writes it back unless stale
            self.words = words(self.words)
            self.pair_counts = self.queue.pair_counts = counts(self.pair_counts)

        def new_queue(self):
            return Heap(self.pair_counts, self.token_keys)

        def merge(self, pair):
            rewritten = tally["words rewritten"]
            visited = tally["words visited"]
            super().merge(pair)
            tally["stale visits"] += (tally["words visited"] - visited) - (tally["words rewritten"] - rewritten)
    return Merger


def compiled_twin(rung: ModuleType, tally: Tally) -> type:
    """A compiled merge, which cannot be given counting twins: it counts its own work (the counters its
    summary reports: ``stale_pops``, ``visits``, ``stale_visits``), and each call adds what they moved by."""

    class Merger(rung.Merger):
        def select_best_pair(self):
            popped = self.stale_pops
            pair = super().select_best_pair()
            tally["stale pops"] += self.stale_pops - popped
            return pair

        def merge(self, pair):
            read, stale = self.visits, self.stale_visits
            super().merge(pair)
            tally["words visited"] += self.visits - read
            tally["stale visits"] += self.stale_visits - stale
    return Merger
