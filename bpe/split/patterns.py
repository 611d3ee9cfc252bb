"""The split's rules: the pre-tokenization pattern and the special tokens split out before it.

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token, and the special tokens themselves are never
counted.  Each piece is then cut by the GPT-2 pattern.  Every counter and every encoder cuts by these
two rules, whether it runs the pattern (``regex.findall``, :mod:`bpe.counting.plain`), its fast twin
(:mod:`bpe.split.fast`) or the compiled scanner (``_gpt2_scanner.pxi`` beside this file).

>>> GPT2_REGEX.findall("don't stop, 42x")
['don', "'t", ' stop', ',', ' 42', 'x']
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

#: The GPT-2 pre-tokenization pattern (Radford et al. 2019), as given in the CS336 handout.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)


def special_token_regex(special_tokens: Sequence[str]) -> regex.Pattern | None:
    """A pattern matching any special token, longest first so overlapping tokens resolve to the longest."""
    if not special_tokens:
        return None
    alternatives = sorted(set(special_tokens), key=len, reverse=True)
    return regex.compile("|".join(regex.escape(token) for token in alternatives))


def split_on_special_tokens(text: str, special_tokens: Sequence[str]) -> list[str]:
    """The pieces of ``text`` between special tokens (the tokens themselves are dropped).

    >>> split_on_special_tokens("a<|x|>b<|x|><|x|>c", ["<|x|>"])
    ['a', 'b', '', 'c']
    """
    pattern = special_token_regex(special_tokens)
    return [text] if pattern is None else pattern.split(text)
