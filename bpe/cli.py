"""``python -m bpe`` / ``bpe``: each subcommand's arguments, handed by its ``cmd_*`` to its module in
:mod:`bpe.commands`.  Training commands take :mod:`bpe.defaults`, refuse a run estimated past 10 minutes without
``--force`` and show progress on a terminal.  A user's error, an OS error or exhausted memory is one line
and status 2; Ctrl-C is ``bpe: interrupted``, 130, and SIGTERM or SIGHUP ``bpe: terminated (SIGTERM)``,
128 + the signal, after the same clean-up (``--debug``: the traceback).  A reader of stdout that
leaves early (``| head``) does not stop the run: later output is dropped and the files are saved.
"""

from __future__ import annotations

import argparse
import sys

from bpe import defaults
from bpe.commands import arguments
from bpe.commands.arguments import check_workers, describe
from bpe.console import console, exit_with, failure, handle_from_the_start, tell
from bpe.dependencies import dependency_problem
from bpe.errors import BPEError
from bpe.interface import typed, typed_options

# Each command's module is imported when it runs ("start-up" below): at the top it would put numpy, regex and
# tqdm in every command's start, `bpe --help` included, before dependency_problem() has checked them, and each
# adds tens of milliseconds (python -X importtime -c "import bpe.cli").  One call per command:


def cmd_train(args) -> int:
    from bpe.commands import train  # noqa: PLC0415 (start-up)

    return train.run(args)


def cmd_data(args) -> int:
    from bpe.commands import data  # noqa: PLC0415 (start-up)

    return data.run(args)


def cmd_bench(args) -> int:
    from bpe.commands import bench  # noqa: PLC0415 (start-up)

    return bench.run(args)


def cmd_trace(args) -> int:
    from bpe.commands import trace  # noqa: PLC0415 (start-up)

    return trace.run(args)


def cmd_walkthrough(args) -> int:
    from bpe.commands import walkthrough  # noqa: PLC0415 (start-up)

    return walkthrough.run(args)


def cmd_report(args) -> int:
    from bpe.commands import report  # noqa: PLC0415 (start-up)

    return report.run(args)


def cmd_profile(args) -> int:
    from bpe.commands import profile  # noqa: PLC0415 (start-up)

    return profile.run(args)


def cmd_estimate(args) -> int:
    from bpe.commands import estimate  # noqa: PLC0415 (start-up)

    return estimate.run(args)


def cmd_encode(args) -> int:
    from bpe.commands import encode  # noqa: PLC0415 (start-up)

    return encode.run(args)


def _add_encode_parser(sub) -> None:
    encode = sub.add_parser("encode", help="encode a text file into a .npy of token ids (uint16 when the vocab fits)")
    encode.add_argument("--tokenizer", required=True, metavar="DIR", help="a tokenizer saved by train --out DIR")
    encode.add_argument("--data", required=True, help="data set name or file path (or a directory, glob or URL of "
                                                      "text, JSON lines or Parquet: its documents, each followed by "
                                                      "the first special token)")
    arguments.add_text_column(encode)
    encode.add_argument("--out", required=True, metavar="FILE.npy", help="where the ids go (written atomically)")
    arguments.add_workers(encode, "encoding threads (compiled encoder) or")
    arguments.add_errors(encode)
    encode.add_argument("--chunk-size", default="1MiB", metavar="SIZE",
                        help="text per task (default 1MiB); memory grows with it, not with the file")
    encode.add_argument("--encoder", choices=["compiled", "python"], default=None,
                        help="compiled: v9's scanner and the merges in C, on threads (the default where it is built); "
                             "python: the pure-Python encoder in a process pool")
    encode.add_argument("--allowed-special", action="append", default=None, metavar="TOKEN",
                        help="a special token whose text is encoded as that token (repeatable; all, or none); "
                             "without this flag or the next, every special token is (tiktoken's allowed_special)")
    encode.add_argument("--disallowed-special", action="append", default=None, metavar="TOKEN",
                        help="a special token whose text in the file is an error (repeatable; all, or none: "
                             "encoded as plain text); default with --allowed-special: all it does not allow")
    encode.add_argument("--peers", action="store_true",
                        help="then time tiktoken on the same text, merges and threads; check the ids are identical")
    encode.add_argument("--json", metavar="OUT", help="with --peers: write both timings and the check as JSON to OUT")
    encode.set_defaults(func=cmd_encode)


def _add_report_parser(sub) -> None:
    report = sub.add_parser("report", help="bench every variant and write out/report/report.md with plots "
                                           "(--publish: docs/)")
    arguments.add_training_args(report)
    report.add_argument("--reduced-vocab-size", type=int, default=2_000,
                        help="second table's vocab, for variants too slow at the main vocab (default 2000)")
    report.add_argument("--v1-vocab-size", type=int, default=300,
                        help="third table's vocab, for v1 when it is too slow at both (default 300)")
    report.add_argument("--no-scaling", action="store_true",
                        help="skip the time-against-corpus-size and time-against-workers runs")
    report.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); medians are reported")
    report.add_argument("--peers", action="store_true", help="also time the peers (bpe/lab/measure/peers.py, with v6)")
    arguments.add_output(report, "--out-dir", "out/report/", "report in docs/")
    report.add_argument("--variant", action="append", default=None, metavar="V",
                        help="as for bench: ladder variants and/or your own trainer (a .py file or "
                             "module:function), comma list, repeatable (default: every ladder variant)")
    report.set_defaults(func=cmd_report)


def _add_profile_parser(sub) -> None:
    profile = sub.add_parser("profile", help="profile one variant's training under scalene; write "
                                             "out/profiles/<variant>-<data>-<vocab>.{json,md} (--publish: profiles/)")
    profile.add_argument("--variant", default=None, help="v1..vN (required unless --summarize)")
    arguments.add_training_args(profile)
    arguments.add_output(profile, "--out-dir", "out/profiles/", "profile in profiles/")
    profile.add_argument("--top", type=int, default=10, help="lines listed per table (default 10)")
    profile.add_argument("--summarize", default=None, metavar="FILE.json",
                         help="print the markdown summary of a saved scalene profile instead")
    profile.add_argument("--clean", nargs="+", default=None, metavar="FILE.json",
                         help="rewrite saved profiles' machine paths as repo-relative ones (and their summaries)")
    profile.set_defaults(func=cmd_profile)


def _add_trace_parser(sub) -> None:
    trace = sub.add_parser("trace", help="print each merge of a small example, one at a time (teaching)")
    trace.add_argument("--variant", default=None,
                       help="v1..vN, or your own file defining Merger (default: the fastest)")
    shown = trace.add_mutually_exclusive_group()
    shown.add_argument("--pretokenize", action="store_true",
                       help="trace how --text is cut: special tokens, then each pre-token and the rule that matched")
    shown.add_argument("--encode", default=None, metavar="TEXT",
                       help="encode TEXT merge by merge with the --merges trained on --words or --text")
    source = trace.add_mutually_exclusive_group()
    source.add_argument("--text", default=None, help="text to pre-tokenize and trace")
    source.add_argument("--words", default=None, metavar="WORD:N,...",
                        help="word counts, e.g. 'low:5,lower:2,widest:3,newest:6' "
                             "(default: that list plus es:2,st:2, the seed article's example)")
    trace.add_argument("--merges", type=int, default=3, help="merges to trace (default 3)")
    trace.add_argument("--top", type=int, default=5, help="pair counts shown per merge (default 5)")
    trace.add_argument("--special", action="append", default=None, metavar="TOKEN",
                       help=f"special token for --text (repeatable; default {defaults.SPECIAL_TOKEN})")
    trace.add_argument("--no-special", action="store_true", help="--text without special tokens")
    trace.set_defaults(func=cmd_trace)


def _add_walkthrough_parser(sub) -> None:
    page = sub.add_parser("walkthrough", help="write one self-contained HTML page that goes through the merges one "
                                              "by one and counts each rung's work (teaching, on a projector)")
    page.add_argument("--data", default=None, help="data set name or file path (default: corpus-en, the CS336 "
                                                   "test corpus, at vocab 400: the class page, in seconds; "
                                                   f"{defaults.DATASET} takes minutes)")
    page.add_argument("--vocab-size", default=None, metavar="N",
                      help="default: the data set's (400 for the class page)")
    page.add_argument("--special", action="append", default=None, metavar="TOKEN",
                      help=f"special token (repeatable; default {defaults.SPECIAL_TOKEN}); for none use --no-special")
    page.add_argument("--no-special", action="store_true", help="no special tokens")
    page.add_argument("--variant", action="append", default=None, metavar="V",
                      help="rungs whose work is counted: a comma list of v1..v6, or all (default: v1-v6)")
    page.add_argument("--bench", default=None, metavar="JSON",
                      help="a bench or report JSON whose stage times the summary shows "
                           "(default docs/report-bench.json)")
    page.add_argument("--text", default=None, help="the text the pre-tokenization view cuts (default: a sample)")
    page.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                      help="count each rung for at most this long; a slower one is counted for the merges it made "
                           "(default 60)")
    page.add_argument("--out", required=True, metavar="PAGE.html", help="the page to write")
    page.set_defaults(func=cmd_walkthrough)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe", description="byte-level BPE training, a ladder of optimizations")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on error")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a tokenizer on a data set or text file and print its stage times "
                                         "(--out DIR saves it)")
    train.add_argument("--variant", default=None, help="v1..vN (default: the fastest)")
    arguments.add_training_args(train)
    arguments.add_errors(train)
    train.add_argument("--out", default=None, metavar="DIR",
                       help="write DIR/vocab.json, DIR/merges.txt (GPT-2 format) and DIR/train.json")
    train.add_argument("--format", action="append", choices=["tiktoken", "hf"], default=None,
                       help="with --out, also write DIR/tokenizer.tiktoken or DIR/tokenizer.json (repeatable)")
    arguments.add_text_column(train)
    arguments.add_pattern(train)
    train.add_argument("--cluster", default=None, metavar="ADDRESS",
                       help="count on a Dask cluster: its scheduler (tcp://host:8786), or local for one on this "
                            "machine; the files must be readable by its workers (pip install 'bpe-lab[cluster]')")
    train.add_argument("--cluster-timeout", type=float, default=defaults.CLUSTER_TIMEOUT, metavar="SECONDS",
                       help="how long the scheduler at --cluster tcp://... has to answer, else one line says so "
                            f"(default {defaults.CLUSTER_TIMEOUT:g})")
    train.add_argument("--min-count", type=int, default=None, metavar="N",
                       help="drop pre-tokens counted fewer than N times before merging (off by default: it "
                            "changes the merges; it bounds the merge's memory on huge corpora)")
    train.add_argument("--min-frequency", default=None, metavar="N",
                       help="never merge a pair counted fewer than N times: training stops early at the first "
                            "such pair and says so (HF tokenizers' min_frequency; off by default)")
    train.add_argument("--max-token-length", default=None, metavar="N",
                       help="never make a token longer than N bytes: a longer pair is passed over and the next "
                            "best merged (off by default)")
    train.add_argument("--continue", default=None, metavar="DIR", dest="continue_from",
                       help="continue the tokenizer saved in DIR (by --out): its merges made first, its ids and "
                            "special tokens kept, then more merges learned from --data")
    train.set_defaults(func=cmd_train)

    bench = sub.add_parser("bench", help="time each stage of training; compare variants")
    bench.add_argument("--variant", action="append", default=None, metavar="V",
                       help="v1..vN, 'all', your own trainer (a .py file defining Merger or train_bpe, or "
                            "module:function), or a comma list of these; repeatable (default: the fastest). "
                            "Exit status 1 if a run fails or its merges differ from the reference")
    arguments.add_training_args(bench, bench=True)
    bench.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); the median is reported")
    arguments.add_text_column(bench)
    arguments.add_pattern(bench)
    arguments.add_json(bench)
    bench.add_argument("--busy", default="0", metavar="N[:bursty]",
                       help="measure with N other processes each spinning on a core (a machine that is not idle); "
                            "N:bursty: each spins and sleeps in turns of a few milliseconds, as a browser does")
    bench.add_argument("--peers", nargs="?", const="all", default=None, metavar="NAMES",
                       help="also train the peers on the same data: all of them, or a comma list of tokenizers, "
                            "tokenizers-file, rustbpe, bpeasy, gigabpe (pip install -e '.[peers]')")
    bench.set_defaults(func=cmd_bench)
    _add_trace_parser(sub)
    _add_walkthrough_parser(sub)
    _add_report_parser(sub)
    _add_profile_parser(sub)

    estimate = sub.add_parser("estimate", help="estimate each variant's time and memory on some data, "
                                               "without training")
    estimate.add_argument("--variant", default=None, help="v1..vN or a comma list (default: all)")
    arguments.add_training_args(estimate, guarded=False, shows_progress=False)
    estimate.add_argument("--size", default=None, metavar="SIZE",
                          help="estimate for SIZE bytes of text that goes on like DATA (e.g. 2.1GB); a data set "
                               "not downloaded (owt, tinystories) is estimated at its size from its stand-in")
    estimate.add_argument("--memory", default=None, metavar="SIZE",
                          help="say which variants fit in SIZE of memory (e.g. 64GB), and with how many workers")
    arguments.add_json(estimate, "the estimates")
    estimate.set_defaults(func=cmd_estimate)
    _add_encode_parser(sub)

    data = sub.add_parser("data", help="list the data sets, download one")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    data_sub.add_parser("list", help="every data set name, its file, size and whether it is present")
    get = data_sub.add_parser("get", help="download a data set into data/ (outside a checkout: ~/.cache/bpe-lab; "
                                          "resumes an interrupted download)")
    get.add_argument("name", help="gutenberg-books, tinystories, tinystories-valid, owt, owt-valid (downloaded); "
                                  "webtext-synth, tinystories-synth (generated)")
    get.add_argument("--size", default=None, metavar="SIZE",
                     help="generated data sets only: how many bytes (default 100MB), e.g. 20MB")
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    data.set_defaults(func=cmd_data)
    for subparsers in (sub, data_sub):
        describe(subparsers)
    return parser


_debugging = [False]  # whether the last main() was given --debug (run() then lets its traceback out)


def main(argv: list[str] | None = None) -> int:
    problem = dependency_problem()
    if problem:  # before anything imports them: one line, not an import traceback
        print(f"bpe: error: {problem}", file=sys.stderr)
        return 2
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    _debugging[0] = args.debug
    # What was typed after the subcommand, before a command resolves its defaults: a hint repeats it.
    options = typed_options(argv[argv.index(args.command) + 1:], vars(args))
    with console(), typed(args.command, options):
        try:
            check_workers(args)
            return args.func(args)
        except (BPEError, KeyboardInterrupt, MemoryError, OSError) as exc:
            if args.debug:
                raise
            line, status = failure(exc)
            tell(line)
            return status


def run() -> None:
    """:func:`main` on this process's arguments, then exit with its status (:func:`bpe.console.exit_with`: no
    traceback from a signal in that last moment), the stop signals handled from here on.  ``bpe/__main__.py``
    (``python -m bpe`` and the ``bpe`` command) does the same from an earlier moment, before this module's
    imports."""
    handle_from_the_start()
    exit_with(main, lambda: _debugging[0])


if __name__ == "__main__":
    run()
