"""Every candidate's estimate before it runs: a rung's from the cost model (:mod:`bpe.lab.estimate`),
your own trainer's, which the model cannot know, from a probe: the trainer timed on a prefix of the
data (:func:`probe_candidate`) and scaled up.  The bench, the report and ``bpe estimate`` use them.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from bpe.lab.candidates import Candidate
from bpe.lab.estimate import Estimate, Probe, corpus_shape, estimate_from_probe, estimate_run
from bpe.lab.timed_run import run_once, write_prefix

#: A candidate is timed on about this many bytes of the data (a prefix up to a document boundary) ...
PROBE_BYTES = 250_000
#: ... making this many merges, to estimate it before the real runs (:func:`probe_candidate`).
PROBE_MERGES = 30


def probe_candidate(candidate: Candidate, path: Path, special_tokens: list[str], workers: int | None,
                    end: int | None, tmp: Path) -> Probe | None:
    """Time a candidate on a prefix of the data, for :func:`bpe.lab.estimate.estimate_from_probe`.

    A ``Merger`` candidate's stages split the fixed part from the merges in one run; a function is
    run twice, with no merge and with :data:`PROBE_MERGES`, and the difference is the merges' cost.
    ``None`` when the candidate fails there (it is then estimated as v1, the slowest rung).
    """
    from bpe.training.chunking import find_limit_end

    cut = find_limit_end(path, min(PROBE_BYTES, end if end is not None else path.stat().st_size), special_tokens)
    prefix = write_prefix(path, cut, tmp / f"probe-{candidate.label}{path.suffix}")
    base = 256 + len(special_tokens)
    if candidate.kind == "function":
        runs = [run_once(prefix, candidate, base + merges, special_tokens, workers) for merges in (0, PROBE_MERGES)]
        if any("failed" in run for run in runs):
            return None
        fixed = runs[0]["total"]
        per_merge = max(0.0, runs[1]["total"] - fixed) / max(1, runs[1]["merges"])
        peak = runs[1]["peak_rss"]["self"]
    else:
        run = run_once(prefix, candidate, base + PROBE_MERGES, special_tokens, workers)
        if "failed" in run:
            return None
        stages = run["stages"]
        fixed = stages["pretokenize"] + stages["pair_count"]
        per_merge = (stages["select"] + stages["update"]) / max(1, run["merges"])
        peak = run["peak_rss"]["self"]
    shape = corpus_shape(prefix, special_tokens)
    return Probe(cut, shape.distinct_length, fixed, per_merge, peak)


def probe_candidates(candidates: list[Candidate], path: Path, special_tokens: list[str], workers: int | None,
                     end: int | None = None, log=None) -> dict[str, Probe | None]:
    """Each of your own trainers (not the ladder's) timed on a prefix of the data (:func:`probe_candidate`)."""
    probes = {}
    with tempfile.TemporaryDirectory(prefix="bpe-probe-") as tmp:
        for c in candidates:
            if not c.is_variant:
                if log is not None:
                    print(f"timing {c.label} on a prefix of the data to estimate it ...", file=log, flush=True)
                probes[c.label] = probe_candidate(c, path, special_tokens, workers, end, Path(tmp))
    return probes


def candidate_estimate(candidate: Candidate, probes: dict[str, Probe | None], shape, num_merges: int,
                       workers: int | None) -> Estimate:
    """A rung's estimate from its model; your own trainer's from its probe (failed: as v1)."""
    if candidate.is_variant:
        return replace(estimate_run(candidate.spec, shape, num_merges, workers), variant=candidate.label)
    probe = probes.get(candidate.label)
    if probe is None:  # it failed on the prefix: guarded as the slowest rung; its own run will say why
        return replace(estimate_run("v1", shape, num_merges, workers), variant=candidate.label,
                       basis="its probe failed: estimated as v1")
    return estimate_from_probe(candidate.label, probe, shape, num_merges)


def estimate_candidates(candidates: list[Candidate], path: Path, special_tokens: list[str], shape,
                        num_merges: int, workers: int | None, end: int | None = None,
                        log=None) -> dict[str, Estimate]:
    """Every candidate's estimate: a rung's from its model, your own trainer's from a probe."""
    probes = probe_candidates(candidates, path, special_tokens, workers, end, log)
    return {c.label: candidate_estimate(c, probes, shape, num_merges, workers) for c in candidates}
