"""Each candidate's estimate before a run, as ``bench``, ``report`` and ``estimate`` take it: a rung's from its
cost model (:mod:`bpe.lab.measure.estimate`), your own trainer's from a timed run on a prefix of the data.

Your own trainer has no fitted model: it is timed on a prefix of the data (:func:`probe_candidate`) and
scaled up (:func:`estimate_from_probe`), the per-merge part with ``L`` as the reference's recount does: the
slowest shape of the ladder, so a naive trainer is not let through as fast, and a fast one stays fast (its
per-merge time is tiny to begin with).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from bpe.lab.fresh_process import lab_tempdir
from bpe.lab.measure import timed_run
from bpe.lab.measure.estimate import (
    BASE_MEMORY,
    CorpusShape,
    Estimate,
    corpus_sample,
    corpus_shape,
    estimate_run,
)
from bpe.lab.measure.plan import Plan
from bpe.lab.rungs import rung_with
from bpe.split.chunking import find_limit_end

#: Your own trainer is timed on about this many bytes of the data (a prefix up to a document boundary),
#: making :data:`PROBE_MERGES` merges, before the real runs.
PROBE_BYTES = 250_000
PROBE_MERGES = 30


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
    >>> e = estimate_from_probe("mine", probe, CorpusShape(1_000_000, 40_000), 1_000)
    >>> round(e.seconds), e.describe()
    (41, 'mine ~41 s, ~85.0 MB (timed on its first 100,000 bytes)')
    """
    scale_bytes = max(1.0, shape.bytes / max(probe.bytes, 1))
    scale_l = max(1.0, shape.distinct_length / max(probe.distinct_length, 1.0))
    seconds = probe.fixed_seconds * scale_bytes + probe.per_merge_seconds * scale_l * merges
    # a student's trainer often holds the whole text: its memory above a bare process grows with the bytes
    memory = BASE_MEMORY + max(0.0, probe.peak_bytes - BASE_MEMORY) * scale_bytes
    return Estimate(label, merges, seconds, memory, f"timed on its first {probe.bytes:,} bytes")


def probe_candidate(candidate, path: Path, special_tokens: list[str], workers: int | None, end: int | None,
                    tmp: Path) -> Probe | None:
    """Time your own trainer (a :class:`~bpe.lab.judge.candidates.Candidate`) on a prefix of the data.

    A ``Merger`` candidate's stages split the fixed part from the merges in one run; a function is
    run twice, with no merge and with :data:`PROBE_MERGES`, and the difference is the merges' cost.
    ``None`` when the candidate fails there (it is then estimated as v1, the slowest rung).
    """
    cut = find_limit_end(path, min(PROBE_BYTES, end if end is not None else path.stat().st_size), special_tokens)
    prefix = timed_run.write_prefix(path, cut, tmp / f"probe-{candidate.label}{path.suffix}")
    base = 256 + len(special_tokens)
    merges = (0, PROBE_MERGES) if candidate.kind == "function" else (PROBE_MERGES,)
    runs = [timed_run.run_once(prefix, candidate, base + n, special_tokens, workers) for n in merges]
    if any("failed" in run for run in runs):
        return None
    last, stages = runs[-1], runs[-1]["stages"]
    if stages is None:  # a function: the run without merges is the fixed part
        fixed, merging = runs[0]["total"], max(0.0, last["total"] - runs[0]["total"])
    else:
        fixed, merging = stages["pretokenize"] + stages["pair_count"], stages["select"] + stages["update"]
    return Probe(cut, corpus_shape(prefix, special_tokens).distinct_length, fixed, merging / max(1, last["merges"]),
                 last["peak_rss"]["self"])


def probe_candidates(candidates: list, path: Path, special_tokens: list[str], workers: int | None,
                     end: int | None = None, log=None) -> dict[str, Probe | None]:
    """Each of your own trainers (not the ladder's) timed on a prefix of the data (:func:`probe_candidate`)."""
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
    """A rung's estimate from its model; your own trainer's from its probe (failed: as the reference, the
    slowest rung)."""
    if candidate.is_variant:
        return replace(estimate_run(candidate.spec, shape, num_merges, workers), variant=candidate.label)
    probe = probes.get(candidate.label)
    if probe is None:  # it failed on the prefix: guarded as the slowest rung; its own run will say why
        slowest = rung_with("reference")
        return replace(estimate_run(slowest, shape, num_merges, workers), variant=candidate.label,
                       basis=f"its probe failed: estimated as {slowest}")
    return estimate_from_probe(candidate.label, probe, shape, num_merges)


def estimate_candidates(candidates: list, path: Path, special_tokens: list[str], shape: CorpusShape,
                        num_merges: int, workers: int | None, end: int | None = None,
                        log=None) -> dict[str, Estimate]:
    """Every candidate's estimate by label: a rung's from its model, your own trainer's from a probe."""
    probes = probe_candidates(candidates, path, special_tokens, workers, end, log)
    return {c.label: candidate_estimate(c, probes, shape, num_merges, workers) for c in candidates}


def estimate_plan(candidates: list, p: Plan, log=None) -> tuple[dict[str, Estimate], Plan]:
    """Every candidate's estimate on what the plan's runs read (:func:`estimate_candidates`), and the plan: a
    file's as it is, a corpus's with its bytes of text, which its sample (:func:`corpus_sample`) counted; the
    corpus's shape is measured on the sample and your own trainers are timed on it."""
    if p.data is None:
        shape = corpus_shape(p.path, p.special_tokens, p.corpus_bytes)
        return estimate_candidates(candidates, p.path, p.special_tokens, shape, p.merges, p.workers, p.end, log), p
    with lab_tempdir("sample") as folder:
        sample = corpus_sample(p.corpus, p.special_tokens, folder, p.limit, p.pattern)
        p = replace(p, text_bytes=sample.text_bytes)
        end = min(sample.bytes, p.corpus_bytes)  # the sample's bytes that stand for the text trained on
        shape = corpus_shape(sample.path, p.special_tokens, end, assume_bytes=p.corpus_bytes)
        return estimate_candidates(candidates, sample.path, p.special_tokens, shape, p.merges, p.workers, end,
                                   log), p
