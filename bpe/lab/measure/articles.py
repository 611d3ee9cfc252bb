"""The articles' side of ``python -m bpe reproduce``: their ratios, the coursework table, the merge-cost plot.

The articles' published seconds live in one file, ``docs/articles-figures.json``, each group with the
article, part and table it comes from; ``docs/articles.md`` quotes them through figure markers and
this module reads them for the command.  :data:`THEIRS` names each ratio the articles' figures give
(``before / after``, key paths into that file as :func:`bpe.lab.dev.figures.lookup` reads them: a median of
three runs is ``median(...*)``), so a step of :mod:`bpe.lab.measure.reproduce` can print it beside the ladder's.
:func:`write_coursework` writes one run's steps as a table to hand in, in Markdown and in CSV, both from
:func:`coursework_rows` (each row naming its data set, size and vocab); :func:`plot_merge_cost` sets the
cost of a merge as merges proceed, from Part 2's logs, beside v2's own checkpoints.
Left out: the articles' machines are not ours, so their seconds are never compared with ours, only ratios.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from bpe.lab.measure.spread import ratio_range_text, ratio_text

FIGURES_FILE = REPO_ROOT / "docs" / "articles-figures.json"


@dataclass(frozen=True)
class Theirs:
    """One ratio the articles publish or imply: ``before / after`` (key paths into FIGURES_FILE), of
    ``stage`` (named as the ladder names it: their counting is ``pretokenize``, their max ``select``, the
    merge time, or a C++ merge program's total, ``merge_phase``)."""

    what: str
    before: str
    after: str
    source: str
    stage: str


# Medians of three runs unless one figure is all the article gives; C++ programs are Part 8's ports.
_CPP = "lili_part8.cpp."
THEIRS = {
    "speed_test": Theirs("CS336's test_train_bpe_speed, bpe_v1 -> bpe_v2: the time the test prints",
                         "lili_part1.speed_test", "lili_part2.speed_test", "lili Parts 1 and 2, section 3.1", "total"),
    "v1_v2_merge": Theirs("bpe_v1 -> bpe_v2, TinyStories: merge time (1,565 s -> 118 s)",
                          "lili_part2.v1_merge_tinystories", "lili_part2.tinystories.merge.0",
                          "lili Part 2, section 3.2 (its own 13x)", "merge_phase"),
    "counting_tinystories": Theirs("bpe_v2 -> bpe_v3 (8 counting processes), TinyStories: counting",
                                   "median(lili_part2.tinystories.counting.*)",
                                   "median(lili_part8.v3_tinystories.counting.*)",
                                   "lili Part 2 section 4 table, Part 8 section 4 table", "pretokenize"),
    "counting_owt": Theirs("bpe_v2 -> bpe_v3 (8 counting processes), OpenWebText: counting",
                           "median(lili_part2.openwebtext.counting.*)", "median(lili_part8.v3_openwebtext.counting.*)",
                           "lili Part 2 section 4 table, Part 8 section 4 table", "pretokenize"),
    "fine_python_update": Theirs("bpe_v3 -> bpe_v5 (fine-grained), OpenWebText: update",
                                 "lili_part8.v3_openwebtext.update", "median(lili_part8.v5_openwebtext.update.*)",
                                 "lili Part 8, section 4 table", "update"),
    "fine_python_merge": Theirs("bpe_v3 -> bpe_v5 (fine-grained), OpenWebText: merge (max + update)",
                                "lili_part8.v3_openwebtext.merge", "median(lili_part8.v5_openwebtext.merge.*)",
                                "lili Part 8, section 4 table", "merge_phase"),
    "fine_cpp_update": Theirs("C++ bpe_train_updater -> _fine_grained (the fine-grained update): update",
                              f"median({_CPP}bpe_train_updater.update.*)",
                              f"median({_CPP}bpe_train_updater_fine_grained.update.*)", "lili Part 8, section 5 table", "update"),
    "fine_cpp_flat_update": Theirs("C++ _emhash8 -> _fine_grained_emhash8 (the fine-grained update, on flat hash maps): update",
                                   f"median({_CPP}bpe_train_updater_emhash8.update.*)",
                                   f"median({_CPP}bpe_train_updater_fine_grained_emhash8.update.*)",
                                   "lili Part 8, section 5 table", "update"),
    "flat_sets_update": Theirs("C++ _fine_grained_emhash8 -> _fine_grained_emhash8_set9 (flat sets in the index): update",
                               f"median({_CPP}bpe_train_updater_fine_grained_emhash8.update.*)",
                               f"median({_CPP}bpe_train_updater_fine_grained_emhash8_set9.update.*)",
                               "lili Part 8, section 6 table", "update"),
    # Flat hash maps are Part 7's step (the series' contents); the figures quoted for it are the emhash8 programs
    # of Part 8's table, whose maps are emhash8::HashMap instead of bpe_train_updater's.
    "flat_maps_merge": Theirs("C++ bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): merge (the program's total)",
                              f"median({_CPP}bpe_train_updater.total.*)",
                              f"median({_CPP}bpe_train_updater_emhash8.total.*)", "lili Part 8, section 5 table",
                              "merge_phase"),
    "flat_maps_max": Theirs("C++ bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): max",
                            f"median({_CPP}bpe_train_updater.max.*)", f"median({_CPP}bpe_train_updater_emhash8.max.*)",
                            "lili Part 8, section 5 table", "select"),
    "flat_maps_update": Theirs("C++ bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): update",
                               f"median({_CPP}bpe_train_updater.update.*)",
                               f"median({_CPP}bpe_train_updater_emhash8.update.*)", "lili Part 8, section 5 table",
                               "update"),
    "koschei_merge": Theirs("Koschei, C++ 'unoptimized merge' -> 'optimized merge', TinyStories: merge",
                            "koschei.cpp_unoptimized_merge.merge", "koschei.cpp_optimized_merge.merge",
                            "Koschei, the performance comparison table", "merge_phase"),
    "omp_merge": Theirs("C++ bpe_train_updater -> _omp_v7, 32 OpenMP threads: merge (the program's total)",
                        f"median({_CPP}bpe_train_updater.total.*)", f"median({_CPP}bpe_train_updater_omp_v7_32.total.*)",
                        "lili Part 8, section 5 table", "merge_phase"),
    "omp_update": Theirs("C++ bpe_train_updater -> _omp_v7, 32 OpenMP threads: update",
                         f"median({_CPP}bpe_train_updater.update.*)",
                         f"median({_CPP}bpe_train_updater_omp_v7_32.update.*)", "lili Part 8, section 5 table", "update"),
    "omp_max": Theirs("C++ bpe_train_updater -> _omp_v7, 32 OpenMP threads: max",
                      f"median({_CPP}bpe_train_updater.max.*)", f"median({_CPP}bpe_train_updater_omp_v7_32.max.*)",
                      "lili Part 8, section 5 table", "select"),
}


@cache
def article_figures(path: Path = FIGURES_FILE) -> dict:
    """The articles' figures (docs/articles-figures.json)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise BPEError(f"cannot read the articles' figures {path}: {e}") from None


def their_ratio(name: str) -> dict:
    """``{"what", "source", "before", "after", "ratio"}`` of one ratio of :data:`THEIRS`."""
    from bpe.lab.dev.figures import lookup

    theirs = THEIRS[name]
    figures = article_figures()
    before, after = lookup(figures, theirs.before), lookup(figures, theirs.after)
    return {"what": theirs.what, "source": theirs.source, "before": before, "after": after, "ratio": before / after}


#: The coursework table's columns, in order: one row per step, every row saying what it ran on.
COURSEWORK_COLUMNS = ("step", "stage", "data set", "size", "vocab", "their ratio", "your ratio", "range over runs",
                      "why it differs")


def set_words(ran: dict) -> dict[str, str]:
    """What one set of a run ran on, as its table row and its why lines say it: the data set (and the part
    taken), its size, the vocab and the merges.

    >>> set_words({"data": "tinystories", "limit": "300KB", "corpus_bytes": 300_104, "vocab_size": 2000,
    ...            "num_merges": 1743})
    {'data': 'tinystories (first 300KB)', 'size': '300.1 KB', 'vocab': '2,000', 'merges': '1,743'}
    """
    from bpe.training.sizes import format_size

    return {"data": ran["data"] + (f" (first {ran['limit']})" if ran.get("limit") else ""),
            "size": format_size(ran["corpus_bytes"]), "vocab": f"{ran['vocab_size']:,}",
            "merges": f"{ran['num_merges']:,}"}


def coursework_rows(result: dict) -> list[tuple[str, ...]]:
    """One run's steps as the table's rows (:data:`COURSEWORK_COLUMNS`), cells as plain text: the one model
    that the Markdown and the CSV are both written from."""
    rows = []
    for s in result["steps"].values():
        ran = set_words(result["sets"][s["set"]])
        theirs = "; ".join(f"{ratio_text(t['ratio'])} ({t['what']}; {t['source']})" for t in s["theirs"]) or "none"
        rows.append((f"{s['before']} -> {s['after']}", s["stage"], ran["data"], ran["size"], ran["vocab"], theirs,
                     s["verdict"], ratio_range_text(s["low"], s["high"]), s["why"]))
    return rows


def coursework_table(result: dict) -> str:
    """One run's steps as a Markdown table to hand in, the machine and commit said once above it."""
    machine = result["machine"]
    lines = [f"# The articles' steps on your machine ({result['generated']})", ""]
    if result["mode"] == "quick":
        lines += ["**A quick run (tiny inputs, one run per rung): these ratios are not measurements.**", ""]
    lines += [f"Made by `{result['command']}` on {machine['cpu_count']} CPUs, {machine['platform']}, Python "
              f"{machine['python']}, commit {machine['git_commit']}. Ratios only: seconds do not travel between "
              "machines.", "",
              "| " + " | ".join(COURSEWORK_COLUMNS) + " |",
              "|---|---|---|---:|---:|---:|---:|---|---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in coursework_rows(result)]
    if result["mode"] == "quick":
        lines += ["", "**A quick run: not measurements.** `make reproduce` (about 5 minutes idle) measures them."]
    return "\n".join(lines) + "\n"


def coursework_csv(result: dict) -> str:
    """The same rows as CSV, for a spreadsheet (the machine and commit are the Markdown's line above its table)."""
    import csv
    import io

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(COURSEWORK_COLUMNS)
    writer.writerows(coursework_rows(result))
    return text.getvalue()


def write_coursework(result: dict, md: Path) -> list[Path]:
    """Write the coursework table as ``md`` and, beside it, the same rows as CSV; the paths written."""
    from bpe.io.outputs import write_files_atomic

    csv_path = md.with_suffix(".csv")
    write_files_atomic(md.parent, {md.name: coursework_table(result), csv_path.name: coursework_csv(result)})
    return [md, csv_path]


def block_costs(checkpoints: list[tuple[int, float]]) -> tuple[list[float], list[float]]:
    """Each block between two checkpoints: where it ends (a fraction of the run's merges) and its cost per
    merge divided by the mean over the blocks.  The first block (from the start to the first checkpoint)
    is left out: the ladder's includes the counting, and the article's log does not say what its includes.

    >>> block_costs([(10, 5.0), (20, 6.0), (30, 8.0)])
    ([0.6666666666666666, 1.0], [0.6666666666666666, 1.3333333333333333])
    """
    ends, costs = [], []
    for (m0, s0), (m1, s1) in zip(checkpoints, checkpoints[1:]):
        ends.append(m1 / checkpoints[-1][0])
        costs.append((s1 - s0) / (m1 - m0))
    mean = statistics.fmean(costs) if costs else 1.0
    return ends, [c / mean for c in costs]


def median_checkpoints(runs: list[dict]) -> list[tuple[int, float]]:
    """The checkpoints of a rung's runs, each the median of its runs (they share the merge counts)."""
    first = runs[0].get("checkpoints") or []
    return [(m, statistics.median(r["checkpoints"][i][1] for r in runs)) for i, (m, _) in enumerate(first)]


#: The plot's panels: the article's log, and the reproduce set whose v2 runs stand beside it.
MERGE_COST_PANELS = (("TinyStories", "merge_log_tinystories", "tinystories-reduced"),
                     ("OpenWebText", "merge_log_openwebtext", "web-reduced"))


def plot_merge_cost(result: dict, out: Path, log) -> Path | None:
    """The cost of a merge as merges proceed: Part 2's bpe_v2 logs beside the ladder's v2, normalised.

    Writes ``out`` (PNG) and returns it; ``None`` (with a line on ``log``) when matplotlib is missing or
    the run has no v2 checkpoints to plot."""
    try:
        from bpe.lab.measure.report_plots import _pyplot
        plt = _pyplot()
    except ImportError:
        print("no merge-cost plot: matplotlib is not installed (pip install matplotlib)", file=log)
        return None
    part2 = article_figures()["lili_part2"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8))
    plotted = False
    for ax, (title, log_key, set_name) in zip(axes, MERGE_COST_PANELS):
        article = part2[log_key]
        ends, costs = block_costs(list(zip(article["merges_done"], article["seconds"])))
        ax.plot(ends, costs, "o-", color="#d62728", label=f"bpe_v2 on {title}, vocab {article['vocab_size']:,} "
                f"(lili Part 2, per 1,000 merges)")
        ran = result["sets"].get(set_name, {})
        runs = ran.get("variants", {}).get("v2", {}).get("runs", [])
        if runs and runs[0].get("checkpoints"):
            ends, costs = block_costs(median_checkpoints(runs))
            ax.plot(ends, costs, "s-", color="#1f77b4", label=f"ladder v2 on {ran['data']}, vocab {ran['vocab_size']:,} "
                    f"(median of {len(runs)} run(s))")
            plotted = True
        ax.axhline(1.0, color="#999999", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.set(xlabel="merges done (fraction of the run)", ylabel="cost of a merge / the run's mean")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    if not plotted:
        plt.close(fig)
        print("no merge-cost plot: no v2 checkpoints in this run", file=log)
        return None
    note = " (QUICK RUN: not a measurement)" if result["mode"] == "quick" else ""
    fig.suptitle(f"The cost of a merge as merges proceed: bpe_v2 in lili's Part 2 beside the ladder's v2{note}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
