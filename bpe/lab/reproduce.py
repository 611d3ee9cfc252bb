"""``python -m bpe reproduce``: each optimization step of the articles, measured on the ladder.

The articles the ladder follows (lili's *Implementing and Optimizing a BPE Tokenizer from Scratch*,
Koschei's C++ article) publish seconds on their own machines; the ratio of one step travels.  For
each step this runs the two rungs that make it, interleaved (``a b a b``), on ``tinystories-synth``
at vocab 10,000, ``webtext-synth`` at 32,000, and the real ``tinystories`` and ``owt`` when present;
a step too slow at the article's vocab runs at a reduced one, and says so.  Ratios follow
:mod:`bpe.lab.spread`.  The result, ``docs/articles-bench.json``, is quoted by ``docs/articles.md``;
``--quick`` runs the same plan on tiny inputs (for tests: its ratios mean nothing).  Left out: the
articles' C++, Cython and OpenMP steps, and their own trainers (``bench --variant FILE.py:CLASS``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from bpe.lab.spread import compare, ratio_range_text, ratio_text, seconds, summarize_runs

#: Where a run writes by default (not in git), and the committed result ``--publish`` rewrites.
DEFAULT_OUT = REPO_ROOT / "out" / "articles-bench.json"
PUBLISHED_OUT = REPO_ROOT / "docs" / "articles-bench.json"


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


FULL = [
    RunSet("tinystories", "tinystories-synth-50MB", 10_000, ("v5", "v6", "v7")),
    RunSet("tinystories-reduced", "tinystories-synth-50MB", 2_000, ("v2", "v3", "v4", "v5"),
           "v2-v4 scan every pair with max() once per merge: at vocab 10,000 that is a minute or more per run "
           "even on this text, so they run at vocab 2,000 (1,743 merges) on the same 50 MB"),
    RunSet("tinystories-v1", "tinystories-synth-10MB", 1_000, ("v1", "v2"),
           "v1 recounts every pair after every merge: at vocab 10,000 on 50 MB that is minutes per run, so "
           "v1 -> v2 runs on 10 MB at vocab 1,000 (743 merges)"),
    RunSet("web", "webtext-synth-20MB", 32_000, ("v6", "v7"),
           "v5 takes minutes per run at this vocab, so v5 -> v6 is measured on the reduced set"),
    RunSet("web-reduced", "webtext-synth-2MB", 500, ("v2", "v3", "v4", "v5", "v6"),
           "v2-v4 scan every pair with max() once per merge: on web text at vocab 32,000 that is days, "
           "so they run on 2 MB at vocab 500 (243 merges)"),
    RunSet("real-tinystories", "tinystories", 10_000, ("v5", "v6", "v7"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-tinystories-reduced", "tinystories", 2_000, ("v2", "v3", "v4", "v5"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-owt", "owt", 32_000, ("v6", "v7"), "the first 20 MB of owt_train.txt",
           limit="20MB", real=True),
]

#: The same plan on tiny inputs (the real data sets cut to 300KB): each set's (data, vocab) in FULL's order.
QUICK = [replace(run, data=data or run.data, vocab_size=vocab, note="", limit="300KB" if run.real else None)
         for run, (data, vocab) in zip(FULL, [("tinystories-synth-300KB", 600), ("tinystories-synth-300KB", 400),
                                              ("tinystories-synth-100KB", 300), ("webtext-synth-300KB", 600),
                                              ("webtext-synth-100KB", 300), (None, 600), (None, 400), (None, 600)])]

# Each step of the articles, in their order, with the rungs that make the same step (the articles' own
# figures for each are on docs/articles.md and in ARTICLE_FIGURES below).
STEPS = [
    Step("incremental pair counts and the inverted index (bpe_v1 -> bpe_v2): merge phase",
         "tinystories-v1", "v1", "v2", "merge_phase"),
    Step("counting in parallel processes (bpe_v2 -> bpe_v3): counting", "tinystories-reduced", "v2", "v3",
         "pretokenize"),
    Step("fine-grained pair-count updates (Part 8): update, TinyStories-like", "tinystories-reduced", "v3", "v4",
         "update"),
    Step("fine-grained pair-count updates (Part 8): update, web-like", "web-reduced", "v3", "v4", "update"),
    Step("a heap replaces the max() scan: select, TinyStories-like", "tinystories-reduced", "v4", "v5", "select"),
    Step("a heap replaces the max() scan: select, web-like", "web-reduced", "v4", "v5", "select"),
    Step("constant factors in pure Python: total, TinyStories-like", "tinystories", "v5", "v6", "total"),
    Step("constant factors in pure Python: total, web-like", "web-reduced", "v5", "v6", "total"),
    Step("merging in parallel (v7 shards the words): merge phase, web-like", "web", "v6", "v7", "merge_phase"),
    Step("merging in parallel: merge phase, TinyStories-like (v7 is v6 below two shards of words)",
         "tinystories", "v6", "v7", "merge_phase"),
    Step("v5 -> v7 at the article's vocab: total, TinyStories-like", "tinystories", "v5", "v7", "total"),
    Step("counting in parallel: counting, real TinyStories", "real-tinystories-reduced", "v2", "v3", "pretokenize"),
    Step("a heap replaces the max() scan: select, real TinyStories", "real-tinystories-reduced", "v4", "v5",
         "select"),
    Step("constant factors in pure Python: total, real TinyStories", "real-tinystories", "v5", "v6", "total"),
    Step("merging in parallel: merge phase, real OpenWebText", "real-owt", "v6", "v7", "merge_phase"),
]


def run_set(run: RunSet, repeat: int, workers: int | None, special_tokens: list[str], log) -> dict | None:
    """Every run of one set, interleaved; ``None`` for a real data set that is not downloaded."""
    from bpe.data.datasets import DATASETS, resolve_data, shown_path
    from bpe.training.chunking import find_limit_end
    from bpe.training.sizes import parse_size

    if run.real and not DATASETS[run.data].path.exists():
        print(f"[{run.name}] skipped: {run.data} is not in data/ (make data DATA={run.data})", file=log, flush=True)
        return None
    path = resolve_data(run.data)
    limit = parse_size(run.limit) if run.limit else None
    corpus_bytes = find_limit_end(path, limit, special_tokens) if limit else path.stat().st_size
    print(f"[{run.name}] {run.data}{f' (first {run.limit})' if run.limit else ''}, vocab {run.vocab_size:,}: "
          f"{', '.join(run.variants)} interleaved, {repeat} repeat(s)", file=log, flush=True)
    runs = interleaved_runs(run.name, path, run.variants, run.vocab_size, special_tokens, workers, limit, repeat, log)
    digests = {v: rs[0]["merges_sha256"] for v, rs in runs.items()}
    if len(set(digests.values())) != 1:
        raise BPEError(f"[{run.name}] the rungs gave different merges: {digests}")
    return {
        "data": run.data, "path": shown_path(path), "corpus_bytes": corpus_bytes, "limit": run.limit,
        "vocab_size": run.vocab_size, "num_merges": runs[run.variants[0]][0]["merges"], "note": run.note,
        "repeat": repeat, "merges_sha256": next(iter(digests.values())),
        "variants": {v: {"runs": [slim(r) for r in rs], **summarize_runs(rs)} for v, rs in runs.items()},
    }


def interleaved_runs(name: str, path: Path, specs, vocab_size: int, special_tokens: list[str], workers: int | None,
                     limit: int | None, repeat: int, log) -> dict[str, list[dict]]:
    """``repeat`` fresh-process runs of each candidate (a rung, or a file defining ``Merger``), taking
    turns (``a b a b``), by label; a run that fails is a :class:`BPEError` naming it."""
    from bpe.lab.timed_run import run_once
    from bpe.lab.candidates import resolve

    candidates = [resolve(spec) for spec in specs]
    runs: dict[str, list[dict]] = {c.label: [] for c in candidates}
    for i in range(repeat):
        for candidate in candidates:
            result = run_once(path, candidate, vocab_size, special_tokens, workers, limit)
            if "failed" in result:
                raise BPEError(f"[{name}] {result['failed']}")
            result.pop("merge_list", None)
            runs[candidate.label].append(result)
            print(f"  [{name}] run {i + 1}/{repeat} {candidate.label}: total {result['total']:.2f} s, "
                  f"merge phase {result['merge_phase']:.2f} s", file=log, flush=True)
    return runs


def slim(run: dict) -> dict:
    """What a result file keeps of one run: its seconds and peak memory."""
    return {"total": run["total"], "merge_phase": run["merge_phase"], "stages": run["stages"],
            "peak_rss": run["peak_rss"]}


def run_reproduce(out: Path | None = DEFAULT_OUT, quick: bool = False, repeat: int | None = None,
                  workers: int | None = None, log=None) -> dict:
    """Run every set of the plan, compare each step, write ``out`` (JSON) and print the step table."""
    from bpe.defaults import SPECIAL_TOKEN
    from bpe.lab.publish import check_json_path, machine_info, write_json_atomic

    log = log or sys.stdout
    plan = QUICK if quick else FULL
    repeat = repeat or (1 if quick else 3)
    if repeat < 1:
        raise BPEError(f"--repeat must be at least 1, got {repeat}")
    if out is not None:
        check_json_path(out)
    specials = [SPECIAL_TOKEN]
    started = datetime.now(timezone.utc)
    machine = machine_info()  # now: the commit whose code runs, before anything could edit the tree
    sets = {run.name: ran for run in plan if (ran := run_set(run, repeat, workers, specials, log)) is not None}
    steps = {}
    for step in (step for step in STEPS if step.run_set in sets):
        runs = sets[step.run_set]["variants"]
        before, after = ([seconds(r, step.stage) for r in runs[rung]["runs"]] for rung in (step.before, step.after))
        steps[f"{step.run_set}:{step.before}-{step.after}:{step.stage}"] = {
            "step": step.name, "set": step.run_set, "before": step.before, "after": step.after, "stage": step.stage,
            **compare(before, after)}
    command = "python -m bpe reproduce" + (" --quick" if quick else "")
    result = {"generated": started.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine,
              "mode": "quick" if quick else "full",
              "command": command + (f" --repeat {repeat}" if repeat != (1 if quick else 3) else ""),
              "workers": workers, "sets": sets, "steps": steps, "article": ARTICLE_FIGURES}
    print(step_table(result), file=log)
    if out is not None:
        write_json_atomic(out, result, log=log)
    return result


def step_table(result: dict) -> str:
    """The steps as printed: the rungs, the stage, the ratio of medians, its range, the verdict."""
    lines = ["", "step (rungs, stage, data set)                      median ratio   range over runs   verdict"]
    for key, s in result["steps"].items():
        label = f"{s['before']} -> {s['after']} {s['stage']} [{s['set']}]"
        spread = ratio_range_text(s["low"], s["high"])
        lines.append(f"{label:<50}{ratio_text(s['ratio']):>14}   {spread:<16}  {s['verdict']}")
    if any(s["clear"] is None for s in result["steps"].values()):
        lines.append("(one run of a rung: no spread to judge its ratios by)")
    return "\n".join(lines)


# The articles' published seconds (their machines, not ours): quoted on docs/articles.md beside the
# ratios measured above.  lili: "a/b/c" three runs, the first kept here as the table's first figure.
ARTICLE_FIGURES = {
    "lili_part1": {  # Part 1, bpe_v1 on TinyStories, vocab 10,000: three runs
        "tinystories": {"total": [2187, 2264, 2247], "counting": [622, 642, 628],
                        "count_pairs": [944, 995, 984], "max": [167, 173, 174], "update": [453, 453, 460]},
    },
    "lili_part2": {  # Part 2, bpe_v2 (incremental counts, pair_to_words)
        "tinystories": {"total": [757, 738, 746], "counting": [639, 621, 627], "merge": [118, 117, 118]},
        "openwebtext": {"total": [35358, 34265, 35687], "counting": [2870, 2949, 2930],
                        "merge": [32437, 31264, 32708]},
        "v1_merge_tinystories": 1565,  # the article's own sum for bpe_v1's merge phase
    },
    "lili_part8": {  # Part 8: bpe_v3 (8 counting processes) and bpe_v5 (fine-grained updates)
        "v3_tinystories": {"total": [250, 90, 90], "counting": [80, 90, 90]},
        "v3_openwebtext": {"total": [391, 401, 32352], "counting": [390, 400, 410], "merge": 31883,
                           "max": 31187, "update": 695},
        "v5_tinystories": {"total": [221, 236, 222], "counting": [90, 90, 90], "merge": [130, 146, 132],
                           "max": [127, 143, 129], "update": [3, 3, 3]},
        "v5_openwebtext": {"total": [34333, 34853, 35804], "counting": [401, 390, 401],
                           "merge": [33879, 34401, 35347], "max": [33353, 33820, 34816],
                           "update": [525, 579, 530]},
        "cpp": {  # the C++ merge ports on OpenWebText: total, update, max (first of three runs)
            "bpe_train_updater": [7171, 392, 6779],
            "bpe_train_updater_omp_v7_32_threads": [907, 514, 391],
            "bpe_train_updater_emhash8": [479, 398, 80],
            "bpe_train_updater_fine_grained": [8773, 220, 8552],
            "bpe_train_updater_fine_grained_emhash8": [261, 200, 61],
            "bpe_train_updater_fine_grained_emhash8_set9": [168, 107, 61],
        },
    },
    "koschei": {  # Koschei, TinyStoriesV2-GPT4-train, 32-core Xeon, pre-tokenizing on 24 cores
        "python": {"pretokenize": 29.65},
        "cpp_unoptimized_merge": {"pretokenize": 27.337, "merge": 366.644, "total": 394.16},
        "cpp_optimized_merge": {"pretokenize": 26.767, "merge": 1.081, "total": 28.03},
        "rust_pretokenize": 67.261,
    },
}
