"""A command's memory over time: the resident memory of its whole process tree, sampled as it runs.

``getrusage`` gives each process's own peak, and the peaks of a parent and its workers need not have
come at the same moment, so their sum overstates the tree's peak; a run that holds its counts in one
process (v9) has one peak, but a reader should not have to take that on trust.  This samples the sum
of the tree's resident memory (``/proc/PID/status``, ``VmRSS``, of the command and every descendant)
every ``--every`` seconds, and writes the samples, their peak and the command's exit status as JSON.
Linux only (it reads ``/proc``).

Example: ``python -m tools.sample_memory --out run-memory.json -- bpe train --data corpus-en``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def tree_rss_bytes(root: int) -> int:
    """The resident bytes of ``root`` and every process under it, now (0 for a process already gone)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parent = int(f.read().rsplit(b")", 1)[1].split()[1])  # field 4, after the name
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:")), 0)
        except OSError:
            pass
    return total


def sample(argv: list[str], every: float = 0.5) -> dict:
    """Run ``argv``, sampling its tree's resident memory every ``every`` seconds until it ends."""
    started = time.monotonic()
    proc = subprocess.Popen(argv)
    samples: list[tuple[float, int]] = []
    try:
        while proc.poll() is None:
            samples.append((round(time.monotonic() - started, 2), tree_rss_bytes(proc.pid)))
            try:
                proc.wait(timeout=every)
            except subprocess.TimeoutExpired:
                pass
    except BaseException:
        proc.terminate()
        proc.wait()
        raise
    return {"command": argv, "returncode": proc.returncode, "seconds": round(time.monotonic() - started, 2),
            "every": every, "peak_tree_rss": max((rss for _, rss in samples), default=0), "samples": samples}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sample_memory", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between two samples (default 0.5)")
    parser.add_argument("command", nargs="+", help="the command to run, after --")
    args = parser.parse_args(argv)
    result = sample(args.command, args.every)
    args.out.write_text(json.dumps(result) + "\n")
    print(f"peak of the process tree: {result['peak_tree_rss'] / 1e9:.2f} GB over {result['seconds']:.0f} s "
          f"({len(result['samples'])} samples); {args.out}", file=sys.stderr)
    return result["returncode"]


if __name__ == "__main__":
    sys.exit(main())
