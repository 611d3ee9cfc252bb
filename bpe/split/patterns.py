r"""The split's rules: the pre-tokenization pattern, by name or a custom regex, and the special tokens split
out before it.

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token, and the special tokens themselves are never
counted.  Each piece is then cut by the pattern.  Every counter and every encoder cuts by these two
rules, whether it runs the pattern (``regex.findall``, :mod:`bpe.counting.plain`), GPT-2's fast twin
(:mod:`bpe.split.fast`) or a compiled scanner (``_gpt2_scanner.pxi``, ``_cl100k_scanner.pxi``,
``_o200k_scanner.pxi`` beside this file, gathered by ``_scanners.pxi``).

Three patterns have names: ``gpt2`` (the CS336 handout's, :data:`GPT2_PATTERN`, the default), ``cl100k``
(GPT-4's) and ``o200k`` (GPT-4o's), the last two exactly as tiktoken writes them
(``tiktoken_ext/openai_public.py``; a test holds them to the installed tiktoken).  Any other string is a
custom pattern, compiled by ``regex`` (:func:`resolve_pattern`).  Whatever the pattern, its definition is
the plain counter's: ``Counter(regex.findall(pattern, piece))`` over the pieces between special tokens.

What the two new patterns change from GPT-2's (docs/patterns.md sets them side by side):

* **cl100k**: the contractions match in any case (``'S``, ``'Ll``); a letter run takes any one character
  before it that is not a letter, a number, ``\r`` or ``\n`` (``"(word"``, ``"\tword"``, not only a
  space); numbers come in groups of at most three digits; a run of punctuation keeps the newlines after
  it (``"!\n"``); a run of whitespace with a newline in it ends at its last newline, and one that reaches
  the end of the text is one pre-token whole;
* **o200k**: a word is split where its case changes (``HelloWorld`` -> ``Hello``, ``World``): a run of
  "upper" characters then one of "lower" ones, where upper is ``[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`` and
  lower ``[\p{Ll}\p{Lm}\p{Lo}\p{M}]`` (modifier letters, other letters and combining marks are both),
  with a contraction kept on the word (``don't``, ``DON'T``); punctuation keeps newlines and slashes
  after it.

The classes the compiled scanners read are :mod:`bpe.split.pattern_classes`' (cl100k's and o200k's) and
:mod:`bpe.split.gpt2_classes`' (GPT-2's).

>>> GPT2_REGEX.findall("don't stop, 42x")
['don', "'t", ' stop', ',', ' 42', 'x']
>>> resolve_pattern("cl100k")[0], resolve_pattern(r"\w+|\s+")
('cl100k', ('custom', '\\w+|\\s+'))
>>> compiled_pattern("o200k").findall("HelloWorld 1234")
['Hello', 'World', ' ', '123', '4']
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import regex

from bpe.errors import ArgumentError

#: The GPT-2 pre-tokenization pattern (Radford et al. 2019), as given in the CS336 handout.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
GPT2_REGEX = regex.compile(GPT2_PATTERN)
#: GPT-4's pattern (tiktoken's ``cl100k_base``).  The possessive forms (``?+``, ``++``) never give back what
#: they took; here they change no match but the one of ``\s++$``, which takes a whole run of whitespace that
#: ends the text (the older ``\s*[\r\n]+`` form would end it at its last newline).
CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                  r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
#: GPT-4o's pattern (tiktoken's ``o200k_base``), its seven alternatives joined as tiktoken joins them.
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
#: The named patterns; the first is the default.
PATTERNS = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}
DEFAULT_PATTERN = "gpt2"
#: The number each named pattern's scanner goes by in the compiled code (``_scanners.pxi``).
SCANNERS = {"gpt2": 0, "cl100k": 1, "o200k": 2}
#: Where a file may be cut for each pattern (:mod:`bpe.split.chunking`): GPT-2's own rule; before a
#: space or tab after a non-space for cl100k and o200k, whose pre-tokens may end in a newline (``"!\n"``) or
#: start with any non-letter (``"(word"``) but never hold a space or tab after a non-space; and only at a
#: special token for a custom pattern, of which nothing can be known (:func:`cuts_of`).
CUTS = {"gpt2": "gpt2", "cl100k": "spaces", "o200k": "spaces"}
#: The name :func:`resolve_pattern` gives any other pattern.
CUSTOM = "custom"


def resolve_pattern(pattern: str) -> tuple[str, str]:
    """``(name, pattern string)`` of a named pattern (given by name or by its very string), else
    ``("custom", pattern)`` once ``regex`` has compiled it; a :class:`~bpe.errors.ArgumentError` of one line
    (naming ``pattern``, or ``--pattern`` on the command line) where it cannot, or where the pattern has
    capturing groups (``findall`` would then return the groups, not the matches).

    >>> resolve_pattern("gpt2") == ("gpt2", GPT2_PATTERN), resolve_pattern(GPT2_PATTERN)[0]
    (True, 'gpt2')
    >>> resolve_pattern("(a")
    Traceback (most recent call last):
    bpe.errors.ArgumentError: pattern '(a' is not a regex: missing ) at position 2
    """
    if not isinstance(pattern, str):
        why = f"is a name ({', '.join(PATTERNS)}) or a regex, not {type(pattern).__name__}"
        raise ArgumentError(f"pattern {why}", f"--pattern {why}")
    if pattern in PATTERNS:
        return pattern, PATTERNS[pattern]
    for name, known in PATTERNS.items():
        if pattern == known:
            return name, known
    custom_regex(pattern)
    return CUSTOM, pattern


def pattern_name(pattern: str) -> str:
    """The pattern's name (``gpt2``, ``cl100k``, ``o200k``) or ``custom``, once checked (:func:`resolve_pattern`)."""
    return resolve_pattern(pattern)[0]


def cuts_of(pattern: str) -> str:
    """The name of the rule for where a file may be cut for ``pattern`` (:data:`CUTS`; ``"special"``, only at
    a special token, for a custom pattern): :mod:`bpe.split.chunking` takes it as ``cuts``."""
    return CUTS.get(pattern_name(pattern), "special")


@cache
def custom_regex(pattern: str) -> regex.Pattern:
    """The custom pattern compiled by ``regex``, or the one-line :class:`~bpe.errors.ArgumentError` that says
    why not, with ``regex``'s own message."""
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        why = f"{pattern!r} is not a regex: {' '.join(str(exc).split())}"  # regex's message, on one line
        raise ArgumentError(f"pattern {why}", f"--pattern {why}") from None
    if compiled.groups:
        why = (f"{pattern!r} has {compiled.groups} capturing group(s): findall would return the groups, not the "
               "pre-tokens; make them non-capturing, (?:...)")
        raise ArgumentError(f"pattern {why}", f"--pattern {why}")
    return compiled


def compiled_pattern(pattern: str) -> regex.Pattern:
    """A pattern (a name or a regex) compiled by ``regex``: what the plain counter and the Tokenizer's Python
    path run."""
    name, text = resolve_pattern(pattern)
    return custom_regex(text) if name == CUSTOM else _named_regex(name)


@cache
def _named_regex(name: str) -> regex.Pattern:
    return GPT2_REGEX if name == "gpt2" else regex.compile(PATTERNS[name])


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
