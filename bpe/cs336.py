"""Plugging bpe-lab into the CS336 Assignment 1 test suite: the two adapters its ``tests/adapters.py`` asks for.

In the assignment's ``tests/adapters.py``, make the two functions call these (bpe-lab installed
into the assignment's environment with ``pip install -e /path/to/bpe-lab``)::

    def run_train_bpe(input_path, vocab_size, special_tokens, **kwargs):
        from bpe.cs336 import run_train_bpe
        return run_train_bpe(input_path, vocab_size, special_tokens, **kwargs)

    def get_tokenizer(vocab, merges, special_tokens=None):
        from bpe.cs336 import get_tokenizer
        return get_tokenizer(vocab, merges, special_tokens)

The signatures are the assignment's; ``tests/test_cs336.py`` calls them the way its
``test_train_bpe.py`` and ``test_tokenizer.py`` do.  ``Tokenizer.from_files(vocab_path,
merges_path, special_tokens)`` reads GPT-2 style ``vocab.json``/``merges.txt`` (the assignment's
fixtures and ``bpe train --out``).
"""

from __future__ import annotations

import os

from bpe.io.tokenizer import Tokenizer
from bpe.training.train import train_bpe


def run_train_bpe(input_path: str | os.PathLike, vocab_size: int, special_tokens: list[str],
                  **kwargs) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """``(vocab, merges)`` as the assignment specifies; ``kwargs`` go to :func:`bpe.train_bpe` (``variant``,
    ``workers``, ``limit``, ...)."""
    return train_bpe(input_path, vocab_size, special_tokens, **kwargs)


def get_tokenizer(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]],
                  special_tokens: list[str] | None = None) -> Tokenizer:
    """A tokenizer with ``encode``, ``decode`` and ``encode_iterable`` over these merges."""
    return Tokenizer(vocab, merges, special_tokens)
