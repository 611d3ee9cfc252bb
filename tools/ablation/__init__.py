"""``python -m tools.ablation``: v6 without each of its techniques in turn, beside v5 and v6 (``--rung v8``:
v8 without each of its tricks, :mod:`tools.ablation.v8`).

v6 (``variants/v6_tuned.py``) re-does v5's algorithm for CPython's speed with several techniques at
once, each a named section of its file.  Each technique that can be turned off has a row: a small
candidate file in this folder (``no_lazy_index``, ``no_neighbour_groups``, ``no_floor``, ``no_gc_tuning``,
``no_fast_counter``; its docstring says what it swaps) that swaps it for the plain alternative and keeps
the rest of v6.  v5 and v6 are rows too.  The two techniques without a row: words as strings are v6's
representation (v5, whose words are tuples of bytes, stands for v6 without them), and one token id per
distinct byte string is a point of correctness, not of speed.

The rows run through the measuring pipeline (:func:`bpe.lab.measure.plan.measure`: each run a fresh
process, the rows taking turns), with the machine and commit recorded.  Each row must make v6's merges,
on every run: one that does not fails the command after its table, and nothing is written.  A row file is
an ordinary candidate, so ``bpe bench --variant tools/ablation/no_floor.py`` and ``python -m tools.merge_cost
v6 tools/ablation/no_floor.py`` run it too.  ``docs/v6-ablation.json`` (``make ablation``) holds
both regimes, Gutenberg-like text at vocab 10,000 and web-like text at vocab 32,000; docs/v6.md quotes it.

A rung's ablation is its module's ``ROWS``, ``BASE`` (the row the others are held to), ``FIGURE`` (the time
they are compared on: v6's total, as its techniques reach its pre-tokenizer; v8's merge phase, all its tricks'
place) and ``row_spec``: this module's for v6, :mod:`~tools.ablation.v8`'s for v8.

Example: ``python -m tools.ablation --data corpus-en --vocab-size 400 --repeat 1`` (a quick look); ``make ablation``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bpe.commands import arguments
from bpe.data.datasets import data_label, default_vocab_size, resolve_data, shown_path
from bpe.defaults import SPECIAL_TOKENS
from bpe.errors import BPEError
from bpe.lab.judge.candidates import resolve
from bpe.lab.measure.plan import check_repeat, measure, plan
from bpe.lab.measure.publish import stamp, write_json_atomic
from bpe.lab.measure.spread import compare, ratio_text, summarized
from bpe.running.sizes import parse_count
from bpe.training.registry import VARIANTS, get_variant
from tools.ablation import v8, v10
from tools.command import tool_main

#: The rows, in the order they run and are shown: the rungs, then v6 without each technique.
ROWS = ("v5", "v6", "no_lazy_index", "no_neighbour_groups", "no_floor", "no_gc_tuning", "no_fast_counter")
#: Files beside the rows that are not rows: candidates ``bpe bench`` runs beside a rung (their docstrings).
CANDIDATES = ("v3_one_counting_worker",)
#: ``make ablation``'s regimes: (data, vocab size).
REGIMES = (("gutenberg-books", 10_000), ("webtext-synth-20MB", 32_000))
#: The row every other is compared with, in merges and in time.
BASE = "v6"
#: The time the rows are compared on.
FIGURE = "total"
#: The rungs with an ablation.
RUNGS = ("v6", "v8", "v10")


def row_spec(row: str) -> str:
    """What the bench runs for a row: a rung's name, or the path of the row's file here."""
    return row if row in VARIANTS else str(Path(__file__).with_name(f"{row}.py"))


def pair_regimes(data: Sequence[str] | None, vocab_sizes: Sequence[str | int] | None) -> list[tuple[str, int]]:
    """``--data`` and ``--vocab-size`` (each repeatable) as (data, vocab size) pairs, in order.

    One vocab size serves every data set; none gives each its own default; none of either, :data:`REGIMES`.

    >>> pair_regimes(["a.txt", "b.txt"], ["300"]), pair_regimes(["a.txt", "b.txt"], ["300", "400"])
    ([('a.txt', 300), ('b.txt', 300)], [('a.txt', 300), ('b.txt', 400)])
    """
    if not data:
        if vocab_sizes:
            raise BPEError("--vocab-size without --data: name the data set each vocab size is for")
        return list(REGIMES)
    sizes = list(vocab_sizes or [])
    if len(sizes) == 1:
        sizes *= len(data)
    elif not sizes:
        sizes = [default_vocab_size(d) for d in data]
    elif len(sizes) != len(data):
        raise BPEError(f"{len(data)} --data and {len(sizes)} --vocab-size: give one vocab size for all, or one each")
    return [(d, parse_count(size, "--vocab-size")) for d, size in zip(data, sizes)]


def ablation_of(rung: str):
    """The module that holds a rung's rows: this one for v6, ``v8`` for v8, ``v10`` for v10 (their rows built
    first)."""
    if rung not in RUNGS:
        raise BPEError(f"no ablation of {rung!r}: --rung is one of {', '.join(RUNGS)}")
    if rung == "v6":
        return sys.modules[__name__]
    if rung not in VARIANTS:  # not built here: the registry's one line says why
        get_variant(rung)
    return v8 if rung == "v8" else v10


def run_ablation(data: Sequence[str] | None = None, vocab_sizes: Sequence[str | int] | None = None, repeat: int = 3,
                 workers: int | None = None, limit: str | None = None, json_out: str | None = None, log=None,
                 rung: str = "v6") -> dict:
    """Every row of ``rung``'s ablation on every regime, interleaved; the tables to ``log``, everything to
    ``json_out`` (JSON)."""
    log = log or sys.stdout
    rows = ablation_of(rung)
    regimes = pair_regimes(data, vocab_sizes)
    specials = list(SPECIAL_TOKENS)
    check_repeat(repeat, json_out)
    # every regime checked now, a missing data set too, before the first run
    plans = [(regime_data, plan(resolve_data(regime_data), vocab_size, specials, workers, limit))
             for regime_data, vocab_size in regimes]
    if hasattr(rows, "build_rows"):  # compiled rows: built before the first timed run
        rows.build_rows(log)
    base, vs = rows.BASE, f"vs_{rows.BASE}"
    result = {
        **stamp(),
        "command": " ".join(["python -m tools.ablation", *([f"--rung {rung}"] if rung != "v6" else []),
                             *(f"--data {data} --vocab-size {vocab_size}" for data, vocab_size in regimes),
                             f"--repeat {repeat}", *([f"--workers {workers}"] if workers else []),
                             *([f"--limit {limit}"] if limit else []), *([f"--json {json_out}"] if json_out else [])]),
        "rung": rung, "base": base, "compared_on": rows.FIGURE,
        "repeat": repeat, "workers": workers, "limit": limit, "special_tokens": specials,
        "rows": {row: resolve(rows.row_spec(row)).idea for row in rows.ROWS},
        "regimes": {},
    }
    for regime_data, p in plans:  # every row on one data set at one vocab size, against the base
        label = data_label(regime_data)
        runs = measure(label, p, [rows.row_spec(row) for row in rows.ROWS], repeat, log,
                       f"{p.corpus_bytes:,} bytes", f"{len(rows.ROWS)} rows")
        base_runs = runs[base]
        base_digest = base_runs[0]["merges_sha256"]
        entries = {}
        for row, row_runs in runs.items():
            digests = {run["merges_sha256"] for run in row_runs}
            kept = summarized(row_runs)
            for run in kept["runs"]:  # a merge-by-merge curve per run is most of the file, and no page reads it
                del run["checkpoints"]
            entries[row] = {"identical": digests == {base_digest}, "merges_sha256": sorted(digests), **kept,
                            vs: {figure: compare([r[figure] for r in row_runs], [r[figure] for r in base_runs])
                                 for figure in ("total", "merge_phase")}}
        regime = result["regimes"][label] = {
            "label": label, "data": regime_data, "path": shown_path(p.path), "corpus_bytes": p.corpus_bytes,
            "vocab_size": p.vocab_size, "num_merges": base_runs[0]["merges"], "merges_sha256": base_digest,
            "rows": entries}
        print(ablation_table(regime, result["rows"], base, rows.FIGURE), file=log, flush=True)
        differ = [row for row, entry in regime["rows"].items() if not entry["identical"]]
        if differ:
            raise BPEError(f"[{regime['label']}] {', '.join(differ)} made merges other than {base}'s "
                           f"(sha256 {regime['merges_sha256']}); nothing written")
    if json_out:
        write_json_atomic(Path(json_out), result, log=log)
    return result


def _spread(figure: dict) -> str:
    """``1.23 (1.20-1.31)``: the median and the range over the runs."""
    return f"{figure['median']:.2f} ({figure['min']:.2f}-{figure['max']:.2f})"


def ablation_table(regime: dict, ideas: dict[str, str], base: str = BASE, figure: str = FIGURE) -> str:
    """One regime's rows: seconds (median, min-max), time (``figure``) against ``base``'s, and whether the
    merges are ``base``'s."""
    width = max(len(row) for row in regime["rows"]) + 2
    lines = [f"\n{regime['label']}: {regime['corpus_bytes']:,} bytes, vocab {regime['vocab_size']:,} "
             f"({regime['num_merges']:,} merges); seconds, median (min-max) over the runs; 'vs {base}': the "
             f"row's {figure.replace('_', ' ')} time against {base}'s ('~': the two rows' runs overlap)",
             f"{'row':<{width}}{'pretokenize':>22}{'merge phase':>22}{'total':>22}{'vs ' + base:>16}"
             "  identical merges"]
    for row, entry in regime["rows"].items():
        against = entry[f"vs_{base}"][figure]
        ratio = ratio_text(1 / against["ratio"]) + ("~" if against["clear"] is False else " ")
        lines.append(f"{row:<{width}}{_spread(entry['pretokenize']):>22}{_spread(entry['merge_phase']):>22}"
                     f"{_spread(entry['total']):>22}{ratio:>16}  {'yes' if entry['identical'] else 'NO'}")
    lines += [f"  {row}: {ideas[row]}" for row in regime["rows"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.ablation",
                                     description="v6 (or v8, v10) without each of its techniques in turn, beside "
                                                 "the rung (docs/v6.md, docs/v8.md, docs/v10.md)")
    parser.add_argument("--rung", choices=RUNGS, default="v6",
                        help="v6: v6 without each technique, beside v5 and v6, compared on the total; v8: v8 "
                             "without each trick, each built once into out/v8-ablation/, compared on the merge "
                             "phase; v10: v10 without each idea, beside v9, built into out/v10-ablation/, compared "
                             "on the merge phase (default v6)")
    parser.add_argument("--data", action="append", default=None,
                        help="data set name or file path; repeat for several regimes, each with its --vocab-size "
                             "(default: gutenberg-books at 10,000 and webtext-synth-20MB at 32,000)")
    parser.add_argument("--vocab-size", action="append", default=None, metavar="N",
                        help="one per --data, or one for all (default: each data set's own)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, the rows taking turns (default 3)")
    arguments.add_workers(parser)
    parser.add_argument("--limit", default=None, metavar="SIZE", help="train on the first SIZE bytes of each data set")
    arguments.add_json(parser)

    def run(args) -> None:
        arguments.check_workers(args)
        run_ablation(args.data, args.vocab_size, args.repeat, args.workers, args.limit, args.json, rung=args.rung)

    return tool_main(parser, run, argv)
