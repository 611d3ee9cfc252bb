"""How the fast pre-tokenizer compares with the plain regex, per kind of text.

The fast pre-tokenizer (:mod:`bpe.split.fast`; v6 and v7) must never lose to the plain
definition it replaces.  This times both on one sample of each kind of text, ``--repeat`` times each,
alternating, checks they give the same counts, and writes the seconds, the ratio of the best of each
and the spread of the paired ratios, which docs/v6.md quotes: **plain** is
:func:`~bpe.counting.plain.count_text` on the whole decoded text (v1-v5's counter), **fast** the
pretokenize stage of v6 and v7 with one worker (:func:`~bpe.counting.parallel.count_file_parallel_fast`),
and, where v9 is built, **compiled** its scanner with one thread (``count_pretokens`` of
``variants/v9_counting_compiled.py``), with ``compiled_vs_fast``, how many times faster it is than fast.
The samples are made deterministically under ``data/`` by :mod:`tools.text_kinds` (web text, books,
other scripts, mixed scripts, emoji, combining marks, digits, whitespace), and ``wikipedia`` is read
from ``--wikipedia PATH`` (e.g. WikiText-2) when given or found::

    python -m tools.pretokenize_ratio --size 16MB --repeat 3 --json docs/pretokenize-ratio.json

It leaves out the pooled stage (2 or more workers: see docs/v3.md) and any timing of the merges.

Example: ``python -m tools.pretokenize_ratio --size 1MB --repeat 1 --kinds webtext,books --json /tmp/r.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bpe.counting.parallel import count_file_parallel_fast
from bpe.counting.plain import count_text
from bpe.data.datasets import REPO_ROOT, shown_path
from bpe.errors import BPEError
from bpe.lab.measure.plan import check_repeat
from bpe.lab.measure.publish import machine_info, write_json_atomic
from bpe.lab.measure.spread import range_text, ratio_text, summary
from bpe.running.sizes import parse_size
from bpe.variants import v9_counting_compiled
from tools.command import tool_main
from tools.text_kinds import KINDS, SEPARATOR, make_sample, sources

#: Where a Wikipedia text is looked for when --wikipedia is not given (the project's shared data).
WIKIPEDIA_CANDIDATES = (REPO_ROOT.parent / "shared" / "data" / "wikitext2.txt",)


def find_wikipedia(path: str | None) -> Path | None:
    if path is not None:
        if not Path(path).is_file():
            raise BPEError(f"--wikipedia: no such file: {path}")
        return Path(path)
    return next((p for p in WIKIPEDIA_CANDIDATES if p.is_file()), None)


def count_plain(path: Path):
    return count_text(path.read_bytes().decode("utf-8"), [SEPARATOR])


def count_fast(path: Path):
    return count_file_parallel_fast(path, [SEPARATOR], workers=1)


def count_compiled(path: Path):
    """v9's counts, as the arrays its merge takes (the check turns them into a dict, untimed)."""
    return v9_counting_compiled.count_pretokens(path, [SEPARATOR], workers=1)


def compiled_built() -> bool:
    return v9_counting_compiled.UNAVAILABLE is None


def measure(path: Path, repeat: int) -> dict:
    """Both counters on ``path``, ``repeat`` times each, alternating, each going first in turn (the
    second of two runs can gain or lose from what the first left in memory).

    ``plain_s``, ``fast_s`` and ``ratio`` are the best of each; ``pair_ratios`` summarize each run's
    fast over its plain (``min``, ``median``, ``max``): their spread says how far the machine's noise reaches.
    """
    counters = (("plain", count_plain), ("fast", count_fast)) + ((("compiled", count_compiled),)
                                                                 if compiled_built() else ())
    runs: dict[str, list[float]] = {name: [] for name, _ in counters}
    for run in range(repeat):
        results = {}
        for name, count in counters if run % 2 == 0 else counters[::-1]:  # each goes first in turn
            start = time.perf_counter()
            results[name] = count(path)
            runs[name].append(time.perf_counter() - start)
        for name in results:
            if run == 0 and dict(results[name]) != results["plain"]:
                raise BPEError(f"{path}: the {name} pre-tokenizer's counts differ from the plain pattern's")
        del results
    text = path.read_bytes().decode("utf-8")
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    pairs = summary([fast / plain for plain, fast in zip(runs["plain"], runs["fast"])])
    figures = {"path": shown_path(path), "bytes": path.stat().st_size,
               "non_ascii_chars_pct": round(100 * non_ascii / max(len(text), 1), 3),
               "plain_s": round(min(runs["plain"]), 6), "fast_s": round(min(runs["fast"]), 6),
               "ratio": round(min(runs["fast"]) / min(runs["plain"]), 4),
               "plain_runs_s": [round(s, 6) for s in runs["plain"]], "fast_runs_s": [round(s, 6) for s in runs["fast"]],
               "pair_ratios": {key: round(value, 4) for key, value in pairs.items()}}
    if "compiled" in runs:
        figures.update({"compiled_s": round(min(runs["compiled"]), 6),
                        "compiled_runs_s": [round(s, 6) for s in runs["compiled"]],
                        "compiled_vs_fast": round(min(runs["fast"]) / min(runs["compiled"]), 2)})
    return figures


def shown(kind: str, figures: dict) -> str:
    """One line of the report: both counters' best, the ratio, and the spread of the paired ratios."""
    pairs, n = figures["pair_ratios"], len(figures["plain_runs_s"])
    spread = f", pairs {range_text([pairs['min'], pairs['max']])} over {n} runs" if n > 1 else ""
    compiled = (f"; compiled {figures['compiled_s']:.3f} s, {ratio_text(figures['compiled_vs_fast'])} than fast"
                if "compiled_s" in figures else "")
    return (f"{kind:>10}: plain {figures['plain_s']:.3f} s, fast {figures['fast_s']:.3f} s, "
            f"the fast one {ratio_text(1 / figures['ratio'])} (time ratio {figures['ratio']:.2f}x{spread}; "
            f"{figures['non_ascii_chars_pct']} % non-ASCII){compiled}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pretokenize_ratio", description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="16MB", help="bytes per sample (default 16MB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each counter per sample; the best counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma list of kinds (default: {','.join(KINDS)})")
    parser.add_argument("--wikipedia",
                        help="a Wikipedia text for the 'wikipedia' kind (default: the shared WikiText-2)")
    parser.add_argument("--json", default="out/pretokenize-ratio.json", help="where to write the results")

    def run(args) -> None:
        size = parse_size(args.size, "--size")
        check_repeat(args.repeat, args.json)
        wanted = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
        unknown = [kind for kind in wanted if kind not in KINDS]
        if unknown:
            raise BPEError(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
        available = sources(find_wikipedia(args.wikipedia))
        command = "python -m tools.pretokenize_ratio " + " ".join(argv if argv is not None else sys.argv[1:])
        result = {"command": command, "machine": machine_info(), "size": size, "repeat": args.repeat, "kinds": {}}
        for kind in wanted:
            if kind not in available:
                print(f"{kind:>10}: skipped (no file; pass --wikipedia PATH)", flush=True)
                continue
            figures = measure(make_sample(kind, available[kind], size), args.repeat)
            result["kinds"][kind] = figures
            print(shown(kind, figures), flush=True)
        write_json_atomic(Path(args.json), result)
        print(f"wrote {Path(args.json)}")

    return tool_main(parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
