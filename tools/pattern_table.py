"""The two tables of docs/patterns.md, measured: how fast each pattern counts, and how many tokens a byte
costs with a vocab trained on it.

* **Counting speed.** Each pattern (GPT-2's, cl100k, o200k and a custom regex) counts each text with the
  plain counter (``regex.findall`` in this process: :func:`bpe.counting.plain.count_file_serial`, what v1-v8
  count any pattern but GPT-2's with) and with the default rung's compiled counter on 1 and on ``--workers``
  threads (a scanner for the named patterns, ``regex`` on threads for the custom one).  MB/s of the text's
  bytes, the median of ``--repeat`` runs taken in turns, and the compiled counter's speed-up over the plain
  one's, so that the page reads the aims off the file: each named pattern at least 3x the plain counter, a
  custom regex at least 1.7x on 2 threads what it is on 1.
* **Tokens per byte.** For each text, a tokenizer trained with each pattern on the text's first nine tenths
  (to a document's start, or a blank line; Gutenberg-like at vocab 10,000, web-like at 32,000), then the last
  tenth, which none of them saw, encoded by it: tokens per byte of that tenth.  A smaller figure packs more
  text into a model's context.

Example: ``python -m tools.pattern_table --json docs/patterns-measured.json``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bpe.counting.plain import count_file_serial
from bpe.data.datasets import data_label, resolve_data
from bpe.defaults import SPECIAL_TOKEN
from bpe.errors import BPEError
from bpe.io.tokenizer import Tokenizer
from bpe.lab.measure.publish import stamp, write_json_atomic
from bpe.split.patterns import pattern_name
from bpe.training.registry import best_variant, get_variant
from bpe.training.train import train_bpe
from tools.command import tool_main

#: The custom regex of the tables: words, runs of punctuation and runs of whitespace, each on its own.
CUSTOM = r"\w+|[^\w\s]+|\s+"
PATTERNS = ("gpt2", "cl100k", "o200k", CUSTOM)
#: Each text's name on the page, its data set and the vocab it is trained to.
TEXTS = {"books": ("gutenberg-books", 10_000), "web": ("webtext-synth-20MB", 32_000)}
#: The share of each text a tokenizer is trained on; the rest is encoded.
TRAINED_SHARE = 0.9


def seconds_to_count(count, path: Path, pattern: str, workers: int) -> float:
    """One count of the whole file, timed; the counts are let go before the next."""
    started = time.perf_counter()
    counts = count(path, [SPECIAL_TOKEN], workers=workers, pattern=pattern)
    took = time.perf_counter() - started
    close = getattr(counts, "close", None)
    if close is not None:
        close()
    return took


def counting_speed(path: Path, repeat: int, workers: int) -> dict:
    """Each pattern's MB/s with the plain counter and the compiled one on 1 and ``workers`` threads, runs in turns."""
    compiled = get_variant(best_variant()).count_pretokens
    ways = {"plain": (count_file_serial, 1), "compiled_1": (compiled, 1), f"compiled_{workers}": (compiled, workers)}
    size = path.stat().st_size
    times = {(pattern_name(p), way): [] for p in PATTERNS for way in ways}
    for _ in range(repeat):
        for pattern in PATTERNS:
            for way, (count, threads) in ways.items():
                times[pattern_name(pattern), way].append(seconds_to_count(count, path, pattern, threads))
    speed = {}
    for pattern in PATTERNS:
        name = pattern_name(pattern)
        rates = {way: size / 1e6 / statistics.median(times[name, way]) for way in ways}
        speed[name] = {"mb_per_s": rates, "runs_seconds": {way: times[name, way] for way in ways},
                       "compiled_over_plain": rates[f"compiled_{workers}"] / rates["plain"],
                       "threads_speedup": rates[f"compiled_{workers}"] / rates["compiled_1"]}
    return speed


def split_at(path: Path, share: float) -> int:
    """Where the file is cut into trained and held-out text: the first document's start (its special token) at
    or after ``share`` of its bytes, or the first blank line there where it has no special tokens (books)."""
    data = path.read_bytes()
    start = int(len(data) * share)
    for mark in (SPECIAL_TOKEN.encode(), b"\n\n"):
        at = data.find(mark, start)
        if at != -1:
            return at
    raise BPEError(f"{path}: no document start or blank line after {share:.0%} of it to cut at")


def tokens_per_byte(path: Path, vocab_size: int, workers: int) -> dict:
    """Each pattern's tokenizer trained on the file up to :func:`split_at`, and its tokens per byte on the rest."""
    cut = split_at(path, TRAINED_SHARE)
    data = path.read_bytes()
    held_out, held_bytes = data[cut:].decode("utf-8"), len(data) - cut
    figures = {}
    with tempfile.TemporaryDirectory(prefix="bpe-patterns-") as folder:
        trained = Path(folder) / "trained.txt"
        trained.write_bytes(data[:cut])
        del data
        for pattern in PATTERNS:
            vocab, merges = train_bpe(trained, vocab_size, [SPECIAL_TOKEN], workers=workers, pattern=pattern)
            ids = Tokenizer(vocab, merges, [SPECIAL_TOKEN], pattern=pattern).encode(held_out, allowed_special="all")
            figures[pattern_name(pattern)] = {"tokens": len(ids), "tokens_per_byte": len(ids) / held_bytes}
    return {"trained_bytes": cut, "held_out_bytes": held_bytes, "vocab_size": vocab_size,
            "patterns": figures}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.pattern_table", description=__doc__.split("\n")[0])
    p.add_argument("--workers", type=int, default=2, help="threads of the compiled counter's second figure (default 2)")
    p.add_argument("--repeat", type=int, default=3, help="counts of each, in turns (default 3)")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="write every figure as JSON to OUT")
    return p


def run(args: argparse.Namespace) -> int:
    result = {**stamp(), "settings": {"workers": args.workers, "repeat": args.repeat, "custom": CUSTOM,
                                      "rung": best_variant(), "trained_share": TRAINED_SHARE}, "texts": {}}
    for text, (data, vocab_size) in TEXTS.items():
        path = Path(resolve_data(data))
        speed = counting_speed(path, args.repeat, args.workers)
        packed = tokens_per_byte(path, vocab_size, args.workers)
        result["texts"][text] = {"data": data_label(data), "bytes": path.stat().st_size, "counting": speed,
                                 "tokens": packed}
        for name, figure in speed.items():
            rates = ", ".join(f"{way} {rate:.1f}" for way, rate in figure["mb_per_s"].items())
            print(f"{text} {name:7} MB/s: {rates}; {packed['patterns'][name]['tokens_per_byte']:.4f} tokens/byte")
    if args.json:
        write_json_atomic(args.json, result)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(tool_main(parser(), run))
