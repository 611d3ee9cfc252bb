"""What every merge algorithm shares: the loop, the interface, and merging a pair inside one word.

A rung's merge algorithm (its ``Merger``, see :mod:`bpe.training.rung`) has three parts, one per timed stage::

    merger = Merger(pretoken_counts)        # pair_count: build words, pair counts, indexes
    pair = merger.select_best_pair()        # select: the most frequent pair, ties -> larger bytes
    merger.merge(pair)                      # update: rewrite words, keep counts up to date

:func:`run_merges` drives it, so timing, progress bars and early stopping live here once and the
variant files hold nothing but the algorithm.

Tokens are ``bytes`` objects and a pair is a ``(bytes, bytes)`` tuple, so Python's own tuple order
is exactly the CS336 tie-break (compare the pair element-wise; ``max`` prefers the larger).
"""

from __future__ import annotations

from bpe.running.progress import make_progress

Pair = tuple[bytes, bytes]
Word = tuple[bytes, ...]


def split_into_bytes(pretoken: bytes) -> Word:
    """A pre-token as a word of single-byte tokens: ``b"low"`` -> ``(b"l", b"o", b"w")``."""
    return tuple(pretoken[i : i + 1] for i in range(len(pretoken)))


def merge_word(word: Word, pair: Pair) -> Word:
    """Replace every occurrence of ``pair`` in ``word``, left to right, without overlap.

    >>> merge_word((b"a", b"a", b"a"), (b"a", b"a"))
    (b'aa', b'a')
    >>> merge_word((b"n", b"e", b"w", b"e", b"s", b"t"), (b"e", b"s"))
    (b'n', b'e', b'w', b'es', b't')
    """
    first, second = pair
    merged = first + second
    out: list[bytes] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == first and word[i + 1] == second:
            out.append(merged)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


# (the contract is named by its path: bpe.training.rung imports this module, so an import here is a cycle)
def run_merges(merger: "bpe.training.rung.Merger", num_merges: int, timer, progress=None) -> list[Pair]:  # noqa: F821
    """Select and apply up to ``num_merges`` merges; stop early when no pair is left.

    ``progress`` (a :class:`bpe.running.progress.Progress`, or ``True`` for a bar) hears of each merge.
    """
    progress = make_progress(progress)
    on_merge = progress.on_merge
    expect = getattr(timer, "expect_merges", None)
    if expect is not None:
        expect(num_merges)
    select, update = timer.stage("select"), timer.stage("update")
    merges: list[Pair] = []
    try:  # from the bar's start: a Ctrl-C as it is drawn still closes it (and the merger) below
        progress.start_merges(num_merges)
        for _ in range(num_merges):
            with select:
                pair = merger.select_best_pair()
            if pair is None:
                break
            with update:
                merger.merge(pair)
            merges.append(pair)
            timer.merge_done(len(merges))
            on_merge()
    finally:
        progress.close()
        close = getattr(merger, "close", None)  # optional: undo process-wide tuning (v6's gc.freeze)
        if close is not None:
            close()
    return merges
