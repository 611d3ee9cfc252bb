"""Compare merge algorithms alone: the build and every merge, on pre-token counts made once.

``bpe bench`` times whole runs, where the pre-tokenizer and a shared machine move the figures; v6's
tuning (docs/v6.md) ran each candidate (a variant, or a file defining ``Merger``) on the same saved
counts instead, each repeat in a new process, candidates taking turns::

    python -m tools.merge_cost v6 try.py --data gutenberg-books --instructions

The table shows the median and minimum CPU seconds of the build (the bench's pair count) and of the
merges, and the merges' digest, which every candidate must share.  ``--instructions`` also counts the
instructions of each child once under valgrind: they do not move between runs, so a change of a few
percent shows; they do not see cache misses, so a change is kept only if the seconds agree.

Example: ``python -m tools.merge_cost v5 v6 --data corpus-en --vocab-size 500 --repeat 3``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from time import process_time

from bpe.commands import arguments
from bpe.counting.parallel import count_file_parallel
from bpe.data.datasets import data_label, resolve_data
from bpe.errors import BPEError
from bpe.lab.fresh_process import child_result, lab_tempdir, run_json_child, write_result
from bpe.lab.judge.candidates import CandidateFailed, load_algorithm
from bpe.lab.judge.diagnose import merges_digest
from bpe.lab.measure.plan import check_repeat, in_turns, plan
from bpe.lab.measure.spread import summary
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.registry import VARIANTS
from tools.command import tool_main

_CHILD_CODE = "from tools.merge_cost import child_main; child_main()"
_INSTRUCTIONS = re.compile(r"I\s+refs:\s+([\d,]+)")


def load_merger(candidate: str):
    """The ``Merger`` class of a variant name (``v6``) or of a Python file that defines one
    (:func:`~bpe.lab.judge.candidates.load_algorithm` loads it); what is wrong with it, as one line."""
    try:
        return load_algorithm("variant" if candidate in VARIANTS else "merger", candidate).Merger
    except CandidateFailed as exc:
        raise BPEError(str(exc)) from None


def child_main() -> None:
    """One run: settings as JSON on stdin; build and merge, hand back the CPU seconds."""
    settings = json.load(sys.stdin)
    merger_class = load_merger(settings["candidate"])
    with open(settings["counts"], "rb") as f:
        counts = pickle.load(f)
    started = process_time()
    merger = merger_class(counts)
    built = process_time()
    merges = run_merges(merger, settings["num_merges"], NullTimer())
    write_result({"build": built - started, "merges": process_time() - built, "count": len(merges),
                  "merges_sha256": merges_digest(merges)})


def _run(candidate: str, counts_path: Path, num_merges: int, prefix: Sequence[str] = ()):
    settings = {"candidate": candidate, "counts": str(counts_path), "num_merges": num_merges}
    proc = run_json_child(_CHILD_CODE, settings, prefix=prefix)
    return child_result(proc, f"merge-cost run of {candidate}"), proc.stderr


def instructions(candidate: str, counts_path: Path, num_merges: int) -> int:
    """Instructions executed by one run of ``candidate`` in a child process, counted by valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise BPEError("--instructions needs valgrind on PATH (e.g. apt-get install valgrind)")
    _, stderr = _run(candidate, counts_path, num_merges,
                     prefix=[valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"])
    found = _INSTRUCTIONS.search(stderr)
    if found is None:
        raise BPEError(f"valgrind printed no instruction count for {candidate}:\n{stderr.strip()[-1000:]}")
    return int(found.group(1).replace(",", ""))


def run_merge_cost(candidates: Sequence[str], data: str | None, vocab_size: int, special_tokens: Sequence[str],
                   repeat: int, workers: int | None = None, count_instructions: bool = False,
                   limit: int | str | None = None, out=None, progress: bool = False) -> dict:
    """Time every candidate on the same counts; print a table and return the figures."""
    out = out or sys.stdout
    if not candidates:
        raise BPEError("name at least one candidate: a variant (v6) or a file defining Merger")
    check_repeat(repeat)
    for candidate in candidates:
        load_merger(candidate)  # a bad name or file fails now, not after counting
    p = plan(resolve_data(data), vocab_size, special_tokens, workers, limit)
    special_tokens, num_merges = p.special_tokens, p.merges
    counts = dict(count_file_parallel(p.path, special_tokens, workers=workers, end=p.end))
    with lab_tempdir("merge-cost") as tmp:
        counts_path = Path(tmp) / "counts.pickle"
        counts_path.write_bytes(pickle.dumps(counts, protocol=pickle.HIGHEST_PROTOCOL))

        def run_one(candidate: str, i: int) -> dict:
            run = _run(candidate, counts_path, num_merges)[0]
            if progress:
                print(f"  {candidate} run {i + 1}/{repeat}: build {run['build']:.2f}s, merges {run['merges']:.2f}s",
                      file=sys.stderr, flush=True)
            return run

        results = {candidate: {"runs": runs, "build": summary([r["build"] for r in runs]),
                               "merges": summary([r["merges"] for r in runs]),
                               "merges_sha256": runs[0]["merges_sha256"], "merges_made": runs[0]["count"]}
                   for candidate, runs in in_turns(candidates, repeat, run_one).items()}
        if count_instructions:
            for candidate in candidates:
                results[candidate]["instructions"] = instructions(candidate, counts_path, num_merges)
    print(f"merge cost: {data_label(data)}, vocab {vocab_size:,} ({num_merges:,} merges), "
          f"special {list(special_tokens)}, {len(counts):,} distinct pre-tokens, repeat {repeat}; "
          f"CPU seconds, median / min", file=out)
    print(f"{'candidate':<28}{'build':>16}{'merges':>16}{'instructions':>15}  merges sha256", file=out)
    for candidate, result in results.items():
        shown = f"{result['instructions'] / 1e9:.3f} G" if "instructions" in result else "-"
        print(f"{candidate:<28}{result['build']['median']:>8.3f} / {result['build']['min']:.3f}"
              f"{result['merges']['median']:>8.3f} / {result['merges']['min']:.3f}{shown:>15}  "
              f"{result['merges_sha256']}", file=out)
    digests = {result["merges_sha256"] for result in results.values()}
    if len(digests) > 1:
        raise BPEError("the candidates' merges differ: "
                       + ", ".join(f"{c}={r['merges_sha256']}" for c, r in results.items()))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.merge_cost",
                                     description="compare merge algorithms alone (build + merges) on the same "
                                                 "pre-token counts, for tuning")
    parser.add_argument("candidates", nargs="+", metavar="CANDIDATE",
                        help="a variant name (v6) or the path of a file that defines Merger")
    arguments.add_training_args(parser, guarded=False)
    parser.add_argument("--repeat", type=int, default=5, help="runs per candidate, taking turns (default 5)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each candidate's instructions once under valgrind (deterministic)")

    def run(args) -> None:
        arguments.check_workers(args)
        run_merge_cost(args.candidates, args.data, arguments.vocab_size(args), arguments.special_tokens(args),
                       args.repeat, args.workers, count_instructions=args.instructions, limit=args.limit,
                       progress=arguments.show_progress(args))

    return tool_main(parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
