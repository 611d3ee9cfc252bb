"""Repeated runs summarized (:func:`summary`, :func:`summarized`, :func:`median_run`), and the one rule for
comparing two sets of runs (:func:`compare`): the ratio of the medians, unless the runs overlap, when it is
:data:`WITHIN_SPREAD`, never a number.
"""

from __future__ import annotations

import statistics

from bpe.running.timer import STAGES

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


def summarized(runs: list[dict]) -> dict:
    """What a result file keeps of one candidate's runs: each run's seconds, checkpoints (merges done, seconds)
    and peak memory, and :func:`summarize_runs`."""
    kept = ("total", "merge_phase", "stages", "checkpoints", "peak_rss")
    return {"runs": [{key: r[key] for key in kept} for r in runs], **summarize_runs(runs)}


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


def _times(value: float) -> str:
    """``1.25``, ``14.3``, ``33``: as many digits as a person reads in a ratio of that size."""
    return f"{value:.2f}" if value < 9.995 else f"{value:.1f}" if value < 99.95 else f"{value:,.0f}"


def ratio_text(speedup: float) -> str:
    """A speed-up (the other's time over this one's) as people say it: ``2.00x faster``, ``33x slower``,
    never ``0.03x``; ``same time`` when it rounds to 1.  Every table that prints a ratio (bench, report,
    reproduce, ablation, peers) words it here.

    >>> ratio_text(2.0), ratio_text(1 / 33), ratio_text(1 / 215.4), ratio_text(1.001), ratio_text(0.8)
    ('2.00x faster', '33.0x slower', '215x slower', 'same time', '1.25x slower')
    """
    if speedup <= 0 or speedup != speedup:
        return "-"
    if f"{speedup:.2f}" == "1.00":
        return "same time"
    return f"{_times(speedup)}x faster" if speedup > 1 else f"{_times(1 / speedup)}x slower"


def ratio_range_text(low: float, high: float) -> str:
    """The range of a speed-up over the runs, worded as :func:`ratio_text`.

    >>> ratio_range_text(1.9, 2.1), ratio_range_text(1 / 36, 1 / 30), ratio_range_text(0.9, 1.2)
    ('1.90-2.10x faster', '30.0-36.0x slower', '1.11x slower to 1.20x faster')
    """
    if low > 1 and high > 1:
        return f"{_times(low)}-{_times(high)}x faster"
    if low < 1 and high < 1:
        return f"{_times(1 / high)}-{_times(1 / low)}x slower"
    return f"{ratio_text(low)} to {ratio_text(high)}"


def compare(before: list[float], after: list[float]) -> dict:
    """``before`` against ``after`` (seconds of the same figure): the ratio of the medians, its range
    over the runs (slowest against fastest), whether the two sets stand clear of each other (``None``
    with one run of either: no spread to judge by), and the verdict: the ratio, or :data:`WITHIN_SPREAD`.

    >>> compare([2.0, 2.2], [1.0, 1.1])["verdict"], compare([1.0, 1.3], [1.1, 1.2])["verdict"]
    ('2.00x faster', 'within spread')
    >>> compare([3.0], [1.0])["verdict"], compare([3.0], [1.0])["clear"] is None
    ('3.00x faster', True)
    >>> compare([0.1], [21.5])["verdict"]
    '215x slower'
    """
    b, a = summary(before), summary(after)
    ratio = b["median"] / a["median"]
    clear = None if len(before) < 2 or len(after) < 2 else b["min"] > a["max"] or b["max"] < a["min"]
    return {"ratio": ratio, "low": b["min"] / a["max"], "high": b["max"] / a["min"], "clear": clear,
            "verdict": WITHIN_SPREAD if clear is False else ratio_text(ratio)}
