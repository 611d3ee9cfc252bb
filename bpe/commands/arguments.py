"""The command line's shared arguments: the flags several commands take (``--data``, ``--vocab-size``,
``--workers``, ``--special``, ``--out``/``--publish`` ...), and the values they resolve to, checked once.
``bpe``'s commands (:mod:`bpe.cli`) and the project's own tools (``tools/``) build their parsers from them.

Example: ``add_training_args(parser)``, then ``vocab_size(args)`` and ``special_tokens(args)``.
"""

from __future__ import annotations

import argparse

from bpe import defaults
from bpe.data.datasets import default_vocab_size
from bpe.errors import BPEError
from bpe.running.cores import check_workers as workers_checked
from bpe.running.progress import wants_progress
from bpe.running.sizes import parse_count


def int_or_auto(value: str) -> int | str:
    if value == "auto" or value.strip().lstrip("-").isdigit():
        return value if value == "auto" else int(value)
    raise argparse.ArgumentTypeError(f"a number of processes or auto, got {value!r}")


def add_workers(p: argparse.ArgumentParser, what: str = "pre-tokenization", *, bench: bool = False) -> None:
    if not bench:
        p.add_argument("--workers", type=int, default=None, help=f"{what} processes (default: CPU count)")
        return
    p.add_argument("--workers", type=int_or_auto, default=None, metavar="N|auto",
                   help=f"{what} processes of every run (default: the CPU count for several variants; for one, "
                        "or with auto, each run chooses from the cores free as it starts)")


def add_json(p: argparse.ArgumentParser, what: str = "every figure") -> None:
    p.add_argument("--json", default=None, metavar="OUT", help=f"write {what} as JSON to OUT")


def add_output(p: argparse.ArgumentParser, flag: str, default: str, committed: str) -> None:
    """``--out``/``--out-dir`` and ``--publish`` (:func:`bpe.lab.measure.publish.output_path`)."""
    p.add_argument(flag, default=None, metavar="DIR" if flag == "--out-dir" else "FILE.json",
                   help=f"where the result goes (default {default}; {committed} with --publish)")
    p.add_argument("--publish", action="store_true", help=f"write the committed {committed} (refused from a tree "
                                                          "with uncommitted changes; docs/ and profiles/ do not count)")


def add_text_column(p: argparse.ArgumentParser) -> None:
    p.add_argument("--text-column", default="text", metavar="COL",
                   help="where --data's JSON lines or Parquet files hold the text (default: text)")


def add_pattern(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pattern", default="gpt2", metavar="P",
                   help="the pre-tokenization pattern: gpt2 (default), cl100k (GPT-4's), o200k (GPT-4o's), or a "
                        "regex of your own (docs/patterns.md)")


def add_errors(p: argparse.ArgumentParser) -> None:
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="invalid UTF-8: fail naming the offset (strict) or decode with U+FFFD (replace)")


def add_training_args(p: argparse.ArgumentParser, *, guarded: bool = True, shows_progress: bool = True,
                       bench: bool = False) -> None:
    p.add_argument("--data", default=None, help=f"data set name or file path (default: {defaults.DATASET})")
    p.add_argument("--vocab-size", default=None, metavar="N",
                   help=f"default: the data set's ({defaults.VOCAB_SIZE:,} for TinyStories and the Gutenberg corpora, "
                        f"{defaults.WEB_VOCAB_SIZE:,} for OpenWebText; {defaults.VOCAB_SIZE:,} for a file path); "
                        "10k and 32,000 are read too")
    p.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help=f"special token (repeatable; default {defaults.SPECIAL_TOKEN}); for none use --no-special")
    p.add_argument("--no-special", action="store_true", help="train without special tokens")
    add_workers(p, bench=bench)
    p.add_argument("--limit", default=None, metavar="SIZE",
                   help="train on the first SIZE bytes (e.g. 50MB), extended to the next document boundary")
    if not shows_progress:
        return
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="no progress display (default: shown on a terminal)")
    shown.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    if guarded:
        p.add_argument("--force", action="store_true",
                       help="run even when the cost estimate says it would take very long")


def special_tokens(args) -> list[str]:
    if args.no_special:
        if args.special:
            raise BPEError(f"--no-special and --special {args.special[0]!r} contradict each other; give one")
        return []
    if args.special is not None and "" in args.special:
        raise BPEError("--special '': special tokens must not be empty (for none, give --no-special)")
    return args.special if args.special is not None else list(defaults.SPECIAL_TOKENS)


def vocab_size(args) -> int:  # resolved once, so every header shows the real value
    if args.vocab_size is None:
        args.vocab_size = default_vocab_size(args.data)
    args.vocab_size = parse_count(args.vocab_size, "--vocab-size")
    return args.vocab_size


def check_workers(args) -> None:
    """``--workers`` checked as training checks it, for every command that takes it: some run with ``workers or
    the CPU count``, where a 0 would pass unsaid."""
    if isinstance(getattr(args, "workers", None), int):
        workers_checked(args.workers)


def show_progress(args) -> bool:
    return getattr(args, "progress", False) or wants_progress(args.quiet)


def describe(subparsers) -> None:
    """Each subcommand's own ``--help`` opens with the line the list of commands gives it (argparse shows a
    subcommand's ``help`` in that list only)."""
    for listed in subparsers._choices_actions:
        command = subparsers.choices[listed.dest]
        command.description = command.description or listed.help


def bench_settings(args):
    """``bench``'s or ``report``'s settings (report has no ``--limit``, ``--busy``, ``--json``)."""
    from bpe.lab.measure.bench import BenchSettings  # noqa: PLC0415 (start-up)
    from bpe.lab.measure.busy import parse_busy  # noqa: PLC0415 (start-up)

    busy, load = parse_busy(getattr(args, "busy", 0))
    return BenchSettings(variants=args.variant, data=args.data, vocab_size=vocab_size(args), repeat=args.repeat,
                         special_tokens=special_tokens(args), workers=args.workers, peers=args.peers,
                         force=args.force, progress=show_progress(args), lines=not getattr(args, "quiet", False),
                         limit=getattr(args, "limit", None),
                         busy=busy, load=load, json_out=getattr(args, "json", None),
                         text_column=getattr(args, "text_column", "text"), pattern=getattr(args, "pattern", "gpt2"))
