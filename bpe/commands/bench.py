"""``bpe bench``: each stage of training timed, candidates side by side (:mod:`bpe.lab.measure.bench`); the exit
status says whether every run's merges are the reference's (:mod:`bpe.lab.judge.correctness`).
"""

from __future__ import annotations

from bpe.commands.arguments import bench_settings
from bpe.lab.judge.correctness import all_correct
from bpe.lab.measure.bench import run_bench


def run(args) -> int:
    """The command, from its parsed arguments: 0 when every run is right, 1 otherwise."""
    return 0 if all_correct(run_bench(bench_settings(args))) else 1
