"""``bpe estimate``: each rung's time and memory on some data before a run, as a range where the corpus
is extrapolated, and which rung and worker count fit a memory budget (``--memory 64GB``).

Unlike the cost model it prints (:mod:`bpe.lab.measure.estimate`), this module decides what the model is
asked about:

* the data at hand: its own first 2 MB, extrapolated to its size (or to ``--size``);
* a data set that is not downloaded (``owt``, ``tinystories``): the first 2 MB of its generated
  stand-in (``webtext-synth``, ``tinystories-synth``; every size of a generator starts with the same
  2 MB), at the download's size, said as such in the header.  This is the one answer about
  OpenWebText offline, the one the pages quote (docs/estimates-owt.json).

Where the corpus is longer than its sample, how fast its distinct pre-tokens keep growing cannot be
known from the sample: each figure is a range, from the sample's Heaps' exponent lowered by
:data:`~bpe.lab.measure.corpus_shape.HEAPS_FALL` (as web-like text grows from 2 MB to a gigabyte) to the sample's
own (an upper bound: the exponent falls as a corpus grows).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from bpe.interface import option
from bpe.lab.measure.corpus_shape import SAMPLE_BYTES, CorpusShape, shape_range
from bpe.lab.measure.estimate import LONG_RUN_SECONDS, Estimate, estimate_run, format_duration
from bpe.lab.measure.estimate_probe import estimate_candidates
from bpe.training.sizes import format_size, parse_size


@dataclass(frozen=True)
class Source:
    """The file the estimate measures, the size it assumes, and how the header names them."""

    path: Path
    assumed: int | None  # bytes to extrapolate to (None: the file's own size, or its --limit)
    label: str


def estimate_source(data: str | None, size: str | None) -> Source:
    """The data at hand, or the stand-in of a data set that is not downloaded (see the module's text)."""
    from bpe.data.datasets import DATASETS, data_label, resolve_data

    dataset = DATASETS.get(str(data)) if data is not None else None
    assumed = parse_size(size) if size else None
    if dataset is not None and dataset.full_size and not dataset.path.exists() and dataset.stand_in:
        stand_in = DATASETS[dataset.stand_in]
        if stand_in.generated:
            path = _stand_in_sample(stand_in.name)
            what = format_size(assumed or dataset.full_size)
            return Source(path, assumed or dataset.full_size,
                          f"{dataset.name} (not downloaded: {what} shaped like its stand-in {stand_in.name}, "
                          f"from its first {format_size(SAMPLE_BYTES)})")
    path = resolve_data(data)
    label = (f"{format_size(assumed)} of text like {data_label(data)}" if assumed else
             f"{data_label(data)} ({path.stat().st_size:,} bytes)")
    return Source(path, assumed, label)


def _stand_in_sample(name: str) -> Path:
    """A generated file of ``name`` that holds at least the sample: one already made, else 2 MB of it."""
    from bpe.data.datasets import data_dir, generated_request, resolve_data

    for path in sorted(data_dir().glob(f"{name}-*.txt")):
        request = generated_request(path.stem)
        if request is not None and request[1] >= SAMPLE_BYTES and path.stat().st_size >= SAMPLE_BYTES:
            return path  # a prefix of the same stream: the same first 2 MB
    return resolve_data(f"{name}-{SAMPLE_BYTES // 1_000_000}MB")


@dataclass(frozen=True)
class Ranged:
    """One candidate's estimate at the low and the high end of the corpus's growth."""

    low: Estimate
    high: Estimate

    @property
    def variant(self) -> str:
        return self.high.variant

    @property
    def time(self) -> str:
        return format_range(self.low.seconds, self.high.seconds, format_duration)

    @property
    def memory(self) -> str:
        return format_range(self.low.peak_bytes, self.high.peak_bytes, lambda b: format_size(int(b)))


def format_range(low: float, high: float, fmt) -> str:
    """``17-22 min``, ``45 s-2 min``, or one figure where both ends read the same.

    >>> format_range(1000, 1300, format_duration), format_range(40, 130, format_duration), format_range(3, 3.2, format_duration)
    ('17-22 min', '40 s-2 min', '3 s')
    """
    a, b = fmt(low), fmt(high)
    if a == b:
        return b
    (x, unit_a), (y, unit_b) = a.split(" ", 1), b.split(" ", 1)
    return f"{x}-{y} {unit_b}" if unit_a == unit_b else f"{a}-{b}"


@dataclass(frozen=True)
class Question:
    """What every estimate of one ``bpe estimate`` shares: the source, the corpus's two shapes, the merges."""

    source: Source
    special_tokens: list[str]
    merges: int
    end: int
    low: CorpusShape
    high: CorpusShape


def ask(source: Source, vocab_size: int, special_tokens: list[str], workers: int | None,
        limit: str | None) -> Question:
    """Check the settings as ``train_bpe`` checks them, and measure the corpus's shape once."""
    from bpe.lab.measure.plan import plan

    p = plan(source.path, vocab_size, special_tokens, workers, limit, rough_end=True)
    low, high = shape_range(p.path, special_tokens, p.corpus_bytes, source.assumed)
    return Question(source, special_tokens, p.merges, p.corpus_bytes, low, high)


def estimate_ranges(question: Question, candidates: list, workers: int | None) -> list[Ranged]:
    """Every candidate's estimate at both ends of the growth (your own trainer: timed, one figure)."""
    q = question
    out = {c.label: Ranged(estimate_run(c.spec, q.low, q.merges, workers), estimate_run(c.spec, q.high, q.merges, workers))
           for c in candidates if c.is_variant}
    own = [c for c in candidates if not c.is_variant]
    if own:  # your own trainer: timed on a prefix of the data, then scaled (one figure: the high end)
        found = estimate_candidates(own, q.source.path, q.special_tokens, q.high, q.merges, workers, q.end,
                                    log=sys.stderr)
        out.update({label: Ranged(e, e) for label, e in found.items()})
    return [out[c.label] for c in candidates]


def fitting(ranged: Ranged, budget: int, question: Question, workers: int | None) -> tuple[str, int | None]:
    """Whether a rung fits ``budget`` bytes at the high end ("fits"), only at the low end ("may fit") or
    not at all ("no"), and the most workers it fits with (more workers: faster, and more memory)."""
    from bpe.training.registry import VARIANTS
    from bpe.training.rung import pooled

    name = ranged.variant
    if name not in VARIANTS or not pooled(VARIANTS[name]):  # one process (or your own trainer, as timed)
        tries = [(None, ranged.low, ranged.high)]
    else:  # a pool: each worker holds the counts of its share, so fewer workers need less memory
        tries = [(n, *(estimate_run(name, shape, question.merges, n) for shape in (question.low, question.high)))
                 for n in range(workers or os.cpu_count() or 1, 0, -1)]
    for verdict, end in (("fits", 2), ("may fit", 1)):  # surely, with the most workers that do; else maybe
        for count, *ends in tries:
            if ends[end - 1].peak_bytes <= budget:
                return verdict, count
    return "no", None


def run_estimate(data: str | None, variants: str | None, vocab_size: int, special_tokens: list[str],
                 workers: int | None = None, limit: str | None = None, size: str | None = None,
                 json_out: str | None = None, memory: str | None = None, out=None) -> list[Estimate]:
    """``bpe estimate``: print each candidate's estimate (``variants``, a ``--variant`` comma list; default every
    rung) at both ends of its range, mark the runs that would need ``--force``, and with ``memory`` (``--memory
    64GB``) say which fit and with how many workers; return the high ends.  ``size`` (``--size 2.1GB``) asks
    about a bigger corpus that goes on like the data; ``--json`` writes the model's figures, not a timing:
    the same code and data give the same file anywhere."""
    from bpe.lab.judge.candidates import parse_variants

    out = out or sys.stdout
    budget = parse_size(memory) if memory is not None else None
    source = estimate_source(data, size)
    candidates = parse_variants(variants or "all")
    question = ask(source, vocab_size, special_tokens, workers, limit)
    ranges = estimate_ranges(question, candidates, workers)
    print(f"cost estimate: {source.label}, vocab {vocab_size:,}, special {special_tokens}, "
          f"workers {workers or os.cpu_count()}", file=out)
    print(f"{'variant':<10}{'time':>16}{'peak memory':>22}", file=out)
    for r in ranges:
        note = f"   needs {option('--force')} (over {format_duration(LONG_RUN_SECONDS)})" if r.high.seconds > LONG_RUN_SECONDS else ""
        note += "   rough (below)" if r.high.basis.startswith("rough") else ""
        print(f"{r.variant:<10}{r.time:>16}{r.memory:>22}{note}", file=out)
    if any(r.low != r.high for r in ranges):
        print("ranges: the distinct pre-tokens growing as on the sample's first 2 MB (the high end, an upper bound) "
              "or more slowly, as web-like text does up to a gigabyte (the low end)", file=out)
    for reason in dict.fromkeys(r.high.basis for r in ranges if r.high.basis.startswith("rough")):
        print(reason, file=out)
    fits = {}
    if budget is not None:
        fits = {r.variant: fitting(r, budget, question, workers) for r in ranges}
        print_fits(fits, ranges, budget, question, out)
    if json_out:
        from bpe.lab.measure.publish import check_json_path, write_json_atomic

        record = {"corpus": source.label, "vocab_size": vocab_size, "workers": workers,
                  "variants": {r.variant: estimate_record(r) for r in ranges}}
        if budget is not None:
            record["memory_budget"] = {"bytes": budget, "fits": {v: {"verdict": f, "workers": w, "says": fit_words(f, w)}
                                                                 for v, (f, w) in fits.items()}}
        write_json_atomic(check_json_path(json_out), record)
        print(f"wrote {Path(json_out)}", file=out)
    return [r.high for r in ranges]


def fit_words(verdict: str, workers: int | None) -> str:
    """A verdict of ``--memory`` in words: ``fits with 2 workers``, ``may fit (at its low end)``, ``does not fit``.

    >>> fit_words("fits", 2), fit_words("may fit", None), fit_words("no", None)
    ('fits with 2 workers', 'may fit (at its low end)', 'does not fit')
    """
    with_workers = f" with {workers} worker{'s' * (workers != 1)}" if workers else ""
    return {"fits": f"fits{with_workers}", "may fit": f"may fit{with_workers} (at its low end)",
            "no": "does not fit"}[verdict]


def print_fits(fits: dict, ranges: list[Ranged], budget: int, question: Question, out) -> None:
    """The lines of ``--memory``: each rung's verdict, then the fastest that surely fits, timed with the workers
    it fits with (fewer than the table's, it may take longer)."""
    print(f"in {format_size(budget)}: " + "; ".join(f"{r.variant} {fit_words(*fits[r.variant])}" for r in ranges),
          file=out)
    sure = [_with_workers(r, fits[r.variant][1], question) for r in ranges if fits[r.variant][0] == "fits"]
    if sure:
        best = min(sure, key=lambda r: r.high.seconds)
        print(f"the fastest that fits: {best.variant}{fit_words(*fits[best.variant])[4:]} (~{best.time})", file=out)
    else:
        print(f"nothing surely fits in {format_size(budget)}: try {option('--limit', '1GB')} of the data", file=out)


def _with_workers(ranged: Ranged, workers: int | None, question: Question) -> Ranged:
    """A rung's estimate with the workers it fits with (``None``: one process whatever the count, as it is)."""
    if workers is None:
        return ranged
    return Ranged(*(estimate_run(ranged.variant, shape, question.merges, workers) for shape in (question.low, question.high)))


def estimate_record(r: Ranged) -> dict:
    """One estimate as ``bpe estimate --json`` writes it: both ends, and how the table shows them."""
    basis = {"basis": r.high.basis} if r.high.basis else {}
    return {"seconds": r.high.seconds, "peak_bytes": r.high.peak_bytes, "seconds_low": r.low.seconds,
            "peak_bytes_low": r.low.peak_bytes, "time": r.time, "memory": r.memory, **basis}
