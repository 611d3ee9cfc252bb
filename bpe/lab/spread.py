"""Repeated runs summarized (a figure's median and its min-max: :func:`summary`), and the one rule,
used by the bench, the report and ``reproduce``, for comparing two sets of runs (:func:`compare`): the
ratio of the medians, unless the runs overlap, when it is :data:`WITHIN_SPREAD`, never a number.
"""

from __future__ import annotations

import statistics

from bpe.training.timer import STAGES

#: The verdict of two sets of runs that overlap: the difference between them is no gain of either.
WITHIN_SPREAD = "within spread"
#: The figures of a timed run (a function candidate has only ``total``).
FIGURES = ("total", "merge_phase", *STAGES)


def summary(values: list[float]) -> dict:
    """``{"median", "min", "max"}`` of one figure over the runs.

    >>> summary([1.2, 1.0, 1.5])
    {'median': 1.2, 'min': 1.0, 'max': 1.5}
    """
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def seconds(run: dict, figure: str) -> float | None:
    """One figure of a run: ``total`` and ``merge_phase`` stand at the top, the stages under ``stages``."""
    if figure in ("total", "merge_phase"):
        return run[figure]
    return (run["stages"] or {}).get(figure)


def summarize_runs(runs: list[dict]) -> dict:
    """:func:`summary` of every figure the runs have (:data:`FIGURES`)."""
    return {figure: summary([seconds(r, figure) for r in runs]) for figure in FIGURES
            if seconds(runs[0], figure) is not None}


def median_run(runs: list[dict]) -> dict:
    """A run made of the medians of ``runs``: each figure, each checkpoint and peak memory its own median."""
    first = runs[0]
    medians = {figure: s["median"] for figure, s in summarize_runs(runs).items()}
    timed = first["stages"] is not None
    return {
        "stages": {name: medians[name] for name in first["stages"]} if timed else None,
        "merge_phase": medians["merge_phase"] if timed else None,
        "total": medians["total"],
        "merges": first["merges"],
        "checkpoints": [[merges, statistics.median(r["checkpoints"][i][1] for r in runs)]
                        for i, (merges, _) in enumerate(first["checkpoints"])],
        "peak_rss": {k: statistics.median(r["peak_rss"][k] for r in runs) for k in first["peak_rss"]},
        "merges_sha256": first["merges_sha256"],
    }


def range_text(values: list[float]) -> str:
    """``1.20-1.45``: the range of a figure over the runs (empty for one run)."""
    s = summary(values)
    return f"{s['min']:.2f}-{s['max']:.2f}" if len(values) > 1 else ""


def compare(before: list[float], after: list[float]) -> dict:
    """``before`` against ``after`` (seconds of the same figure): the ratio of the medians, its range
    over the runs (slowest against fastest), whether the two sets stand clear of each other (``None``
    with one run of either: no spread to judge by), and the verdict: the ratio, or :data:`WITHIN_SPREAD`.

    >>> compare([2.0, 2.2], [1.0, 1.1])["verdict"], compare([1.0, 1.3], [1.1, 1.2])["verdict"]
    ('2.00x', 'within spread')
    >>> compare([3.0], [1.0])["verdict"], compare([3.0], [1.0])["clear"] is None
    ('3.00x', True)
    """
    b, a = summary(before), summary(after)
    ratio = b["median"] / a["median"]
    clear = None if len(before) < 2 or len(after) < 2 else b["min"] > a["max"] or b["max"] < a["min"]
    return {"ratio": ratio, "low": b["min"] / a["max"], "high": b["max"] / a["min"], "clear": clear,
            "verdict": WITHIN_SPREAD if clear is False else f"{ratio:.2f}x"}
