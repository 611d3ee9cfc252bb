"""The bench harness: train one or more variants on the same data and print the stage table.

Each repeat runs in a fresh Python process so that peak memory is that run's alone and no run
inherits another's heap.  The figures are the :class:`bpe.training.timer.StageTimer` stages:

* **pretokenize**: read + split on special tokens + GPT-2 regex + count (serial or pooled);
* **pair count**: build the variant's structures (words, initial pair counts, index, heap);
* **select** / **update**: summed over all merges;
* **merge phase**: pair count + select + update;
* **peak RSS**: the training process, and the largest pool worker.

Ratios between variants are only meaningful within one run of this harness (same machine, same
moment); compare them, not absolute seconds across machines.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

from bpe.io.datasets import REPO_ROOT, data_label, resolve_data
from bpe.errors import BPEError
from bpe.lab.fresh_process import child_result, run_json_child
from bpe.lab.peers import peers_table
from bpe.lab.runinfo import machine_info, merges_digest
from bpe.training.registry import VARIANTS, best_variant, get_variant

#: v1 is skipped in ``--variant all`` above this many (corpus bytes x merges): about a minute.
V1_WORK_LIMIT = 1.5e9


_CHILD_CODE = "from bpe.lab.bench import child_main; child_main()"


def child_main() -> None:
    """Entry point of one timed run (reads settings as JSON on stdin, writes results on stdout)."""
    from bpe.training.timer import StageTimer
    from bpe.training.train import train_bpe

    settings = json.load(sys.stdin)
    timer = StageTimer()
    try:
        _, merges = train_bpe(settings["path"], settings["vocab_size"], settings["special_tokens"],
                              variant=settings["variant"], workers=settings["workers"], timer=timer,
                              limit=settings.get("limit"))
    except BPEError as exc:
        json.dump({"error": str(exc)}, sys.stdout)
        return
    result = timer.as_dict()
    result["merges_sha256"] = merges_digest(merges)
    json.dump(result, sys.stdout)


def run_once(path: Path, variant: str, vocab_size: int, special_tokens: list[str], workers: int | None,
             limit: int | None = None) -> dict:
    settings = {"path": str(path), "variant": variant, "vocab_size": vocab_size,
                "special_tokens": special_tokens, "workers": workers, "limit": limit}
    result = child_result(run_json_child(_CHILD_CODE, settings), f"bench run of {variant}")
    if "error" in result:
        raise BPEError(result["error"])
    return result


def median_run(runs: list[dict]) -> dict:
    """Per-figure medians over the repeats (each figure's own median)."""
    def med(get):
        return statistics.median(get(r) for r in runs)

    stages = {name: med(lambda r, n=name: r["stages"][n]) for name in runs[0]["stages"]}
    checkpoints = [
        [merges, statistics.median(r["checkpoints"][i][1] for r in runs)]
        for i, (merges, _) in enumerate(runs[0]["checkpoints"])
    ]
    return {
        "stages": stages,
        "merge_phase": med(lambda r: r["merge_phase"]),
        "total": med(lambda r: r["total"]),
        "merges": runs[0]["merges"],
        "checkpoints": checkpoints,
        "peak_rss": {k: med(lambda r, k=k: r["peak_rss"][k]) for k in runs[0]["peak_rss"]},
        "merges_sha256": runs[0]["merges_sha256"],
    }


def parse_variants(spec: str | None) -> list[str]:
    if spec is None:
        return [best_variant()]
    if spec == "all":
        return list(VARIANTS)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    for name in names:
        get_variant(name)
    return names


def run_bench(variant_spec: str | None, data: str | None, vocab_size: int, repeat: int,
              special_tokens: list[str], workers: int | None, json_out: str | None = None,
              out=None, limit: int | str | None = None, peers: bool = False) -> dict:
    from bpe.training.train import check_special_tokens, check_vocab_size

    out = out or sys.stdout
    path = resolve_data(data)
    check_special_tokens(special_tokens)
    num_merges = check_vocab_size(vocab_size, special_tokens)
    if repeat < 1:
        raise BPEError(f"--repeat must be at least 1, got {repeat}")
    variant_names = parse_variants(variant_spec)
    file_bytes = path.stat().st_size
    if limit is not None:  # the subset's real end, so the table and JSON show the bytes trained on
        from bpe.training.sizes import parse_size
        from bpe.training.chunking import find_limit_end

        limit = parse_size(limit)
        corpus_bytes = find_limit_end(path, limit, special_tokens)
    else:
        corpus_bytes = file_bytes
    report = {
        "machine": machine_info(),
        "settings": {"data": data_label(data), "path": str(path), "corpus_bytes": corpus_bytes,
                     "file_bytes": file_bytes, "limit": limit,
                     "vocab_size": vocab_size, "num_merges": num_merges, "special_tokens": special_tokens,
                     "workers": workers or os.cpu_count(), "repeat": repeat},
        "variants": {},
        "skipped": {},
    }
    print(header(report), file=out)
    for name in variant_names:
        if variant_spec == "all" and name == "v1" and corpus_bytes * num_merges > V1_WORK_LIMIT:
            reason = (f"v1 skipped: {corpus_bytes:,} bytes x {num_merges:,} merges is past the naive "
                      f"variant's budget (~1 minute); run it alone with --variant v1")
            report["skipped"][name] = reason
            print(reason, file=out)
            continue
        runs = []
        for _ in range(repeat):
            runs.append(run_once(path, name, vocab_size, special_tokens, workers, limit))
        report["variants"][name] = {"idea": VARIANTS[name].IDEA, "runs": runs, "median": median_run(runs)}
        print(variant_table(name, runs), file=out)
    if len(report["variants"]) > 1:
        print(comparison_table(report), file=out)
    if peers:
        report["peers"] = run_peers(path, vocab_size, special_tokens, workers, repeat)
        print(peers_table(report["peers"], report["variants"]), file=out)
    digests = {v["median"]["merges_sha256"] for v in report["variants"].values()}
    report["merges_identical"] = len(digests) <= 1
    if len(digests) > 1:
        print("WARNING: variants produced different merges: "
              + ", ".join(f"{n}={v['median']['merges_sha256']}" for n, v in report["variants"].items()), file=out)
    if json_out:
        write_json_atomic(Path(json_out), report)
        print(f"\nwrote {json_out}", file=out)
    return report


def run_peers(path: Path, vocab_size: int, special_tokens: list[str], workers: int | None, repeat: int) -> dict:
    """Each peer's median over ``repeat`` fresh-process runs (see :mod:`bpe.lab.peers`)."""
    from bpe.lab.peers import PEERS, run_peer

    results = {}
    for name in PEERS:
        runs = []
        for _ in range(repeat):
            run = run_peer(name, path, vocab_size, special_tokens, workers)
            if "total" not in run:
                break
            runs.append(run)
        if not runs:
            results[name] = run
            continue
        results[name] = {"total": statistics.median(r["total"] for r in runs), "merges": runs[0]["merges"],
                         "peak_rss": statistics.median(r["peak_rss"] for r in runs), "runs": runs}
    return results


def write_json_atomic(path: Path, data: dict) -> None:
    from bpe.io.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def format_mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def header(report: dict) -> str:
    m, s = report["machine"], report["settings"]
    subset = f" of {s['file_bytes']:,}, --limit {s['limit']:,}" if s.get("limit") else ""
    return (f"bpe-lab bench: {s['data']} ({s['corpus_bytes']:,} bytes{subset}), vocab {s['vocab_size']:,} "
            f"({s['num_merges']:,} merges), special {s['special_tokens']}, workers {s['workers']}, "
            f"repeat {s['repeat']}\n"
            f"machine: {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}, commit {m['git_commit']}")


_COLUMNS = ("pretokenize", "pair count", "select", "update", "merge phase", "total", "peak RSS", "worker RSS")


def _row(label: str, r: dict) -> str:
    st = r["stages"]
    cells = [st["pretokenize"], st["pair_count"], st["select"], st["update"], r["merge_phase"], r["total"]]
    return (f"{label:<8}" + "".join(f"{c:>12.3f}s" for c in cells)
            + f"{format_mb(r['peak_rss']['self']):>13}{format_mb(r['peak_rss']['children']):>13}")


def variant_table(name: str, runs: list[dict]) -> str:
    lines = [f"\n{name}: {VARIANTS[name].IDEA}",
             f"{'run':<8}" + "".join(f"{c:>13}" for c in _COLUMNS)]
    lines += [_row(str(i + 1), r) for i, r in enumerate(runs)]
    med = median_run(runs)
    if len(runs) > 1:
        lines.append(_row("median", med))
    points = [f"{m:,}: {t:.2f}s" for m, t in med["checkpoints"]]
    lines.append("elapsed at merge   " + ", ".join(points))
    lines.append(f"merges: {med['merges']:,} (sha256 {med['merges_sha256']})")
    return "\n".join(lines)


def comparison_rows(report: dict) -> list[tuple[str, dict, str, str]]:
    """``(variant, medians, speed-up vs the previous variant, vs the first)`` in run order."""
    names = list(report["variants"])
    first = report["variants"][names[0]]["median"]
    rows, prev = [], None
    for name in names:
        med = report["variants"][name]["median"]
        vs_prev = f"{prev['total'] / med['total']:.2f}x" if prev else "-"
        rows.append((name, med, vs_prev, f"{first['total'] / med['total']:.2f}x"))
        prev = med
    return rows


def comparison_table(report: dict) -> str:
    first_name = next(iter(report["variants"]))
    lines = ["\ncomparison (medians; ratios are times, x = faster than)",
             f"{'variant':<8}{'pretokenize':>13}{'merge phase':>13}{'select':>12}{'update':>12}{'total':>10}"
             f"{'peak RSS':>12}{'vs prev':>9}{'vs ' + first_name:>9}"]
    for name, med, vs_prev, vs_first in comparison_rows(report):
        st = med["stages"]
        lines.append(f"{name:<8}{st['pretokenize']:>12.3f}s{med['merge_phase']:>12.3f}s{st['select']:>11.3f}s"
                     f"{st['update']:>11.3f}s{med['total']:>9.3f}s{format_mb(med['peak_rss']['self']):>12}"
                     f"{vs_prev:>9}{vs_first:>9}")
    return "\n".join(lines)
