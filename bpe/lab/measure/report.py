"""``make report`` / ``python -m bpe report``: every rung on the same data, as an article-style report.

It benches every rung and writes ``report.md`` (a table per vocab), ``report-stages.png``,
``report-merges.png`` (the cost of each 100 merges: flat is a constant cost per merge, rising the
``max()`` scan over a growing pair table), ``report-scaling.png`` (the plots:
:mod:`bpe.lab.measure.report_plots`) and ``report-bench.json`` (every figure they came from).  A candidate past
:data:`RUN_BUDGET_SECONDS` at the main vocab runs in a smaller vocab's table, beside every candidate that
fits it, so its ratios are measured (:func:`plan`).
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from bpe.data.datasets import REPO_ROOT, data_label, default_vocab_size, resolve_data
from bpe.errors import BPEError
from bpe.interface import command
from bpe.lab.judge.candidates import parse_variants
from bpe.lab.judge.correctness import verdict_parts
from bpe.lab.measure import plan as pipeline
from bpe.lab.measure.bench import (
    BenchSettings,
    bench_checked,
    comparison_columns,
    comparison_rows,
    run_bench,
    run_workers,
)
from bpe.lab.measure.candidate_estimate import candidate_estimate, probe_candidates
from bpe.lab.measure.estimate import corpus_shape, format_duration
from bpe.lab.measure.peers import peer_columns, peer_names
from bpe.lab.measure.publish import made_by, stamp, write_json_atomic
from bpe.lab.measure.report_plots import plot_merges, plot_scaling, plot_stages, shared_note
from bpe.lab.measure.result import BenchResult, Run
from bpe.lab.measure.spread import WITHIN_SPREAD
from bpe.lab.measure.table import markdown_lines
from bpe.running.files import write_text_atomic
from bpe.running.sizes import format_size
from bpe.training.registry import VARIANTS

DOCS_DIR = REPO_ROOT / "docs"
#: Where ``bpe report`` writes unless told to rewrite the committed report (``--publish``).
DEFAULT_OUT_DIR = REPO_ROOT / "out" / "report"


#: A candidate estimated longer than this per run moves to the next, smaller vocab's table.  Seconds as the
#: cost model estimates them, fitted on one of this machine's slower days (docs/index.md): 60 s plans the
#: tables that 30 s planned under constants fitted on its faster days.
RUN_BUDGET_SECONDS = 60


def plan(estimate, vocab_sizes: list[int], variants: list[str], budget: float = RUN_BUDGET_SECONDS,
         force: bool = False) -> tuple[list[tuple[int, list[str]]], list[str]]:
    """``([(vocab, candidates), ...], notes)``: the tables to run, largest vocab first.

    ``estimate(candidate, vocab)`` gives seconds.  A table is made at a smaller vocab only for a
    candidate that did not fit a larger one; each table holds every candidate that fits it.

    >>> cost = {"v1": 200.0, "v2": 20.0, "v5": 2.0}
    >>> tables, [note] = plan(lambda v, vocab: cost[v] * vocab / 1000, [2000, 500, 300], ["v1", "v2", "v5"])
    >>> tables
    [(2000, ['v2', 'v5']), (300, ['v1', 'v2', 'v5'])]
    >>> print(note)  # doctest: +NORMALIZE_WHITESPACE
    v1 is past the 60 s budget at vocab 2,000 and 500, so it ran at vocab 300 in the table of that vocab,
    beside every variant that fits it.
    """
    if force:
        return [(vocab_sizes[0], list(variants))], []
    tables: list[tuple[int, list[str]]] = []
    placed: set[str] = set()
    moved_notes = []
    for vocab in sorted(set(vocab_sizes), key=vocab_sizes.index):
        if vocab > vocab_sizes[0] or (tables and vocab >= tables[-1][0]):
            continue
        fits = [v for v in variants if estimate(v, vocab) <= budget]
        moved = [v for v in fits if v not in placed]
        if moved and tables:  # past the budget at every larger vocab: placed here
            skipped = " and ".join(f"{larger:,}" for larger in vocab_sizes if larger > vocab)
            moved_notes.append(f"{', '.join(moved)} {'is' if len(moved) == 1 else 'are'} past the {budget:.0f} s "
                               f"budget at vocab {skipped}, so {'it' if len(moved) == 1 else 'they'} ran at vocab "
                               f"{vocab:,} in the table of that vocab, beside every variant that fits it.")
        if moved:
            tables.append((vocab, fits))
            placed.update(fits)
        if placed == set(variants):
            break
    left_out = [v for v in variants if v not in placed]
    notes = [f"{', '.join(left_out)} left out: past the {budget:.0f} s budget at every vocab tried "
             f"({', '.join(f'{x:,}' for x in vocab_sizes)}); run alone with "
             f"{command('bench', ('--variant', ','.join(left_out)), ('--force', None))}"] if left_out else []
    return tables, notes + moved_notes


@dataclass(frozen=True)
class ReportSettings:
    """The report's own settings, beside its benches' :class:`BenchSettings`: the smaller tables' vocabs
    (:func:`plan`), and whether to time the fastest rungs against corpus size and workers."""
    reduced_vocab_size: int = 2000
    v1_vocab_size: int = 300
    scaling: bool = True


def run_report(bench: BenchSettings, settings: ReportSettings = ReportSettings(), out_dir: Path = DOCS_DIR,
               log=None) -> Path:
    """Run the benches (the whole ladder unless rungs are named) and write the report files into ``out_dir``;
    the path of ``report.md``."""
    log = log or sys.stdout
    # The ladder's lesson runs each rung's idea in full: every core unless a count is given (v7 with
    # none keeps a core spare, and on 2 cores would be v6: the step v6 -> v7 would show nothing).
    bench = replace(bench, workers=bench.workers or os.cpu_count() or 1)
    vocab_size = bench.vocab_size or default_vocab_size(bench.data)
    candidates = parse_variants(list(VARIANTS) if bench.variants is None else bench.variants)
    if not any(c.is_variant for c in candidates):
        candidates = parse_variants([*VARIANTS, *(c.spec for c in candidates)])
    by_label = {c.label: c for c in candidates}
    # The settings checked once, before the probes, as training checks them; each table trusts them.
    pipeline.check_repeat(bench.repeat)
    workers, workers_from = run_workers(bench.workers, len(candidates))
    peers = peer_names(bench.peers) if bench.peers else []
    path = pipeline.plan(resolve_data(bench.data), vocab_size, bench.special_tokens, workers).path
    shape = corpus_shape(path, bench.special_tokens)
    probes = probe_candidates(candidates, path, bench.special_tokens, bench.workers, log=log)  # your own: on a prefix

    def estimate(label: str, vocab: int, workers: int | None = None) -> float:
        return candidate_estimate(by_label[label], probes, shape, max(0, vocab - 256 - len(bench.special_tokens)),
                                  workers or bench.workers).seconds

    tables_plan, notes = plan(estimate, [vocab_size, settings.reduced_vocab_size, settings.v1_vocab_size],
                              list(by_label), force=bench.force)
    if not tables_plan:
        raise BPEError("no candidate to report on: " + "; ".join(notes))
    # the scaling plot's rungs: the two fastest of the first table that fit the budget at the main vocab
    scaled = [n for n in tables_plan[0][1] if n in VARIANTS and estimate(n, vocab_size) <= RUN_BUDGET_SECONDS][-2:]
    scaled = scaled if settings.scaling else []
    seconds = planned_seconds(estimate, tables_plan, bench.repeat, scaled, vocab_size, scaling_workers(bench.workers))
    unpriced = ", the peers not counted" if peers else ""
    print(f"bpe-lab report: {data_label(bench.data)}, tables at vocab "
          f"{', '.join(f'{v:,} ({len(n)} candidates)' for v, n in tables_plan)}, repeat {bench.repeat}; about "
          f"{format_duration(seconds)} on idle cores (estimated from the cost model{unpriced}; other work on the "
          "machine stretches it)", file=log, flush=True)
    # Each table a forced bench at one vocab, the peers beside the first.
    table = replace(bench, variants=[c.spec for c in candidates], limit=None, busy=0, json_out=None, force=True)
    tables = [bench_checked(table, pipeline.plan(path, vocab, bench.special_tokens, workers),
                            [by_label[n] for n in names], workers_from, peers if i == 0 else [], log)
              for i, (vocab, names) in enumerate(tables_plan)]
    if any(not t.merges_identical for t in tables):
        raise BPEError("the rungs produced different merges; the report would compare different results "
                       "(see the bench output above)")
    # The report's result: report-bench.json's keys, its tables typed (written by their to_json).
    result = {**stamp(), "data": data_label(bench.data), "tables": tables, "notes": notes,
              "peers": {name: r.why_none or r.total for name, r in (tables[0].peers or {}).items()}}
    plots = {"report-stages.png": plot_stages, "report-merges.png": plot_merges}
    if settings.scaling:
        result["scaling"] = measure_scaling(replace(table, vocab_size=vocab_size, repeat=1, peers=False),
                                            path, [by_label[n].spec for n in scaled], log)
        plots["report-scaling.png"] = plot_scaling
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / "report-bench.json", {**result, "tables": [t.to_json() for t in tables]})
    for name, plot in plots.items():
        plot(result, out_dir / name)
    md = out_dir / "report.md"
    write_text_atomic(md, render_markdown(result))
    print(f"\nwrote {md}, " + ", ".join(str(out_dir / name) for name in plots), file=log)
    return md


#: The scaling runs time each rung on these shares of the data (:func:`measure_scaling`).
SCALING_SHARES = (0.25, 0.5, 1.0)


def scaling_workers(workers: int | None) -> list[int]:
    """The worker counts the scaling runs time each rung with: 1, 2 and all (the CPU count or ``--workers``).

    >>> scaling_workers(4), scaling_workers(1)
    ([1, 2, 4], [1])
    """
    most = workers or os.cpu_count() or 1
    return sorted({1, 2, most} & set(range(1, most + 1)))


def planned_seconds(estimate, tables: list[tuple[int, list[str]]], repeat: int, scaled: list[str], vocab: int,
                    worker_counts: list[int]) -> float:
    """How long the report's runs take as the cost model has them (``estimate(candidate, vocab, workers)``,
    seconds): each table's candidates ``repeat`` times, then each ``scaled`` rung once on each share of
    the data (a share's run taken as that share of the whole's: its pre-tokenizing is, its merges about)
    and once with each worker count.

    >>> planned_seconds(lambda name, vocab, workers=None: vocab / 100, [(1000, ["a", "b"]), (300, ["c"])],
    ...                 3, ["b"], 1000, [1, 2])
    106.5
    """
    seconds = sum(repeat * estimate(name, table_vocab) for table_vocab, names in tables for name in names)
    for name in scaled:
        seconds += sum(SCALING_SHARES) * estimate(name, vocab)
        seconds += sum(estimate(name, vocab, count) for count in worker_counts)
    return seconds


def measure_scaling(bench: BenchSettings, path: Path, variants: list[str], log) -> dict:
    """Each rung's time on the first quarter, half and all of the data, and with 1, 2, ... workers."""
    size = path.stat().st_size
    worker_counts = scaling_workers(bench.workers)
    out: dict = {"sizes": {}, "workers": {}, "vocab_size": bench.vocab_size, "worker_counts": worker_counts,
                 "busy_cores": 0.0}

    def median(variant: str, **changes) -> tuple[dict, Run]:
        run = run_bench(replace(bench, variants=variant, progress=False, lines=False, **changes), out=io.StringIO())
        seen = [r.facts.get("busy_cores") or 0.0 for r in run.variants[variant].runs]
        out["busy_cores"] = max([out["busy_cores"], *seen])  # the most other processes kept busy as one started
        return run.settings, run.variants[variant].median

    for variant in variants:
        out["sizes"][variant] = []
        for fraction in SCALING_SHARES:
            ran, med = median(variant, limit=None if fraction == 1.0 else max(1, int(size * fraction)))
            out["sizes"][variant].append([ran["corpus_bytes"], med.total])
            print(f"scaling: {variant} on {format_size(ran['corpus_bytes'])}: {med.total:.2f}s", file=log)
        out["workers"][variant] = []
        for count in worker_counts:
            _, med = median(variant, workers=count)
            out["workers"][variant].append([count, med.total, med.stages["pretokenize"]])
            print(f"scaling: {variant} with {count} worker(s): {med.total:.2f}s", file=log)
    return out


def correctness_lines(bench: BenchResult) -> list[str]:
    """Below a table with your own trainer in it: each candidate's verdict, and any that failed."""
    verdicts = {n: v for n, v in (bench.verdicts or {}).items() if bench.variants[n].kind != "variant"}
    if not verdicts and not bench.failed:
        return []
    reference = (bench.reference or {}).get("name", "the reference")
    out = [f"Your own trainer(s), checked against {reference}'s merges of the same data:", ""]
    for name, verdict in verdicts.items():
        what, why = verdict_parts(name, verdict, reference)
        out.append(f"- **{name}**: {what.replace('DIFFERS', 'differs', 1)}{'; ' + why if why else ''}.")
    out += [f"- **{name}**: failed: {line}." for name, line in bench.failed.items()]
    return out + [""]


def render_markdown(result: dict) -> str:
    """``report.md``, from the report's result (:func:`run_report`: its tables typed)."""
    m = result["machine"]
    main = result["tables"][0].settings
    out = ["# Benchmark report: every variant on the same data", "",
           f"Generated by `make report` on {result['generated']}, {made_by(m)}. "
           "Do not edit: re-run `make report` to update (data, figures and plots are regenerated together).", "",
           f"Machine: {m['cpu_count']} CPUs ({m['processor']}), {m['platform']}, Python {m['python']}. "
           "Absolute seconds are this machine's; compare the ratios, which were measured in one run.", "",
           f"Data: `{result['data']}` ({main['corpus_bytes']:,} bytes), special tokens {main['special_tokens']}, "
           f"pre-tokenization workers {main['workers']}, {main['repeat']} repeat(s) per variant, each in a "
           "fresh process; every figure is the median of the repeats.", ""]
    for i, bench in enumerate(result["tables"]):
        s = bench.settings
        out += [f"## Vocab {s['vocab_size']:,} ({s['num_merges']:,} merges)", "",
                *markdown_lines(comparison_columns(bench), comparison_rows(bench)), "", *correctness_lines(bench)]
        if i == 0 and bench.peers:
            out += ["Peers on the same data and vocab, in the same run; under each variant, its median time against "
                    "the peer's (\"2.00x faster\": the variant is faster):", "",
                    *markdown_lines(peer_columns(bench.variants), list(bench.peers.items())), ""]
    for note in result["notes"]:
        out += [f"Note: {note}", ""]
    out += ["Columns: **pre-tokenize** reads the file, splits on special tokens, runs the GPT-2 regex and "
            "counts pre-tokens; **merge phase** is the initial pair count plus every select and update; "
            "**select** and **update** are summed over merges; **peak memory** is the training process's "
            "high-water RSS; **total min-max** is the range of the total over the repeats; **vs previous** and "
            "**vs** the table's first variant are ratios of median total time (\"2.00x faster\", \"33x slower\"), or "
            f"*{WITHIN_SPREAD}* when the two variants' runs overlap, so that the difference is no gain of either.", "",
            "![time per stage, per variant](report-stages.png)", "",
            "![elapsed time and cost per 100 merges against merges done, per variant](report-merges.png)", ""]
    if "scaling" in result:
        out += ["![time against corpus size and against workers](report-scaling.png)", ""]
        if shared_note(result):
            out += [shared_note(result) + ".", ""]
    out += ["Raw figures: [`report-bench.json`](report-bench.json)."]
    return "\n".join(out) + "\n"
