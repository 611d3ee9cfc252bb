"""Counts in parts: how a rung's counts travel from a cluster's counting tasks to their sums.

A counting task splits its counts into ``P`` parts by a hash of the pre-token, so that part ``p`` of every
task can be summed by one task, and the sums joined without adding (:mod:`bpe.corpus.cluster` runs the
three steps).  A rung that keeps its counts its own way sends them so (v9: its arrays); every other rung's
counts go as dicts, each part pickled whole.
"""

from __future__ import annotations

import functools
import pickle
from collections.abc import Callable, Sequence

from bpe.counting.documents import texts_counter
from bpe.counting.parallel import split_into_parts
from bpe.counting.plain import PretokenCounts, add_counts


def parts_of(rung) -> tuple[Callable, Callable, Callable]:
    """How the rung's counts go in parts: ``(count_parts, sum_parts, joined_parts)``.  A rung that keeps its
    counts its own way sends them so (v9: its arrays, :func:`bpe.variants.v9_counting_compiled.count_parts`);
    every other rung counts with its counter of texts and sends dicts, each part pickled as one object."""
    own = [getattr(rung, name, None) for name in ("count_parts", "sum_parts", "joined_parts")]
    if all(own):
        return tuple(own)
    return functools.partial(count_dict_parts, texts_counter(rung)), sum_dict_parts, joined_dict_parts


def count_dict_parts(counter: Callable, texts, special_tokens: Sequence[str], parts: int) -> list[bytes]:
    """The texts counted by the rung's counter of texts (``workers=1``: this thread), split into ``parts``
    dicts by pre-token (:func:`bpe.counting.parallel.split_into_parts`), each pickled as one object: Dask
    would otherwise serialize a dict's keys one by one, a hundred times the counting's cost on web text."""
    counts = counter(texts, special_tokens, workers=1)
    split = split_into_parts(counts if isinstance(counts, dict) else dict(counts.items()), parts)
    counts.close()
    return [pickle.dumps(part, pickle.HIGHEST_PROTOCOL) for part in split]


def sum_dict_parts(*parts: bytes) -> bytes:
    """One reduce task: part ``p`` of every map task, summed into the largest (the cost is the others'),
    pickled again for the way to the training process."""
    counts = sorted((pickle.loads(part) for part in parts), key=len, reverse=True)
    total = counts[0] if counts else {}
    for more in counts[1:]:
        add_counts(total, more)
    return pickle.dumps(total, pickle.HIGHEST_PROTOCOL)


def joined_dict_parts(parts: Sequence[bytes]) -> PretokenCounts:
    """The summed parts, disjoint, joined in the training process with ``dict.update`` (C, no addition)."""
    total = PretokenCounts()
    for part in parts:
        dict.update(total, pickle.loads(part))
    return total
