"""How long and how much memory a training run will take, estimated before it starts: the cost model, and the
corpus's shape it takes.  ``train``, ``bench``, ``report`` and ``profile`` print it in their header and refuse a
run estimated past :data:`LONG_RUN_SECONDS` unless given ``--force`` (``--variant all`` and ``report`` skip it
instead); ``bpe estimate`` prints its table (:mod:`bpe.commands.estimate`).

The model counts what each variant's loops do (v1 recounts, v2-v4 scan the live pairs, v5-v8 pop a heap:
:class:`CostModel`; docs/index.md says it in prose), one constant per loop fitted on one-worker CPU times
(:mod:`tools.calibrate`; a test checks every point within 2x): it tells a minute from an hour.  v7's
sharded merges (two processes polling each other) are not credited: their CPU time is no measure of their wall
time, so v7 is estimated as v6, though its memory counts its shard processes.  Every pre-tokenizer streams the
file in chunks, so memory grows with ``L``, the distinct pre-tokens' total length, not with the file.  ``L``
and their number ``W`` grow much more slowly than the corpus (Heaps' law): they are measured on a sample and
extrapolated (:func:`shape_range`); a corpus the bench reads in place (a folder, JSON lines, Parquet) gives
that sample as a small file of its first text (:func:`corpus_sample`).  Where a text's shape is far from what
the model was measured on, :func:`rough_reason` says so beside the figures (``rough: ...``): they may be further
off than 2x.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from bpe.corpus.batches import counting_tokens, documents_ended, separator_of
from bpe.corpus.text_file import check_input_file
from bpe.counting.plain import count_texts
from bpe.errors import BPEError
from bpe.interface import option
from bpe.lab.measure.plan import plan
from bpe.lab.rungs import (
    RUNGS,
    SERIAL_BYTES_PER_SECOND,  # noqa: F401 (re-exported: the walkthrough imports it from here)
    CostModel,
    rung_row,
)
from bpe.running.cores import MAX_CHUNK_BYTES, plan_chunk_count
from bpe.running.sizes import format_size
from bpe.split.patterns import DEFAULT_PATTERN
from bpe.training.registry import VARIANTS, best_variant, get_variant
from bpe.training.rung import parallel

#: A run estimated longer than this needs ``--force`` (or is skipped in ``--variant all``).
LONG_RUN_SECONDS = 10 * 60
#: A process before it holds any pre-token: Python and the trainer imported.
BASE_MEMORY = 35e6
#: Starting Python and importing the trainer, in every run.
STARTUP_SECONDS = 0.3
#: A long word is rewritten by about this share of its length's worth of merges, and by at most
#: :data:`LONG_WORD_MAX_HIT_SHARE` of all the merges (measured with v6 on letters cut into words of
#: 30 to 3,000 bytes, and on web-like text with its whitespace and punctuation removed).
LONG_WORD_HITS_PER_BYTE = 0.3
LONG_WORD_MAX_HIT_SHARE = 0.65
#: The length-weighted mean word length past which the estimate says it is rough: the long-word term
#: was measured for v6 (within 2x up to words of 3,000 bytes and more), the other rungs' on usual text
#: (mean lengths of 7 to 12 bytes) only.
ROUGH_WORD_LENGTH = 40.0
#: A pool worker holds the counts of the pre-tokens in its share of the text, this many bytes per unit
#: of their ``L`` (its share of ``L`` grows with the sample's exponent), beside a bare process.
WORKER_BYTES_PER_L = 20
#: v7's shard processes: each holds its words, their counts and its index, this many bytes per unit
#: of the ``L`` it holds (measured: 185-300 MB for the shard process of 20 MB of web-like text).
SHARD_BYTES_PER_L = 60
#: ``L`` and ``W`` are measured on the first this many bytes of a corpus.
SAMPLE_BYTES = 2_000_000
#: Mean length of a distinct pre-token, for a shape that gives ``L`` without ``W``.
MEAN_WORD_LENGTH = 8.0
#: Heaps' exponent of natural text falls as it grows: extrapolated with the exponent its first 2 MB show,
#: its distinct pre-tokens are an upper bound.  The low end of a range takes the exponent this much lower,
#: what webtext-synth measured: from its first 2 MB to a gigabyte its distinct pre-tokens grew with
#: exponent 0.69 where the 2 MB showed 0.79 (their length: 0.73 where they showed 0.83).
HEAPS_FALL = 0.1
#: Each rung's cost model, from its row in the lab's table of rungs (bpe/lab/rungs.py).
MODELS = {name: row.cost for name, row in RUNGS.items()}
#: A ``max()`` scan's cost per pair rises as the pair table outgrows the CPU's caches: by
#: ``min(pairs, CACHE_PAIRS) / PAIRS_PER_STEP`` times (fitted: 1.3x at 9,000 pairs, 2.7x from 50,000).
CACHE_PAIRS = 50_000
PAIRS_PER_STEP = 30_000


def live_pairs(length: float, words: float, merges: int) -> float:
    """The mean number of live pairs over ``merges`` merges: what a ``max()`` scan visits per merge.

    They start at the distinct byte pairs and grow as merges make new tokens, by fewer per merge
    the more merges are done; they never pass the pair positions ``L - W`` (v1 recounts all of
    those), and level off near the number of words ``W``, higher for longer words.  Fitted on the
    counts along v6's merges on the Gutenberg, TinyStories-like and web-like corpora (within 1.6x of
    the mean counted there at 250 to 10,000 merges; 2.5x low on a 1 MB TinyStories-like prefix).
    """
    positions = max(1.0, length - words)
    words = max(1.0, words)
    # Where they level off depends on how long the words are: longer words hold more distinct pairs.
    level = 0.8 * words * min(3.0, max(0.5, (length / words / MEAN_WORD_LENGTH) ** 4))
    return min(0.58 * positions * (max(1, merges) / words) ** 0.58, level, positions)


def touched_length(length: float, merges: int, word_length: float = MEAN_WORD_LENGTH) -> float:
    """``T``: the total length of the words the merges rewrite, each word once per merge that hits it.

    A word of a usual length holds few pairs, so ``T`` is a few times ``L`` and grows with the log of the
    merges (measured on the same corpora: 4-5 L at 250 merges, 7-9 L at 10,000).  A long word holds nearly
    every common pair: merges hit it in proportion to its length, up to most of them (``word_length``, the
    words' mean length weighted by length, as the long ones weigh in ``T``).

    >>> round(touched_length(1.0, 743)), round(touched_length(1.0, 743, word_length=1000.0))
    (5, 300)
    """
    merges = max(0, merges)
    usual = 0.75 * math.log1p(merges)
    long_words = min(LONG_WORD_MAX_HIT_SHARE * merges, LONG_WORD_HITS_PER_BYTE * word_length)
    return length * max(usual, long_words)


@dataclass(frozen=True)
class Estimate:
    variant: str
    merges: int
    seconds: float
    peak_bytes: float
    basis: str = ""  # how your own trainer's estimate was made (empty for a rung's model)

    def describe(self) -> str:
        basis = f" ({self.basis})" if self.basis else ""
        return f"{self.variant} ~{format_duration(self.seconds)}, ~{format_size(int(self.peak_bytes))}{basis}"


def estimate_run(variant: str, shape: CorpusShape, merges: int, workers: int | None = None) -> Estimate:
    """The estimated seconds and peak memory of training ``variant`` on a corpus of this shape."""
    model = rung_row(variant).cost  # no row: one line saying so, never another rung's model
    given, workers = workers, workers or os.cpu_count() or 1
    serial = variant in VARIANTS and not parallel(VARIANTS[variant])  # pre-tokenizes in one worker
    pretokenize = shape.bytes / (model.bytes_per_second * (1 if serial or workers == 1 else 0.8 * workers))
    length = shape.distinct_length
    words = shape.distinct_words or length / MEAN_WORD_LENGTH
    merging = merge_seconds(model, shape, merges)
    memory = BASE_MEMORY + model.bytes_per_l * length
    if model.table_bytes_per_word:  # counted in compiled tables, then built: two phases, never at once
        memory = phased_memory(model, length, words, 1 if serial else workers, shape.growth, shape.bytes)
    elif not serial and workers > 1:  # the pool's workers, each with the counts of its share of the text
        memory += workers * (BASE_MEMORY + WORKER_BYTES_PER_L * length * workers ** -shape.growth)
    if model.shards is not None:  # a rung that merges in shard processes; given no count, it keeps cores spare
        processes = given or max(1, workers - model.shards.SPARE_CORES)
        memory += shard_processes_memory(model.shards, words, length, processes)
    return Estimate(variant, merges, STARTUP_SECONDS + pretokenize + merging, memory, rough_reason(variant, shape))


def merge_seconds(model: CostModel, shape: CorpusShape, merges: int) -> float:
    """The merge phase's seconds on a corpus of this shape: the pair table built, then ``merges`` merges
    (what each one scans, and the words they rewrite)."""
    length = shape.distinct_length
    words = shape.distinct_words or length / MEAN_WORD_LENGTH
    scanned = {"recount": length, "heap": 1.0}.get(model.kind, 0.0)
    if model.kind == "scan":
        pairs = live_pairs(length, words, merges)
        scanned = pairs * (1 + min(pairs, CACHE_PAIRS) / PAIRS_PER_STEP)
    return (model.per_merge * merges * scanned + model.per_touch * touched_length(length, merges, shape.word_length)
            + model.per_l * length)


def phased_memory(model: CostModel, length: float, words: float, workers: int, growth: float,
                  corpus_bytes: float = 0.0) -> float:
    """The peak of a run that counts in compiled tables (v9): the larger of its two phases, since the
    tables are let go before the merge's state is built.

    * counting: each thread's table holds the distinct pre-tokens of its share of the text (``W`` x
      workers^-growth of them), and its buffer the chunk it reads; then the merged parts hold every one once;
    * building: the counts as arrays (their bytes, ``L``, and 16 bytes each) beside the merge's state.

    >>> model = MODELS["v9"]
    >>> phased_memory(model, 8e6, 1e6, 2, 1.0) == BASE_MEMORY + max(2 * 64 * 5e5 + 64e6, 24 * 8e6 + 8e6 + 16e6)
    True
    """
    tables = model.table_bytes_per_word * words
    chunk = min(MAX_CHUNK_BYTES, corpus_bytes / plan_chunk_count(int(corpus_bytes), workers)) if corpus_bytes else 0
    counting = workers * (tables * workers ** -growth + chunk) + tables
    building = model.bytes_per_l * length + length + 16 * words
    return BASE_MEMORY + max(counting, building)


def shard_processes_memory(policy, words: float, length: float, processes: int) -> float:
    """The memory of a rung's shard processes (v7's, whose ``policy`` its row names), beside the parent's (which
    may end up holding every word, as v6 does, once the shards are gathered): each holds its share of the words.

    >>> shard_processes_memory(MODELS["v7"].shards, 100_000, 800_000, 4)  # too few words for a shard: none
    0.0
    """
    shards = policy.shard_count(int(words), processes)
    if shards < 2:
        return 0.0
    remote = shards - 1  # the parent holds one shard
    their_share = remote / (policy.PARENT_WEIGHT + remote)  # the parent keeps the rest
    return remote * BASE_MEMORY + SHARD_BYTES_PER_L * length * their_share


def rough_reason(variant: str, shape: CorpusShape) -> str:
    """Why this estimate may be further off than 2x (empty when the shape is one it was measured on)."""
    if shape.word_length > ROUGH_WORD_LENGTH and not rung_row(variant).long_words:
        return (f"rough: this text's words are long (about {shape.word_length:,.0f} bytes, weighted by length), "
                "outside what the estimate was calibrated on")
    return ""


@dataclass(frozen=True)
class CorpusShape:
    """What the cost depends on: the bytes trained on, and the distinct pre-tokens' total length ``L``."""

    bytes: int
    distinct_length: float
    distinct_words: float = 0.0  # W, the number of distinct pre-tokens (0: unknown, taken from L)
    word_length: float = MEAN_WORD_LENGTH  # their mean length weighted by length, sum(len^2) / L, on the sample
    growth: float = 1.0  # Heaps' exponent of L: a pool worker holds L x workers^-growth of it


def shape_range(path: str | os.PathLike, special_tokens, end: int | None = None,
                assume_bytes: int | None = None) -> tuple[CorpusShape, CorpusShape]:
    """The shape of ``path``'s first ``end`` bytes (or of ``assume_bytes`` that go on like them: ``bpe
    estimate --size``): ``L`` and ``W`` measured on the first :data:`SAMPLE_BYTES` and on its first quarter,
    extrapolated with the exponent those two points give, lowered by :data:`HEAPS_FALL` (the low end) and as
    the sample shows it (the high end, an upper bound).  The same shape twice where the sample is the corpus."""
    if end is None:  # a given end says the caller checked the path (bench, estimate) and found its end
        path = check_input_file(path)  # a FIFO or a directory: its clear error, before open() could block
        end = path.stat().st_size
    with open(path, "rb") as f:
        sample = f.read(min(end, SAMPLE_BYTES))
    cut = sample.rfind(b"\n") if len(sample) < end else -1
    sample = sample[:cut] if cut > 0 else sample
    text = sample.decode("utf-8", errors="replace")
    length, words, squares = sample_shape(text, special_tokens)
    # how long the words are, weighted as they weigh in the rewrites: it does not grow with the corpus
    word_length = squares / length if length else MEAN_WORD_LENGTH
    growth = (1.0, 1.0)  # too little text to measure how L and W grow: assume they grow with the bytes
    if len(text) >= 4096:
        quarter_length, quarter_words, _ = sample_shape(text[: len(text) // 4], special_tokens)
        growth = (_growth(length, quarter_length), _growth(words, quarter_words))
    target = assume_bytes or end
    scale = max(1.0, target / max(len(sample), 1))

    def at(fall: float) -> CorpusShape:
        e_length, e_words = (max(0.3, e - fall) if e < 1.0 and scale > 1.0 else e for e in growth)
        return CorpusShape(target, length * scale ** e_length, words * scale ** e_words, word_length, e_length)

    return at(HEAPS_FALL), at(0.0)


def sample_shape(text: str, special_tokens) -> tuple[int, int, int]:
    """``(L, W, sum of squared lengths)`` of the text's distinct pre-tokens, counted by the fastest rung built
    here where it counts on threads of its own (v9, v10), else by the plain counter in this process: the counts
    are the same, exactly, and a compiled one takes a tenth of the time (a 2 MB sample in about 0.02 s, where
    ``regex`` takes 0.2 s that every ``bpe train`` paid before its first line)."""
    count = getattr(get_variant(best_variant()), "count_texts", count_texts)
    counts = count([text], list(special_tokens), workers=1)
    length = words = squares = 0
    try:
        for token in counts:
            size = len(token)
            length, words, squares = length + size, words + 1, squares + size * size
    finally:
        close = getattr(counts, "close", None)
        if close is not None:
            close()
    return length, words, squares


def corpus_shape(path: str | os.PathLike, special_tokens, end: int | None = None,
                 assume_bytes: int | None = None) -> CorpusShape:
    """The high end of :func:`shape_range`: what ``train``, ``bench`` and ``report`` are estimated on."""
    return shape_range(path, special_tokens, end, assume_bytes)[1]


@dataclass(frozen=True)
class CorpusSample:
    """A corpus's first bytes of text as a small file (:func:`corpus_sample`), and the corpus's bytes of text."""

    path: Path
    bytes: int  # the sample's size
    text_bytes: int  # the corpus's bytes of text: its documents' (up to the limit), the separators left out


def corpus_sample(corpus, special_tokens, folder: str | os.PathLike, limit: int | None = None,
                  pattern: str = DEFAULT_PATTERN) -> CorpusSample:
    """The first :data:`SAMPLE_BYTES` of a corpus's text (a folder, a glob, JSON lines, Parquet:
    :mod:`bpe.corpus.corpus`), each document followed by the separator as the runs read them, written as
    ``sample.txt`` in ``folder``; and the corpus's bytes of text, up to ``limit``.

    Why a sample: the estimate measures a text's shape on its first bytes (:func:`shape_range`) and your own
    trainer is timed on a prefix of them (:mod:`bpe.lab.measure.candidate_estimate`), both read from a file; a
    corpus is read in place by the runs, so its first 2 MB are written for these two, never the corpus itself.
    Its bytes of text are its files' size where they hold only text; where they do not (JSON lines, Parquet,
    compressed), the reading goes on past the sample to the end (or the limit), counting the text and writing
    nothing more."""
    known = corpus.text_size
    counted = 0

    def counted_pieces():
        nonlocal counted
        for text, where, read in corpus.pieces(counting_tokens(special_tokens), limit=limit, pattern=pattern):
            counted += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            yield text, where, read

    path, written = Path(folder) / "sample.txt", 0
    with open(path, "wb") as f:
        for text, _, _ in documents_ended(counted_pieces(), separator_of(special_tokens)):
            if written < SAMPLE_BYTES:
                data = text.encode("utf-8", "replace")
                if written + len(data) > SAMPLE_BYTES:  # cut at a line's end, else at a character's
                    data = data[: SAMPLE_BYTES - written]
                    line_end = data.rfind(b"\n")
                    data = data[: line_end + 1] if line_end > 0 else data.decode("utf-8", "ignore").encode("utf-8")
                    f.write(data)
                    written = SAMPLE_BYTES
                    continue
                f.write(data)
                written += len(data)
            elif known is not None:
                break
    size = path.stat().st_size
    text_bytes = counted if known is None else known if limit is None else min(limit, known)
    return CorpusSample(path, size, text_bytes)


def _growth(whole: float, quarter: float) -> float:
    """Heaps' exponent from a count at a quarter of the sample and at all of it (kept in 0.3-1).

    >>> _growth(0, 0)  # no pre-token at all (a file of special tokens only): nothing to grow
    1.0
    """
    if whole <= 0:
        return 1.0
    return min(1.0, max(0.3, math.log(whole / max(quarter, 1)) / math.log(4)))


@dataclass(frozen=True)
class Question:
    """What every estimate of one run shares: the data checked, its two shapes, the merges."""

    path: Path
    merges: int
    end: int
    low: CorpusShape
    high: CorpusShape


def ask(path: str | os.PathLike, vocab_size: int, special_tokens: list[str], workers: int | None = None,
        limit: str | int | None = None, assume_bytes: int | None = None) -> Question:
    """Check the file and the settings as ``train_bpe`` checks them, and measure the corpus's shape once."""
    p = plan(path, vocab_size, special_tokens, workers, limit, rough_end=True)
    low, high = shape_range(p.path, special_tokens, p.corpus_bytes, assume_bytes)
    return Question(p.path, p.merges, p.corpus_bytes, low, high)


def estimate_file(path: str | os.PathLike, variants: list[str], vocab_size: int, special_tokens: list[str],
                  workers: int | None = None, limit: str | int | None = None) -> list[Estimate]:
    """Each variant's estimate for training on ``path`` (its first ``limit`` bytes, such as ``50MB``, when
    given) at ``vocab_size``, at the high end of the corpus's growth."""
    q = ask(path, vocab_size, special_tokens, workers, limit)
    return [estimate_run(v, q.high, q.merges, workers) for v in variants]


def check_affordable(estimates: list[Estimate], what: str, force: bool = False) -> None:
    """Refuse, with :func:`refusal`'s :class:`~bpe.errors.BPEError`, a run estimated past
    :data:`LONG_RUN_SECONDS` unless ``force`` (``--force``) is given."""
    slow = [e for e in estimates if e.seconds > LONG_RUN_SECONDS]
    if slow and not force:
        raise BPEError(refusal(slow, what))


def refusal(slow: list[Estimate], what: str, limit: float = LONG_RUN_SECONDS) -> str:
    """The error for runs estimated past ``limit``: what, how long, and the two ways on."""
    runs, fast = ", ".join(e.describe() for e in slow), best_variant()
    return (f"{what}: estimated {runs} (more than {format_duration(limit)}); pass {option('--force')} to run it "
            f"anyway, or try a smaller {option('--vocab-size', 'N')}, {option('--limit', '100MB')}, or a faster "
            f"variant ({fast}, the default, or v5, v6)")


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``, ``4 days``: the precision an estimate deserves.

    >>> format_duration(3), format_duration(90), format_duration(7200), format_duration(400000)
    ('3 s', '2 min', '2.0 h', '4.6 days')
    """
    if seconds < 60:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
