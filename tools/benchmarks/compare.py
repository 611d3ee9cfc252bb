"""Two saved runs of the suite side by side: pytest-benchmark's own table, histogram and regression check.

``make benchmark`` saves each run in ``.benchmarks/<machine>/NNNN_<commit>_<date>.json``; this finds two
of them and hands them to ``pytest-benchmark compare`` (one table per regime, the rungs in ladder order).
``--fail median:10%`` applies pytest-benchmark's own ``--benchmark-compare-fail`` check (the same
parser and the same rule) to the later run against the earlier one, and exits with status 1 past it::

    python -m tools.benchmarks.compare                          # the last two saved runs
    python -m tools.benchmarks.compare 0001 0003                # two named ones (numbers, or paths of their JSON)
    python -m tools.benchmarks.compare --fail median:10%        # fail when a median grew by more than 10%
    python -m tools.benchmarks.compare --histogram out/benchmarks/compare   # an SVG per regime
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

STORAGE = Path(__file__).resolve().parents[1] / ".benchmarks"
#: The table's columns and order: one regime's ladder in rung order, then the peers.
TABLE = ["--group-by", "group", "--sort", "name", "--columns", "median,min,max,iqr,rounds"]


class CompareError(Exception):
    """What is wrong with the runs asked for: one line."""


def saved_runs(storage: Path = STORAGE) -> list[Path]:
    """Every saved run, oldest first (by the time each was saved)."""
    runs = list(storage.glob("*/[0-9][0-9][0-9][0-9]_*.json"))
    return sorted(runs, key=lambda path: (json.loads(path.read_text(encoding="utf-8")).get("datetime", ""), path.name))


def find_run(name: str, storage: Path = STORAGE) -> Path:
    """A saved run named by its number (``0002`` or ``2``) or by the path of its JSON."""
    if Path(name).is_file():
        return Path(name)
    if not name.isdigit():
        raise CompareError(f"no saved run {name!r}: name one by its number (0001) or the path of its JSON")
    found = sorted(storage.glob(f"*/{int(name):04d}_*.json"))
    if len(found) != 1:
        where = ", ".join(str(p) for p in found) if found else f"none in {storage}"
        raise CompareError(f"saved run {int(name):04d}: {len(found)} files match ({where}); name its JSON instead")
    return found[0]


def pick_runs(names: list[str], storage: Path = STORAGE) -> tuple[Path, Path]:
    """The two runs to compare, earlier first: the two named, or the last two saved."""
    if names:
        if len(names) != 2:
            raise CompareError(f"name two saved runs to compare, not {len(names)}")
        return find_run(names[0], storage), find_run(names[1], storage)
    runs = saved_runs(storage)
    if len(runs) < 2:
        raise CompareError(f"{len(runs)} saved run(s) in {storage}: make benchmark saves one per run; run it twice")
    return runs[-2], runs[-1]


def shown(path: Path) -> str:
    """``path`` relative to the current folder when inside it (``.benchmarks/...``)."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _benchmarks(path: Path) -> dict[str, dict]:
    return {bench["fullname"]: bench for bench in json.loads(path.read_text(encoding="utf-8"))["benchmarks"]}


def _setting(bench: dict) -> tuple:
    """What a benchmark trained on: its data and vocab size (``extra_info``)."""
    info = bench.get("extra_info", {})
    return info.get("data"), info.get("vocab_size")


def regressions(before: Path, after: Path, threshold: str) -> tuple[list[str], list[str]]:
    """``after``'s benchmarks past ``threshold`` against ``before`` (pytest-benchmark's checks, e.g.
    ``median:10%`` or ``min:0.05`` seconds), and the benchmarks not compared because their data or vocab differ."""
    from pytest_benchmark.utils import PercentageRegressionCheck, parse_compare_fail

    try:
        check = parse_compare_fail(threshold)
    except argparse.ArgumentTypeError as exc:
        raise CompareError(f"threshold {threshold!r}: {exc}; e.g. median:10% or min:0.05 (seconds)") from None
    old, new = _benchmarks(before), _benchmarks(after)
    failed, skipped = [], []
    for name in sorted(old.keys() & new.keys()):
        was, now = old[name], new[name]
        if _setting(was) != _setting(now):
            skipped.append(now["name"])
            continue
        if check.fails(now["stats"], was["stats"]):
            grew = check.compute(now["stats"], was["stats"])
            growth = f"{grew:+.1f}%" if isinstance(check, PercentageRegressionCheck) else f"{grew:+.4f}s"
            failed.append(f"{now['name']}: {check.field} {was['stats'][check.field]:.4f}s -> "
                          f"{now['stats'][check.field]:.4f}s ({growth})")
    return failed, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.compare", description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", help="two saved runs (numbers or JSON paths); default: the last two")
    parser.add_argument("--fail", metavar="FIELD:LIMIT", help="exit 1 past this, as --benchmark-compare-fail")
    parser.add_argument("--histogram", metavar="PREFIX", help="write PREFIX-<group>.svg (needs pygal: .[dev])")
    args = parser.parse_args(argv)
    try:
        before, after = pick_runs(args.runs)
        if args.histogram and (find_spec("pygal") is None or find_spec("pygaljs") is None):
            raise CompareError("the histogram needs pygal and pygaljs: .venv/bin/pip install -e '.[dev]'")
        failed, skipped = regressions(before, after, args.fail) if args.fail else ([], [])
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"comparing {shown(before)} (earlier) with {shown(after)}", flush=True)
    histogram = ["--histogram", args.histogram] if args.histogram else []
    table = subprocess.run([sys.executable, "-m", "pytest_benchmark", "compare", *TABLE, *histogram,
                            str(before), str(after)])
    if table.returncode != 0:
        return table.returncode
    if skipped:
        print(f"not checked, their data or vocab differ between the runs: {', '.join(skipped)}")
    if failed:
        print(f"past {args.fail} (pytest-benchmark's --benchmark-compare-fail rule), later run against earlier:\n  "
              + "\n  ".join(failed))
        return 1
    if args.fail:
        print(f"no benchmark past {args.fail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
