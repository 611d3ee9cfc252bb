"""``python -m bpe`` / ``bpe``: train, bench (and more subcommands as the project grows).

Errors the user can cause (:class:`~bpe.errors.BPEError`) and operating-system errors are printed
as one line and exit with status 2; Ctrl-C prints ``bpe: interrupted`` and exits 130 (the pool is
shut down first); ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
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
    p.add_argument("--limit", default=None, metavar="SIZE",
                   help="train on the first SIZE bytes (e.g. 50MB), extended to the next document boundary")


def _special_tokens(args) -> list[str]:
    if args.no_special:
        return []
    return args.special if args.special is not None else list(DEFAULT_SPECIAL)


def cmd_train(args) -> int:
    from bpe.io.datasets import resolve_data
    from bpe.training.timer import StageTimer
    from bpe.training.registry import best_variant
    from bpe.training.train import train_bpe

    path = resolve_data(args.data)
    variant = args.variant or best_variant()
    if args.format and args.out is None:
        raise BPEError("--format needs --out DIR (where to write the exported files)")
    if args.out is not None:  # fail now, not after training
        from bpe.io.outputs import check_output_dir

        check_output_dir(args.out)
    timer = StageTimer()
    corpus: dict = {}
    started = time.perf_counter()
    vocab, merges = train_bpe(path, args.vocab_size, _special_tokens(args), variant=variant,
                              workers=args.workers, timer=timer, progress=args.progress, errors=args.errors,
                              limit=args.limit, stats=corpus)
    elapsed = time.perf_counter() - started
    subset = f" (first {corpus['bytes_used']:,} of {corpus['file_bytes']:,} bytes)" if args.limit else ""
    print(f"trained {variant} on {path}{subset}: {len(merges):,} merges, "
          f"vocab {len(vocab):,}, {elapsed:.2f}s")
    for name, seconds in timer.as_dict()["stages"].items():
        print(f"  {name:<12} {seconds:8.3f}s")
    _save_outputs(args, variant, path, vocab, merges, timer, corpus)
    return 0


def _save_outputs(args, variant, path, vocab, merges, timer, corpus) -> None:
    """After training: the token report, and with --out the saved files."""
    from bpe.lab.runinfo import machine_info
    from bpe.io.datasets import data_label
    from bpe.io.outputs import save_tokenizer, token_report

    specials = _special_tokens(args)
    for line in token_report(vocab, specials):
        print(line)
    if args.out is None:
        return
    info = {
        "settings": {"variant": variant, "data": data_label(args.data),
                     "path": str(path), "vocab_size": args.vocab_size, "special_tokens": specials,
                     "workers": args.workers, "limit": args.limit, "errors": args.errors},
        "corpus": corpus,
        "result": {"merges": len(merges), "vocab_size": len(vocab)},
        "timings": timer.as_dict(),
        "machine": machine_info(),
    }
    written = save_tokenizer(args.out, vocab, merges, specials, formats=args.format or (), train_info=info)
    print("wrote " + ", ".join(str(p) for p in written))


def cmd_data(args) -> int:
    """``data list``: every data set, its file, size, presence.  ``data get NAME``: download it."""
    from bpe.training.sizes import format_size
    from bpe.io.download import dataset_rows, fetch_dataset

    if args.data_command == "get":
        from bpe.io.datasets import generated_request

        generated = generated_request(args.name)
        if generated is not None:
            return _get_generated(args, *generated)
        if args.size is not None:
            raise BPEError(f"--size is for generated data sets (webtext-synth); {args.name!r} is downloaded whole")
        path = fetch_dataset(args.name, progress=not args.quiet)
        print(f"{args.name}: {path} ({format_size(path.stat().st_size)})")
        return 0
    print(f"{'name':<20}{'present':<9}{'size':>10}  {'path':<50} description")
    for dataset, present, size in dataset_rows():
        shown = format_size(size) if present else "-"
        print(f"{dataset.name:<20}{'yes' if present else 'no':<9}{shown:>10}  {str(dataset.path):<50} "
              f"{dataset.description}")
    return 0


def _get_generated(args, dataset, size: int) -> int:
    """``data get webtext-synth --size 20MB``: generate the file unless it is there, print its statistics."""
    from bpe.io.datasets import ensure_generated
    from bpe.io.webtext import file_statistics
    from bpe.training.sizes import parse_size

    if args.size is not None:
        size = parse_size(args.size)
    path = ensure_generated(dataset, size, progress=not args.quiet)
    stats = file_statistics(path)
    print(f"{dataset.name}: {path}\n  {stats['bytes']:,} bytes, {stats['documents']:,} documents, "
          f"{stats['distinct_pretokens']:,} distinct pre-tokens ({stats['distinct_pretokens_per_mb']:,.0f} per MB), "
          f"{stats['non_ascii_share']:.2%} of bytes non-ASCII")
    return 0


def cmd_bench(args) -> int:
    from bpe.lab.bench import run_bench

    run_bench(args.variant, args.data, args.vocab_size, args.repeat, _special_tokens(args), args.workers,
              json_out=args.json, limit=args.limit, peers=args.peers)
    return 0


def cmd_trace(args) -> int:
    from bpe.lab.trace import run_trace

    run_trace(args.variant, args.text, args.words, args.merges, args.top, _special_tokens(args))
    return 0


def cmd_report(args) -> int:
    from pathlib import Path

    from bpe.lab.report import DOCS_DIR, run_report

    run_report(args.data, args.vocab_size, args.v1_vocab_size, args.repeat, _special_tokens(args), args.workers,
               peers=args.peers, out_dir=Path(args.out_dir) if args.out_dir else DOCS_DIR)
    return 0


def cmd_merge_cost(args) -> int:
    from bpe.lab.merge_cost import run_merge_cost

    run_merge_cost(args.candidates, args.data, args.vocab_size, _special_tokens(args), args.repeat, args.workers,
                   count_instructions=args.instructions, limit=args.limit)
    return 0


def _add_merge_cost_parser(sub) -> None:
    cost = sub.add_parser("merge-cost", help="compare merge algorithms alone (build + merges) on the same "
                                             "pre-token counts, for tuning")
    cost.add_argument("candidates", nargs="+", metavar="CANDIDATE",
                      help="a variant name (v6) or the path of a file that defines Merger")
    _add_training_args(cost, vocab_default=10_000)
    cost.add_argument("--repeat", type=int, default=5, help="runs per candidate, taking turns (default 5)")
    cost.add_argument("--instructions", action="store_true",
                      help="also count each candidate's instructions once under valgrind (deterministic)")
    cost.set_defaults(func=cmd_merge_cost)


def _add_report_parser(sub) -> None:
    report = sub.add_parser("report", help="bench every variant and write docs/report.md with plots")
    _add_training_args(report, vocab_default=2_000)
    report.add_argument("--v1-vocab-size", type=int, default=300,
                        help="reduced vocab for v1 when the main vocab is past its budget (default 300)")
    report.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); medians are reported")
    report.add_argument("--peers", action="store_true", help="also time the peers (bpe/lab/peers.py, with v6)")
    report.add_argument("--out-dir", default=None, help="where report.md and the plots go (default docs/)")
    report.set_defaults(func=cmd_report)


def _add_trace_parser(sub) -> None:
    trace = sub.add_parser("trace", help="print each merge of a small example step by step (teaching)")
    trace.add_argument("--variant", default=None, help="v1..vN (default: the fastest)")
    source = trace.add_mutually_exclusive_group()
    source.add_argument("--text", default=None, help="text to pre-tokenize and trace")
    source.add_argument("--words", default=None, metavar="WORD:N,...",
                        help="word counts, e.g. 'low:5,lower:2,widest:3,newest:6' "
                             "(default: that list plus es:2,st:2, the seed article's example)")
    trace.add_argument("--merges", type=int, default=3, help="merges to trace (default 3)")
    trace.add_argument("--top", type=int, default=5, help="pair counts shown per merge (default 5)")
    trace.add_argument("--special", action="append", default=None, metavar="TOKEN",
                       help="special token for --text (repeatable; default <|endoftext|>)")
    trace.add_argument("--no-special", action="store_true", help="--text without special tokens")
    trace.set_defaults(func=cmd_trace)


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
    train.add_argument("--out", default=None, metavar="DIR",
                       help="write DIR/vocab.json, DIR/merges.txt (GPT-2 format) and DIR/train.json")
    train.add_argument("--format", action="append", choices=["tiktoken", "hf"], default=None,
                       help="with --out, also write DIR/tokenizer.tiktoken or DIR/tokenizer.json (repeatable)")
    train.set_defaults(func=cmd_train)

    bench = sub.add_parser("bench", help="time each stage of training; compare variants")
    bench.add_argument("--variant", default=None, help="v1..vN, a comma list, or 'all' (default: the fastest)")
    _add_training_args(bench, vocab_default=5_000)
    bench.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); the median is reported")
    bench.add_argument("--json", default=None, metavar="OUT", help="write every figure as JSON to OUT")
    bench.add_argument("--peers", action="store_true",
                       help="also train HF tokenizers and rustbpe on the same data (pip install -e '.[peers]')")
    bench.set_defaults(func=cmd_bench)
    _add_trace_parser(sub)
    _add_report_parser(sub)
    _add_merge_cost_parser(sub)

    data = sub.add_parser("data", help="list the data sets, download one")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    data_sub.add_parser("list", help="every data set name, its file, size and whether it is present")
    get = data_sub.add_parser("get", help="download a data set into data/ (resumes an interrupted download)")
    get.add_argument("name", help="tinystories, tinystories-valid, owt, owt-valid (downloaded); "
                                  "webtext-synth (generated)")
    get.add_argument("--size", default=None, metavar="SIZE",
                     help="generated data sets only: how many bytes (default 100MB), e.g. 20MB")
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    data.set_defaults(func=cmd_data)
    return parser


def _interrupt_once(signum, frame):
    """The first Ctrl-C interrupts; later ones are ignored, so none can break the clean-up or the message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handle_sigint = (threading.current_thread() is threading.main_thread()
                     and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if handle_sigint:
        signal.signal(signal.SIGINT, _interrupt_once)
    try:
        return _run(args)
    finally:
        if handle_sigint and signal.getsignal(signal.SIGINT) is _interrupt_once:  # not interrupted: restore
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(args) -> int:
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
    except BrokenPipeError:  # output piped into `head` and the reader left: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
    except OSError as exc:  # the environment failed us mid-run (disk full, file vanished): still one line
        if args.debug:
            raise
        where = f": {exc.filename}" if exc.filename else ""
        print(f"bpe: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
