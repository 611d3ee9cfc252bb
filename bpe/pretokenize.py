"""Pre-tokenization: text -> counts of pre-tokens (as UTF-8 bytes), shared by every variant.

The text is first split on the special tokens (escaped, longest first, so ``<|a|><|b|>`` wins over
``<|a|>``); nothing is merged across a special token and the special tokens themselves are dropped
from the counts.  Each piece is then cut by the GPT-2 pattern and every pre-token counted.

>>> count_pretokens("low low<|endoftext|>lower", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'lower': 1})

Two ways to count a file:

* :func:`count_file_serial` reads and counts the file in this process (v1, v2);
* :func:`bpe.parallel.count_file_parallel` cuts the file into chunks at special-token boundaries and
  counts them in a process pool (v3 onward).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import regex

from bpe.errors import BPEError

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


def count_pretokens(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    ``findall`` + ``Counter`` keep the loop over matches in C; strings are encoded once per distinct
    pre-token rather than once per occurrence.
    """
    counts: Counter[str] = Counter()
    for piece in split_on_special_tokens(text, special_tokens):
        counts.update(GPT2_REGEX.findall(piece))
    return Counter({token.encode("utf-8"): n for token, n in counts.items()})


def decode_utf8(data: bytes, *, offset: int = 0, errors: str = "strict", source: str = "input") -> str:
    """Decode ``data`` as UTF-8; a bad byte becomes a :class:`BPEError` naming its file offset."""
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise BPEError(
            f"{source}: invalid UTF-8 at byte offset {offset + exc.start} "
            f"(byte 0x{data[exc.start]:02x}); fix the file or pass errors='replace' (--errors replace)"
        ) from None


def check_input_file(path: str | Path) -> Path:
    """The path as a :class:`Path`, or a :class:`BPEError` saying why it can't be read."""
    path = Path(path)
    if not path.exists():
        raise BPEError(f"input file not found: {path}")
    if path.is_dir():
        raise BPEError(f"input path is a directory, not a file: {path}")
    if not path.is_file():  # a FIFO or device would block or never end
        raise BPEError(f"input path is not a regular file: {path}")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise BPEError(f"cannot read input file {path}: {exc.strerror}") from None
    return path


def count_file_serial(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None,
) -> Counter[bytes]:
    """Read the whole file (bytes exactly as stored, no newline translation) and count its pre-tokens.

    ``end`` (a safe cut from :func:`bpe.parallel.find_limit_end`) reads only the first ``end`` bytes.
    ``workers`` is accepted and ignored, so every variant's pre-tokenizer has the same signature.
    """
    path = check_input_file(path)
    with open(path, "rb") as f:
        data = f.read() if end is None else f.read(end)
    text = decode_utf8(data, errors=errors, source=str(path))
    return count_pretokens(text, special_tokens)


def merge_counts(partials: Iterable[Counter[bytes]]) -> Counter[bytes]:
    """Sum per-chunk counts (``Counter.update`` adds counts in C)."""
    total: Counter[bytes] = Counter()
    for part in partials:
        total.update(part)
    return total
