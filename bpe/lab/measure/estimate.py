"""How long and how much memory a training run will take, estimated before it starts: the cost model,
the probes of your own trainers, and ``bpe estimate``'s table (:func:`run_estimate`).  ``train``,
``bench``, ``report`` and ``profile`` print it in their header and refuse a run estimated past
:data:`LONG_RUN_SECONDS` unless given ``--force`` (``--variant all`` and ``report`` skip it instead).

The model counts what each variant's loops do, one constant per loop fitted on one-worker CPU times
(:mod:`bpe.lab.dev.calibrate`; a test checks every point within 2x): it tells a minute from an hour.

* every variant pre-tokenizes at about :data:`SERIAL_BYTES_PER_SECOND`; from v3 on the pool divides
  that among the workers;
* the merge phase depends on ``L``, the total length of the *distinct* pre-tokens (the words a
  variant stores), and ``W``, their number; both grow much more slowly than the corpus (Heaps'
  law), so they are measured on the first :data:`SAMPLE_BYTES` of the file, at a quarter and at
  the whole sample, and extrapolated with the exponent those two points give;
* v1 recounts every pair of every word after every merge: ``merges x L``;
* v2-v4 scan every live pair with ``max()`` once per merge: ``merges x`` the mean number of live
  pairs (:func:`live_pairs`), never more than v1's recount;
* v5-v8 (and any rung not listed, such as your own ``Merger`` file) pop a heap: a small cost per merge
  (v8's is the Python call around its compiled merge);
  v7 with one worker is v6, and its sharded merges (two processes polling each other) are not
  credited: their CPU time is no measure of their wall time, so v7 is estimated as v6;
* every variant from v2 on rewrites only the words a merge hits: a cost per unit of their total
  length (:func:`touched_length`), a few times ``L`` for words of a usual length, up to a share of
  ``merges x L`` for long ones (a text without whitespace: every merge hits nearly every word);
* memory: a base, and bytes per unit of ``L`` for the variant's structures (every pre-tokenizer
  streams the file in chunks, so the file's size does not count); a pool adds its workers' (each
  holds the counts of its share of the text), v7 its shard processes' (the figure is every
  process's together);
* where the corpus is longer than its sample, :func:`shape_range` gives two shapes: the sample's
  growth carried on (the high end) and a slower one (:data:`HEAPS_FALL`), for ``bpe estimate``'s
  ranges (:mod:`bpe.lab.measure.estimate_command`).

Where a text's shape is far from what the model was measured on, :func:`rough_reason` says so beside
the figures (``rough: ...``): they may be further off than 2x.

Your own trainer (a candidate, :mod:`bpe.lab.judge.candidates`) has no fitted model: it is timed on a
prefix of the data (:func:`probe_candidate`) and :func:`estimate_from_probe` scales that up, the
per-merge part with ``L`` as v1's recount does: the slowest shape of the ladder, so a naive trainer
is not let through as fast, and a fast one stays fast (its per-merge time is tiny to begin with).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

from bpe.interface import option
from bpe.training.shard_policy import PARENT_WEIGHT, SPARE_CORES, shard_count
from bpe.training.sizes import format_size

#: A run estimated longer than this needs ``--force`` (or is skipped in ``--variant all``).
LONG_RUN_SECONDS = 10 * 60
SAMPLE_BYTES = 2_000_000
SERIAL_BYTES_PER_SECOND = 12e6
BASE_MEMORY = 35e6
#: Starting Python and importing the trainer, in every run.
STARTUP_SECONDS = 0.3
#: Mean length of a distinct pre-token, for a shape that gives ``L`` without ``W``.
MEAN_WORD_LENGTH = 8.0
#: A long word is rewritten by about this share of its length's worth of merges, and by at most
#: :data:`LONG_WORD_MAX_HIT_SHARE` of all the merges (measured with v6 on letters cut into words of
#: 30 to 3,000 bytes, and on web-like text with its whitespace and punctuation removed).
LONG_WORD_HITS_PER_BYTE = 0.3
LONG_WORD_MAX_HIT_SHARE = 0.65
#: The length-weighted mean word length past which the estimate says it is rough: the long-word term
#: was measured for v6 (within 2x up to words of 3,000 bytes and more), the other rungs' on usual text
#: (mean lengths of 7 to 12 bytes) only.
ROUGH_WORD_LENGTH = 40.0
#: Heaps' exponent of natural text falls as it grows: extrapolated with the exponent its first 2 MB show,
#: its distinct pre-tokens are an upper bound.  The low end of a range takes the exponent this much lower,
#: what webtext-synth measured: from its first 2 MB to a gigabyte its distinct pre-tokens grew with
#: exponent 0.69 where the 2 MB showed 0.79 (their length: 0.73 where they showed 0.83).
HEAPS_FALL = 0.1
#: A pool worker holds the counts of the pre-tokens in its share of the text, this many bytes per unit
#: of their ``L`` (its share of ``L`` grows with the sample's exponent), beside a bare process.
WORKER_BYTES_PER_L = 20
#: v7's shard processes: each holds its words, their counts and its index, this many bytes per unit
#: of the ``L`` it holds (measured: 185-300 MB for the shard process of 20 MB of web-like text).
SHARD_BYTES_PER_L = 60
#: Your own trainer is timed on about this many bytes of the data (a prefix up to a document boundary) ...
PROBE_BYTES = 250_000
#: ... making this many merges, to estimate it before the real runs (:func:`probe_candidate`).
PROBE_MERGES = 30


@dataclass(frozen=True)
class CostModel:
    """Seconds = per_merge x (merges x what one merge scans) + per_touch x T + per_l x L.

    What one merge scans is the whole text ``L`` (recount), the live pairs (scan) or nothing that
    grows (heap: per_merge is then seconds per merge); ``T`` is the length of the words the merges
    rewrite (:func:`touched_length`).  Memory = base + bytes_per_l x L.
    """

    kind: str  # "recount", "scan" or "heap"
    per_merge: float
    per_touch: float
    per_l: float  # seconds per unit of L (building the pair table)
    bytes_per_l: float


# Fitted on one-worker CPU times (docs/estimate-calibration.json, python -m bpe.lab.dev.calibrate).
MODELS = {
    "v1": CostModel("recount", 3.3e-7, 0.0, 0.0, 150),
    "v2": CostModel("scan", 1.0e-7, 1.1e-6, 0.0, 150),
    "v3": CostModel("scan", 1.0e-7, 1.1e-6, 0.0, 150),
    "v4": CostModel("scan", 1.0e-7, 1.1e-6, 0.0, 150),
    "v5": CostModel("heap", 2.4e-6, 7.0e-7, 1e-6, 170),
    "v6": CostModel("heap", 0.0, 8.5e-8, 1e-6, 65),
    "v7": CostModel("heap", 0.0, 9.5e-8, 1e-6, 65),
    # v8: the rewrites and the build in C.  Fitted like the others, on one-worker CPU times, but on a
    # day this machine ran v6 at about twice its CPU time in the points above: the constants carry
    # that day's slower pre-tokenizing (per merge too, on the small corpora), and still tell minutes
    # from hours (1 GB of webtext-synth, docs/v8-web-1GB.json: estimated about 2 min, measured 2.3).
    "v8": CostModel("heap", 6e-5, 4e-8, 3e-7, 36),
}
#: A ``max()`` scan's cost per pair rises as the pair table outgrows the CPU's caches: by
#: ``min(pairs, CACHE_PAIRS) / PAIRS_PER_STEP`` times (fitted: 1.3x at 9,000 pairs, 2.7x from 50,000).
CACHE_PAIRS = 50_000
PAIRS_PER_STEP = 30_000
DEFAULT_MODEL = MODELS["v6"]


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
    """``T``: the total length of the words the merges rewrite (each merge visits only its words).

    Each word is rewritten once per merge that hits it.  A word of a usual length holds few pairs, so
    ``T`` is a few times ``L`` and grows with the log of the merges (measured on the same corpora: 4-5 L
    at 250 merges, 7-9 L at 10,000).  A long word holds nearly every common pair: it is hit by merges in
    proportion to its length, up to most of them (``word_length``, the words' mean length weighted by
    length, as the long ones weigh in ``T``).  Words of 1,000 bytes at 743 merges: about 230 L, not 5 L.

    >>> round(touched_length(1.0, 743)), round(touched_length(1.0, 743, word_length=1000.0))
    (5, 300)
    """
    merges = max(0, merges)
    usual = 0.75 * math.log1p(merges)
    long_words = min(LONG_WORD_MAX_HIT_SHARE * merges, LONG_WORD_HITS_PER_BYTE * word_length)
    return length * max(usual, long_words)


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


@dataclass(frozen=True)
class Probe:
    """Your own trainer timed on a prefix of the data: what it cost there, and the prefix's size and ``L``."""

    bytes: int
    distinct_length: float
    fixed_seconds: float  # reading and pre-tokenizing (and building), independent of the merges
    per_merge_seconds: float
    peak_bytes: float


def estimate_from_probe(label: str, probe: Probe, shape: CorpusShape, merges: int) -> Estimate:
    """Your own trainer's estimate: its probe scaled to ``shape`` (fixed part with the bytes, merges with ``L``).

    >>> probe = Probe(bytes=100_000, distinct_length=10_000, fixed_seconds=0.1, per_merge_seconds=0.01,
    ...               peak_bytes=BASE_MEMORY + 5e6)
    >>> e = estimate_from_probe("mine", probe, CorpusShape(1_000_000, 40_000, True), 1_000)
    >>> round(e.seconds), e.describe()
    (41, 'mine ~41 s, ~85.0 MB (timed on its first 100,000 bytes)')
    """
    scale_bytes = max(1.0, shape.bytes / max(probe.bytes, 1))
    scale_l = max(1.0, shape.distinct_length / max(probe.distinct_length, 1.0))
    seconds = probe.fixed_seconds * scale_bytes + probe.per_merge_seconds * scale_l * merges
    # a student's trainer often holds the whole text: its memory above a bare process grows with the bytes
    memory = BASE_MEMORY + max(0.0, probe.peak_bytes - BASE_MEMORY) * scale_bytes
    return Estimate(label, merges, seconds, memory, f"timed on its first {probe.bytes:,} bytes")


def estimate_run(variant: str, shape: CorpusShape, merges: int, workers: int | None = None) -> Estimate:
    """The estimated seconds and peak memory of training ``variant`` on a corpus of this shape."""
    from bpe.training.registry import VARIANTS
    from bpe.training.rung import pooled

    model = MODELS.get(variant, DEFAULT_MODEL)
    given, workers = workers, workers or os.cpu_count() or 1
    serial = variant in VARIANTS and not pooled(VARIANTS[variant])  # pre-tokenizes in one process
    pretokenize = shape.bytes / (SERIAL_BYTES_PER_SECOND * (1 if serial or workers == 1 else 0.8 * workers))
    length = shape.distinct_length
    words = shape.distinct_words or length / MEAN_WORD_LENGTH
    scanned = {"recount": length, "heap": 1.0}.get(model.kind, 0.0)
    if model.kind == "scan":
        pairs = live_pairs(length, words, merges)
        scanned = pairs * (1 + min(pairs, CACHE_PAIRS) / PAIRS_PER_STEP)
    merging = (model.per_merge * merges * scanned + model.per_touch * touched_length(length, merges, shape.word_length)
               + model.per_l * length)
    memory = BASE_MEMORY + model.bytes_per_l * length
    if not serial and workers > 1:  # the pool's workers, each with the counts of its share of the text
        memory += workers * (BASE_MEMORY + WORKER_BYTES_PER_L * length * workers ** -shape.growth)
    if variant == "v7":  # given no count, v7 keeps a core spare (shard_policy.merge_processes)
        memory += shard_processes_memory(words, length, given or max(1, workers - SPARE_CORES))
    return Estimate(variant, merges, STARTUP_SECONDS + pretokenize + merging, memory, rough_reason(variant, shape))


def shard_processes_memory(words: float, length: float, processes: int) -> float:
    """The memory of v7's shard processes, beside the parent's (which may end up holding every word,
    as v6 does, once the shards are gathered): each holds its share of the words.

    >>> shard_processes_memory(100_000, 800_000, 4)  # too few words for a shard process: none
    0.0
    """
    shards = shard_count(int(words), processes)
    if shards < 2:
        return 0.0
    remote = shards - 1  # the parent holds one shard
    their_share = remote / (PARENT_WEIGHT + remote)  # the parent keeps the rest (shard_policy)
    return remote * BASE_MEMORY + SHARD_BYTES_PER_L * length * their_share


def rough_reason(variant: str, shape: CorpusShape) -> str:
    """Why this estimate may be further off than 2x (empty when the shape is one it was measured on)."""
    if shape.word_length > ROUGH_WORD_LENGTH and variant not in ("v6", "v7"):
        return (f"rough: this text's words are long (about {shape.word_length:,.0f} bytes, weighted by length), "
                "outside what the estimate was calibrated on")
    return ""


def estimate_file(path: str | os.PathLike, variants: list[str], vocab_size: int, special_tokens: list[str],
                  workers: int | None = None, limit: str | int | None = None,
                  assume_bytes: int | None = None) -> list[Estimate]:
    """Each variant's estimate for training on ``path`` (its first ``limit`` bytes, such as ``50MB``, when
    given) at ``vocab_size``; the file and the settings are checked as ``train_bpe`` checks them."""
    from bpe.lab.measure.plan import plan

    p = plan(path, vocab_size, special_tokens, workers, limit, rough_end=True)
    shape = corpus_shape(p.path, special_tokens, p.corpus_bytes, assume_bytes)  # it trusts the end it is given
    return [estimate_run(v, shape, p.merges, workers) for v in variants]


def check_affordable(estimates: list[Estimate], what: str, force: bool = False) -> None:
    """Refuse, with :func:`refusal`'s :class:`~bpe.errors.BPEError`, a run estimated past
    :data:`LONG_RUN_SECONDS` unless ``force`` (``--force``) is given."""
    from bpe.errors import BPEError

    slow = [e for e in estimates if e.seconds > LONG_RUN_SECONDS]
    if slow and not force:
        raise BPEError(refusal(slow, what))


def refusal(slow: list[Estimate], what: str, limit: float = LONG_RUN_SECONDS) -> str:
    """The error for runs estimated past ``limit``: what, how long, and the two ways on."""
    runs = ", ".join(e.describe() for e in slow)
    from bpe.training.registry import best_variant

    fast = best_variant()
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


def probe_candidate(candidate, path: Path, special_tokens: list[str], workers: int | None, end: int | None,
                    tmp: Path) -> Probe | None:
    """Time your own trainer (a :class:`~bpe.lab.judge.candidates.Candidate`) on a prefix of the data.

    A ``Merger`` candidate's stages split the fixed part from the merges in one run; a function is
    run twice, with no merge and with :data:`PROBE_MERGES`, and the difference is the merges' cost.
    ``None`` when the candidate fails there (it is then estimated as v1, the slowest rung).
    """
    from bpe.lab.measure.timed_run import run_once, write_prefix
    from bpe.training.chunking import find_limit_end

    cut = find_limit_end(path, min(PROBE_BYTES, end if end is not None else path.stat().st_size), special_tokens)
    prefix = write_prefix(path, cut, tmp / f"probe-{candidate.label}{path.suffix}")
    base = 256 + len(special_tokens)
    merges = (0, PROBE_MERGES) if candidate.kind == "function" else (PROBE_MERGES,)
    runs = [run_once(prefix, candidate, base + n, special_tokens, workers) for n in merges]
    if any("failed" in run for run in runs):
        return None
    last, stages = runs[-1], runs[-1]["stages"]
    if stages is None:  # a function: the run without merges is the fixed part
        fixed = runs[0]["total"]
        per_merge = max(0.0, last["total"] - fixed) / max(1, last["merges"])
    else:
        fixed = stages["pretokenize"] + stages["pair_count"]
        per_merge = (stages["select"] + stages["update"]) / max(1, last["merges"])
    return Probe(cut, corpus_shape(prefix, special_tokens).distinct_length, fixed, per_merge,
                 last["peak_rss"]["self"])


def probe_candidates(candidates: list, path: Path, special_tokens: list[str], workers: int | None,
                     end: int | None = None, log=None) -> dict[str, Probe | None]:
    """Each of your own trainers (not the ladder's) timed on a prefix of the data (:func:`probe_candidate`)."""
    from bpe.lab.measure.fresh_process import lab_tempdir

    probes = {}
    with lab_tempdir("probe") as tmp:
        for c in candidates:
            if not c.is_variant:
                if log is not None:
                    print(f"timing {c.label} on a prefix of the data to estimate it ...", file=log, flush=True)
                probes[c.label] = probe_candidate(c, path, special_tokens, workers, end, Path(tmp))
    return probes


def candidate_estimate(candidate, probes: dict[str, Probe | None], shape: CorpusShape, num_merges: int,
                       workers: int | None) -> Estimate:
    """A rung's estimate from its model; your own trainer's from its probe (failed: as v1)."""
    if candidate.is_variant:
        return replace(estimate_run(candidate.spec, shape, num_merges, workers), variant=candidate.label)
    probe = probes.get(candidate.label)
    if probe is None:  # it failed on the prefix: guarded as the slowest rung; its own run will say why
        return replace(estimate_run("v1", shape, num_merges, workers), variant=candidate.label,
                       basis="its probe failed: estimated as v1")
    return estimate_from_probe(candidate.label, probe, shape, num_merges)


def estimate_candidates(candidates: list, path: Path, special_tokens: list[str], shape: CorpusShape,
                        num_merges: int, workers: int | None, end: int | None = None,
                        log=None) -> dict[str, Estimate]:
    """Every candidate's estimate: a rung's from its model, your own trainer's from a probe."""
    probes = probe_candidates(candidates, path, special_tokens, workers, end, log)
    return {c.label: candidate_estimate(c, probes, shape, num_merges, workers) for c in candidates}
