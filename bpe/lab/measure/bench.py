"""The bench harness: train one or more candidates on the same data and print the stage tables.

A *candidate* is what ``--variant`` names (:mod:`bpe.lab.judge.candidates`): a rung of the ladder, or your own
trainer (a ``Merger`` file: every stage; a CS336 ``train_bpe`` function: its total).  Each repeat runs in a fresh
process, the candidates taking turns (:func:`bpe.lab.measure.plan.measure`).  The stages: **pretokenize** (read,
split on special tokens, GPT-2 regex, count), **pair count** (the candidate's structures), **select** and
**update** (summed over the merges), **merge phase** (the last three), **peak RSS** (the training process, and
the largest pool worker), and the **workers** each run counted in (v7: and its merge shards).  Ratios mean
something only within one bench, outside the run-to-run spread (:mod:`bpe.lab.measure.spread`).  ``--busy N``
runs it all beside N processes keeping cores busy (:mod:`bpe.lab.measure.busy`).  The result is a
:class:`~bpe.lab.measure.result.BenchResult`; the comparison's columns (:func:`comparison_columns`) are the
report's table too.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import NamedTuple

from bpe.data.datasets import data_label, default_vocab_size, resolve_data, shown_path
from bpe.defaults import SPECIAL_TOKENS
from bpe.errors import BPEError
from bpe.interface import option
from bpe.lab.judge.candidates import Candidate, parse_variants
from bpe.lab.judge.correctness import check_correctness
from bpe.lab.judge.diagnose import decode_merges
from bpe.lab.measure import timed_run
from bpe.lab.measure.busy import spin_on_cores
from bpe.lab.measure.candidate_estimate import estimate_plan
from bpe.lab.measure.estimate import LONG_RUN_SECONDS, format_duration, refusal
from bpe.lab.measure.peers import peer_names, peers_table, run_peers
from bpe.lab.measure.plan import Plan, check_repeat, measure, plan
from bpe.lab.measure.publish import machine_info, made_by, write_json_atomic
from bpe.lab.measure.result import BenchResult, CandidateResult, Run
from bpe.lab.measure.spread import WITHIN_SPREAD, compare, median_run, range_text
from bpe.lab.measure.table import Column, terminal_lines
from bpe.running.pool import default_workers
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name
from bpe.training.options import stopped_early
from bpe.training.registry import default_note


@dataclass(frozen=True)
class BenchSettings:
    """What one bench is asked for, as its command line says it (``None``: the default: the best rung,
    the default data set, its vocab, the workers of :func:`run_workers`), built once and passed down.
    ``force``: run a candidate estimated past ``budget`` seconds (all its repeats), else refused
    (skipped with a note under ``all``)."""
    variants: str | list[str] | None = None
    data: str | None = None
    vocab_size: int | None = None
    repeat: int = 1
    special_tokens: list[str] = field(default_factory=lambda: list(SPECIAL_TOKENS))
    workers: int | str | None = None  # or "auto": each run chooses its own
    limit: int | str | None = None
    peers: bool | str = False
    force: bool = False
    progress: bool = False  # each run's live line (on a terminal), then its one line
    lines: bool = False  # each run's one line on stderr as it ends, without a live line (stderr not a terminal)
    budget: float = LONG_RUN_SECONDS
    busy: int = 0
    load: str = "spin"  # what the busy processes do: spin, or spin in bursts (bursty)
    json_out: str | None = None
    text_column: str = "text"  # where a corpus's JSON lines or Parquet files hold the text
    pattern: str = DEFAULT_PATTERN  # the pre-tokenization pattern: gpt2, cl100k, o200k or a regex


def run_bench(settings: BenchSettings, out=None) -> BenchResult:
    """Bench ``settings``' candidates, print the tables to ``out`` (default stdout) and return the result (``--json``
    writes its ``to_json()``).  Bad settings raise :class:`BPEError` before any run; so does a rung that fails.

    The data is one text file, or any corpus ``train_bpe`` reads (a folder, a glob, JSON lines, Parquet:
    :mod:`bpe.corpus.corpus`), which every run reads in place; only a CS336 ``train_bpe`` function, which takes
    one file, is given the corpus written once as one text file (:func:`~bpe.lab.measure.plan.measure`)."""
    s = settings
    # 1. Check everything the runs will trust, before the first of them.
    vocab_size = s.vocab_size or default_vocab_size(s.data)
    check_repeat(s.repeat, s.json_out)
    candidates = parse_variants(s.variants)
    workers, workers_from = run_workers(s.workers, len(candidates))
    peers = peer_names(s.peers) if s.peers else []  # an unknown peer name fails now too
    p = plan(resolve_data(s.data), vocab_size, s.special_tokens, workers, s.limit, pattern=s.pattern,
             text_column=s.text_column, corpus=True)
    return bench_checked(s, p, candidates, workers_from, peers, out or sys.stdout)


def bench_checked(s: BenchSettings, p: Plan, candidates: list[Candidate], workers_from: str, peers: list[str],
                  out) -> BenchResult:
    """Steps 2 to 4 of :func:`run_bench`, on what step 1 checked: the runs' :class:`Plan`, the candidates, where
    the workers' count comes from (:func:`run_workers`) and the peers; the rest of ``s`` is taken as it is."""
    refuse = not s.force and not _asked_all(s.variants)  # else a candidate past the budget is skipped, or run
    data = data_label(s.data)

    # 2. Estimate every candidate (your own trainer: timed on a prefix; a corpus's: of its sample, which counts its
    #    bytes of text); refuse or skip the long ones.
    estimates, p = estimate_plan(candidates, p, log=sys.stderr if s.progress else None)
    slow = [e for e in estimates.values() if e.seconds * s.repeat > s.budget]
    if slow and refuse:
        raise BPEError(refusal(slow, f"bench of {', '.join(e.variant for e in slow)} on {data} "
                                     f"at vocab {p.vocab_size:,} x {s.repeat} repeat(s)", s.budget))
    result = BenchResult(machine_info(), {
        "data": data, "path": shown_path(p.source), "corpus_bytes": p.corpus_bytes, "file_bytes": p.file_bytes,
        **({} if p.corpus is None else {"corpus": p.corpus.describe()}),
        "limit": p.limit, "vocab_size": p.vocab_size, "num_merges": p.merges, "special_tokens": p.special_tokens,
        "workers": p.workers, "workers_given": p.workers is not None, "workers_from": workers_from,
        "repeat": s.repeat, "busy": s.busy, "load": s.load,
        **({} if pattern_name(p.pattern) == DEFAULT_PATTERN else {"pattern": p.pattern})},
        estimates={name: {"seconds": e.seconds, "peak_bytes": e.peak_bytes} for name, e in estimates.items()})
    print(header(result), file=out)
    if s.variants is None:  # the default: say when it is not the first choice, and why
        print(default_note(), file=out)
    print("estimate per run, on idle cores (a busy machine takes longer): "
          + ", ".join(e.describe() for e in estimates.values()), file=out, flush=True)

    # 3. Run each candidate ``repeat`` times in turns, each run a fresh process (:func:`plan.measure`); the first
    #    run keeps what the correctness check needs.  Print each one's table.
    runnable = [c for c in candidates if s.force or estimates[c.label] not in slow]
    for candidate in (c for c in candidates if c not in runnable):
        name = candidate.label
        result.skipped[name] = (f"{name} skipped: estimated {estimates[name].describe()} per run, past the "
                                f"{format_duration(s.budget)} budget; run it alone with "
                                f"{option('--variant', candidate.spec)} {option('--force')}")
        print(result.skipped[name], file=out)
    merge_lists, own_counts = {}, {}  # by label: its merges; a Merger's own pre-token counts
    with spin_on_cores(s.busy, s.load):
        all_runs = measure("bench", p, runnable, s.repeat, out, failed=result.failed, for_check=True,
                           progress=s.progress, lines=s.lines)
    for candidate in runnable:
        name, runs = candidate.label, all_runs.get(candidate.label)
        if runs is None:  # it failed
            continue
        merge_lists[name] = decode_merges(runs[0].pop("merge_list"))
        if "own_counts" in runs[0]:
            own_counts[name] = runs[0].pop("own_counts")
        notes = runs[0].get("notes", [])
        if stopped := stopped_early(runs[0]["merges"], p.merges, p.corpus_bytes):
            notes = [*notes, stopped.replace("stopped early:", "stopped early,", 1)]  # the header had the asked count
        result.variants[name] = CandidateResult(candidate.kind, candidate.spec, candidate.idea, [
            Run.from_json(r) for r in runs], Run.from_json(median_run(runs)), notes)
        print(candidate_table(name, result.variants[name]), file=out)

    # 4. Compare, check every run's merges, time the peers, write the JSON.
    if len(result.variants) > 1:
        print(comparison_table(result), file=out)
    rungs = {n: v for n, v in result.variants.items() if v.kind == "variant"}
    digests = {v.median.merges_sha256 for v in rungs.values()}
    result.merges_identical = len(digests) <= 1  # the rungs agree (your own trainers: see the verdicts)
    if len(digests) > 1:
        print("WARNING: the rungs produced different merges: "
              + ", ".join(f"{n}={v.median.merges_sha256}" for n, v in rungs.items()), file=out)
    if merge_lists:
        result.verdicts, result.reference = check_correctness(
            merge_lists, own_counts, candidates, p.reads, p.vocab_size, p.special_tokens, p.workers, p.stop, out,
            result.failed, {name: v.runs[0].facts.get("vocab_problems") for name, v in result.variants.items()},
            run_once=timed_run.run_once, pattern=p.pattern)
    if peers:
        result.peers = run_peers(p.reads, p.vocab_size, p.special_tokens, p.workers, s.repeat, peers, p.pattern,
                                 end=p.stop)
        print(peers_table(result.peers, result.variants, p.pattern), file=out)
    if s.json_out:
        write_json_atomic(s.json_out, result.to_json(), log=out)
    return result


def run_workers(asked: int | str | None, candidates: int) -> tuple[int | None, str]:
    """``(the worker count every run is given, where it comes from)``; ``None``: each run chooses its own.

    ``--workers N`` is given to every run.  Without it a comparison (several candidates) gives each the
    CPU count: a rung left to choose sizes its pool to the cores free as it starts, which a busy
    moment can cut to one process for one rung and not the next, and the comparison would then time
    the machine's load instead of the rungs.  One candidate alone, or ``auto``, chooses as a user's
    run does (v7 then keeps a core spare: docs/v7.md).

    >>> run_workers(3, 2), run_workers("auto", 2), run_workers(None, 1)
    ((3, '--workers'), (None, 'each run'), (None, 'each run'))
    """
    if asked == "auto" or (asked is None and candidates < 2):
        return None, "each run"
    if asked is None:
        return default_workers(), "bench"
    return asked, "--workers"  # checked with the other settings (bpe.lab.measure.plan)


def _asked_all(spec: str | list[str] | None) -> bool:
    specs = [spec] if isinstance(spec, str) else spec or []
    return any(entry.strip() == "all" for s in specs for entry in s.split(","))


# --- The printed tables: the header, one table per candidate, their comparison ---


def header(result: BenchResult) -> str:
    """The bench's first lines: the data (a corpus: its files, and its bytes of text), the settings, the machine."""
    m, s = result.machine, result.settings
    if s.get("corpus"):  # a corpus read in place: its files, then its text's bytes (up to the limit)
        limit = f", --limit {s['limit']:,}" if s.get("limit") else ""
        data = f"{s['data']}, {s['corpus']}: {s['corpus_bytes']:,} bytes of text{limit}"
    else:
        subset = f" of {s['file_bytes']:,}, --limit {s['limit']:,}" if s.get("limit") else ""
        data = f"{s['data']} ({s['corpus_bytes']:,} bytes{subset})"
    how = "spinning in bursts" if s.get("load") == "bursty" else "spinning"
    busy_note = f", busy {s['busy']} (processes {how} meanwhile)" if s.get("busy") else ""
    pattern = f", pattern {pattern_name(s['pattern'])}" if s.get("pattern") else ""
    return (f"bpe-lab bench: {data}, vocab {s['vocab_size']:,} "
            f"({s['num_merges']:,} merges), special {s['special_tokens']}{pattern}, "
            f"{_WORKERS_FROM[s['workers_from']].format(s['workers'])}, repeat {s['repeat']}{busy_note}\n"
            f"machine: {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}, {made_by(m)}")


#: What the header says of the workers, by where their count came from (``settings.workers_from``).
_WORKERS_FROM = {"--workers": "workers {} (every run, as asked)",
                 "bench": "workers {} (the CPU count, given to every run alike)",
                 "each run": "workers: each run's own choice (the cores free as it starts; used: each table's workers)"}


def workers_used(facts: dict) -> str:
    """The processes a run counted in, and v7's merge shards, from its :attr:`Run.facts`: ``2``, ``2, 1 shard``;
    ``-`` where not known (a counter of your own), empty for the median row (no run of its own).

    >>> workers_used({"workers": 2}), workers_used({"workers": 2, "shards": 2}), workers_used({"workers": None})
    ('2', '2, 2 shards', '-')
    """
    if "workers" not in facts:
        return ""
    if facts["workers"] is None:
        return "-"
    shards = facts.get("shards")
    return str(facts["workers"]) + ("" if shards is None else f", {shards} shard{'s' if shards != 1 else ''}")


#: One candidate's table, a row ``(label, Run)`` per run and the median's.
RUN_COLUMNS = [Column("run", lambda row: row[0], align="<", width=8),
               *(Column(header, lambda row, name=name: row[1].figure(name), "{:.3f}s", width=13) for header, name in (
                   ("pretokenize", "pretokenize"), ("pair count", "pair_count"), ("select", "select"),
                   ("update", "update"), ("merge phase", "merge_phase"), ("total", "total"))),
               Column("peak RSS", lambda row: row[1].peak_rss["self"] / 1e6, "{:,.1f} MB", width=13),
               Column("worker RSS", lambda row: row[1].peak_rss["children"] / 1e6, "{:,.1f} MB", width=13),
               Column("workers", lambda row: workers_used(row[1].facts), width=13)]


def candidate_table(name: str, entry: CandidateResult) -> str:
    """One candidate's table: every repeat, the median, the checkpoints, the merges' digest, and any notes."""
    runs, med = entry.runs, entry.median
    rows = [(str(i + 1), r) for i, r in enumerate(runs)] + ([("median", med)] if len(runs) > 1 else [])
    lines = [f"\n{name}: {entry.idea}", *terminal_lines(RUN_COLUMNS, rows)]
    if med.stages is None:
        lines.append("(a train_bpe function is timed as a whole: no stages, no checkpoints)")
    else:
        step = max(1, len(med.checkpoints) // 10)  # about ten of the checkpoints; --json has them all
        shown = [point for point in med.checkpoints[step - 1::step] if point[0] > 0]
        if med.checkpoints and med.checkpoints[-1][0] > 0 and shown[-1:] != med.checkpoints[-1:]:
            shown.append(med.checkpoints[-1])
        points = [f"{m:,}: {t:.2f}s" for m, t in shown]
        if points:
            lines.append("elapsed at merge   " + ", ".join(points))
    lines.append(f"merges: {med.merges:,} (sha256 {med.merges_sha256})")
    lines += [f"note: {name} {note}" for note in entry.notes]
    return "\n".join(lines)


class Compared(NamedTuple):
    """A candidate's row of the comparison: the range of its totals, its speed-up on the previous and the first."""
    name: str
    entry: CandidateResult
    spread: str
    vs_prev: str
    vs_first: str


def comparison_rows(result: BenchResult) -> list[Compared]:
    """The candidates in run order; a speed-up whose runs overlap the other's is ``within spread``
    (:func:`bpe.lab.measure.spread.compare`)."""
    first = next(iter(result.variants.values()))
    rows, prev = [], None
    for name, entry in result.variants.items():
        vs_prev = compare(prev.totals(), entry.totals())["verdict"] if prev else "-"
        vs_first = compare(first.totals(), entry.totals())["verdict"] if entry is not first else "-"
        rows.append(Compared(name, entry, range_text(entry.totals()), vs_prev, vs_first))
        prev = entry
    return rows


def comparison_columns(result: BenchResult) -> list[Column]:
    """The comparison's columns, of the medians: the bench's table, and the report's in Markdown (with each idea)."""
    def median(name: str):
        return lambda row: row.entry.median.figure(name)

    return [Column("variant", lambda row: row.name, align="<"),
            Column("idea", lambda row: row.entry.idea, align="<", terminal=False),
            Column("total", median("total"), "{:.3f} s"),
            Column("total min-max", lambda row: f"{row.spread} s" if row.spread else None),
            *(Column(header, median(name), "{:.3f} s") for header, name in (
                ("pre-tokenize", "pretokenize"), ("merge phase", "merge_phase"), ("select", "select"),
                ("update", "update"))),
            Column("peak memory", lambda row: row.entry.median.peak_rss["self"] / 1e6, "{:,.1f} MB"),
            Column("vs previous", lambda row: row.vs_prev),
            Column(f"vs {next(iter(result.variants))}", lambda row: row.vs_first)]


def comparison_table(result: BenchResult) -> str:
    return "\n".join(["\ncomparison (medians, the total's min-max over the runs; ratios of median times, "
                      "'2.00x faster' or '33x slower' than the other; "
                      f"'{WITHIN_SPREAD}': the two candidates' runs overlap)",
                      *terminal_lines(comparison_columns(result), comparison_rows(result))])
