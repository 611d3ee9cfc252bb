"""``python -m bpe reproduce``: each optimization step of the articles, measured on the ladder.

The articles the ladder follows (lili's *Implementing and Optimizing a BPE Tokenizer from Scratch*,
Koschei's C++ article) publish seconds on their own machines; the ratio of one step travels.  For
each step this runs the two rungs that make it, interleaved (``a b a b``), on ``tinystories-synth``
at vocab 10,000, ``webtext-synth`` at 32,000, CS336's ``corpus.en`` fixture at 500, and the real
``tinystories`` and ``owt`` when present; a step too slow at the article's vocab runs at a reduced one,
and says so.  Each step (:mod:`bpe.lab.measure.reproduce_steps`) compares one stage on both sides: it
prints the articles' ratio of that stage (:mod:`bpe.lab.measure.articles`, from
``docs/articles-figures.json``; "none" where no article measures it), the ladder's
(:mod:`bpe.lab.measure.spread`'s rule), and one line on why the two differ.  The articles' C++ and
compiled steps stand beside v8, the ladder's compiled rung, against v6 (whose algorithm v8 compiles) or
the rung whose algorithm the article's starting program has; where v8 was not built its steps are left
out, with its reason, and ``--publish`` is refused.  The result, ``docs/articles-bench.json``, is quoted by
``docs/articles.md``; beside it go a coursework table (``articles.md`` and ``articles.csv``; under ``out/``
for a published run) and the merge-cost plot.  ``--quick`` runs the same plan on tiny inputs (for tests)
and says on its first and last lines that its ratios mean nothing.
Left out: the articles' own trainers (``bench --variant FILE.py:CLASS`` runs them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from bpe.lab.measure.reproduce_steps import FULL, QUICK, STEPS, RunSet
from bpe.lab.measure.spread import compare, ratio_range_text, ratio_text, seconds, summarized

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
    from bpe.data.datasets import DATASETS, resolve_data, shown_path
    from bpe.lab.measure.plan import measure, plan

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
    from bpe.training.registry import VARIANTS

    return tuple(v for v in variants if v in VARIANTS)


def cannot_run(variant: str) -> str:
    """Why a rung of the plan cannot run here (its one line)."""
    from bpe.training.registry import VARIANTS, unavailable

    return unavailable(VARIANTS.module(variant)) or f"{variant} cannot run here"


def names(theirs: tuple[str, ...] | str | None) -> tuple[str, ...]:
    return (theirs,) if isinstance(theirs, str) else theirs or ()


def compare_steps(sets: dict) -> dict:
    """Every step whose set ran: the ladder's comparison (:func:`bpe.lab.measure.spread.compare`), the articles' ratio
    of the same step (``theirs``), and why the two differ (``why``; ``no_gain`` added when the ladder's ratio
    is below 1 or within the spread)."""
    from bpe.lab.measure.articles import set_words, their_ratio

    steps = {}
    for step in (step for step in STEPS if step.run_set in sets):
        ran = sets[step.run_set]
        runs = ran["variants"]
        if step.before not in runs or step.after not in runs:  # a rung that cannot run here (v8 unbuilt)
            continue
        before, after = ([seconds(r, step.stage) for r in runs[rung]["runs"]] for rung in (step.before, step.after))
        compared = compare(before, after)
        no_gain = compared["clear"] is False or compared["ratio"] < 1
        steps[f"{step.run_set}:{step.before}-{step.after}:{step.stage}"] = {
            "step": step.name, "set": step.run_set, "before": step.before, "after": step.after, "stage": step.stage,
            **compared, "theirs": [their_ratio(name) for name in names(step.theirs)],
            "why": (step.why + (f"; {step.no_gain}" if no_gain and step.no_gain else "")).format(**set_words(ran))}
    return steps


#: A quick run's first and last lines: its ratios come from tiny inputs, one run each.
QUICK_WARNING = ("QUICK RUN: tiny inputs, one run per rung: the ratios {where} are not measurements "
                 "(make reproduce measures them)")


def run_reproduce(out: Path | None = DEFAULT_OUT, quick: bool = False, repeat: int | None = None,
                  workers: int | None = None, log=None) -> dict:
    """Run every set of the plan, compare each step, write ``out`` (JSON) and print the step table."""
    from bpe.defaults import SPECIAL_TOKEN
    from bpe.lab.measure.articles import plot_merge_cost, write_coursework
    from bpe.lab.measure.plan import check_repeat
    from bpe.lab.measure.publish import stamp, write_json_atomic
    from bpe.data.datasets import shown_path as shown

    log = log or sys.stdout
    if quick:
        print(QUICK_WARNING.format(where="below"), file=log, flush=True)
    plan = QUICK if quick else FULL
    repeat = repeat or (1 if quick else 3)
    check_repeat(repeat, out)
    rungs = tuple(dict.fromkeys(v for run in plan for v in run.variants))
    missing = [v for v in rungs if v not in runnable(rungs)]
    if missing and out is not None and out.resolve() == PUBLISHED_OUT.resolve():
        raise BPEError(f"the committed result needs every rung of the plan: {'; '.join(cannot_run(v) for v in missing)}")
    specials = [SPECIAL_TOKEN]
    # Each step runs its rung's idea in full: every core unless a count is given, as the articles'
    # runs used theirs (v7 given none keeps a core spare: on 2 cores v6 -> v7 would compare v6 with itself).
    workers = workers or os.cpu_count() or 1
    made = stamp()  # now: the commit whose code runs
    sets = {run.name: ran for run in plan if (ran := run_set(run, repeat, workers, specials, log)) is not None}
    steps = compare_steps(sets)
    command = "python -m bpe reproduce" + (" --quick" if quick else "")
    result = {**made, "mode": "quick" if quick else "full",
              "command": command + (f" --repeat {repeat}" if repeat != (1 if quick else 3) else ""),
              "workers": workers, "sets": sets, "steps": steps}
    print(step_table(result), file=log)
    if out is not None:
        write_json_atomic(out, result, log=log)
        table = out.with_name(DEFAULT_TABLE.name)
        if table.resolve() == PAGE.resolve():  # beside docs/articles-bench.json stands the page itself
            table = DEFAULT_TABLE
        written = " and ".join(shown(path) for path in write_coursework(result, table))
        print(f"wrote {written}: their ratio beside yours, step by step, for coursework", file=log)
        plotted = plot_merge_cost(result, out.with_name(MERGE_COST_PNG), log)
        if plotted is not None:
            print(f"wrote {shown(plotted)}: the cost of a merge as merges proceed, Part 2's bpe_v2 beside v2", file=log)
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
