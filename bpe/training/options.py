"""The options of ``train_bpe`` beyond CS336's, each off by default so that CS336's merges stay as they are:
checked here with the other arguments (phase 1), and the vocab of a continued run.

* ``min_count``: the pre-tokens counted fewer times are dropped before the merges (``at_least`` in
  :mod:`bpe.training.train`), as SentencePiece trims rare words;
* ``min_frequency`` (HF ``tokenizers``' meaning): a pair counted fewer times is never merged, so training
  stops early and says why.  Not ``min_count``, which drops the rare *pre-tokens* before any merge;
* ``max_token_length``: no merge makes a token longer than this many bytes; a pair too long is passed over
  and the others go on (both rules: :class:`~bpe.training.merge_loop.Rules`);
* ``initial_merges``: continued training.  The merges of a saved tokenizer are made first, in order, and
  training goes on from there (:func:`~bpe.training.merge_loop.replay_merges`): every id and merge is kept,
  and on the same corpus the result is one run's to the larger vocab.  A list of pairs lays the vocab out
  as ``train_bpe`` does (bytes, special tokens, merges); a :class:`~bpe.io.tokenizer.Tokenizer`
  (``load_tokenizer(DIR)``) keeps its vocab as it is, its special tokens too, and numbers the new tokens
  after its last id;
* ``pattern``: how the text is cut into pre-tokens, GPT-2's by default (``cl100k``, ``o200k`` or a regex of
  your own: :mod:`bpe.split.patterns`); a cluster counts by GPT-2's alone.

>>> continued = check_initial_merges([(b"l", b"o"), (b"lo", b"w")], ["<|endoftext|>"], 300)
>>> len(continued.merges), continued.vocab is None
(2, True)
>>> check_initial_merges([(b"lo", b"w")], [], 300)
Traceback (most recent call last):
bpe.errors.BPEError: initial_merges[0] (b'lo', b'w') uses b'lo', which is neither a byte nor made by an earlier merge
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bpe.errors import ArgumentError, BPEError
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name
from bpe.training.merge_loop import Pair

Vocab = dict[int, bytes]


def stopped_early(made: int, asked: int, bytes_used: int | None = None, why: str | None = None) -> str | None:
    """The line saying that training stopped before the vocab asked for, and why; ``None`` if it did not.
    ``why``: what an option said (:class:`~bpe.training.merge_loop.Rules`; the observer's ``stopped``).

    >>> stopped_early(0, 243, 0)
    'stopped early: 0 of 243 merges: the text is empty (no pair to merge)'
    >>> stopped_early(12, 243)
    'stopped early: 12 of 243 merges: no pair left to merge (every pre-token is a single token)'
    """
    if made >= asked:
        return None
    if made == 0 and bytes_used == 0:
        return f"stopped early: 0 of {asked:,} merges: the text is empty (no pair to merge)"
    if why is not None:
        return f"stopped early: {made:,} of {asked:,} merges: {why}"
    return f"stopped early: {made:,} of {asked:,} merges: no pair left to merge (every pre-token is a single token)"


def check_min_count(min_count) -> None:
    _check_at_least_1(min_count, "min_count", "a count", "or omit it to keep every pre-token")


def check_min_frequency(min_frequency) -> None:
    _check_at_least_1(min_frequency, "min_frequency", "a count",
                      "or omit it to merge every pair, however rare; min_count is another option, which drops rare "
                      "pre-tokens before any merge")


def check_max_token_length(max_token_length) -> None:
    _check_at_least_1(max_token_length, "max_token_length", "a number of bytes", "or omit it for no limit")


def _check_at_least_1(value, parameter: str, what: str, fix: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        why = f"must be {what} of at least 1, got {value!r}"
        raise ArgumentError(f"{parameter} {why}", f"--{parameter.replace('_', '-')} {why} ({fix})")


@dataclass(frozen=True)
class Continued:
    """What a run continues from: the merges it makes first, and the vocab it keeps (``None``: laid out as
    :func:`~bpe.training.train.build_vocab` lays out every run's)."""

    merges: list[Pair]
    vocab: Vocab | None = None

    def vocab_after(self, merges: Sequence[Pair]) -> Vocab:
        """The kept vocab, then one id per merge past the kept ones, after its last id."""
        vocab = dict(self.vocab or {})
        next_id = max(vocab, default=-1) + 1
        for first, second in merges[len(self.merges):]:
            vocab[next_id] = first + second
            next_id += 1
        return vocab


def check_initial_merges(initial_merges, special_tokens: list[str], vocab_size: int) -> Continued:
    """``initial_merges`` (a list of pairs, or a tokenizer) checked against the run's special tokens and
    vocab size: a :class:`Continued`, or one :class:`BPEError` naming the problem."""
    if initial_merges is None:
        return Continued([])
    if isinstance(initial_merges, (str, bytes)):
        raise BPEError("initial_merges must be a list of (bytes, bytes) pairs or a Tokenizer "
                       f"(bpe.load_tokenizer(DIR)), not {type(initial_merges).__name__}")
    if hasattr(initial_merges, "vocab") and hasattr(initial_merges, "merges"):  # a Tokenizer: its layout kept
        kept = list(getattr(initial_merges, "special_tokens", None) or [])
        if kept != special_tokens:
            raise ArgumentError(
                f"special_tokens {special_tokens!r} differ from those of the tokenizer being continued, {kept!r}: "
                "continued training keeps its special tokens and their ids, so give the same ones",
                f"--special {special_tokens!r} differs from the special tokens of the tokenizer being continued, "
                f"{kept!r}: continued training keeps them and their ids (omit --special to take them)")
        merges, vocab = _checked_pairs(initial_merges.merges), dict(initial_merges.vocab)
        held = len(vocab)
    else:
        merges, vocab = _checked_pairs(initial_merges), None
        held = 256 + len(special_tokens) + len(merges)
    if vocab_size < held:
        raise ArgumentError(f"vocab_size {vocab_size:,} is smaller than the tokenizer being continued, which holds "
                            f"{held:,} tokens: continued training only adds tokens",
                            f"--vocab-size {vocab_size:,} is smaller than the tokenizer being continued, which holds "
                            f"{held:,} tokens: continued training only adds tokens")
    return Continued(merges, vocab)


def _checked_pairs(merges) -> list[Pair]:
    """The merges as a list of pairs, each joining bytes or tokens earlier merges made."""
    try:
        merges = list(merges)
    except TypeError:
        raise BPEError(f"initial_merges must be a list of (bytes, bytes) pairs, got {type(merges).__name__}") from None
    made = {bytes([b]) for b in range(256)}
    for number, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, bytes) for t in pair)):
            raise BPEError(f"initial_merges[{number}] must be a pair of bytes, got {pair!r}")
        unmade = next((token for token in pair if token not in made), None)
        if unmade is not None:
            raise BPEError(f"initial_merges[{number}] {tuple(pair)!r} uses {unmade!r}, which is neither a byte nor "
                           "made by an earlier merge")
        made.add(pair[0] + pair[1])
    return [tuple(pair) for pair in merges]


def check_pattern(pattern, cluster=None) -> None:
    """One line for a pattern that is not a name or a regex; and for another than GPT-2's on a cluster, whose
    counting tasks split by GPT-2's alone."""
    if pattern_name(pattern) != DEFAULT_PATTERN and cluster is not None:
        raise ArgumentError(f"a cluster counts by GPT-2's pattern alone, not pattern {pattern!r}: count locally",
                            f"--cluster counts by GPT-2's pattern alone, not --pattern {pattern!r}: count locally")
