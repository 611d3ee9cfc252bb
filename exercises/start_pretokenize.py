"""Exercise 0 (pre-tokenization and special tokens): cut a text the way training and encoding cut it.

Write the two functions left.  Before any merge, training cuts its text in two passes:

1. at the **special tokens** (``<|endoftext|>`` between documents): the text between them is kept, the
   tokens themselves are dropped from the counts, so no merge can ever join bytes across a document
   boundary.  A special token is text, not a pattern: ``<|endoftext|>`` holds ``|``, which in a regular
   expression means "or" (escape it: ``re.escape``/``regex.escape``).  When one special token is a
   prefix of another (``<|endoftext|>`` and ``<|endoftext|><|endoftext|>``), the longer one wins;
2. each piece by the **GPT-2 pattern** (``GPT2_PATTERN`` below, from the CS336 handout), with the
   ``regex`` package (the standard ``re`` has no ``\\p{L}``): its matches, in order, are the pre-tokens.

See it done: ``python -m bpe trace --pretokenize --text "it's 42<|endoftext|>  a"`` labels each
pre-token with the alternative of the pattern that matched it.

Check it (each case says what it tests, what you gave and what was expected)::

    python exercises/check_pretokenize.py exercises/start_pretokenize.py

Copy this file before you start (``cp exercises/start_pretokenize.py mine_pretokenize.py``) and check the copy.
"""

from __future__ import annotations

import regex  # noqa: F401  (you will need it)

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def split_on_special_tokens(text: str, special_tokens: list[str]) -> list[str]:
    """The pieces of ``text`` between special tokens, in order, the tokens dropped
    (``"a<|endoftext|>b"`` -> ``["a", "b"]``; no special tokens: ``[text]``)."""
    raise NotImplementedError("split_on_special_tokens is yours to write (exercises/start_pretokenize.py)")


def pretokenize(text: str, special_tokens: list[str]) -> list[str]:
    """Every pre-token of ``text``, in order: each piece from ``split_on_special_tokens`` cut by the pattern."""
    raise NotImplementedError("pretokenize is yours to write (exercises/start_pretokenize.py)")
