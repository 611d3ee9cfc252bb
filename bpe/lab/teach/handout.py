"""``python -m bpe handout``: the CS336 Assignment 1 tokenizer questions, answered on the stand-ins.

The handout asks, for tokenizers trained on TinyStories (vocab 10,000) and OpenWebText (32,000): the
time and memory, the longest token, where the time goes, how they differ, their compression on ten
sampled documents of each (and TinyStories' on OpenWebText), the encoding throughput and the time it
implies for the 825 GB Pile, and why ids fit ``uint16``; before them, its worked example
(:func:`worked_example`: the small corpus whose first merges are ``s t``, ``e st``, and the encoding of
"newest" with the first six), and the two resource budgets.  One run answers all of them, on
``--tinystories`` and ``--owt`` (default the generated stand-ins; ``tinystories``/``owt`` for the real
data), into ``out/handout-answers.json`` (``--publish``: ``docs/handout-answers.json``, which
``docs/handout.md`` quotes).  Left out: the workers' memory is beside the training process's peak, not
added; throughput is one process's on the sampled documents (``bpe encode`` runs a pool).
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from bpe.errors import BPEError
from bpe.data.datasets import REPO_ROOT

DEFAULT_OUT = REPO_ROOT / "out" / "handout-answers.json"
PUBLISHED_OUT = REPO_ROOT / "docs" / "handout-answers.json"
#: The stand-ins trained on unless ``--tinystories`` / ``--owt`` name other data.
STAND_INS = {"tinystories": "tinystories-synth-50MB", "owt": "webtext-synth-20MB"}
PILE_BYTES = 825e9  # the handout's figure for the Pile
SAMPLE_SEED = 0
SPECIAL = "<|endoftext|>"
#: The handout's two budgets: training time and memory, TinyStories at vocab 10,000, OpenWebText at 32,000.
BUDGETS = {"tinystories": {"seconds": 30 * 60, "bytes": 30e9, "shown": "30 minutes, 30 GB", "size": "2.2GB",
                           "vocab_size": 10_000},
           "owt": {"seconds": 12 * 3600, "bytes": 100e9, "shown": "12 hours, 100 GB", "size": "11.9GB",
                   "vocab_size": 32_000}}

#: The handout's worked example (after Sennrich et al. 2016): pre-tokenized on whitespace alone.
EXAMPLE_TEXT = ("low low low low low\nlower lower widest widest widest\n"
                "newest newest newest newest newest newest")
EXAMPLE_MERGES = 12  # the handout lists twelve merges, then encodes "newest" with the first six
EXAMPLE_ENCODED_WITH = 6


def worked_example(variant: str | None = None) -> dict:
    """The handout's example run through a rung's merge algorithm: the word counts (split on whitespace,
    as the example does), its merges, the vocabulary the first six add, and "newest" encoded with them.

    >>> example = worked_example("v1")
    >>> example["merges"][:6], example["newest"]
    (['s t', 'e st', 'o w', 'l ow', 'w est', 'n e'], ['ne', 'west'])
    """
    from bpe.io.tokenizer import Tokenizer
    from bpe.training.merge_loop import run_merges
    from bpe.training.registry import get_variant
    from bpe.training.timer import NullTimer
    from bpe.training.train import build_vocab

    counts = dict(Counter(word.encode() for word in EXAMPLE_TEXT.split()))
    merges = run_merges(get_variant(variant).Merger(counts), EXAMPLE_MERGES, NullTimer())
    first = merges[:EXAMPLE_ENCODED_WITH]
    vocab = build_vocab([SPECIAL], first)
    ids = Tokenizer(vocab, first, [SPECIAL]).encode("newest")
    return {"counts": {w.decode(): c for w, c in counts.items()},
            "merges": [f"{a.decode()} {b.decode()}" for a, b in merges],
            "added_tokens": [(a + b).decode() for a, b in first],
            "newest": [vocab[i].decode() for i in ids]}


def example_lines(example: dict) -> list[str]:
    counts = ", ".join(f"{w}: {c}" for w, c in example["counts"].items())
    return [f"worked example: {{{counts}}} (split on whitespace)",
            f"  merges: {', '.join(repr(m) for m in example['merges'])}",
            f"  the first {EXAMPLE_ENCODED_WITH} add {', '.join(example['added_tokens'])}; "
            f"'newest' encodes as {example['newest']}"]


def budget_lines(name: str, train: dict) -> list[str]:
    """One run against the handout's budget for its data set, and the command that estimates the full size."""
    budget = BUDGETS[name]
    lines = [f"  the handout's budget {budget['shown']}: {train['seconds']:.2f} s and a peak of "
             f"{train['peak_rss_mb']:.0f} MB (each worker {train['worker_peak_rss_mb']:.0f} MB) on {train['data']}"]
    if train["data"] not in BUDGETS:  # a stand-in or a sample: the model extrapolates it to the full size
        lines.append(f"  at the full size: python -m bpe estimate --data {train['data']} --size {budget['size']} "
                     f"--vocab-size {budget['vocab_size']}")
    return lines


def sample_documents(path: Path, k: int = 10, seed: int = SAMPLE_SEED, window: int = 20_000_000) -> list[str]:
    """``k`` documents drawn with a fixed seed from the first ``window`` bytes of the file."""
    with open(path, "rb") as f:
        head = f.read(window).decode("utf-8", errors="replace")
    documents = [d.strip("\n") for d in head.split(SPECIAL)[:-1] if d.strip()]
    if len(documents) < k:
        raise BPEError(f"{path} has fewer than {k} whole documents in its first {window:,} bytes")
    return random.Random(seed).sample(documents, k)


def compression(tokenizer, documents: list[str]) -> dict:
    """Bytes per token over the documents, and the encoding throughput (bytes per second)."""
    data_bytes = sum(len(d.encode("utf-8")) for d in documents)
    started = time.perf_counter()
    tokens = sum(len(tokenizer.encode(d)) for d in documents)
    seconds = time.perf_counter() - started
    return {"bytes": data_bytes, "tokens": tokens, "bytes_per_token": data_bytes / tokens,
            "seconds": seconds, "bytes_per_second": data_bytes / seconds}


def longest_tokens(vocab: dict[int, bytes], special: list[str], n: int = 3) -> list[dict]:
    """The ``n`` longest learned tokens (specials left out), as text and their length in bytes."""
    specials = {s.encode("utf-8") for s in special}
    learned = sorted((t for t in vocab.values() if t not in specials), key=lambda t: (-len(t), t))[:n]
    return [{"text": t.decode("utf-8", errors="replace"), "bytes": len(t)} for t in learned]


def train_one(data: str, vocab_size: int, limit: str | None, workers: int | None, log) -> dict:
    """Train the default variant in a fresh process (bench's harness): time, memory, merges."""
    from bpe.data.datasets import resolve_data, shown_path
    from bpe.lab.measure.timed_run import run_once
    from bpe.lab.judge.diagnose import decode_merges
    from bpe.training.registry import best_variant
    from bpe.training.sizes import parse_size
    from bpe.training.train import build_vocab

    path = resolve_data(data)
    variant = best_variant()
    print(f"training {variant} on {data} at vocab {vocab_size:,}", file=log, flush=True)
    run = run_once(path, variant, vocab_size, [SPECIAL], workers, parse_size(limit) if limit else None,
                   want_merges=True)
    merges = decode_merges(run.pop("merge_list"))
    vocab = build_vocab([SPECIAL], merges)
    stages = run["stages"]
    slowest = max(stages, key=stages.get)
    print(f"  {run['total']:.1f} s, peak {run['peak_rss']['self'] / 1e6:.0f} MB; the largest stage: {slowest} "
          f"({stages[slowest] / run['total']:.0%} of the run)", file=log, flush=True)
    return {"data": data, "path": shown_path(path), "variant": variant, "vocab_size": vocab_size,
            "seconds": run["total"], "stages": stages, "largest_stage": slowest,
            "largest_stage_share": stages[slowest] / run["total"],
            "peak_rss_bytes": run["peak_rss"]["self"], "peak_rss_mb": run["peak_rss"]["self"] / 1e6,
            "worker_peak_rss_mb": run["peak_rss"]["children"] / 1e6,
            "longest": longest_tokens(vocab, [SPECIAL]), "_vocab": vocab, "_merges": merges, "_path": path}


def run_handout(tinystories: str | None = None, owt: str | None = None, out: str | Path | None = None,
                quick: bool = False, workers: int | None = None, log=None, *, publish: bool = False) -> dict:
    """Answer the handout's questions, print them and write them to ``out`` (default ``out/``; with
    ``publish``, the committed file, which takes the stand-ins and the full sizes only)."""
    from bpe.io.tokenizer import Tokenizer
    from bpe.lab.measure.publish import check_json_path, machine_info, output_path, write_json_atomic

    log = log or sys.stdout
    if publish and (quick or tinystories or owt):
        raise BPEError("--publish writes the committed stand-in answers: it takes no --quick, --tinystories or --owt")
    out = check_json_path(output_path(out, DEFAULT_OUT, PUBLISHED_OUT, publish, "python -m bpe handout --publish"))
    machine = machine_info()
    example = worked_example()
    print("\n".join(example_lines(example)), file=log, flush=True)
    tinystories, owt = tinystories or STAND_INS["tinystories"], owt or STAND_INS["owt"]
    if quick:
        tinystories, owt = "tinystories-synth-300KB", "webtext-synth-300KB"
    sizes = {"tinystories": 600 if quick else 10_000, "owt": 800 if quick else 32_000}
    trained = {"tinystories": train_one(tinystories, sizes["tinystories"], None, workers, log),
               "owt": train_one(owt, sizes["owt"], None, workers, log)}
    tokenizers = {k: Tokenizer(t["_vocab"], t["_merges"], [SPECIAL]) for k, t in trained.items()}
    samples = {k: sample_documents(t["_path"]) for k, t in trained.items()}
    experiments = {}
    for tok_name, tokenizer in tokenizers.items():
        for data_name, documents in samples.items():
            experiments[f"{tok_name}_tokenizer_on_{data_name}"] = compression(tokenizer, documents)
    # Throughput: the tokenizer on its own data's sample, encoded again now that its cache is warm
    # would flatter it; the first pass above is the cold figure, kept as measured.
    throughput = experiments["owt_tokenizer_on_owt"]["bytes_per_second"]
    largest_id = max(max(len(t["_vocab"]) for t in trained.values()) - 1, 0)
    for t in trained.values():
        for key in ("_vocab", "_merges", "_path"):
            t.pop(key)
    result = {
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine,
        "stand_ins": tinystories.startswith("tinystories-synth") and owt.startswith("webtext-synth"),
        "command": "python -m bpe handout" + (" --quick" if quick else ""),
        "example": example,
        "train": trained,
        "compression": experiments,
        "throughput": {"bytes_per_second": throughput, "mb_per_second": throughput / 1e6,
                       "pile_bytes": PILE_BYTES, "pile_hours": PILE_BYTES / throughput / 3600,
                       "pile_days": PILE_BYTES / throughput / 86400},
        "uint16": {"largest_id": largest_id, "fits": largest_id < 2**16, "uint16_max": 2**16 - 1},
    }
    for name, t in trained.items():
        print(f"{name} tokenizer ({t['data']}, vocab {t['vocab_size']:,}): the longest tokens "
              + ", ".join(f"{x['text']!r} ({x['bytes']} bytes)" for x in t["longest"]), file=log)
        print("\n".join(budget_lines(name, t)), file=log)
    for name, e in experiments.items():
        print(f"  {name}: {e['bytes_per_token']:.2f} bytes per token", file=log)
    print(f"  throughput {throughput / 1e6:.2f} MB/s in one process: the 825 GB Pile in "
          f"{result['throughput']['pile_days']:.1f} days", file=log)
    print(f"  uint16: the largest id is {largest_id:,}, {'within' if largest_id < 2**16 else 'past'} 65,535",
          file=log)
    write_json_atomic(out, result, log=log)
    return result
