"""``make report`` / ``python -m bpe report``: every variant on the same data, as an article-style report.

It runs the bench harness (:func:`bpe.lab.bench.run_bench`: each repeat a fresh process, medians) for
every registered variant and writes, into ``docs/`` by default:

* ``report.md``: the machine, the settings, and a table per vocab size with total, pre-tokenize,
  merge phase, select, update, peak memory, and the speed-up against the previous variant and v1;
* ``report-stages.png``: one stacked bar per variant (pre-tokenize, pair count, select, update);
* ``report-merges.png``: elapsed time against merges done, per variant (from the 1,000-merge
  checkpoints): a straight line is a constant cost per merge;
* ``report-bench.json``: every figure the plots and tables came from.

v1 recounts everything per merge, so above the bench's work limit (corpus bytes x merges) it runs
on a reduced vocab instead, in a second table beside every other variant at that vocab, so that its
ratios are measured, not extrapolated.  When even the reduced run is past the limit, v1 is left out
with a note.

With ``peers=True`` the peers (HF ``tokenizers``, ``rustbpe``, ``bpeasy``; see :mod:`bpe.lab.peers`)
train on the same data at the main vocab in the same bench run; a peer that is not installed is
listed with the install command instead of a time.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

from bpe.lab.bench import V1_WORK_LIMIT, format_mb, comparison_rows, run_bench, write_json_atomic
from bpe.lab.candidates import parse_variants
from bpe.lab.runinfo import machine_info
from bpe.io.datasets import REPO_ROOT, data_label, resolve_data
from bpe.errors import BPEError
from bpe.io.outputs import write_text_atomic
from bpe.training.registry import VARIANTS

DOCS_DIR = REPO_ROOT / "docs"
STAGE_COLOURS = {"pretokenize": "#4c72b0", "pair_count": "#55a868", "select": "#c44e52", "update": "#8172b2"}


def plan(corpus_bytes: int, vocab_size: int, v1_vocab_size: int, num_special: int,
         variants: list[str]) -> tuple[list[str], list[str], str | None]:
    """(variants at the main vocab, variants at the reduced vocab, note about v1).

    >>> plan(4_000, 2000, 500, 1, ["v1", "v2", "v3"])
    (['v1', 'v2', 'v3'], [], None)
    >>> main, reduced, note = plan(2_300_000, 2000, 500, 1, ["v1", "v2", "v3"])
    >>> main, reduced
    (['v2', 'v3'], ['v1', 'v2', 'v3'])
    """
    if "v1" not in variants:
        return variants, [], None
    merges = vocab_size - 256 - num_special
    if corpus_bytes * merges <= V1_WORK_LIMIT:
        return variants, [], None
    others = [v for v in variants if v != "v1"]
    reduced_merges = v1_vocab_size - 256 - num_special
    if v1_vocab_size >= vocab_size or corpus_bytes * reduced_merges > V1_WORK_LIMIT:
        return others, [], (f"v1 left out: {corpus_bytes:,} bytes x {reduced_merges:,} merges (vocab "
                            f"{v1_vocab_size:,}) is past the naive variant's budget; lower --v1-vocab-size")
    return others, variants, (f"v1 recounts every pair after every merge, so at vocab {vocab_size:,} it is past "
                              f"the bench's budget on this corpus; it ran at vocab {v1_vocab_size:,} in the "
                              f"second table, beside every other variant at that vocab.")


def run_report(data: str | None = None, vocab_size: int = 2000, v1_vocab_size: int = 300, repeat: int = 3,
               special_tokens: list[str] | None = None, workers: int | None = None, peers: bool = False,
               out_dir: Path = DOCS_DIR, variants: list[str] | None = None, log=None) -> Path:
    """Run the benches and write the report files; returns the path of ``report.md``.

    ``variants``: ``--variant`` entries (ladder names, or your own trainer: see :mod:`bpe.lab.candidates`);
    default the whole ladder, which also runs beside your own trainers when no ladder step is named.
    """
    log = log or sys.stdout
    special_tokens = ["<|endoftext|>"] if special_tokens is None else special_tokens
    candidates = parse_variants(list(VARIANTS) if variants is None else variants)
    if not any(c.is_variant for c in candidates):
        candidates = parse_variants([*VARIANTS, *(c.spec for c in candidates)])
    spec = {c.label: c.spec for c in candidates}
    path = resolve_data(data)
    main_names, reduced_names, v1_note = plan(path.stat().st_size, vocab_size, v1_vocab_size,
                                              len(special_tokens), list(spec))
    if not main_names:
        raise BPEError("no variant to report on")
    tables = [run_bench([spec[n] for n in main_names], data, vocab_size, repeat, special_tokens, workers, out=log,
                        peers=peers)]
    if reduced_names:
        tables.append(run_bench([spec[n] for n in reduced_names], data, v1_vocab_size, repeat, special_tokens,
                                workers, out=log))
    peer_results = peer_totals(tables[0].get("peers", {}))
    if any(not t["merges_identical"] for t in tables):
        raise BPEError("variants produced different merges; the report would compare different results "
                       "(see the bench output above)")
    now = datetime.now(timezone.utc)
    result = {"generated": now.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine_info(),
              "data": data_label(data), "tables": tables, "peers": peer_results,
              "notes": [v1_note] if v1_note else []}
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out_dir / "report-bench.json", result)
    plot_stages(result, out_dir / "report-stages.png")
    plot_merges(result, out_dir / "report-merges.png")
    md = out_dir / "report.md"
    write_text_atomic(md, render_markdown(result))
    print(f"\nwrote {md}, {out_dir / 'report-stages.png'}, {out_dir / 'report-merges.png'}", file=log)
    return md


def peer_totals(peers: dict) -> dict:
    """``{peer: median seconds, or the reason it has no time}`` from the bench's peer results."""
    return {name: r["total"] if "total" in r else (r.get("missing") or r.get("error")) for name, r in peers.items()}


def table_rows(bench: dict) -> list[str]:
    first_name = next(iter(bench["variants"]))
    rows = ["| variant | idea | total | pre-tokenize | merge phase | select | update | peak memory | "
            f"vs previous | vs {first_name} |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, med, vs_prev, vs_first in comparison_rows(bench):
        st = med["stages"] or {}
        cells = [_cell(v) for v in (st.get("pretokenize"), med["merge_phase"], st.get("select"), st.get("update"))]
        rows.append(f"| {name} | {bench['variants'][name]['idea']} | {med['total']:.3f} s | {' | '.join(cells)} | "
                    f"{format_mb(med['peak_rss']['self'])} | {vs_prev} | {vs_first} |")
    return rows


def _cell(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.3f} s"


def correctness_lines(bench: dict) -> list[str]:
    """Below a table with your own trainer in it: each candidate's verdict, and any that failed."""
    verdicts = {n: v for n, v in bench.get("verdicts", {}).items() if bench["variants"][n]["kind"] != "variant"}
    if not verdicts and not bench.get("failed"):
        return []
    reference = bench.get("reference", {}).get("name", "the reference")
    out = [f"Your own trainer(s), checked against {reference}'s merges of the same data:", ""]
    for name, v in verdicts.items():
        if v["verdict"] == "identical":
            out.append(f"- **{name}**: identical ({v['merges']:,} merges).")
        else:
            both = v["candidate_pair"] and v["reference_pair"]
            chose = (f"chose {v['candidate_pair']} (true count {v['candidate_count']:,}) where {reference} chose "
                     f"{v['reference_pair']} ({v['reference_count']:,}); " if both else "")
            out.append(f"- **{name}**: differs at merge {v['step']:,}: {chose}{v['explanation']}.")
    out += [f"- **{name}**: failed: {line}." for name, line in bench.get("failed", {}).items()]
    return out + [""]


def render_markdown(result: dict) -> str:
    m = result["machine"]
    main = result["tables"][0]["settings"]
    out = ["# Benchmark report: every variant on the same data", "",
           f"Generated by `make report` on {result['generated']}, commit {m['git_commit']}. "
           "Do not edit: re-run `make report` to update (data, figures and plots are regenerated together).", "",
           f"Machine: {m['cpu_count']} CPUs ({m['processor']}), {m['platform']}, Python {m['python']}. "
           "Absolute seconds are this machine's; compare the ratios, which were measured in one run.", "",
           f"Data: `{result['data']}` ({main['corpus_bytes']:,} bytes), special tokens {main['special_tokens']}, "
           f"pre-tokenization workers {main['workers']}, {main['repeat']} repeat(s) per variant, each in a "
           "fresh process; every figure is the median of the repeats.", ""]
    for i, bench in enumerate(result["tables"]):
        s = bench["settings"]
        out += [f"## Vocab {s['vocab_size']:,} ({s['num_merges']:,} merges)", ""]
        out += table_rows(bench)
        out.append("")
        out += correctness_lines(bench)
        if i == 0 and result["peers"]:
            out += ["Peers on the same data and vocab, in the same run:", "", "| peer | total | vs fastest variant |",
                    "|---|---:|---:|"]
            fastest = min(v["median"]["total"] for v in bench["variants"].values())
            for name, value in result["peers"].items():
                if isinstance(value, (int, float)):
                    out.append(f"| {name} | {value:.3f} s | {fastest / value:.2f}x |")
                else:
                    out.append(f"| {name} | {value} | - |")
            out.append("")
    for note in result["notes"]:
        out += [f"Note: {note}", ""]
    out += ["Columns: **pre-tokenize** reads the file, splits on special tokens, runs the GPT-2 regex and "
            "counts pre-tokens; **merge phase** is the initial pair count plus every select and update; "
            "**select** and **update** are summed over merges; **peak memory** is the training process's "
            "high-water RSS; **vs previous** and **vs** the table's first variant are ratios of total time "
            "(higher is faster).", "",
            "![time per stage, per variant](report-stages.png)", "",
            "![elapsed time against merges done, per variant](report-merges.png)", "",
            "Raw figures: [`report-bench.json`](report-bench.json)."]
    return "\n".join(out) + "\n"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_stages(result: dict, out: Path) -> None:
    """One stacked bar per variant per table; peers (total only) beside the first table's bars."""
    plt = _pyplot()
    tables = result["tables"]
    fig, axes = plt.subplots(1, len(tables), figsize=(6 * len(tables) + 1, 4.5), squeeze=False)
    for i, (ax, bench) in enumerate(zip(axes[0], tables)):
        names = list(bench["variants"])
        bottoms = [0.0] * len(names)
        for stage, colour in STAGE_COLOURS.items():  # a train_bpe function has no stages: total only, below
            heights = [(bench["variants"][n]["median"]["stages"] or {}).get(stage, 0.0) for n in names]
            ax.bar(names, heights, bottom=bottoms, color=colour, label=stage.replace("_", " "))
            bottoms = [b + h for b, h in zip(bottoms, heights)]
        other = [max(0.0, bench["variants"][n]["median"]["total"] - b) for n, b in zip(names, bottoms)]
        timed = [bench["variants"][n]["median"]["stages"] is not None for n in names]
        ax.bar(names, [o if t else 0.0 for o, t in zip(other, timed)], bottom=bottoms, color="#cccccc",
               label="other (start-up, vocab)")
        if not all(timed):
            ax.bar(names, [0.0 if t else o for o, t in zip(other, timed)], color="white", edgecolor="#555555",
                   hatch="..", label="total only (a train_bpe function)")
        if i == 0:
            for name, value in result["peers"].items():
                if isinstance(value, (int, float)):
                    ax.bar([name], [value], color="white", edgecolor="black", hatch="//")
        s = bench["settings"]
        ax.set_title(f"{result['data']}, vocab {s['vocab_size']:,}")
        ax.set_ylabel("seconds (median)")
        ax.tick_params(axis="x", rotation=30)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"Time per stage (generated by make report, {result['generated']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_merges(result: dict, out: Path) -> None:
    """Elapsed time against merges done, per variant; the curve starts when merging starts."""
    plt = _pyplot()
    tables = result["tables"]
    fig, axes = plt.subplots(1, len(tables), figsize=(6 * len(tables) + 1, 4.5), squeeze=False)
    for i, (ax, bench) in enumerate(zip(axes[0], tables)):
        for name, variant in bench["variants"].items():
            med = variant["median"]
            if med["stages"] is None:  # a train_bpe function: one point, its total at its last merge
                ax.plot(*zip(*med["checkpoints"]), marker="D", linestyle="none", label=f"{name} (total)")
                continue
            start = med["stages"]["pretokenize"] + med["stages"]["pair_count"]
            xs = [0] + [m for m, _ in med["checkpoints"]]
            ys = [start] + [t for _, t in med["checkpoints"]]
            ax.plot(xs, ys, marker="o", markersize=3, label=name)
        if i == 0:
            for name, value in result["peers"].items():
                if isinstance(value, (int, float)):
                    ax.axhline(value, linestyle="--", linewidth=1, color="grey")
                    ax.annotate(f"{name} total", (0, value), fontsize=7, va="bottom")
        s = bench["settings"]
        ax.set_title(f"{result['data']}, vocab {s['vocab_size']:,}")
        ax.set_xlabel("merges done")
        ax.set_ylabel("seconds since start (median)")
        ax.legend(fontsize=8)
    fig.suptitle(f"Elapsed time against merges (generated by make report, {result['generated']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
