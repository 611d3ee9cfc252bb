"""``bpe train`` against a peer's own process, each a whole process: start-up and imports counted, as a user
running a command waits for them.

The bench times a run from inside a fresh process, after its imports (``bpe bench``'s ``total``): the figure
that compares the ladder's ideas.  A user types a command, and waits for the interpreter, the imports, the
first call's set-up (the class tables, the threads) too.  This tool runs ``bpe train`` and a peer's training
as commands, in turns (A, B, A, B, ...: a drift of the machine's speed hits both), and reports each one's
wall seconds and peak resident memory (its whole process tree, sampled) over the runs, with the ratio pair
by pair.  ``--first-call`` also times, inside one process, the imports, a first ``train_bpe`` and a second
on a tiny text: what the first call costs more than the second is the fixed cost a command pays once.

A peer is asked for as many merges as ours (:func:`bpe.lab.measure.peers.peer_vocab_size`), from the file,
with the same threads; ``--busy N`` keeps N cores busy meanwhile (:mod:`bpe.lab.measure.busy`).

Example: ``python -m tools.whole_process --data gutenberg-books --peer gigabpe --repeat 5 --workers 2``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

from bpe.data.datasets import REPO_ROOT, data_label, default_vocab_size, resolve_data
from bpe.defaults import SPECIAL_TOKEN
from bpe.errors import BPEError
from bpe.lab.measure.busy import parse_busy, spin_on_cores
from bpe.lab.measure.peers import PEERS, peer_vocab_size
from bpe.lab.measure.publish import machine_info, write_json_atomic
from bpe.lab.measure.spread import compare, summary
from tools.command import tool_main
from tools.sample_memory import tree_rss_bytes

#: How often a run's process tree is sampled for its resident memory.
SAMPLE_SECONDS = 0.02
#: The tiny text the first call is timed on: its work is a few milliseconds, so what is left is the fixed cost.
FIRST_CALL_TEXT = REPO_ROOT / "tests" / "fixtures" / "corpus.en"
FIRST_CALL = """
import json, sys, time
started = time.perf_counter()
from bpe import train_bpe
imported = time.perf_counter()
train_bpe(sys.argv[1], 300, ["<|endoftext|>"], variant=sys.argv[2] or None, workers=int(sys.argv[3]))
first = time.perf_counter()
train_bpe(sys.argv[1], 300, ["<|endoftext|>"], variant=sys.argv[2] or None, workers=int(sys.argv[3]))
second = time.perf_counter()
print(json.dumps({"imports": imported - started, "first": first - imported, "second": second - first}))
"""


def ours(path: Path, vocab_size: int, workers: int, variant: str | None) -> list[str]:
    """``bpe train`` as a user types it (quiet: no progress bar to draw)."""
    argv = [sys.executable, "-m", "bpe", "train", "--data", str(path), "--vocab-size", str(vocab_size),
            "--workers", str(workers), "--quiet", "--force"]
    return argv + (["--variant", variant] if variant else [])


def peer(name: str, path: Path, vocab_size: int, workers: int) -> list[str]:
    """The peer's own training, as its own Python process: its import, its read of the file, its merges."""
    vocab = peer_vocab_size(name, path, vocab_size, [SPECIAL_TOKEN])
    if name == "gigabpe":
        code = (f"import gigabpe; gigabpe.train_bpe([{str(path)!r}], {vocab}, special_tokens=[{SPECIAL_TOKEN!r}], "
                f"pretokenizer='bytelevel', threads={workers})")
    elif name == "rustbpe":
        code = ("import rustbpe, regex; from bpe.split.patterns import GPT2_PATTERN, split_on_special_tokens; "
                f"text = open({str(path)!r}, encoding='utf-8').read(); t = rustbpe.Tokenizer(); "
                f"t.train_from_iterator(iter(split_on_special_tokens(text, [{SPECIAL_TOKEN!r}])), {vocab - 1}, "
                "pattern=GPT2_PATTERN)")
    else:
        raise BPEError(f"--peer is gigabpe or rustbpe, got {name!r}")
    return [sys.executable, "-c", code]


def timed(argv: list[str], env: dict[str, str]) -> dict:
    """One run of ``argv``: its wall seconds and the peak resident memory of its process tree."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=REPO_ROOT)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_bytes(proc.pid))
        time.sleep(SAMPLE_SECONDS)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise BPEError(f"{' '.join(argv[:4])} ... failed (exit {proc.returncode}): {proc.stderr.read()[-300:]}")
    return {"seconds": seconds, "peak_tree_rss": peak}


def first_call(variant: str | None, workers: int = 2) -> dict:
    """The imports, a first ``train_bpe`` and a second, timed inside one fresh process on a tiny text, with
    ``workers`` given as the commands are given it (none given, each call would first look at what the cores
    do for 0.05 s: :func:`bpe.running.cores.measure_busy_cores`)."""
    done = subprocess.run([sys.executable, "-c", FIRST_CALL, str(FIRST_CALL_TEXT), variant or "", str(workers)],
                          capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    if done.returncode != 0:
        raise BPEError(f"the first-call run failed: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout)


def measure(path: Path, vocab_size: int, workers: int, repeat: int, names: list[str], variant: str | None,
            busy: int = 0) -> dict:
    """Each command run ``repeat`` times in turns; the figures of each, and of ours against each peer."""
    env = {**os.environ, "RAYON_NUM_THREADS": str(workers)}
    commands = {"bpe train": ours(path, vocab_size, workers, variant),
                **{name: peer(name, path, vocab_size, workers) for name in names}}
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    with spin_on_cores(busy):
        for _ in range(repeat):
            for name, argv in commands.items():
                runs[name].append(timed(argv, env))
    figures = {name: {"seconds": summary([r["seconds"] for r in rs]),
                      "peak_tree_rss": summary([r["peak_tree_rss"] for r in rs]), "runs": rs,
                      "command": argv if name == "bpe train" else None}
               for (name, rs), argv in zip(runs.items(), commands.values())}
    ours_seconds = [r["seconds"] for r in runs["bpe train"]]
    against = {name: {"ratio": compare([r["seconds"] for r in runs[name]], ours_seconds),
                      "pairs": [a["seconds"] / b["seconds"] for a, b in zip(runs["bpe train"], runs[name])]}
               for name in names}
    return {"figures": figures, "ours_against": against}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.whole_process", description=__doc__.split("\n")[0])
    p.add_argument("--data", default="gutenberg-books", help="data set name or file (default gutenberg-books)")
    p.add_argument("--vocab-size", type=int, default=None, help="default: the data set's")
    p.add_argument("--variant", default=None, help="ours: a rung (default: the fastest built)")
    p.add_argument("--peer", action="append", default=None, choices=["gigabpe", "rustbpe"],
                   help="the peer's own process beside ours (repeatable; default gigabpe)")
    p.add_argument("--workers", type=int, default=2, help="threads or processes of every run (default 2)")
    p.add_argument("--repeat", type=int, default=5, help="runs of each, in turns (default 5)")
    p.add_argument("--busy", default="0", metavar="N", help="N other processes each spinning on a core")
    p.add_argument("--first-call", action="store_true", help="also time the first call's fixed cost, in-process")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="write every figure as JSON to OUT")
    return p


def run(args: argparse.Namespace) -> int:
    path = Path(resolve_data(args.data))
    vocab_size = args.vocab_size or default_vocab_size(args.data)
    names = args.peer or ["gigabpe"]
    missing = [name for name in names if find_spec(PEERS[name]) is None]
    if missing:
        raise BPEError(f"{', '.join(missing)} is not installed: .venv/bin/pip install -e '.[peers]'")
    busy, _ = parse_busy(args.busy)
    result = {"settings": {"data": data_label(args.data), "path": str(path), "vocab_size": vocab_size,
                           "workers": args.workers, "repeat": args.repeat, "busy": busy, "variant": args.variant},
              "machine": machine_info(), **measure(path, vocab_size, args.workers, args.repeat, names, args.variant,
                                                   busy)}
    if args.first_call:
        calls = [first_call(args.variant, args.workers) for _ in range(args.repeat)]
        result["first_call"] = {key: summary([c[key] for c in calls]) for key in calls[0]}
        result["first_call"]["fixed"] = summary([c["first"] - c["second"] for c in calls])
    for name, figure in result["figures"].items():
        s, m = figure["seconds"], figure["peak_tree_rss"]
        print(f"{name:10} {s['median']:.2f} s ({s['min']:.2f}-{s['max']:.2f}), peak {m['median'] / 1e6:,.0f} MB")
    for name, against in result["ours_against"].items():
        print(f"bpe train against {name}: {against['ratio']['verdict']} (median; pairs "
              f"{min(against['pairs']):.2f}-{max(against['pairs']):.2f}x its time)")
    if args.first_call:
        fc = result["first_call"]
        print(f"first call: imports {fc['imports']['median']:.3f} s, first {fc['first']['median']:.3f} s, second "
              f"{fc['second']['median']:.3f} s: fixed cost {fc['fixed']['median']:.3f} s")
    if args.json:
        write_json_atomic(args.json, result)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(tool_main(parser(), run))
