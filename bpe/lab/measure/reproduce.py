"""``python -m bpe reproduce``: each optimization step of the articles, measured on the ladder.

The articles the ladder follows (lili's *Implementing and Optimizing a BPE Tokenizer from Scratch*,
Koschei's C++ article) publish seconds on their own machines; the ratio of one step travels.  For
each step this runs the two rungs that make it, interleaved (``a b a b``), on ``tinystories-synth``
at vocab 10,000, ``webtext-synth`` at 32,000, CS336's ``corpus.en`` fixture at 500, and the real
``tinystories`` and ``owt`` when present; a step too slow at the article's vocab runs at a reduced one,
and says so.  Each step compares one stage on both sides: it prints the articles' ratio of that stage
(:mod:`bpe.lab.measure.articles`, from ``docs/articles-figures.json``; "none" where no article measures it), the
ladder's (:mod:`bpe.lab.measure.spread`'s rule), and one line on why the two differ.  The articles' C++ and
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
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from bpe.lab.measure.spread import compare, ratio_range_text, ratio_text, seconds, summarize_runs

#: Where a run writes by default (not in git), and the committed result ``--publish`` rewrites.
DEFAULT_OUT = REPO_ROOT / "out" / "articles-bench.json"
PUBLISHED_OUT = REPO_ROOT / "docs" / "articles-bench.json"
#: The coursework table of a run (and its .csv): beside its JSON, under out/ for a published run (not over the page).
DEFAULT_TABLE = REPO_ROOT / "out" / "articles.md"
PAGE = REPO_ROOT / "docs" / "articles.md"
#: The merge-cost plot, written beside the JSON (docs/ for a published run, which docs/articles.md shows).
MERGE_COST_PNG = "articles-merge-cost.png"


@dataclass(frozen=True)
class RunSet:
    """One data set at one vocab, the rungs run on it, interleaved, ``repeat`` times."""

    name: str
    data: str
    vocab_size: int
    variants: tuple[str, ...]
    note: str = ""
    limit: str | None = None
    real: bool = False  # a downloaded data set: run only when present


@dataclass(frozen=True)
class Step:
    """One step of the articles and the rungs that make it: ``before`` -> ``after`` on ``stage``."""

    name: str
    run_set: str
    before: str
    after: str
    stage: str  # "total", "merge_phase", or a StageTimer stage: pretokenize, pair_count, select, update
    theirs: tuple[str, ...] | str | None  # the articles' ratios of the same step and stage (bpe.lab.measure.articles.THEIRS)
    why: str  # one line: why their ratio and the ladder's differ ({data}, {size}, {vocab}, {merges}: the set's own)
    no_gain: str = ""  # why, when the ladder's ratio is below 1 or within the spread


FULL = [
    RunSet("cs336-speed", "corpus-en", 500, ("v1", "v2"),
           "corpus.en at vocab 500: the fixture and vocab of CS336's train_bpe tests, test_train_bpe_speed among them"),
    RunSet("tinystories", "tinystories-synth-50MB", 10_000, ("v5", "v6", "v7", "v8")),
    RunSet("tinystories-reduced", "tinystories-synth-50MB", 2_000, ("v2", "v3", "v4", "v5", "v8"),
           "v2-v4 scan every pair with max() once per merge: at vocab 10,000 that is a minute or more per run "
           "even on this text, so they run at vocab 2,000 (1,743 merges) on the same 50 MB"),
    RunSet("tinystories-v1", "tinystories-synth-10MB", 1_000, ("v1", "v2"),
           "v1 recounts every pair after every merge: at vocab 10,000 on 50 MB that is minutes per run, so "
           "v1 -> v2 runs on 10 MB at vocab 1,000 (743 merges)"),
    RunSet("web", "webtext-synth-20MB", 32_000, ("v6", "v7", "v8"),
           "v5 takes minutes per run at this vocab, so v5 -> v6 is measured on the reduced set"),
    RunSet("web-reduced", "webtext-synth-2MB", 500, ("v2", "v3", "v4", "v5", "v6", "v8"),
           "v2-v4 scan every pair with max() once per merge: on web text at vocab 32,000 that is days, "
           "so they run on 2 MB at vocab 500 (243 merges)"),
    RunSet("real-tinystories", "tinystories", 10_000, ("v5", "v6", "v7", "v8"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-tinystories-reduced", "tinystories", 2_000, ("v2", "v3", "v4", "v5"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-owt", "owt", 32_000, ("v6", "v7", "v8"), "the first 20 MB of owt_train.txt",
           limit="20MB", real=True),
]

#: The same plan on tiny inputs (the real data sets cut to 300KB): each set's (data, vocab) in FULL's order.
QUICK = [replace(run, data=data or run.data, vocab_size=vocab, note="", limit="300KB" if run.real else None)
         for run, (data, vocab) in zip(FULL, [(None, 300), ("tinystories-synth-300KB", 600), ("tinystories-synth-300KB", 400),
                                              ("tinystories-synth-100KB", 300), ("webtext-synth-300KB", 600),
                                              ("webtext-synth-100KB", 300), (None, 600), (None, 400), (None, 600)])]

# Why a step's two ratios differ, shared by the steps that run on more than one set.
_COUNTING = ("their 8 counting processes against this machine's cores: the ratio is bounded by the cores "
             "given, less the pool's start-up and the counts sent back")
_COUNTING_NO_GAIN = ("on a small file ({data} is {size}), one core or a busy machine, starting the pool and "
                     "sending the counts back cost more than counting in one process")
_HEAP_SELECT = ("no article times the select stage across a heap: Part 9, the series' heap, is not among the parts "
                "quoted, and Koschei gives only the whole merge; the ladder's ratio grows with the live pairs the "
                "scan visits, hence with the vocab")
_PYTHON_ONLY = ("no article step: the parts quoted time no Python trainer past bpe_v5, and the series' C++ and "
                "compiled steps stand beside v8 (below); v6 stays in pure Python")
_OMP_MERGE = ("their OpenMP threads (32) split the max() scan; v7's processes split the words, so the update, over "
              "this machine's cores; after v5's heap there is no scan left to split")
_V7_NO_GAIN = ("each merge is a round trip to the shard processes: on a 2-core machine the gain can sink into the "
               "spread, and on a busy one v7 gathers its shards back and runs as v6")
_V7_SAME_CODE = ("on TinyStories-like text (few distinct words) v7 runs v6's code in one process: the two rungs run "
                 "the same code, so any difference is noise")
_COMPILED_MERGE = ("Part 5 (a C++ merge equal to the Python one) is not among the parts quoted; the C++ ratio they "
                   "give for this stage is the flat hash map's (Part 7's step, timed in Part 8's section 5 table, "
                   "whose data set is not named there), a swap of tables inside C++ that mostly speeds its max() "
                   "scan; v8 is v6's algorithm (heap, grouped diff, lazy index) moved from CPython objects to C "
                   "arrays, with no scan left, so the ladder's ratio is compiled code against interpreted, the "
                   "algorithm unchanged")

# Each step of the articles, in their order, with the rungs that make it and the stage compared on both
# sides; ``theirs`` names the articles' ratios (bpe.lab.measure.articles.THEIRS), or is None where none exists.
# The articles' C++ and compiled steps stand beside v8, the ladder's compiled rung: against v6, whose
# algorithm it compiles, or against the rung whose algorithm the article's starting program has.
STEPS = [
    Step("the CS336 speed test: v1 -> v2 on its fixture", "cs336-speed", "v1", "v2", "total", "speed_test",
         "{data} at vocab {vocab} (CS336's train_bpe tests: corpus.en at 500); their seconds are the time the test "
         "prints, ours a fresh process's whole run, start-up included, which weighs more in v2's short run"),
    Step("incremental pair counts and the inverted index (bpe_v1 -> bpe_v2): merge phase",
         "tinystories-v1", "v1", "v2", "merge_phase", "v1_v2_merge",
         "their 9,743 merges over 2.2 GB against {merges} over {size}: v1's recount costs about the same at every "
         "merge, v2's max() grows with the live pairs, so the ratio depends on how many merges are made"),
    Step("counting in parallel processes (bpe_v2 -> bpe_v3): counting", "tinystories-reduced", "v2", "v3",
         "pretokenize", "counting_tinystories", _COUNTING, _COUNTING_NO_GAIN),
    Step("counting in parallel processes (bpe_v2 -> bpe_v3): counting, web-like", "web-reduced", "v2", "v3",
         "pretokenize", "counting_owt", _COUNTING, _COUNTING_NO_GAIN),
    Step("fine-grained pair-count updates in Python (Part 8): update, web-like", "web-reduced", "v3", "v4", "update",
         "fine_python_update",
         "the same change and stage, both in Python; their figure is OpenWebText at vocab 32,000, the ladder's {size} "
         "at {vocab}; Part 8's C++ ports of the change stand beside v8 (v3 -> v8, below)",
         "the update is a small part of v3's merge phase here; its gain can sink into the spread"),
    Step("fine-grained pair-count updates in Python (Part 8): update, TinyStories-like", "tinystories-reduced", "v3",
         "v4", "update", None,
         "no article figure: Part 8's bpe_v3 TinyStories row prints no update time",
         "on TinyStories-like text the update is a small stage (as in bpe_v5's TinyStories row of Part 8), so a "
         "gain is hard to see"),
    Step("fine-grained pair-count updates in Python (Part 8): merge phase, web-like", "web-reduced", "v3", "v4",
         "merge_phase", "fine_python_merge",
         "in the article the update gained but the max() took longer and the whole OpenWebText run slowed; it "
         "gives no reason; v4 keeps v3's max() scan, so its merge phase moves by the update's gain at most",
         "v4 keeps v3's max() scan, most of the merge phase; the update's gain can sink into the scan's spread"),
    Step("a heap replaces the max() scan: select, TinyStories-like", "tinystories-reduced", "v4", "v5", "select",
         None, _HEAP_SELECT),
    Step("a heap replaces the max() scan: select, web-like", "web-reduced", "v4", "v5", "select", None, _HEAP_SELECT),
    Step("a heap replaces the max() scan, in Python: merge phase, TinyStories-like", "tinystories-reduced", "v4", "v5",
         "merge_phase", None,
         "no article times a heap alone across a whole merge: Part 9 is not among the parts quoted, and Koschei's "
         "merges are C++ (they stand beside v4 -> v8, below); v4 already updates incrementally, so only the heap "
         "differs between the ladder's rungs"),
    Step("constant factors in pure Python: merge phase, TinyStories-like", "tinystories", "v5", "v6",
         "merge_phase", None, _PYTHON_ONLY),
    Step("constant factors in pure Python: update, TinyStories-like", "tinystories", "v5", "v6", "update", None,
         _PYTHON_ONLY),
    Step("constant factors in pure Python: total, TinyStories-like", "tinystories", "v5", "v6", "total", None,
         _PYTHON_ONLY),
    Step("constant factors in pure Python: total, web-like", "web-reduced", "v5", "v6", "total", None, _PYTHON_ONLY),
    Step("merging in parallel (v7 shards the words): merge phase, web-like", "web", "v6", "v7", "merge_phase",
         "omp_merge", _OMP_MERGE, _V7_NO_GAIN),
    Step("merging in parallel: update, web-like", "web", "v6", "v7", "update", "omp_update",
         "in their table the OpenMP program's update is slower than the serial one's; v7 parallelizes the update "
         "itself, so this is where its gain should show", _V7_NO_GAIN),
    Step("merging in parallel: select, web-like", "web", "v6", "v7", "select", "omp_max",
         "their 32 threads split the max() scan; v7 keeps v6's heap in one process and does not split the selection",
         "expected: v7's selection is v6's heap, unchanged; a ratio near 1 is the design"),
    Step("merging in parallel: merge phase, TinyStories-like (v7 is v6 below two shards of words)",
         "tinystories", "v6", "v7", "merge_phase", None, _V7_SAME_CODE, "expected: a ratio near 1 is the design"),
    Step("v5 -> v7 at the article's vocab: total, TinyStories-like", "tinystories", "v5", "v7", "total", None,
         "the last two ladder steps together; the parts quoted time no Python trainer past bpe_v5"),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: merge phase, TinyStories-like",
         "tinystories", "v6", "v8", "merge_phase", "flat_maps_merge", _COMPILED_MERGE),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: merge phase, web-like", "web", "v6", "v8",
         "merge_phase", "flat_maps_merge", _COMPILED_MERGE),
    Step("compiled: flat hash maps under the max() scan (Part 7) -> v8: select, web-like", "web", "v6", "v8",
         "select", "flat_maps_max",
         "their flat map speeds a scan of every pair at every merge; v6 and v8 both pop a lazy-deletion heap, v8's an "
         "array in C, so no scan is left for a flatter table to speed; Part 9 (the series' heap) is not among the "
         "parts quoted"),
    Step("compiled: flat hash maps (Part 7), flat sets in the index (Part 8) -> v8: update, web-like", "web", "v6",
         "v8", "update", ("flat_maps_update", "flat_sets_update"),
         "their steps change the containers under a C++ update and keep its algorithm (the maps in Part 7's step, "
         "the index's sets in Part 8's section 6); v8 keeps v6's update and moves its counts, index and words from "
         "CPython objects to C arrays, so the ladder's ratio also holds what compiling gains"),
    Step("compiled: the fine-grained update in C++ (Part 8) -> v8: update, web-like", "web-reduced", "v3", "v8",
         "update", ("fine_cpp_update", "fine_cpp_flat_update"),
         "both their programs are C++, so their ratio is the finer diff alone; the ladder starts from v3, the coarse "
         "update of their starting program, in Python, and v8 adds compiled code and v6's grouped diff and lazy "
         "index, so its ratio is larger by what those gain; in the same table the fine-grained program's whole "
         "merge was slower than bpe_train_updater's (its max() took longer), the article gives no reason"),
    Step("compiled: Koschei's C++ merge with a lazy-deletion heap -> v8: merge phase, TinyStories-like",
         "tinystories-reduced", "v4", "v8", "merge_phase", "koschei_merge",
         "Koschei times a C++ 'optimized merge' (a lazy-deletion heap, incremental updates through a pair_positions "
         "index) against a C++ 'unoptimized merge' it does not describe, pre-tokenizing in Python on both, as v4 "
         "and v8 do; the ladder starts from v4, incremental updates without a heap, in Python, so its ratio also "
         "holds what compiling gains"),
    Step("compiled: Cython (Part 10) -> v8: total, TinyStories-like", "tinystories", "v6", "v8", "total", None,
         "no article figure: Part 10 (Cython and PyPy) and Part 11 (C++ wrapped with Cython) are known from the "
         "series' contents alone; v8 compiles the merge and pre-tokenizes with v6's Python, so the whole run gains "
         "at most the merge's share",
         "where pre-tokenizing and start-up, the same code on both rungs, are most of the run, the merge's gain can "
         "sink into their spread"),
    Step("counting in parallel: counting, real TinyStories", "real-tinystories-reduced", "v2", "v3", "pretokenize",
         "counting_tinystories", _COUNTING, _COUNTING_NO_GAIN),
    Step("a heap replaces the max() scan: select, real TinyStories", "real-tinystories-reduced", "v4", "v5",
         "select", None, _HEAP_SELECT),
    Step("constant factors in pure Python: total, real TinyStories", "real-tinystories", "v5", "v6", "total", None,
         _PYTHON_ONLY),
    Step("merging in parallel: merge phase, real OpenWebText", "real-owt", "v6", "v7", "merge_phase", "omp_merge",
         _OMP_MERGE, _V7_NO_GAIN),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: merge phase, real TinyStories",
         "real-tinystories", "v6", "v8", "merge_phase", "flat_maps_merge", _COMPILED_MERGE),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: merge phase, real OpenWebText",
         "real-owt", "v6", "v8", "merge_phase", "flat_maps_merge", _COMPILED_MERGE),
]


def run_set(run: RunSet, repeat: int, workers: int | None, special_tokens: list[str], log) -> dict | None:
    """Every run of one set, interleaved; ``None`` for a real data set that is not downloaded."""
    from bpe.data.datasets import DATASETS, resolve_data, shown_path
    from bpe.lab.measure.plan import plan

    if run.real and not DATASETS[run.data].path.exists():
        print(f"[{run.name}] skipped: {run.data} is not in data/ (make data DATA={run.data})", file=log, flush=True)
        return None
    p = plan(resolve_data(run.data), run.vocab_size, special_tokens, workers, run.limit or None)
    variants = runnable(run.variants)
    for left_out in (v for v in run.variants if v not in variants):
        print(f"[{run.name}] {left_out} left out, and its steps with it: {cannot_run(left_out)}", file=log, flush=True)
    print(f"[{run.name}] {run.data}{f' (first {run.limit})' if run.limit else ''}, vocab {run.vocab_size:,}: "
          f"{', '.join(variants)} interleaved, {repeat} repeat(s)", file=log, flush=True)
    runs = interleaved_runs(run.name, p, variants, repeat, log)
    digests = {v: rs[0]["merges_sha256"] for v, rs in runs.items()}
    if len(set(digests.values())) != 1:
        raise BPEError(f"[{run.name}] the rungs gave different merges: {digests}")
    return {
        "data": run.data, "path": shown_path(p.path), "corpus_bytes": p.corpus_bytes, "limit": run.limit,
        "vocab_size": run.vocab_size, "num_merges": runs[variants[0]][0]["merges"], "note": run.note,
        "repeat": repeat, "merges_sha256": next(iter(digests.values())),
        "variants": {v: {"runs": [slim(r) for r in rs], **summarize_runs(rs)} for v, rs in runs.items()},
    }


def interleaved_runs(name: str, p, specs, repeat: int, log) -> dict[str, list[dict]]:
    """``repeat`` fresh-process runs of each candidate (a rung, or a file defining ``Merger``) on the
    :class:`~bpe.lab.measure.plan.Plan` ``p``, taking turns, by label; a run that fails is a :class:`BPEError` naming it."""
    from bpe.lab.judge.candidates import resolve
    from bpe.lab.measure.plan import in_turns
    from bpe.lab.measure.timed_run import run_once

    candidates = {c.label: c for c in (resolve(spec) for spec in specs)}

    def run_one(label: str, i: int) -> dict:
        result = run_once(p.path, candidates[label], p.vocab_size, p.special_tokens, p.workers, p.limit)
        if "failed" in result:
            raise BPEError(f"[{name}] {result['failed']}")
        result.pop("merge_list", None)
        print(f"  [{name}] run {i + 1}/{repeat} {label}: total {result['total']:.2f} s, "
              f"merge phase {result['merge_phase']:.2f} s", file=log, flush=True)
        return result

    return in_turns(list(candidates), repeat, run_one)


def runnable(variants: tuple[str, ...]) -> tuple[str, ...]:
    """The rungs of ``variants`` that can run here (v8 cannot where it was installed without a C compiler)."""
    from bpe.training.registry import VARIANTS

    return tuple(v for v in variants if v in VARIANTS)


def cannot_run(variant: str) -> str:
    """Why a rung of the plan cannot run here (its one line)."""
    from bpe.training.registry import VARIANTS, unavailable

    return unavailable(VARIANTS.module(variant)) or f"{variant} cannot run here"


def slim(run: dict) -> dict:
    """What a result file keeps of one run: its seconds, its checkpoints (merges done, seconds) and peak memory."""
    return {"total": run["total"], "merge_phase": run["merge_phase"], "stages": run["stages"],
            "checkpoints": run["checkpoints"], "peak_rss": run["peak_rss"]}


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
    from bpe.lab.measure.publish import check_json_path, machine_info, write_json_atomic
    from bpe.data.datasets import shown_path as shown

    log = log or sys.stdout
    if quick:
        print(QUICK_WARNING.format(where="below"), file=log, flush=True)
    plan = QUICK if quick else FULL
    repeat = repeat or (1 if quick else 3)
    check_repeat(repeat)
    if out is not None:
        check_json_path(out)
    rungs = tuple(dict.fromkeys(v for run in plan for v in run.variants))
    missing = [v for v in rungs if v not in runnable(rungs)]
    if missing and out is not None and out.resolve() == PUBLISHED_OUT.resolve():
        raise BPEError(f"the committed result needs every rung of the plan: {'; '.join(cannot_run(v) for v in missing)}")
    specials = [SPECIAL_TOKEN]
    # Each step runs its rung's idea in full: every core unless a count is given, as the articles'
    # runs used theirs (v7 given none keeps a core spare: on 2 cores v6 -> v7 would compare v6 with itself).
    workers = workers or os.cpu_count() or 1
    started = datetime.now(timezone.utc)
    machine = machine_info()  # now: the commit whose code runs, before anything could edit the tree
    sets = {run.name: ran for run in plan if (ran := run_set(run, repeat, workers, specials, log)) is not None}
    steps = compare_steps(sets)
    command = "python -m bpe reproduce" + (" --quick" if quick else "")
    result = {"generated": started.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine,
              "mode": "quick" if quick else "full",
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
