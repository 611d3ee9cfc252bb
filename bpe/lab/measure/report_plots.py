"""The plots of ``bpe report`` (:mod:`bpe.lab.measure.report`), drawn from its result (its tables typed,
:class:`~bpe.lab.measure.result.BenchResult`): the time of each stage per
candidate, the cost of each 100 merges as the merges go on, and time against corpus size and workers, with one
colour per rung, peer or own trainer in every plot.  ``reproduce`` draws its merge-cost plot with the same
matplotlib set-up (:func:`pyplot`, :func:`save_figure`).
"""

from __future__ import annotations

from pathlib import Path

from bpe.lab.measure.peers import PEERS
from bpe.running.cores import BUSY_SHARE
from bpe.training.registry import VARIANTS

STAGE_COLOURS = {"pretokenize": "#4c72b0", "pair_count": "#55a868", "select": "#c44e52", "update": "#8172b2"}


def pyplot():
    # matplotlib is an optional dependency (the dev extra), and its backend is chosen before pyplot is imported.
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def save_figure(fig, out: Path, title: str) -> None:
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    pyplot().close(fig)


#: One colour per name in every plot: the rungs in ladder order, then the peers.
_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
            "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39"]


def colour(name: str) -> str:
    """The colour of a rung (by its place in the ladder), a peer (after the rungs) or your own trainer."""
    names = list(VARIANTS) + [p for p in PEERS if p not in VARIANTS]
    index = names.index(name) if name in names else len(names) + sum(map(ord, name))
    return _PALETTE[index % len(_PALETTE)]


def timed_peers(result: dict) -> dict[str, float]:
    """The peers that ran, with their median total (the others hold why not: a missing module, a failure)."""
    return {name: value for name, value in result["peers"].items() if isinstance(value, (int, float))}


def _label(ax, title: str, xlabel: str, ylabel: str, values=(), **legend) -> None:
    """Title, axis labels and legend; a log scale when the positive ``values`` span more than 30 times
    (v2's minutes beside v6's second)."""
    ax.set_title(title, fontsize=10)
    ax.set(xlabel=xlabel, ylabel=ylabel)
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 30:
        ax.set_yscale("log")
    ax.legend(**{"fontsize": 8, **legend})


def plot_stages(result: dict, out: Path) -> None:
    """One stacked bar per candidate per table (the tick label in its colour); peers beside the first."""
    plt = pyplot()
    tables = result["tables"]
    fig, axes = plt.subplots(1, len(tables), figsize=(5.5 * len(tables) + 1, 4.5), squeeze=False)
    for i, (ax, bench) in enumerate(zip(axes[0], tables)):
        names = list(bench.variants)
        bottoms = [0.0] * len(names)
        for stage, stage_colour in STAGE_COLOURS.items():  # a train_bpe function has no stages: total only, below
            heights = [(bench.variants[n].median.stages or {}).get(stage, 0.0) for n in names]
            ax.bar(names, heights, bottom=bottoms, color=stage_colour, label=stage.replace("_", " "))
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        other = [max(0.0, bench.variants[n].median.total - b) for n, b in zip(names, bottoms)]
        timed = [bench.variants[n].median.stages is not None for n in names]
        ax.bar(names, [o if t else 0.0 for o, t in zip(other, timed)], bottom=bottoms, color="#cccccc",
               label="other (start-up, vocab)")
        if not all(timed):
            ax.bar(names, [0.0 if t else o for o, t in zip(other, timed)], color="white", edgecolor="#555555",
                   hatch="..", label="total only (a train_bpe function)")
        labels = list(names)
        # the axis from what is drawn: a bar is its stages' medians stacked, which may sum past the median total
        tops = [b + (o if t else 0.0) for b, o, t in zip(bottoms, other, timed)]
        tops += [o for o, t in zip(other, timed) if not t]
        for name, value in timed_peers(result).items() if i == 0 else ():
            ax.bar([name], [value], color="white", edgecolor=colour(name), hatch="//", linewidth=1.5)
            labels.append(name)
            tops.append(value)
        ax.set_ylim(0, 1.05 * max(tops, default=0.0) or 1.0)
        for tick, name in zip(ax.get_xticklabels(), labels):
            tick.set_color(colour(name))
        ax.set_title(f"{result['data']}, vocab {bench.settings['vocab_size']:,}", fontsize=10)
        ax.set_ylabel("seconds (median)")
        ax.tick_params(axis="x", rotation=30)
    axes[0][0].legend(fontsize=8)
    save_figure(fig, out, f"Time per stage (make report, {result['generated']})")


def _per_hundred(checkpoints: list) -> tuple[list[float], list[float]]:
    """(merges done, ms per 100 merges) over consecutive windows of about a twentieth of the run (one
    checkpoint interval alone is too noisy to read a trend from); a short last window is dropped."""
    stride = max(1, len(checkpoints) // 20)
    window = checkpoints[::stride]
    xs, ys = [], []
    full = window[1][0] - window[0][0] if len(window) > 1 else 1
    for (m0, t0), (m1, t1) in zip(window, window[1:]):
        if m1 - m0 < full / 2:  # the stretch to the final merge: a few merges, mostly timer noise
            continue
        xs.append(m1)
        ys.append(max((t1 - t0) / (m1 - m0) * 100 * 1000, 1e-3))
    return xs, ys


def plot_merges(result: dict, out: Path) -> None:
    """Per table: elapsed time against merges (top) and ms per 100 merges against merges (bottom)."""
    plt = pyplot()
    tables = result["tables"]
    fig, axes = plt.subplots(2, len(tables), figsize=(5.5 * len(tables) + 1, 8), squeeze=False)
    for i, bench in enumerate(tables):
        elapsed_ax, cost_ax = axes[0][i], axes[1][i]
        elapsed, costs = [], []
        for name, variant in bench.variants.items():
            med = variant.median
            if med.stages is None:  # a train_bpe function: one point, its total at its last merge
                elapsed_ax.plot(*zip(*med.checkpoints), marker="D", linestyle="none", color=colour(name),
                                label=f"{name} (total)")
                elapsed += [t for _, t in med.checkpoints]
                continue
            start = med.stages["pretokenize"] + med.stages["pair_count"]
            xs = [0] + [m for m, _ in med.checkpoints]
            ys = [start] + [t for _, t in med.checkpoints]
            elapsed_ax.plot(xs, ys, color=colour(name), linewidth=1.5, label=name)
            elapsed += ys
            cx, cy = _per_hundred(med.checkpoints)
            cost_ax.plot(cx, cy, color=colour(name), linewidth=1.2, label=name)
            costs += cy
        for name, value in timed_peers(result).items() if i == 0 else ():
            elapsed_ax.axhline(value, linestyle="--", linewidth=1.2, color=colour(name), label=f"{name} (total)")
            elapsed.append(value)
        _label(elapsed_ax, f"{result['data']}, vocab {bench.settings['vocab_size']:,}: elapsed", "merges done",
               "seconds since start (median)", elapsed)
        _label(cost_ax, "cost of each 100 merges (flat = constant cost per merge)", "merges done",
               "ms per 100 merges", costs)
    save_figure(fig, out, f"Time against merges (make report, {result['generated']})")


def plot_scaling(result: dict, out: Path) -> None:
    """Total time against corpus size (left) and against pre-tokenization workers (right)."""
    plt = pyplot()
    scaling = result["scaling"]
    fig, (size_ax, workers_ax) = plt.subplots(1, 2, figsize=(11, 4.5))
    for name, points in scaling["sizes"].items():
        size_ax.plot([b / 1e6 for b, _ in points], [t for _, t in points], marker="o", color=colour(name), label=name)
    size_ax.set_ylim(0, 1.25 * max(t for points in scaling["sizes"].values() for _, t in points))  # room for the legend
    size_ax.set_xlim(left=0)
    _label(size_ax, f"{result['data']}, vocab {scaling['vocab_size']:,}: time against corpus size",
           "corpus size (MB, first part of the data via --limit)", "total seconds")
    for name, points in scaling["workers"].items():
        workers_ax.plot([w for w, _, _ in points], [t for _, t, _ in points], marker="o", color=colour(name),
                        label=f"{name} total")
        workers_ax.plot([w for w, _, _ in points], [p for _, _, p in points], marker="s", linestyle="--",
                        color=colour(name), label=f"{name} pre-tokenize")
    workers_ax.set_xticks(scaling["worker_counts"])
    workers_ax.set_ylim(0, 1.35 * max(t for points in scaling["workers"].values() for _, t, _ in points))
    _label(workers_ax, f"time against workers ({result['machine']['cpu_count']} CPUs)", "pre-tokenization workers",
           "seconds", fontsize=7, loc="upper left", ncol=2)
    if shared_note(result):
        workers_ax.text(0.98, 0.02, shared_note(result).replace(": ", ":\n", 1), transform=workers_ax.transAxes,
                        ha="right", va="bottom", fontsize=7, color="#a02020")
    save_figure(fig, out, f"Scaling (make report, {result['generated']})")


def shared_note(result: dict) -> str:
    """What the scaling runs shared their machine with, when other processes kept at least
    :data:`~bpe.running.cores.BUSY_SHARE` of a core busy as one of them started (sampled before each run,
    ``busy_cores``): then a worker may share its core with them, and more workers need not be faster.
    Empty on a machine left to the runs.

    >>> shared_note({"scaling": {"busy_cores": 1.2}, "machine": {"cpu_count": 2}})[:66]
    'not an idle machine: other processes kept up to 1.2 of its 2 cores'
    >>> shared_note({"scaling": {"busy_cores": 0.1}, "machine": {"cpu_count": 2}})
    ''
    """
    busy = (result.get("scaling") or {}).get("busy_cores") or 0.0
    if busy < BUSY_SHARE:
        return ""
    return (f"not an idle machine: other processes kept up to {busy:.1f} of its {result['machine']['cpu_count']} "
            "cores busy as these runs started, so a worker may share a core with them")
