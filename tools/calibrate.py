"""``python -m tools.calibrate``: time small runs and set them beside the cost model's estimates.

Each point of :data:`POINTS` trains one variant on one corpus at one vocab in a fresh process with one
worker and takes its CPU time (children included: on a busy machine it stays close to the run's time
alone, where wall time does not).  ``docs/estimate-calibration.json`` records it beside
:func:`bpe.lab.measure.estimate.estimate_run`'s estimate and the corpus's shape, so a test re-estimates every
point without timing anything; a corpus not on this machine keeps its points.  Left out: repeats (the
model aims at a factor of 2) and more than one worker.

Example: ``python -m tools.calibrate --reestimate`` (the stored timings kept, every estimate made again).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from bpe.data.datasets import REPO_ROOT, resolve_data
from bpe.defaults import SPECIAL_TOKENS
from bpe.errors import BPEError
from bpe.lab.measure.estimate import CorpusShape, corpus_shape, estimate_run
from bpe.lab.measure.publish import write_json_atomic
from bpe.lab.rungs import RUNGS
from tools.command import tool_main

DEFAULT_OUT = REPO_ROOT / "docs" / "estimate-calibration.json"

#: The data sets the points are timed on, in the order they run: the smaller first, within a kind of text.
DATA_ORDER = ("gutenberg-sample", "gutenberg-books", "tinystories-synth-10MB", "tinystories-synth-50MB",
              "webtext-synth-2MB", "webtext-synth-20MB", "webtext-synth-100MB")
#: (data, variant, vocab size): each rung's runs as its row in the lab's table names them (``fitted_on``), each
#: a few seconds to a minute on one core, by data set, then in ladder order.
POINTS = sorted(((data, name, vocab) for name, row in RUNGS.items() for data, vocab in row.cost.fitted_on),
                key=lambda point: (DATA_ORDER.index(point[0]), list(RUNGS).index(point[1]), point[2]))


def estimate_point(point: dict) -> float:
    """The current model's seconds for a stored point (one worker, the stored shape)."""
    return estimate_run(point["variant"], CorpusShape(**point["shape"]), point["merges"], workers=1).seconds


def time_run(data: str, variant: str, vocab: int) -> float:
    """CPU seconds of ``bpe train`` in a fresh process (its pool's workers included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run([sys.executable, "-m", "bpe", "train", "--data", data, "--variant", variant,
                               "--vocab-size", str(vocab), "--workers", "1", "--quiet", "--force", "--out", out],
                              capture_output=True, text=True)
    if done.returncode:
        raise BPEError(f"calibration run {variant} on {data} at vocab {vocab} failed: {done.stderr.strip()[-300:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def with_estimate(point: dict) -> dict:
    estimated = estimate_point(point)
    return {**point, "estimated": round(estimated, 3), "ratio": round(estimated / point["measured"], 3)}


def calibrate(out: Path = DEFAULT_OUT, reestimate: bool = False, only: list[str] | None = None,
              missing: bool = False, log=sys.stdout) -> list[dict]:
    stored = json.loads(out.read_text())["points"] if out.exists() else []
    old = {(p["data"], p["variant"], p["vocab"]): p for p in stored}
    points, shapes = {}, {}
    for key in POINTS:
        data, variant, vocab = key
        path = None if reestimate or (only and data not in only) or (missing and key in old) else _path(data)
        if path is None:
            if key in old:
                points[key] = with_estimate(old[key])
            continue
        if data not in shapes:
            s = corpus_shape(path, SPECIAL_TOKENS)
            shapes[data] = {"bytes": s.bytes, "distinct_length": s.distinct_length, "distinct_words": s.distinct_words}
        p = points[key] = with_estimate({"data": data, "variant": variant, "vocab": vocab,
                                         "merges": vocab - 256 - len(SPECIAL_TOKENS), "shape": shapes[data],
                                         "measured": round(time_run(data, variant, vocab), 3)})
        print(f"{data} {variant} vocab {vocab:,}: measured {p['measured']:.1f} s CPU, "
              f"estimated {p['estimated']:.1f} s, ratio {p['ratio']:.2f}", file=log, flush=True)
        # written after every point: an interrupted calibration keeps what it measured
        _write(out, [*points.values(), *(p for k, p in old.items() if k not in points)])
    points = list(points.values())
    _write(out, points)
    worst = max(points, key=lambda p: max(p["ratio"], 1 / p["ratio"]))
    print(f"wrote {out}: {len(points)} points, ratios {min(p['ratio'] for p in points):.2f}-"
          f"{max(p['ratio'] for p in points):.2f} (worst {worst['variant']} on {worst['data']})", file=log)
    return points


def _write(out: Path, points: list[dict]) -> None:
    write_json_atomic(out, {"about": "CPU seconds of one-worker training runs (measured) beside the cost model "
                                     "(estimated, bpe/lab/measure/estimate.py); made by python -m tools.calibrate",
                            "points": points})


def _path(data: str) -> Path | None:
    """The corpus's file, or None where it is not on this machine (its stored points are kept)."""
    try:
        return resolve_data(data)
    except BPEError:
        return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.calibrate", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--data", action="append", help="time only this corpus's points (repeatable)")
    parser.add_argument("--missing", action="store_true", help="time only the points the file does not hold")
    parser.add_argument("--reestimate", action="store_true", help="keep the stored timings, redo the estimates")

    def run(args) -> None:
        calibrate(args.out, args.reestimate, args.data, args.missing)

    return tool_main(parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
