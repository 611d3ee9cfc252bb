"""A corpus's shape, what the cost model (:mod:`bpe.lab.measure.estimate`) takes: the bytes trained on, and the
total length ``L`` and number ``W`` of the distinct pre-tokens, the words a variant stores.  Both grow much
more slowly than the corpus (Heaps' law): they are measured on its first :data:`SAMPLE_BYTES`, at a quarter
and at the whole sample, and extrapolated with the exponent those two points give.  Where the corpus is
longer than its sample, :func:`shape_range` gives two shapes: the sample's growth carried on (the high end)
and a slower one (:data:`HEAPS_FALL`), for ``bpe estimate``'s ranges.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

#: ``L`` and ``W`` are measured on the first this many bytes of a corpus.
SAMPLE_BYTES = 2_000_000
#: Mean length of a distinct pre-token, for a shape that gives ``L`` without ``W``.
MEAN_WORD_LENGTH = 8.0
#: Heaps' exponent of natural text falls as it grows: extrapolated with the exponent its first 2 MB show,
#: its distinct pre-tokens are an upper bound.  The low end of a range takes the exponent this much lower,
#: what webtext-synth measured: from its first 2 MB to a gigabyte its distinct pre-tokens grew with
#: exponent 0.69 where the 2 MB showed 0.79 (their length: 0.73 where they showed 0.83).
HEAPS_FALL = 0.1


@dataclass(frozen=True)
class CorpusShape:
    """What the cost depends on: bytes trained on, and the distinct pre-tokens' total length ``L``."""

    bytes: int
    distinct_length: float
    measured: bool  # False: L is an upper bound (the sample was skipped)
    distinct_words: float = 0.0  # W, the number of distinct pre-tokens (0: unknown, taken from L)
    word_length: float = MEAN_WORD_LENGTH  # their mean length weighted by length, sum(len^2) / L, on the sample
    growth: float = 1.0  # Heaps' exponent of L: a pool worker holds L x workers^-growth of it


@dataclass(frozen=True)
class Sample:
    """The first :data:`SAMPLE_BYTES` of a corpus, measured: ``L`` and ``W`` there, and how fast they grew
    from its first quarter to the whole (Heaps' exponents)."""

    bytes: int
    length: float
    words: float
    word_length: float
    length_growth: float = 1.0
    words_growth: float = 1.0

    def at(self, target: int, fall: float = 0.0) -> CorpusShape:
        """The shape of ``target`` bytes that go on like the sample, each exponent lowered by ``fall``.

        Heaps' exponent falls as a corpus grows, so the sample's own (``fall=0``) gives an upper bound;
        :data:`HEAPS_FALL` gives the low end of :func:`shape_range`.

        >>> s = Sample(2_000_000, 1e6, 1e5, 9.0, 0.75, 0.7)
        >>> s.at(200_000_000).distinct_words == 1e5 * 100 ** 0.7, s.at(1_000_000).distinct_length
        (True, 1000000.0)
        """
        scale = max(1.0, target / max(self.bytes, 1))
        fall = fall if scale > 1.0 else 0.0  # nothing extrapolated: one shape, not a range
        e_length, e_words = (max(0.3, e - fall) if e < 1.0 else e for e in (self.length_growth, self.words_growth))
        return CorpusShape(target, self.length * scale ** e_length, True, self.words * scale ** e_words,
                           self.word_length, e_length)


def measure_sample(path: str | os.PathLike, special_tokens, end: int) -> Sample:
    """Measure ``L`` and ``W`` on the first :data:`SAMPLE_BYTES` of ``path``'s first ``end`` bytes (the path
    checked: :func:`shape_range`), and at a quarter of that, for the exponent they grow with."""
    from bpe.training.pretokenize import count_text

    with open(path, "rb") as f:
        sample = f.read(min(end, SAMPLE_BYTES))
    cut = sample.rfind(b"\n") if len(sample) < end else -1
    sample = sample[:cut] if cut > 0 else sample
    text = sample.decode("utf-8", errors="replace")
    counts = count_text(text, special_tokens)
    whole, words = sum(len(token) for token in counts), len(counts)
    # how long the words are, weighted as they weigh in the rewrites: it does not grow with the corpus
    word_length = sum(len(token) ** 2 for token in counts) / whole if whole else MEAN_WORD_LENGTH
    if len(text) < 4096:  # too little text to measure how L grows: assume it grows with the bytes
        return Sample(max(len(sample), 1), whole, words, word_length)
    counts = count_text(text[: len(text) // 4], special_tokens)
    quarter, quarter_words = sum(len(token) for token in counts), len(counts)
    return Sample(len(sample), whole, words, word_length, _growth(whole, quarter), _growth(words, quarter_words))


def corpus_shape(path: str | os.PathLike, special_tokens, end: int | None = None,
                 assume_bytes: int | None = None) -> CorpusShape:
    """Measure ``L`` on the first :data:`SAMPLE_BYTES` and extrapolate it to ``end`` (or the file size)
    with the sample's own growth: the high end of :func:`shape_range`.

    ``assume_bytes`` extrapolates to a corpus of that size that goes on like this file (``bpe estimate
    --size``): how a variant would fare on a bigger corpus of the same kind.
    """
    return shape_range(path, special_tokens, end, assume_bytes)[1]


def shape_range(path: str | os.PathLike, special_tokens, end: int | None = None,
                assume_bytes: int | None = None) -> tuple[CorpusShape, CorpusShape]:
    """The corpus's shape at its low and high end: the sample's growth lowered by :data:`HEAPS_FALL`,
    and as measured.  The same shape twice where nothing is extrapolated (the sample is the corpus)."""
    from bpe.training.pretokenize import check_input_file

    if end is None:  # a given end says the caller checked the path (bench, estimate) and found its end
        path = check_input_file(path)  # a FIFO or a directory: its clear error, before open() could block
    size = end if end is not None else path.stat().st_size
    sample = measure_sample(path, special_tokens, size)
    target = assume_bytes or size
    return sample.at(target, HEAPS_FALL), sample.at(target)


def _growth(whole: float, quarter: float) -> float:
    """Heaps' exponent from a count at a quarter of the sample and at all of it (kept in 0.3-1).

    >>> _growth(0, 0)  # no pre-token at all (a file of special tokens only): nothing to grow
    1.0
    """
    if whole <= 0:
        return 1.0
    return min(1.0, max(0.3, math.log(whole / max(quarter, 1)) / math.log(4)))
