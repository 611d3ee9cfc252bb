"""``bpe estimate``: each candidate's time and memory before a run, and which rung and worker count fit a
memory budget (each candidate's estimate: :mod:`bpe.lab.measure.candidate_estimate`).

The data it asks the cost model (:mod:`bpe.lab.measure.estimate`) about is the data at hand, extrapolated
from its first 2 MB; or, for a data set that is not downloaded (``owt``, ``tinystories``), the first 2 MB of
its generated stand-in at the download's size, said as such in the header: the one answer about
OpenWebText offline, the one the pages quote (docs/estimates-owt.json).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from bpe.commands.arguments import special_tokens, vocab_size
from bpe.data.datasets import DATASETS, data_dir, data_label, generated_request, resolve_data
from bpe.interface import option
from bpe.lab.judge.candidates import parse_variants
from bpe.lab.measure.candidate_estimate import estimate_candidates
from bpe.lab.measure.estimate import (
    LONG_RUN_SECONDS,
    SAMPLE_BYTES,
    Estimate,
    Question,
    ask,
    estimate_run,
    format_duration,
)
from bpe.lab.measure.publish import check_json_path, write_json_atomic
from bpe.running.sizes import format_size, parse_size
from bpe.training.registry import VARIANTS
from bpe.training.rung import pooled


def estimate_source(data: str | None, size: str | None) -> tuple[Path, int | None, str]:
    """The file the estimate measures, the size it assumes (None: the file's own, or its ``--limit``) and how
    the header names them: the data at hand, or the stand-in of a data set that is not downloaded."""
    dataset = DATASETS.get(str(data)) if data is not None else None
    assumed = parse_size(size, "--size") if size else None
    stand_in = DATASETS[dataset.stand_in] if dataset is not None and dataset.stand_in else None
    if stand_in is not None and stand_in.generated and dataset.full_size and not dataset.path.exists():
        assumed = assumed or dataset.full_size
        return _stand_in_sample(stand_in.name), assumed, (f"{dataset.name} (not downloaded: {format_size(assumed)} "
                                                          f"shaped like its stand-in {stand_in.name}, from its "
                                                          f"first {format_size(SAMPLE_BYTES)})")
    path = resolve_data(data)
    label = (f"{format_size(assumed)} of text like {data_label(data)}" if assumed else
             f"{data_label(data)} ({path.stat().st_size:,} bytes)")
    return path, assumed, label


def _stand_in_sample(name: str) -> Path:
    """A generated file of ``name`` that holds at least the sample: one already made, else 2 MB of it."""
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


def ranged(question: Question, variant: str, workers: int | None) -> Ranged:
    """A rung's estimate at both ends of the corpus's growth."""
    return Ranged(*(estimate_run(variant, shape, question.merges, workers) for shape in (question.low, question.high)))


def format_range(low: float, high: float, fmt) -> str:
    """``17-22 min``, ``45 s-2 min``, or one figure where both ends read the same.

    >>> [format_range(low, high, format_duration) for low, high in [(1000, 1300), (40, 130), (3, 3.2)]]
    ['17-22 min', '40 s-2 min', '3 s']
    """
    a, b = fmt(low), fmt(high)
    if a == b:
        return b
    (x, unit_a), (y, unit_b) = a.split(" ", 1), b.split(" ", 1)
    return f"{x}-{y} {unit_b}" if unit_a == unit_b else f"{a}-{b}"


def fitting(r: Ranged, budget: int, question: Question, workers: int | None) -> tuple[str, int | None]:
    """Whether a rung fits ``budget`` bytes at the high end ("fits"), only at the low end ("may fit") or
    not at all ("no"), and the most workers it fits with (more workers: faster, and more memory)."""
    if r.variant not in VARIANTS or not pooled(VARIANTS[r.variant]):  # one process (or your own trainer, as timed)
        tries = [(None, r)]
    else:  # a pool: each worker holds the counts of its share, so fewer workers need less memory
        tries = [(n, ranged(question, r.variant, n)) for n in range(workers or os.cpu_count() or 1, 0, -1)]
    for count, at in tries:  # surely, with the most workers that do
        if at.high.peak_bytes <= budget:
            return "fits", count
    for count, at in tries:  # else maybe
        if at.low.peak_bytes <= budget:
            return "may fit", count
    return "no", None


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
    sure = [r if fits[r.variant][1] is None else ranged(question, r.variant, fits[r.variant][1])
            for r in ranges if fits[r.variant][0] == "fits"]
    if sure:
        best = min(sure, key=lambda r: r.high.seconds)
        print(f"the fastest that fits: {best.variant}{fit_words(*fits[best.variant])[4:]} (~{best.time})", file=out)
    else:
        print(f"nothing surely fits in {format_size(budget)}: try {option('--limit', '1GB')} of the data", file=out)


def run(args) -> int:
    """The command, from its parsed arguments."""
    run_estimate(args.data, args.variant, vocab_size(args), special_tokens(args), args.workers, args.limit,
                 args.size, args.json, args.memory)
    return 0


def run_estimate(data: str | None, variants: str | None, vocab_size: int, special_tokens: list[str],
                 workers: int | None = None, limit: str | None = None, size: str | None = None,
                 json_out: str | None = None, memory: str | None = None, out=None) -> list[Estimate]:
    """``bpe estimate``: print each candidate's estimate (``variants``, a ``--variant`` comma list; default every
    rung), as a range where ``size`` (``--size 2.1GB``) or the data's own size goes past the sample, and with
    ``memory`` (``--memory 64GB``) which fit and with how many workers; return the high ends.  ``--json``
    writes the model's figures, not a timing: the same code and data give the same file anywhere."""
    out = out or sys.stdout
    budget = parse_size(memory, "--memory") if memory is not None else None
    path, assumed, label = estimate_source(data, size)
    candidates = parse_variants(variants or "all")
    q = ask(path, vocab_size, special_tokens, workers, limit, assumed)
    by_label = {c.label: ranged(q, c.spec, workers) for c in candidates if c.is_variant}
    own = [c for c in candidates if not c.is_variant]
    if own:  # your own trainer: timed on a prefix of the data, then scaled (one figure: the high end)
        found = estimate_candidates(own, q.path, special_tokens, q.high, q.merges, workers, q.end, log=sys.stderr)
        by_label.update({name: Ranged(e, e) for name, e in found.items()})
    ranges = [by_label[c.label] for c in candidates]
    print(f"cost estimate: {label}, vocab {vocab_size:,}, special {special_tokens}, "
          f"workers {workers or os.cpu_count()}", file=out)
    print(f"{'variant':<10}{'time':>16}{'peak memory':>22}", file=out)
    for r in ranges:
        note = (f"   needs {option('--force')} (over {format_duration(LONG_RUN_SECONDS)})"
                if r.high.seconds > LONG_RUN_SECONDS else "")
        note += "   rough (below)" if r.high.basis.startswith("rough") else ""
        print(f"{r.variant:<10}{r.time:>16}{r.memory:>22}{note}", file=out)
    if any(r.low != r.high for r in ranges):
        print("ranges: the distinct pre-tokens growing as on the sample's first 2 MB (the high end, an upper bound) "
              "or more slowly, as web-like text does up to a gigabyte (the low end)", file=out)
    for reason in dict.fromkeys(r.high.basis for r in ranges if r.high.basis.startswith("rough")):
        print(reason, file=out)
    fits = {}
    if budget is not None:
        fits = {r.variant: fitting(r, budget, q, workers) for r in ranges}
        print_fits(fits, ranges, budget, q, out)
    if json_out:
        record = {"corpus": label, "vocab_size": vocab_size, "workers": workers,
                  "variants": {r.variant: estimate_record(r) for r in ranges}}
        if budget is not None:
            record["memory_budget"] = {"bytes": budget,
                                       "fits": {v: {"verdict": f, "workers": w, "says": fit_words(f, w)}
                                                for v, (f, w) in fits.items()}}
        write_json_atomic(check_json_path(json_out), record)
        print(f"wrote {Path(json_out)}", file=out)
    return [r.high for r in ranges]


def estimate_record(r: Ranged) -> dict:
    """One estimate as ``bpe estimate --json`` writes it: both ends, and how the table shows them."""
    basis = {"basis": r.high.basis} if r.high.basis else {}
    return {"seconds": r.high.seconds, "peak_bytes": r.high.peak_bytes, "seconds_low": r.low.seconds,
            "peak_bytes_low": r.low.peak_bytes, "time": r.time, "memory": r.memory, **basis}
