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

from collections.abc import Sequence

from bpe.errors import BPEError
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


class Rules:
    """What may be merged beyond CS336's rule, each off unless given (``train_bpe``'s options of the same names).

    * ``max_token_length``: the best pair among those whose merged token is at most this many bytes (ties, as
      always, to the larger pair); a longer pair is never merged, the others go on.  A pair's tokens never
      change, so a pair too long once is too long for good: the Merger sets it aside (``set_aside``) and is
      asked again, and the rung's own order does the rest.
    * ``min_frequency`` (HF ``tokenizers``' meaning): a pair counted fewer times is never merged.  The best
      count only falls from merge to merge (a pair made by a merge occurs at most as often as the pair it
      grew from), also among the pairs short enough, so the first such pair ends training.

    Calling it selects the next pair as the rules allow, or ``None`` with :attr:`why` saying why training ends.

    >>> from bpe.running.timer import NullTimer
    >>> from bpe.variants.v1_naive import Merger
    >>> words = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6}
    >>> rules = Rules(min_frequency=7)
    >>> run_merges(Merger(words), 9, NullTimer(), rules=rules), rules.why  # next: (w, est), 6 times
    ([(b's', b't'), (b'e', b'st'), (b'o', b'w'), (b'l', b'ow')], 'the most frequent pair left is counted 6 times, \
fewer than the minimum frequency 7')
    >>> run_merges(Merger(words), 6, NullTimer(), rules=Rules(max_token_length=3))  # (w, est) is passed over
    [(b's', b't'), (b'e', b'st'), (b'o', b'w'), (b'l', b'ow'), (b'n', b'e'), (b'ne', b'w')]
    """

    def __init__(self, min_frequency: int | None = None, max_token_length: int | None = None):
        self.min_frequency, self.max_token_length = min_frequency, max_token_length
        self.why: str | None = None
        self.set_aside_any = False  # whether a pair was too long: the end is then the maximum length's

    def __bool__(self) -> bool:
        return self.min_frequency is not None or self.max_token_length is not None

    def select(self, merger) -> Pair | None:
        pair = merger.select_best_pair()
        longest = self.max_token_length
        if longest is not None:
            while pair is not None and len(pair[0]) + len(pair[1]) > longest:
                merger.set_aside(pair)
                self.set_aside_any = True
                pair = merger.select_best_pair()
            if pair is None and self.set_aside_any:
                self.why = (f"no pair left that makes a token of at most {longest:,} byte{'s' if longest != 1 else ''} "
                            "(the maximum token length)")
        if pair is not None and self.min_frequency is not None:
            count = merger.count_of(pair)
            if count < self.min_frequency:
                self.why = (f"the most frequent pair left is counted {count:,} time{'s' if count != 1 else ''}, "
                            f"fewer than the minimum frequency {self.min_frequency:,}")
                return None
        return pair


def check_rules(merger, rules: Rules | None) -> None:
    """A Merger asked to follow ``rules`` must offer what they call on (:mod:`bpe.training.rung`)."""
    if not rules:
        return
    needed = (["set_aside"] if rules.max_token_length is not None else []) + (
        ["count_of"] if rules.min_frequency is not None else [])
    missing = [name for name in needed if not callable(getattr(merger, name, None))]
    if missing:
        raise BPEError(f"{type(merger).__module__}'s Merger defines no {' or '.join(missing)}, which "
                       f"max_token_length and min_frequency call on (bpe/training/rung.py)")


def replay_merges(merger, merges: Sequence[Pair]) -> None:
    """Make ``merges`` in order, as a run that chose them would have (continued training): each pair the words
    hold is merged, one they do not hold changes nothing and is passed over (``count_of`` says which)."""
    for pair in merges:
        if merger.count_of(pair):
            merger.merge(pair)


# (the contract is named by its path: bpe.training.rung imports this module, so an import here is a cycle)
def run_merges(merger: "bpe.training.rung.Merger", num_merges: int, timer, progress=None,  # noqa: F821
               *, rules: Rules | None = None, initial: Sequence[Pair] = ()) -> list[Pair]:
    """Select and apply up to ``num_merges`` merges; stop early when no pair is left, or none the ``rules``
    allow (:class:`Rules`: its ``why`` then says which).  ``initial``: merges made first (continued training,
    :func:`replay_merges`, timed as ``update``), the first of the ``num_merges`` and of the list returned.

    ``progress`` (a :class:`bpe.running.progress.Progress`, or ``True`` for a bar) hears of each merge.
    """
    progress = make_progress(progress)
    on_merge = progress.on_merge
    num_merges -= len(initial)
    expect = getattr(timer, "expect_merges", None)
    if expect is not None:
        expect(num_merges)
    select, update = timer.stage("select"), timer.stage("update")
    # With no rule the Merger's own method is called: the loop being measured gains no call per merge.
    select_best_pair = merger.select_best_pair if not rules else (lambda: rules.select(merger))
    merges: list[Pair] = []
    try:  # from the bar's start: a Ctrl-C as it is drawn still closes it (and the merger) below
        check_rules(merger, rules)
        if initial:
            with update:
                replay_merges(merger, initial)
        progress.start_merges(num_merges)
        for _ in range(num_merges):
            with select:
                pair = select_best_pair()
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
    return list(initial) + merges
