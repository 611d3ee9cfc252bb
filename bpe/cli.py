"""``python -m bpe`` / ``bpe``: train, bench (and more subcommands as the project grows).

Errors the user can cause are printed as one line and exit with status 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import sys
import time

from bpe.errors import BPEError

DEFAULT_SPECIAL = ["<|endoftext|>"]


def _add_training_args(p: argparse.ArgumentParser, *, vocab_default: int) -> None:
    p.add_argument("--data", default=None, help="data set name or file path (default: gutenberg-sample)")
    p.add_argument("--vocab-size", type=int, default=vocab_default, help=f"default {vocab_default}")
    p.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help="special token (repeatable; default <|endoftext|>); --special '' for none is not allowed, "
                        "use --no-special")
    p.add_argument("--no-special", action="store_true", help="train without special tokens")
    p.add_argument("--workers", type=int, default=None, help="pre-tokenization processes (default: CPU count)")


def _special_tokens(args) -> list[str]:
    if args.no_special:
        return []
    return args.special if args.special is not None else list(DEFAULT_SPECIAL)


def cmd_train(args) -> int:
    from bpe.datasets import resolve_data
    from bpe.timer import StageTimer
    from bpe.train import train_bpe

    path = resolve_data(args.data)
    timer = StageTimer()
    started = time.perf_counter()
    vocab, merges = train_bpe(path, args.vocab_size, _special_tokens(args), variant=args.variant,
                              workers=args.workers, timer=timer, progress=args.progress, errors=args.errors)
    elapsed = time.perf_counter() - started
    print(f"trained {args.variant or 'default variant'} on {path}: {len(merges):,} merges, "
          f"vocab {len(vocab):,}, {elapsed:.2f}s")
    for name, seconds in timer.as_dict()["stages"].items():
        print(f"  {name:<12} {seconds:8.3f}s")
    return 0


def cmd_bench(args) -> int:
    from bpe.bench import run_bench

    run_bench(args.variant, args.data, args.vocab_size, args.repeat, _special_tokens(args), args.workers,
              json_out=args.json, peers=args.peers)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe", description="byte-level BPE training, a ladder of optimizations")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on error")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a tokenizer")
    train.add_argument("--variant", default=None, help="v1..vN (default: the fastest)")
    _add_training_args(train, vocab_default=10_000)
    train.add_argument("--progress", action="store_true", help="show a progress bar over merges")
    train.add_argument("--errors", choices=["strict", "replace"], default="strict",
                       help="invalid UTF-8: fail naming the offset (strict) or decode with U+FFFD (replace)")
    train.set_defaults(func=cmd_train)

    bench = sub.add_parser("bench", help="time each stage of training; compare variants")
    bench.add_argument("--variant", default=None, help="v1..vN, a comma list, or 'all' (default: the fastest)")
    _add_training_args(bench, vocab_default=2_000)
    bench.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); the median is reported")
    bench.add_argument("--json", default=None, metavar="OUT", help="write every figure as JSON to OUT")
    bench.add_argument("--peers", action="store_true",
                       help="also train HF tokenizers and rustbpe on the same data (pip install -e '.[peers]')")
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BPEError as exc:
        if args.debug:
            raise
        print(f"bpe: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("bpe: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
