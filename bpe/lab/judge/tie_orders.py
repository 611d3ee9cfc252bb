"""Which order a trainer broke a tie by, when not CS336's: the orders students compare pairs by instead.

CS336 breaks a tie between equally frequent pairs by the larger pair, its two tokens compared as byte
strings (``max`` by ``(count, pair)``).  The orders met instead agree with it on most ties, so only a
corpus with the right ties shows them (:mod:`bpe.lab.judge.probe` has one):

* the tokens decoded as text (``errors="replace"``): for whole characters text order is byte order, but
  a token holding part of a character reads ``'\\ufffd'``, above the characters its bytes sort below
  (``b"\\xc3"`` < ``b"\\xc3\\xa9"``, yet ``"\\ufffd"`` > ``"é"``);
* decoded with ``errors="ignore"``: part of a character reads as nothing, below the letters its bytes
  sort above;
* the two tokens joined (``a + b``): ``(b"g", b"z")`` is below ``(b"gh", b"i")`` as a pair, above it joined;
* token ids: a merged token's id (256 and up) is above every single byte's, whatever its bytes;
* GPT-2's printable characters (:mod:`bpe.io.byte_unicode`): the space and the bytes 0x7F-0xA0 and 0xAD
  read U+0100 and above, above letters whose bytes are larger;
* the pair met first: a ``max`` over the counts alone keeps the first of equal counts.

The last two are named only when the choice is not simply the smaller pair, which explains any wrong
choice between two pairs (a space sorts above letters as a GPT-2 character too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bpe.io.byte_unicode import encode_token
from bpe.training.merge_loop import Pair


def token_ids(before: Sequence[Pair]) -> Callable[[Pair], tuple[int, int]]:
    """A pair as the ids a trainer numbering its merges after the 256 bytes gives its tokens (the special
    tokens' ids, wherever they go, change no order among these)."""
    ranks: dict[bytes, int] = {}
    for i, (a, b) in enumerate(before):
        ranks.setdefault(a + b, 256 + i)
    return lambda pair: tuple(t[0] if len(t) == 1 else ranks.get(t, 256 + len(before)) for t in pair)


@dataclass(frozen=True)
class Order:
    """A wrong order: a trainer taking the ``max`` of the tied pairs by ``key`` chose as it did."""

    key: Callable[[Pair], object]
    how: str  # said of the choice; ``{mine}`` and ``{theirs}`` are the two pairs' keys
    weak: bool = False  # named only when the choice is not simply the smaller pair


def wrong_orders(tied: Sequence[Pair], before: Sequence[Pair]) -> list[Order]:
    """Each wrong order for the ``tied`` pairs (in the order a trainer's words meet them) after ``before``."""
    def decoded(errors: str) -> Callable[[Pair], tuple[str, str]]:
        return lambda pair: (pair[0].decode("utf-8", errors), pair[1].decode("utf-8", errors))

    text = ("byte order and text order disagree here: decoded as text (errors='{}'), a token holding part of a "
            "character reads {}, so the chosen pair reads {{mine!r}} and the byte-larger one {{theirs!r}}")
    return [
        Order(decoded("replace"), text.format("replace", "'\ufffd' (U+FFFD), above whole characters whose bytes "
                                                         "sort above its own")),
        Order(decoded("ignore"), text.format("ignore", "as nothing, below whole characters whose bytes sort below "
                                                       "its own")),
        Order(lambda pair: pair[0] + pair[1], "it is the larger with each pair's two tokens joined ({mine!r} against "
              "{theirs!r}), not compared first token, then second"),
        Order(token_ids(before), "it is the larger by token ids ({mine} against {theirs}): a merged token's id (256 "
              "and up) is above every single byte's, whatever its bytes"),
        Order(lambda pair: (encode_token(pair[0]), encode_token(pair[1])), "it is the larger as GPT-2's printable "
              "characters ({mine!r} against {theirs!r}; bytes_to_unicode reads the space and the bytes 0x7F-0xA0 "
              "and 0xAD as U+0100 and above)", weak=True),
        Order(lambda pair: -list(tied).index(pair), "it is the pair met first in the words (a max over the counts "
              "alone keeps the first of equal counts)", weak=True),
    ]


#: How a tie's sentence opens and ends (:func:`tie_explanation`), so that a sentence can be told apart.
TIE_OPENING = "tie broken the wrong way: "
TIE_RULE = "; CS336 breaks ties by the larger pair (compare the byte strings: max by (count, pair))"


def tie_explanation(mine: Pair, theirs: Pair, count: int, tied: Sequence[Pair], before: Sequence[Pair],
                    name: str, name_order: bool = True) -> str:
    """The sentence for a tie broken the wrong way: ``mine`` chosen over ``theirs`` (CS336's) among ``tied``
    (the pairs of the top count, in the order a trainer's words meet them) after the merges ``before``,
    naming (with ``name_order``) the first wrong order under which ``mine`` is the largest and ``theirs``
    below it.  Two tied pairs agree with several orders at once; the tie probe, one tie per order, tells
    them apart (:func:`bpe.lab.judge.probe.settled_tie`).

    >>> tie_explanation((b"g", b"z"), (b"gh", b"i"), 5, [(b"gh", b"i"), (b"g", b"z")], [(b"g", b"h")], "mine")
    "tie broken the wrong way: both pairs occur 5 times and mine chose the smaller; it is the larger with each \
pair's two tokens joined (b'gz' against b'ghi'), not compared first token, then second; CS336 breaks ties by the \
larger pair (compare the byte strings: max by (count, pair))"
    """
    smaller = mine == min(tied)
    chose = "the smaller" if smaller else f"neither the larger nor the smallest of the {len(tied)} tied pairs"
    why = ""
    for order in wrong_orders(tied, before) if name_order else ():
        if order.key(mine) == max(map(order.key, tied)) != order.key(theirs) and not (smaller and order.weak):
            why = "; " + order.how.format(mine=order.key(mine), theirs=order.key(theirs))
            break
    return f"{TIE_OPENING}both pairs occur {count:,} times and {name} chose {chose}{why}{TIE_RULE}"
