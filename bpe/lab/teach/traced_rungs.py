"""``bpe trace``'s view of the rungs whose state is not kept as v2 keeps it: ``trace_state()`` for v6, v7 and v8.

The trace reads a merger's pair counts, words and index by attribute (:mod:`bpe.lab.teach.trace`), in bytes.
v6 keeps words as strings of token ids, v7 spreads them over processes and v8 keeps them in C arrays,
so each gets, here and for the trace only, a subclass of its ``Merger`` that adds ``trace_state()``:
its state with pairs and words as bytes.  The rung itself carries nothing for the trace, as the
walkthrough's counting subclasses (:mod:`bpe.lab.teach.walkthrough.counting`) leave the rungs untouched.

>>> merger = traced("v6")({b"low": 5, b"lower": 2})
>>> merger.merge((b"o", b"w")); merger.trace_state()["words"]
[((b'l', b'ow'), 5), ((b'l', b'ow', b'e', b'r'), 2)]
"""

from __future__ import annotations

from types import SimpleNamespace

from bpe.training.merge_loop import Pair
from bpe.training.registry import VARIANTS
from bpe.training.shards import joined_shards


def v6_state(merger) -> dict:
    """v6's state in bytes; the index shown exact (the stale entries its merge would skip left out)."""
    token_bytes, words = merger.token_bytes, merger.words

    def as_bytes(pair: str) -> Pair:
        return token_bytes[ord(pair[0])], token_bytes[ord(pair[1])]

    index = {as_bytes(pair): sorted(i for i in set(ids) if pair in words[i])
             for pair, ids in merger.pair_to_words.items()}
    return {
        "pair_counts": {as_bytes(pair): count for pair, count in merger.pair_counts.items()},
        "words": [(tuple(token_bytes[ord(t)] for t in word), count) for word, count in zip(words, merger.word_counts)],
        "pair_to_words": {pair: ids for pair, ids in index.items() if ids},
        "heap_size": len(merger.queue.heap),
    }


def v7_state(merger) -> dict:
    """v7's state as v6's: the words of every shard, numbered across shards (fetched from the processes)."""
    processes = merger.shard_processes
    if processes is None:  # one shard, or gathered: v6's own state
        return v6_state(merger)
    words, word_counts, index = joined_shards(processes.states(merger.parent_shard))
    return v6_state(SimpleNamespace(token_bytes=merger.token_bytes, pair_counts=merger.pair_counts,
                                    queue=merger.queue, words=words, word_counts=word_counts, pair_to_words=index))


def v8_state(merger) -> dict:
    """v8's state read from its compiled arrays (their ``tokens``, ``live_pairs()``, ``words()``, ``holders()``)."""
    tokens = merger.tokens

    def as_bytes(pair: tuple[int, int]) -> Pair:
        return tokens[pair[0]], tokens[pair[1]]

    live = merger.live_pairs()
    words = [(tuple(tokens[t] for t in word), count) for word, count in merger.words()]
    index = {}
    for pair in live:
        first, second = as_bytes(pair)
        holders = [i for i in merger.holders(*pair)
                   if any(a == first and b == second for a, b in zip(words[i][0], words[i][0][1:]))]
        if holders:
            index[(first, second)] = holders
    return {"pair_counts": {as_bytes(pair): count for pair, count in live.items()}, "words": words,
            "pair_to_words": index, "heap_size": merger.heap_entries}


#: The rungs whose state the trace reads through ``trace_state()``, and how.
STATES = {"v6": v6_state, "v7": v7_state, "v8": v8_state}


def traced(name: str) -> type:
    """The rung ``name``'s ``Merger`` as the trace runs it: with ``trace_state()`` where :data:`STATES` has one."""
    merger = VARIANTS[name].Merger
    state = STATES.get(name)
    if state is None:
        return merger
    return type(merger.__name__, (merger,), {"trace_state": state})
