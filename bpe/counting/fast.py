"""The fast counter: the fast split (:mod:`bpe.split.fast`) counted, with the plain counter's exact counts.

Used by v6, v7 and v8 (in the pool: :func:`bpe.counting.parallel.count_file_parallel_fast`).  ASCII parts
are cut by the twin on their bytes and counted in C; the islands' pre-tokens stay ``str`` until the end,
so each distinct one is encoded once.

>>> count_text_fast("low low<|endoftext|>caf\u00e9", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'caf\\xc3\\xa9': 1})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from pathlib import Path

from bpe.corpus.text_file import read_texts
from bpe.counting.plain import PretokenCounts, add_counts
from bpe.split.fast import ASCII_TWIN_BYTES_REGEX, UNICODE_REGEX, judged_parts, special_pieces, start_tally


def _count_into(counts: Counter[bytes], island_counts: Counter[str], text: str, special_tokens: Sequence[str]) -> None:
    """Add the counts of ``text``'s pre-tokens to ``counts`` (ASCII parts) and ``island_counts`` (islands).

    The islands' pre-tokens stay ``str`` so that the caller encodes each distinct one once, at the end
    (:func:`_joined`), however many chunks it counts (:func:`count_file_serial_fast`).
    """
    ascii_text, islands = [], []
    start_tally()
    for piece in special_pieces(text, special_tokens):
        if piece.isascii():
            ascii_text.append(piece)
        else:
            parts = judged_parts(piece)
            # each kind joined: exact (see ascii_parts_and_islands), and one findall call per piece
            ascii_text.append("".join(parts[0::2]))
            islands.append("".join(parts[1::2]))
    # ASCII text: the twin on its bytes (a copy in C), counted in C by Counter's update
    counts.update(chain.from_iterable(map(ASCII_TWIN_BYTES_REGEX.findall, map(str.encode, ascii_text))))
    del ascii_text
    island_counts.update(chain.from_iterable(map(UNICODE_REGEX.findall, islands)))


def _joined(counts: Counter[bytes], island_counts: Counter[str]) -> Counter[bytes]:
    """The two counts of :func:`_count_into` as one ``Counter[bytes]`` of ``counts``'s type (both are used up)."""
    encoded: Counter[bytes] = type(counts)()
    # each distinct pre-token encoded once, in C; dict.update builds the one dict (Counter(dict(...)) two)
    dict.update(encoded, zip(map(str.encode, island_counts), island_counts.values()))
    island_counts.clear()
    small, large = sorted((counts, encoded), key=len)
    add_counts(large, small)  # the cost is the smaller one's size
    return large


def count_text_fast(text: str, special_tokens: Sequence[str]) -> Counter[bytes]:
    """Counts of every GPT-2 pre-token of ``text`` (UTF-8 encoded), special tokens split out.

    Equal to :func:`bpe.counting.plain.count_text` (tested on every code point and generated
    text) and faster: ASCII stretches take the twin pattern (:data:`ASCII_TWIN_REGEX`), and only the
    words around non-ASCII characters take the Unicode one (:func:`ascii_parts_and_islands`).
    """
    counts: Counter[bytes] = Counter()
    island_counts: Counter[str] = Counter()
    _count_into(counts, island_counts, text, special_tokens)
    return _joined(counts, island_counts)


def count_file_serial_fast(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None,
) -> PretokenCounts:
    """:func:`bpe.counting.plain.count_file_serial` with the fast counter: the file counted in this
    process, one safely cut chunk at a time, into one count for all its chunks.  ``workers`` is ignored.
    """
    return count_texts_fast(read_texts(path, special_tokens, errors=errors, end=end, on_bytes=on_bytes),
                            special_tokens)


def count_texts_fast(texts: Iterable[str], special_tokens: Sequence[str], *, workers: int | None = None,
                     on_text: Callable[[int], None] | None = None) -> PretokenCounts:
    """:func:`bpe.counting.plain.count_texts` with the fast counter: a stream of texts (a file's
    chunks, a corpus's batches) counted in this process into one count.  ``workers`` is ignored."""
    total = PretokenCounts()
    island_total: Counter[str] = Counter()
    for i, text in enumerate(texts):
        _count_into(total, island_total, text, special_tokens)
        if on_text is not None:
            on_text(i)
    return _joined(total, island_total)
