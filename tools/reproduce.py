"""``python -m tools.reproduce``: each optimization step of the articles, measured on the ladder.

The articles the ladder follows (lili's *Implementing and Optimizing a BPE Tokenizer from Scratch*,
Koschei's C++ article) publish seconds on their own machines; the ratio of one step travels.  For
each step of the plan (:mod:`tools.reproduce_steps`) this runs the two rungs that make it,
interleaved (``a b a b``), on ``tinystories-synth`` at vocab 10,000, ``webtext-synth`` at 32,000, CS336's
``corpus.en`` fixture at 500, and the real ``tinystories`` and ``owt`` when present; a step too slow at the
article's vocab runs at a reduced one, and says so.  It prints the articles' ratio of the step's stage
("none" where no article measures it), the ladder's (:mod:`bpe.lab.measure.spread`'s rule), and one line
on why the two differ.  The articles' C++ and compiled steps stand beside v8, the ladder's compiled rung;
where v8 was not built its steps are left out, with its reason, and ``--publish`` is refused.  The result,
``docs/articles-bench.json``, is quoted by ``docs/articles.md``; beside it go a coursework table to hand in
(``articles.md`` and ``articles.csv``, under ``out/`` for a published run) and the merge-cost plot (Part 2's
logs beside v2's checkpoints).  ``--quick`` runs the same plan on tiny inputs (for tests) and says on its
first and last lines that its ratios mean nothing.
Left out: the articles' own trainers (``bench --variant FILE.py:CLASS`` runs them).

Example: ``python -m tools.reproduce --quick --out /tmp/steps.json`` (the plan in seconds); ``make reproduce``.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import sys
from pathlib import Path

from bpe.commands import arguments
from bpe.data.datasets import DATASETS, REPO_ROOT, resolve_data, shown_path
from bpe.defaults import SPECIAL_TOKEN
from bpe.errors import BPEError
from bpe.lab.measure.plan import check_repeat, measure, plan
from bpe.lab.measure.publish import made_by, output_path, stamp, write_json_atomic
from bpe.lab.measure.report_plots import pyplot, save_figure
from bpe.lab.measure.spread import compare, ratio_range_text, ratio_text, seconds, summarized
from bpe.running.files import write_files_atomic
from bpe.running.sizes import format_size
from bpe.training.registry import VARIANTS, unavailable
from tools.command import tool_main
from tools.reproduce_steps import FULL, QUICK, SELECT_UPDATE, STEPS, RunSet, article_figures, their_ratio

#: Where a run writes by default (not in git), and the committed result ``--publish`` rewrites.
DEFAULT_OUT = REPO_ROOT / "out" / "articles-bench.json"
PUBLISHED_OUT = REPO_ROOT / "docs" / "articles-bench.json"
#: The coursework table of a run (and its .csv): beside its JSON, under out/ for a published run (not over the page).
DEFAULT_TABLE = REPO_ROOT / "out" / "articles.md"
PAGE = REPO_ROOT / "docs" / "articles.md"
#: The merge-cost plot, written beside the JSON (docs/ for a published run, which docs/articles.md shows).
MERGE_COST_PNG = "articles-merge-cost.png"


def run_set(run: RunSet, repeat: int, workers: int | None, special_tokens: list[str], log) -> dict | None:
    """Every run of one set, interleaved; ``None`` for a real data set that is not downloaded."""
    if run.real and not DATASETS[run.data].path.exists():
        print(f"[{run.name}] skipped: {run.data} is not in data/ (make data DATA={run.data})", file=log, flush=True)
        return None
    p = plan(resolve_data(run.data), run.vocab_size, special_tokens, workers, run.limit or None)
    variants = runnable(run.variants)
    for left_out in (v for v in run.variants if v not in variants):
        print(f"[{run.name}] {left_out} left out, and its steps with it: {cannot_run(left_out)}", file=log, flush=True)
    runs = measure(run.name, p, variants, repeat, log, f"{run.data}{f' (first {run.limit})' if run.limit else ''}")
    digests = {v: rs[0]["merges_sha256"] for v, rs in runs.items()}
    if len(set(digests.values())) != 1:
        raise BPEError(f"[{run.name}] the rungs gave different merges: {digests}")
    return {
        "data": run.data, "path": shown_path(p.path), "corpus_bytes": p.corpus_bytes, "limit": run.limit,
        "vocab_size": run.vocab_size, "num_merges": runs[variants[0]][0]["merges"], "note": run.note,
        "repeat": repeat, "merges_sha256": next(iter(digests.values())),
        "variants": {v: summarized(rs) for v, rs in runs.items()},
    }


def runnable(variants: tuple[str, ...]) -> tuple[str, ...]:
    """The rungs of ``variants`` that can run here (v8 cannot where it was installed without a C compiler)."""
    return tuple(v for v in variants if v in VARIANTS)


def cannot_run(variant: str) -> str:
    """Why a rung of the plan cannot run here (its one line)."""
    return unavailable(VARIANTS.module(variant)) or f"{variant} cannot run here"


def stage_seconds(run: dict, stage: str) -> float | None:
    """One stage of a run as a step compares it: :data:`SELECT_UPDATE`, the stage a C++ merge program's total
    times, is select plus update (the merge phase less its initial pair count); any other is :func:`seconds`'s.

    >>> run = {"total": 9.0, "merge_phase": 6.0, "stages": {"pair_count": 1.0, "select": 2.0, "update": 3.0}}
    >>> stage_seconds(run, "select+update"), stage_seconds(run, "merge_phase")
    (5.0, 6.0)
    """
    if stage == SELECT_UPDATE:
        return seconds(run, "select") + seconds(run, "update")
    return seconds(run, stage)


def compare_steps(sets: dict) -> dict:
    """Every step whose set ran: the ladder's comparison (:func:`bpe.lab.measure.spread.compare`), the articles' ratio
    of the same step (``theirs``), and why the two differ (``why``; ``no_gain`` added when the ladder's ratio
    is below 1 or within the spread)."""
    steps = {}
    for step in (step for step in STEPS if step.run_set in sets):
        ran = sets[step.run_set]
        runs = ran["variants"]
        if step.before not in runs or step.after not in runs:  # a rung that cannot run here (v8 unbuilt)
            continue
        before, after = ([stage_seconds(r, step.stage) for r in runs[rung]["runs"]]
                         for rung in (step.before, step.after))
        compared = compare(before, after)
        no_gain = compared["clear"] is False or compared["ratio"] < 1
        steps[f"{step.run_set}:{step.before}-{step.after}:{step.stage}"] = {
            "step": step.title(ran["vocab_size"]), "set": step.run_set, "before": step.before, "after": step.after,
            "stage": step.stage,
            **compared, "theirs": [their_ratio(name) for name in step.theirs],
            "why": (step.why + (f"; {step.no_gain}" if no_gain and step.no_gain else "")).format(**set_words(ran))}
    return steps


#: A quick run's first and last lines: its ratios come from tiny inputs, one run each.
QUICK_WARNING = ("QUICK RUN: tiny inputs, one run per rung: the ratios {where} are not measurements "
                 "(make reproduce measures them)")


def run_reproduce(out: Path | None = DEFAULT_OUT, quick: bool = False, repeat: int | None = None,
                  workers: int | None = None, log=None) -> dict:
    """Run every set of the plan, compare each step, write ``out`` (JSON) and print the step table."""
    log = log or sys.stdout
    repeat = (1 if quick else 3) if repeat is None else repeat
    check_repeat(repeat, out)
    if quick:
        print(QUICK_WARNING.format(where="below"), file=log, flush=True)
    sets_plan = QUICK if quick else FULL
    rungs = tuple(dict.fromkeys(v for run in sets_plan for v in run.variants))
    missing = [v for v in rungs if v not in runnable(rungs)]
    if missing and out is not None and out.resolve() == PUBLISHED_OUT.resolve():
        raise BPEError("the committed result needs every rung of the plan: "
                       + "; ".join(cannot_run(v) for v in missing))
    specials = [SPECIAL_TOKEN]
    # Each step runs its rung's idea in full: every core unless a count is given, as the articles'
    # runs used theirs (v7 given none keeps a core spare: on 2 cores v6 -> v7 would compare v6 with itself).
    workers = workers or os.cpu_count() or 1
    made = stamp()  # now: the commit whose code runs
    sets = {run.name: ran for run in sets_plan if (ran := run_set(run, repeat, workers, specials, log)) is not None}
    steps = compare_steps(sets)
    command = "python -m tools.reproduce" + (" --quick" if quick else "")
    result = {**made, "mode": "quick" if quick else "full",
              "command": command + (f" --repeat {repeat}" if repeat != (1 if quick else 3) else ""),
              "workers": workers, "sets": sets, "steps": steps}
    print(step_table(result), file=log)
    if out is not None:
        write_json_atomic(out, result, log=log)
        table = out.with_name(DEFAULT_TABLE.name)
        if table.resolve() == PAGE.resolve():  # beside docs/articles-bench.json stands the page itself
            table = DEFAULT_TABLE
        written = " and ".join(shown_path(path) for path in write_coursework(result, table))
        print(f"wrote {written}: their ratio beside yours, step by step, for coursework", file=log)
        plot_merge_cost(result, out.with_name(MERGE_COST_PNG), log)
    if quick:
        print(QUICK_WARNING.format(where="above"), file=log)
    return result


def step_table(result: dict) -> str:
    """The steps as printed: per step, the articles' ratio, the ladder's with its range and verdict, and why
    they differ."""
    lines = [""]
    for s in result["steps"].values():
        lines.append(f"{s['before']} -> {s['after']}, {s['stage']} [{s['set']}]: {s['step']}")
        lines += [f"    theirs  {ratio_text(t['ratio'])}  {t['what']} ({t['source']})" for t in s["theirs"]] or [
            "    theirs  none"]
        lines += [f"    ladder  {s['verdict']}  (ratio of medians {ratio_text(s['ratio'])}, range over runs "
                  f"{ratio_range_text(s['low'], s['high'])})", f"    why     {s['why']}"]
    if any(s["clear"] is None for s in result["steps"].values()):
        lines.append("(one run of a rung: no spread to judge its ratios by)")
    return "\n".join(lines)


#: The coursework table's columns, in order: one row per step, every row saying what it ran on.
COURSEWORK_COLUMNS = ("step", "stage", "data set", "size", "vocab", "their ratio", "your ratio", "range over runs",
                      "why it differs")


def set_words(ran: dict) -> dict[str, str]:
    """What one set of a run ran on, as its table row and its why lines say it.

    >>> set_words({"data": "tinystories", "limit": "300KB", "corpus_bytes": 300_104, "vocab_size": 2000,
    ...            "num_merges": 1743})
    {'data': 'tinystories (first 300KB)', 'size': '300.1 KB', 'vocab': '2,000', 'merges': '1,743'}
    """
    return {"data": ran["data"] + (f" (first {ran['limit']})" if ran.get("limit") else ""),
            "size": format_size(ran["corpus_bytes"]), "vocab": f"{ran['vocab_size']:,}",
            "merges": f"{ran['num_merges']:,}"}


def coursework_rows(result: dict) -> list[tuple[str, ...]]:
    """One run's steps as the coursework table's rows, cells as plain text: the Markdown's and the CSV's."""
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
              f"{machine['python']}, {made_by(machine)}. Ratios only: seconds do not travel between "
              "machines.", "",
              "| " + " | ".join(COURSEWORK_COLUMNS) + " |",
              "|---|---|---|---:|---:|---:|---:|---|---|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in coursework_rows(result)]
    if result["mode"] == "quick":
        lines += ["", "**A quick run: not measurements.** `make reproduce` (about 5 minutes idle) measures them."]
    return "\n".join(lines) + "\n"


def write_coursework(result: dict, md: Path) -> list[Path]:
    """Write the coursework table as ``md`` and, beside it, the same rows as CSV for a spreadsheet (the machine
    and commit are the Markdown's line above its table); the paths written."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([COURSEWORK_COLUMNS, *coursework_rows(result)])
    write_files_atomic(md.parent, {md.name: coursework_table(result), md.with_suffix(".csv").name: text.getvalue()})
    return [md, md.with_suffix(".csv")]


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


#: The merge-cost plot's panels: the article's log, and the set whose v2 runs stand beside it.
MERGE_COST_PANELS = (("TinyStories", "merge_log_tinystories", "tinystories-reduced"),
                     ("OpenWebText", "merge_log_openwebtext", "web-reduced"))


def plot_merge_cost(result: dict, out: Path, log) -> None:
    """The cost of a merge as merges proceed: Part 2's bpe_v2 logs beside the ladder's v2 (the median of its
    runs' checkpoints), normalised; written to ``out`` (PNG), or a line on ``log`` saying why not."""
    try:
        plt = pyplot()
    except ImportError:
        print("no merge-cost plot: matplotlib is not installed (pip install matplotlib)", file=log)
        return
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
            medians = [(m, statistics.median(r["checkpoints"][i][1] for r in runs))
                       for i, (m, _) in enumerate(runs[0]["checkpoints"])]
            ends, costs = block_costs(medians)
            ax.plot(ends, costs, "s-", color="#1f77b4",
                    label=f"ladder v2 on {ran['data']}, vocab {ran['vocab_size']:,} (median of {len(runs)} run(s))")
            plotted = True
        ax.axhline(1.0, color="#999999", lw=0.8)
        ax.set_title(title, fontsize=10)
        ax.set(xlabel="merges done (fraction of the run)", ylabel="cost of a merge / the run's mean")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    if not plotted:
        plt.close(fig)
        print("no merge-cost plot: no v2 checkpoints in this run", file=log)
        return
    note = " (QUICK RUN: not a measurement)" if result["mode"] == "quick" else ""
    save_figure(fig, out, "The cost of a merge as merges proceed: bpe_v2 in lili's Part 2 beside the ladder's "
                f"v2{note}")
    print(f"wrote {shown_path(out)}: the cost of a merge as merges proceed, Part 2's bpe_v2 beside v2", file=log)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reproduce",
                                     description="measure each optimization step of the article series on the "
                                                 "ladder (TinyStories-like and web-like text; docs/articles.md)")
    parser.add_argument("--quick", action="store_true",
                        help="the same plan on tiny inputs, in seconds (ratios mean nothing)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs per rung, interleaved (default 3; 1 with --quick)")
    arguments.add_workers(parser)
    arguments.add_output(parser, "--out", "out/articles-bench.json", "docs/articles-bench.json")

    def run(args) -> None:
        arguments.check_workers(args)
        if args.publish and (args.quick or args.repeat is not None):
            raise BPEError("--publish writes the committed result: it takes the full plan, without --quick or "
                           "--repeat")
        out = output_path(args.out, DEFAULT_OUT, PUBLISHED_OUT, args.publish, "python -m tools.reproduce --publish")
        run_reproduce(out, quick=args.quick, repeat=args.repeat, workers=args.workers)

    return tool_main(parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
