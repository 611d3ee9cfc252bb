"""The bench's printed tables: its header, one table per candidate, and their comparison (whose rows
the report's markdown reads too; ratios by the rule of :mod:`bpe.lab.spread`)."""

from __future__ import annotations

from bpe.lab.spread import WITHIN_SPREAD, compare, range_text


def format_mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def header(report: dict) -> str:
    m, s = report["machine"], report["settings"]
    subset = f" of {s['file_bytes']:,}, --limit {s['limit']:,}" if s.get("limit") else ""
    busy_note = f", busy {s['busy']} (processes spinning meanwhile)" if s.get("busy") else ""
    return (f"bpe-lab bench: {s['data']} ({s['corpus_bytes']:,} bytes{subset}), vocab {s['vocab_size']:,} "
            f"({s['num_merges']:,} merges), special {s['special_tokens']}, workers {s['workers']}, "
            f"repeat {s['repeat']}{busy_note}\n"
            f"machine: {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}, commit {m['git_commit']}")


_COLUMNS = ("pretokenize", "pair count", "select", "update", "merge phase", "total", "peak RSS", "worker RSS")


def _seconds(value: float | None, width: int) -> str:
    """``1.234s`` right-aligned, or ``-`` for a figure a run does not have (a function candidate's stages)."""
    return f"{value:>{width - 1}.3f}s" if value is not None else f"{'-':>{width}}"


def _row(label: str, r: dict) -> str:
    st = r["stages"] or {}
    cells = [st.get("pretokenize"), st.get("pair_count"), st.get("select"), st.get("update"), r["merge_phase"],
             r["total"]]
    return (f"{label:<8}" + "".join(_seconds(c, 13) for c in cells)
            + f"{format_mb(r['peak_rss']['self']):>13}{format_mb(r['peak_rss']['children']):>13}")


def candidate_table(name: str, entry: dict) -> str:
    """One candidate's table: every repeat, the median, the checkpoints, the merges' digest, and any notes."""
    runs, med = entry["runs"], entry["median"]
    lines = [f"\n{name}: {entry['idea']}",
             f"{'run':<8}" + "".join(f"{c:>13}" for c in _COLUMNS)]
    lines += [_row(str(i + 1), r) for i, r in enumerate(runs)]
    if len(runs) > 1:
        lines.append(_row("median", med))
    if med["stages"] is None:
        lines.append("(a train_bpe function is timed as a whole: no stages, no checkpoints)")
    else:
        step = max(1, len(med["checkpoints"]) // 10)  # about ten of the checkpoints; --json has them all
        shown = [point for point in med["checkpoints"][step - 1::step] if point[0] > 0]
        if med["checkpoints"] and med["checkpoints"][-1][0] > 0 and shown[-1:] != med["checkpoints"][-1:]:
            shown.append(med["checkpoints"][-1])
        points = [f"{m:,}: {t:.2f}s" for m, t in shown]
        if points:
            lines.append("elapsed at merge   " + ", ".join(points))
    lines.append(f"merges: {med['merges']:,} (sha256 {med['merges_sha256']})")
    lines += [f"note: {name} {note}" for note in entry.get("notes", [])]
    return "\n".join(lines)


def totals(entry: dict) -> list[float]:
    return [r["total"] for r in entry["runs"]]


def comparison_rows(report: dict) -> list[tuple[str, dict, str, str, str]]:
    """``(candidate, medians, total's min-max, speed-up vs the previous candidate, vs the first)`` in run
    order; a speed-up whose runs overlap the other's is ``within spread`` (:func:`bpe.lab.spread.compare`)."""
    entries = report["variants"]
    first = next(iter(entries.values()))
    rows, prev = [], None
    for name, entry in entries.items():
        vs_prev = compare(totals(prev), totals(entry))["verdict"] if prev else "-"
        vs_first = compare(totals(first), totals(entry))["verdict"] if entry is not first else "-"
        rows.append((name, entry["median"], range_text(totals(entry)), vs_prev, vs_first))
        prev = entry
    return rows


def comparison_table(report: dict) -> str:
    first_name = next(iter(report["variants"]))
    width = max(10, *(len(name) + 1 for name in report["variants"]))
    last = max(15, len(first_name) + 4)  # the "vs <first>" column fits its name
    lines = ["\ncomparison (medians, the total's min-max over the runs; ratios are times, x = faster than; "
             f"'{WITHIN_SPREAD}': the two candidates' runs overlap)",
             f"{'candidate':<{width}}{'pretokenize':>13}{'merge phase':>13}{'select':>12}{'update':>12}{'total':>10}"
             f"{'min-max':>14}{'peak RSS':>12}{'vs prev':>15}{'vs ' + first_name:>{last}}"]
    for name, med, spread, vs_prev, vs_first in comparison_rows(report):
        st = med["stages"] or {}
        lines.append(f"{name:<{width}}{_seconds(st.get('pretokenize'), 13)}{_seconds(med['merge_phase'], 13)}"
                     f"{_seconds(st.get('select'), 12)}{_seconds(st.get('update'), 12)}{_seconds(med['total'], 10)}"
                     f"{spread:>14}{format_mb(med['peak_rss']['self']):>12}{vs_prev:>15}{vs_first:>{last}}")
    return "\n".join(lines)
