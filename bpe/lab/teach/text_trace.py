"""The text side of ``bpe trace``: what it is given (``--text``, ``--words``), the other half of a lecture
(a text cut into pre-tokens, a word encoded merge by merge), and tokens as GPT-2 writes them.

**Pre-tokenization** (:func:`pretokenize_pieces`): the text is cut at the special tokens first (each
escaped, the longest first: ``<|endoftext|>`` holds ``|``, which unescaped would mean "or"), and each
piece between them by the GPT-2 pattern.  Every pre-token is labelled with the alternative of the
pattern that matched it (:data:`RULES`: the pattern's alternatives, each named), and the labelled
pattern's cut is tested equal to the plain pattern's.

>>> for piece, label in pretokenize_pieces("it's 42!<|endoftext|>  a", ["<|endoftext|>"]):
...     print(repr(piece), label)
'it' letters
"'s" contraction
' 42' numbers
'!' other
'<|endoftext|>' special
' ' whitespace
' a' letters

**Encoding** (:func:`applied_merges`): a pre-token's bytes, then, as GPT-2 encodes, the pair of lowest
merge rank merged everywhere in it, again and again until no pair of it was ever merged.

>>> merges = [(b"s", b"t"), (b"e", b"st"), (b"o", b"w")]
>>> [(rank, b"".join(pair), [t.decode() for t in tokens]) for rank, pair, tokens in applied_merges(b"newest", merges)]
[(0, b'st', ['n', 'e', 'w', 'e', 'st']), (1, b'est', ['n', 'e', 'w', 'est'])]
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from bpe.counting.plain import count_text
from bpe.errors import BPEError
from bpe.io.byte_unicode import encode_token
from bpe.split.patterns import special_token_regex
from bpe.training.merge_loop import Pair, merge_word, split_into_bytes

DEFAULT_WORDS = "low:5,lower:2,widest:3,newest:6,es:2,st:2"
#: What ``--pretokenize`` cuts without ``--text``: a contraction, numbers, spaces, a newline, a special token.
DEFAULT_TEXT = "It's 2024, and we don't   stop.\nThe end!<|endoftext|>Once upon a time..."
#: The alternatives of :data:`~bpe.split.patterns.GPT2_PATTERN`, in its order, each by its label (the
#: tests hold them, joined by ``|``, to the pattern itself).
RULES = {"contraction": r"'(?:[sdmt]|ll|ve|re)", "letters": r" ?\p{L}+", "numbers": r" ?\p{N}+",
         "other": r" ?[^\s\p{L}\p{N}]+", "whitespace": r"\s+(?!\S)", "whitespace before text": r"\s+"}
#: What each label means, for the terminal and the page.
LABEL_MEANINGS = {
    "contraction": "'s 'd 'm 't 'll 've 're, cut off the word before",
    "letters": "letters, with at most one space before them",
    "numbers": "digits, with at most one space before them",
    "other": "anything neither letter, digit nor space (punctuation), with at most one space before it",
    "whitespace": "a run of spaces, less the last one when text follows (that one joins the next word)",
    "whitespace before text": "whitespace right before text that cannot join it (only one plain space joins a word)",
    "special": "a special token: split out first, never merged and never counted",
}


def parse_words(spec: str) -> dict[bytes, int]:
    """``'low:5,lower:2'`` -> ``{b'low': 5, b'lower': 2}``; a word without ``:n`` counts once.

    >>> parse_words("low:5, lower:2,x")
    {b'low': 5, b'lower': 2, b'x': 1}
    """
    counts: dict[bytes, int] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        word, sep, number = item.rpartition(":")
        if not sep:
            word, number = item, "1"
        if not word:
            raise BPEError(f"--words item {item!r} has no word before ':'")
        try:
            count = int(number)
        except ValueError:
            raise BPEError(f"--words item {item!r}: count {number!r} is not an integer") from None
        if count < 1:
            raise BPEError(f"--words item {item!r}: count must be at least 1")
        key = word.encode("utf-8")
        counts[key] = counts.get(key, 0) + count
    if not counts:
        raise BPEError("--words is empty; give words like 'low:5,lower:2'")
    return counts


def pretokens_from_args(text: str | None, words: str | None, special_tokens: list[str]) -> dict[bytes, int]:
    """The pre-token counts ``bpe trace`` runs on: ``text`` cut into pre-tokens, else the ``words``."""
    if text is not None and words is not None:
        raise BPEError("give --text or --words, not both")
    if text is not None:
        counts = dict(count_text(text, special_tokens))
        if not counts:
            raise BPEError("--text has no pre-tokens")
        return counts
    return parse_words(words if words is not None else DEFAULT_WORDS)


def show_word(word: Sequence[bytes]) -> str:
    """Tokens as GPT-2's merges.txt writes them (a space shows as ``Ġ``, a newline as ``Ċ``)."""
    return " ".join(encode_token(t) for t in word)


def labelled_pattern() -> regex.Pattern:
    """The GPT-2 pattern with each alternative in a group named after its label (``whitespace_before_text``)."""
    return regex.compile("|".join(f"(?P<{label.replace(' ', '_')}>{part})" for label, part in RULES.items()))


def pretokenize_pieces(text: str, special_tokens: Sequence[str]) -> list[tuple[str, str]]:
    """``text`` as ``(piece, label)`` in order: the special tokens (label ``special``) and the pre-tokens."""
    labelled, special = labelled_pattern(), special_token_regex(special_tokens)
    # split with the specials captured: the parts between them at even places, the specials at odd ones
    parts = [text] if special is None else regex.split(f"({special.pattern})", text)
    pieces: list[tuple[str, str]] = []
    for place, part in enumerate(parts):
        if place % 2:
            pieces.append((part, "special"))
        else:
            pieces.extend((m.group(), m.lastgroup.replace("_", " ")) for m in labelled.finditer(part))
    return pieces


def pretokenize_lines(text: str, special_tokens: Sequence[str]) -> list[str]:
    """The pre-tokenization trace for the terminal: each piece, its label, and the rule that cut it."""
    pattern = special_token_regex(special_tokens)
    lines = [f"pre-tokenization of {text!r}"]
    if pattern is not None:
        lines.append(f"1. cut at the special tokens ({', '.join(map(repr, special_tokens))}), escaped and longest "
                     f"first: {pattern.pattern}")
    else:
        lines.append("1. no special tokens: the text is one piece")
    lines.append("2. each piece cut by the GPT-2 pattern; each pre-token labelled with the alternative that matched:")
    pieces = pretokenize_pieces(text, special_tokens)
    width = max((len(repr(piece)) for piece, _ in pieces), default=0)
    for piece, label in pieces:
        rule = "(dropped: never merged across, never counted)" if label == "special" else RULES[label]
        lines.append(f"   {repr(piece):<{width}}  {label:<22} {rule}")
    counted = [piece for piece, label in pieces if label != "special"]
    lines.append(f"{len(counted)} pre-tokens, {len(pieces) - len(counted)} special token(s); the labels:")
    lines += [f"   {label}: {LABEL_MEANINGS[label]}" for label in sorted({lb for _, lb in pieces})]
    return lines


def applied_merges(pretoken: bytes, merges: Sequence[Pair]) -> list[tuple[int, Pair, tuple[bytes, ...]]]:
    """Each merge applied when encoding ``pretoken``: ``(rank, pair, tokens after it)``, lowest rank first."""
    ranks = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    word, applied = split_into_bytes(pretoken), []
    while len(word) > 1:
        rank, pair = min(((ranks[p], p) for p in zip(word, word[1:]) if p in ranks), default=(None, None))
        if pair is None:
            break
        word = merge_word(word, pair)
        applied.append((rank, pair, word))
    return applied


def encoding_lines(text: str, merges: Sequence[Pair], special_tokens: Sequence[str] = ()) -> list[str]:
    """The encoding trace of ``text``: each pre-token's bytes, then each merge applied, lowest rank first."""
    lines = [f"encoding {text!r} with {len(merges)} trained merge(s): each pre-token from its bytes, the pair "
             f"of lowest rank merged first (as GPT-2 encodes)"]
    for piece, label in pretokenize_pieces(text, special_tokens):
        if label == "special":
            lines.append(f"  {piece!r}: a special token, one id of its own")
            continue
        data = piece.encode("utf-8")
        lines.append(f"  {piece!r} ({label}): {show_word(split_into_bytes(data))}")
        for rank, pair, tokens in applied_merges(data, merges):
            lines.append(f"    merge rank {rank:<4} {encode_token(pair[0])} + {encode_token(pair[1])}  "
                         f"-> {show_word(tokens)}")
    return lines
