"""What ``bpe trace`` reads of a rung whose state is not kept as v2 keeps it: its ``trace_state()``.

A rung that keeps v2's attributes (``pair_counts``, ``words``, ``pair_to_words``) is read as it is; for the
others, a rung's row in the lab's table (:mod:`bpe.lab.rungs`) names the reader below that fits its
structures, and the trace (:mod:`bpe.lab.teach.trace`) gives its ``Merger`` a ``trace_state()`` from it.  Each
returns the same picture in bytes: the pair counts, the words, the index shown exact (the stale entries a
lazy index keeps left out) and the heap's size.
"""

from __future__ import annotations

from types import SimpleNamespace

from bpe.training.merge_loop import Pair
from bpe.variants._v7_shards import joined_shards


def str_words_state(merger) -> dict:
    """The state of words kept as ``str`` of token characters (v6's), in bytes; the index shown exact (the stale
    entries its merge would skip left out)."""
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


def shards_state(merger) -> dict:
    """The state of words kept in shard processes (v7's) as v6's: the words of every shard, numbered across shards
    (fetched from the processes)."""
    processes = merger.shard_processes
    if processes is None:  # one shard, or gathered: v6's own state
        return str_words_state(merger)
    words, word_counts, index = joined_shards(processes.states(merger.parent_shard))
    return str_words_state(SimpleNamespace(token_bytes=merger.token_bytes, pair_counts=merger.pair_counts,
                                    queue=merger.queue, words=words, word_counts=word_counts, pair_to_words=index))


def compiled_state(merger) -> dict:
    """A compiled merge's state read from its arrays (their ``tokens``, ``live_pairs()``, ``words()``,
    ``holders()``)."""
    tokens = merger.tokens

    def as_bytes(pair: tuple[int, int]) -> Pair:
        return tokens[pair[0]], tokens[pair[1]]

    live = merger.live_pairs()
    words = [(tuple(tokens[t] for t in word), count) for word, count in merger.words()]
    index = {as_bytes(pair): [i for i in merger.holders(*pair) if as_bytes(pair) in zip(words[i][0], words[i][0][1:])]
             for pair in live}
    return {"pair_counts": {as_bytes(pair): count for pair, count in live.items()}, "words": words,
            "pair_to_words": {pair: ids for pair, ids in index.items() if ids}, "heap_size": merger.heap_entries}
