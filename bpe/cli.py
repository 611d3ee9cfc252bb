"""``python -m bpe`` / ``bpe``: train, bench, estimate, report, profile, trace, merge-cost, data.

Every training command takes the shared defaults of :mod:`bpe.defaults` (the data set's vocab,
``<|endoftext|>``), prints them in its first line with a cost estimate (:mod:`bpe.lab.estimate`),
refuses a run estimated past 10 minutes unless given ``--force``, and shows progress on a terminal
(``--quiet`` for none).

Errors the user can cause (:class:`~bpe.errors.BPEError`), operating-system errors and exhausted
memory are printed as one line and exit with status 2; Ctrl-C prints ``bpe: interrupted`` and exits
130 (the pool is shut down first); ``--debug`` shows the traceback instead.  A reader of stdout that
leaves early (``| head``) does not stop the run: later output is dropped and the files are saved.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

from bpe import defaults
from bpe.errors import BPEError


def _add_training_args(p: argparse.ArgumentParser, *, guarded: bool = True, shows_progress: bool = True) -> None:
    p.add_argument("--data", default=None, help=f"data set name or file path (default: {defaults.DATASET})")
    p.add_argument("--vocab-size", default=None, metavar="N",
                   help=f"default: the data set's ({defaults.VOCAB_SIZE:,} for TinyStories and the Gutenberg corpora, "
                        f"{defaults.WEB_VOCAB_SIZE:,} for OpenWebText; {defaults.VOCAB_SIZE:,} for a file path); "
                        "10k and 32,000 are read too")
    p.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help=f"special token (repeatable; default {defaults.SPECIAL_TOKEN}); for none use --no-special")
    p.add_argument("--no-special", action="store_true", help="train without special tokens")
    p.add_argument("--workers", type=int, default=None, help="pre-tokenization processes (default: CPU count)")
    p.add_argument("--limit", default=None, metavar="SIZE",
                   help="train on the first SIZE bytes (e.g. 50MB), extended to the next document boundary")
    if not shows_progress:
        return
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="no progress display (shown by default when stderr "
                                                            "is a terminal)")
    shown.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    if guarded:
        p.add_argument("--force", action="store_true",
                       help="run even when the cost estimate says it would take very long")


def _special_tokens(args) -> list[str]:
    if args.no_special:
        if args.special:
            raise BPEError(f"--no-special and --special {args.special[0]!r} contradict each other; give one")
        return []
    if args.special is not None and "" in args.special:
        raise BPEError("--special '': special tokens must not be empty (for none, give --no-special)")
    return args.special if args.special is not None else list(defaults.SPECIAL_TOKENS)


def _vocab_size(args) -> int:
    """``--vocab-size``, or the data set's default (resolved once, so every header shows the real value)."""
    from bpe.data.datasets import default_vocab_size

    from bpe.training.sizes import parse_count

    if args.vocab_size is None:
        args.vocab_size = default_vocab_size(args.data)
    args.vocab_size = parse_count(args.vocab_size, "--vocab-size")
    return args.vocab_size


def _show_progress(args) -> bool:
    from bpe.training.progress import wants_progress

    return args.progress or wants_progress(args.quiet)


def _estimates(path, variants: list[str], vocab_size: int, special_tokens: list[str], workers, limit,
               assume_bytes: int | None = None):
    """Each variant's cost estimate for this run (:mod:`bpe.lab.estimate`)."""
    from bpe.lab.estimate import corpus_shape, estimate_run
    from bpe.training.pretokenize import check_input_file
    from bpe.training.sizes import parse_size
    from bpe.training.train import check_special_tokens, check_vocab_size

    merges = check_vocab_size(vocab_size, check_special_tokens(special_tokens))
    size = check_input_file(path).stat().st_size  # checked once: corpus_shape trusts the end it is given
    # --limit's real end is the next document boundary after it: close enough for an estimate
    end = min(parse_size(limit), size) if limit is not None else size
    shape = corpus_shape(path, special_tokens, end, assume_bytes)
    return [estimate_run(v, shape, merges, workers) for v in variants]


def cmd_train(args) -> int:
    from bpe.data.datasets import resolve_data
    from bpe.training.registry import best_variant, get_variant

    from bpe.training.train import check_workers

    check_workers(args.workers)
    path = resolve_data(args.data)
    variant = args.variant or best_variant()
    get_variant(variant)
    specials, vocab_size = _special_tokens(args), _vocab_size(args)
    if args.format and args.out is None:
        raise BPEError("--format needs --out DIR (where to write the exported files)")
    if args.out is not None:  # fail now, not after training
        from bpe.io.outputs import OutputLock, check_output_dir

        check_output_dir(args.out)
        with OutputLock(args.out):  # held until saved: a second run into the same --out fails at once
            return _train(args, path, variant, specials, vocab_size)
    return _train(args, path, variant, specials, vocab_size)


def _train(args, path, variant, specials, vocab_size) -> int:
    from bpe.data.datasets import data_label
    from bpe.lab.estimate import refusal, too_long
    from bpe.training.timer import StageTimer
    from bpe.training.train import train_bpe

    from bpe.training.sizes import parse_size

    estimate = _estimates(path, [variant], vocab_size, specials, args.workers, args.limit)
    size = path.stat().st_size
    subset = (f"the first ~{min(parse_size(args.limit), size):,} of {size:,} bytes, --limit {args.limit}"
              if args.limit is not None else f"{size:,} bytes")
    print(f"bpe-lab train: {variant} on {data_label(args.data)} ({subset}), "
          f"vocab {vocab_size:,}, special {specials}; estimate {estimate[0].describe()}")
    if too_long(estimate) and not args.force:
        raise BPEError(refusal(estimate, f"training {variant} on {data_label(args.data)} at vocab {vocab_size:,}"))
    timer = StageTimer()
    corpus: dict = {}
    started = time.perf_counter()
    vocab, merges = train_bpe(path, vocab_size, specials, variant=variant,
                              workers=args.workers, timer=timer, progress=_show_progress(args), errors=args.errors,
                              limit=args.limit, stats=corpus)
    elapsed = time.perf_counter() - started
    written = _save_outputs(args, variant, path, vocab, merges, timer, corpus)  # saved before anything is printed
    _print_training_summary(args, variant, path, vocab, merges, timer, corpus, elapsed)
    if written:
        print("wrote " + ", ".join(str(p) for p in written))
    else:
        print("nothing saved: give --out DIR to write the tokenizer (vocab.json, merges.txt)")
    return 0


def _print_training_summary(args, variant, path, vocab, merges, timer, corpus, elapsed) -> None:
    from bpe.data.datasets import data_label
    from bpe.io.outputs import token_report
    from bpe.training.sizes import format_size

    subset = f" (first {corpus['bytes_used']:,} of {corpus['file_bytes']:,} bytes)" if args.limit else ""
    print(f"trained {variant} on {data_label(args.data)}{subset}: {len(merges):,} merges, "
          f"vocab {len(vocab):,}, {elapsed:.2f}s")
    from bpe.training.train import stopped_early

    asked = args.vocab_size - 256 - len(_special_tokens(args))
    stopped = stopped_early(len(merges), asked, corpus.get("bytes_used"))
    if stopped:
        print(stopped)
    for name, seconds in timer.as_dict()["stages"].items():
        print(f"  {name:<12} {seconds:8.3f}s")
    peak = timer.peak_rss
    workers = f", {format_size(peak['children'])} (largest pre-tokenization worker)" if peak["children"] else ""
    print(f"peak memory: {format_size(peak['self'])} (training process){workers}")
    if merges:  # no merge, no learned token to show
        for line in token_report(vocab, _special_tokens(args)):
            print(line)


def _save_outputs(args, variant, path, vocab, merges, timer, corpus) -> list:
    """With --out: save the tokenizer and train.json; the paths written (none without --out)."""
    from bpe.data.datasets import data_label
    from bpe.io.outputs import save_tokenizer
    from bpe.lab.runinfo import machine_info

    if args.out is None:
        return []
    specials = _special_tokens(args)
    info = {
        "settings": {"variant": variant, "data": data_label(args.data),
                     "path": str(path), "vocab_size": args.vocab_size, "special_tokens": specials,
                     "workers": args.workers, "limit": args.limit, "errors": args.errors},
        "corpus": corpus,
        "result": {"merges": len(merges), "vocab_size": len(vocab)},
        "timings": timer.as_dict(),
        "machine": machine_info(),
    }
    return save_tokenizer(args.out, vocab, merges, specials, formats=args.format or (), train_info=info)


def cmd_data(args) -> int:
    """``data list``: every data set, its file, size, presence.  ``data get NAME``: download it."""
    from bpe.training.sizes import format_size
    from bpe.data.download import dataset_rows, fetch_dataset

    if args.data_command == "get":
        from bpe.data.datasets import generated_request
        from bpe.training.progress import wants_progress

        generated = generated_request(args.name)
        if generated is not None:
            return _get_generated(args, *generated)
        if args.size is not None:
            raise BPEError(f"--size is for generated data sets (webtext-synth); {args.name!r} is downloaded whole")
        from bpe.errors import signals_as_interrupt

        with signals_as_interrupt():  # SIGTERM: what is half-written goes (a download's .part stays, to resume)
            path = fetch_dataset(args.name, progress=wants_progress(args.quiet))
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
    from bpe.data.datasets import ensure_generated, generated_file
    from bpe.data.webtext import cached_statistics
    from bpe.training.progress import wants_progress
    from bpe.training.sizes import parse_size

    if args.size is not None:
        size = parse_size(args.size)
    if generated_file(dataset.name, size).exists():
        print(f"{dataset.name}: {generated_file(dataset.name, size)} is already there (delete it to make it again)",
              file=sys.stderr, flush=True)
    path = ensure_generated(dataset, size, progress=wants_progress(args.quiet))
    stats, _ = cached_statistics(path, log=sys.stderr)
    print(f"{dataset.name}: {path}\n  {stats['bytes']:,} bytes, {stats['documents']:,} documents "
          f"({stats['bytes'] / max(stats['documents'], 1):,.0f} bytes each), "
          f"{stats['distinct_pretokens']:,} distinct pre-tokens ({stats['distinct_pretokens_per_mb']:,.0f} per MB), "
          f"{stats['non_ascii_share']:.2%} of bytes non-ASCII")
    return 0


def _bench_settings(args):
    """The one :class:`~bpe.lab.bench.BenchSettings` of a ``bench`` or ``report`` command line: checked
    and defaulted here, then passed down untouched (``report`` has no ``--busy`` or ``--json``)."""
    from bpe.lab.bench import BenchSettings

    return BenchSettings(variants=args.variant, data=args.data, vocab_size=_vocab_size(args), repeat=args.repeat,
                         special_tokens=_special_tokens(args), workers=args.workers, peers=args.peers,
                         force=args.force, progress=_show_progress(args), limit=getattr(args, "limit", None),
                         busy=getattr(args, "busy", 0), json_out=getattr(args, "json", None))


def cmd_bench(args) -> int:
    from bpe.lab.bench import run_bench
    from bpe.lab.correctness import all_correct

    return 0 if all_correct(run_bench(_bench_settings(args))) else 1


def cmd_trace(args) -> int:
    from bpe.lab.trace import run_trace

    run_trace(args.variant, args.text, args.words, args.merges, args.top, _special_tokens(args))
    return 0


def cmd_report(args) -> int:
    from bpe.lab.publish import output_path
    from bpe.lab.report import DEFAULT_OUT_DIR, DOCS_DIR, ReportSettings, run_report

    bench = _bench_settings(args)
    own = ReportSettings(reduced_vocab_size=args.reduced_vocab_size, v1_vocab_size=args.v1_vocab_size,
                         scaling=not args.no_scaling)
    # the committed report names the commit that made it: never a -dirty one
    run_report(bench, own, out_dir=output_path(args.out_dir, DEFAULT_OUT_DIR, DOCS_DIR, args.publish,
                                               "bpe report --publish"))
    return 0


def cmd_profile(args) -> int:
    from pathlib import Path

    from bpe.lab.profiling import DEFAULT_OUT_DIR, PROFILES_DIR, clean_files, run_profile, summarize
    from bpe.lab.runinfo import check_publishable

    if args.clean:
        for cleaned in clean_files(args.clean):
            print(f"cleaned {cleaned}")
        return 0
    if args.summarize is not None:
        import json

        source = Path(args.summarize)
        if not source.is_file():
            raise BPEError(f"no such profile: {source}")
        print(summarize(json.loads(source.read_text()), args.top), end="")
        return 0
    if args.variant is None:
        raise BPEError("bpe profile needs --variant vN (e.g. --variant v2), or --summarize FILE.json")
    specials, vocab_size = _special_tokens(args), _vocab_size(args)
    if args.publish:  # a committed profile names the commit that made it: never a -dirty one
        check_publishable("bpe profile --publish")
    out_dir = Path(args.out_dir) if args.out_dir else PROFILES_DIR if args.publish else DEFAULT_OUT_DIR
    run_profile(args.variant, args.data, vocab_size, specials, args.workers, out_dir, args.top, force=args.force,
                progress=_show_progress(args))
    return 0


def cmd_estimate(args) -> int:
    from bpe.data.datasets import data_label, resolve_data
    from bpe.lab.candidates import parse_variants
    from bpe.lab.estimate import LONG_RUN_SECONDS, format_duration
    from bpe.training.sizes import format_size, parse_size

    path = resolve_data(args.data)
    specials, vocab_size = _special_tokens(args), _vocab_size(args)
    candidates = parse_variants(args.variant or "all")
    variants = [c.spec for c in candidates if c.is_variant]
    assumed = parse_size(args.size) if args.size else None
    estimates = _estimates(path, variants, vocab_size, specials, args.workers, args.limit, assumed)
    own = [c for c in candidates if not c.is_variant]
    if own:  # your own trainer: timed on a prefix of the data, then scaled (bpe/lab/estimate.py)
        from bpe.lab.probes import estimate_candidates
        from bpe.lab.estimate import corpus_shape
        from bpe.training.train import check_vocab_size

        end = min(parse_size(args.limit), path.stat().st_size) if args.limit is not None else None
        shape = corpus_shape(path, specials, end, assumed)
        found = estimate_candidates(own, path, specials, shape, check_vocab_size(vocab_size, specials), args.workers,
                                    end, log=sys.stderr)
        by_label = {e.variant: e for e in estimates}
        estimates = [by_label.get(c.spec) or found[c.label] for c in candidates]
    corpus = (f"{format_size(assumed)} of text like {data_label(args.data)}" if assumed else
              f"{data_label(args.data)} ({path.stat().st_size:,} bytes)")
    print(f"cost estimate: {corpus}, vocab {vocab_size:,}, special {specials}, "
          f"workers {args.workers or os.cpu_count()}")
    print(f"{'variant':<10}{'time':>12}{'peak memory':>14}")
    for e in estimates:
        note = f"   needs --force (over {format_duration(LONG_RUN_SECONDS)})" if e.seconds > LONG_RUN_SECONDS else ""
        print(f"{e.variant:<10}{format_duration(e.seconds):>12}{format_size(int(e.peak_bytes)):>14}{note}")
    if args.json:
        from pathlib import Path

        from bpe.lab.publish import check_json_path, write_json_atomic

        # The estimate is a model, not a timing: the same code and data give the same file on any machine.
        write_json_atomic(check_json_path(args.json), {
            "corpus": corpus, "vocab_size": vocab_size, "workers": args.workers,
            "variants": {e.variant: {"seconds": e.seconds, "peak_bytes": e.peak_bytes,
                                     "time": format_duration(e.seconds), "memory": format_size(int(e.peak_bytes))}
                         for e in estimates}})
        print(f"wrote {Path(args.json)}")
    return 0


def cmd_merge_cost(args) -> int:
    from bpe.lab.merge_cost import run_merge_cost

    specials, vocab_size = _special_tokens(args), _vocab_size(args)
    run_merge_cost(args.candidates, args.data, vocab_size, specials, args.repeat, args.workers,
                   count_instructions=args.instructions, limit=args.limit, progress=_show_progress(args))
    return 0


def cmd_encode(args) -> int:
    from bpe.io.encode import run_encode
    from bpe.training.sizes import parse_size

    stats = run_encode(args.tokenizer, args.data, args.out, workers=args.workers, errors=args.errors,
                       chunk_bytes=parse_size(args.chunk_size))
    if args.peers:
        from bpe.lab.encode_peers import run_encode_peers

        run_encode_peers(args.tokenizer, stats)
    return 0


def cmd_figures(args) -> int:
    """``figures``: check every quoted figure against its result file; ``--update`` rewrites them."""
    from pathlib import Path

    from bpe.lab import figures

    paths = [Path(p) for p in args.pages] if args.pages else figures.pages()
    for path in paths:
        if not path.is_file():
            raise BPEError(f"no such page: {path}")
    if args.update:
        problems: list[str] = []
        changed = figures.update(paths, problems=problems)
        for path in changed:
            print(f"updated {path}")
        for problem in problems:
            print(problem)
        print(f"{figures.count(paths)} figures on {len(paths)} pages; {len(changed)} page(s) rewritten"
              + (f"; {len(problems)} left as they were (their result file or key is missing)" if problems else ""))
        return 1 if problems else 0
    problems = figures.check(paths)
    for problem in problems:
        print(problem)
    print(f"{figures.count(paths)} figures on {len(paths)} pages; "
          + (f"{len(problems)} stale (python -m bpe figures --update rewrites them)" if problems else "all current"))
    return 1 if problems else 0


def cmd_reproduce(args) -> int:
    from bpe.lab.publish import output_path
    from bpe.lab.reproduce import DEFAULT_OUT, PUBLISHED_OUT, run_reproduce

    if args.publish and (args.quick or args.repeat):
        raise BPEError("--publish writes the committed result: it takes the full plan, without --quick or --repeat")
    out = output_path(args.out, DEFAULT_OUT, PUBLISHED_OUT, args.publish, "python -m bpe reproduce --publish")
    run_reproduce(out, quick=args.quick, repeat=args.repeat, workers=args.workers)
    return 0


def _add_reproduce_parser(sub) -> None:
    rep = sub.add_parser("reproduce", help="measure each optimization step of the article series on the ladder "
                                           "(TinyStories-like and web-like text; docs/articles.md)")
    rep.add_argument("--quick", action="store_true", help="the same plan on tiny inputs, in seconds (ratios mean nothing)")
    rep.add_argument("--repeat", type=int, default=None, help="runs per rung, interleaved (default 3; 1 with --quick)")
    rep.add_argument("--workers", type=int, default=None, help="pre-tokenization processes (default: CPU count)")
    rep.add_argument("--out", default=None, metavar="FILE.json", help="where the result goes (default out/articles-bench.json)")
    rep.add_argument("--publish", action="store_true",
                     help="write the committed docs/articles-bench.json (refused from a tree with uncommitted changes)")
    rep.set_defaults(func=cmd_reproduce)


def cmd_handout(args) -> int:
    from pathlib import Path

    from bpe.lab.handout import DEFAULT_OUT, PUBLISHED_OUT, run_handout
    from bpe.lab.runinfo import check_publishable

    if args.publish:
        if args.quick or args.tinystories or args.owt:
            raise BPEError("--publish writes the committed stand-in answers: it takes no --quick, --tinystories or --owt")
        check_publishable("python -m bpe handout --publish")
    out = Path(args.out) if args.out else PUBLISHED_OUT if args.publish else DEFAULT_OUT
    run_handout(args.tinystories or "tinystories-synth-50MB", args.owt or "webtext-synth-20MB", out,
                quick=args.quick, workers=args.workers)
    return 0


def _add_handout_parser(sub) -> None:
    h = sub.add_parser("handout", help="answer the CS336 handout's tokenizer questions (docs/handout.md)")
    h.add_argument("--tinystories", default=None, help="TinyStories data (default tinystories-synth-50MB; real: tinystories)")
    h.add_argument("--owt", default=None, help="OpenWebText data (default webtext-synth-20MB; real: owt)")
    h.add_argument("--quick", action="store_true", help="tiny stand-ins, small vocabs: seconds (for tests)")
    h.add_argument("--workers", type=int, default=None, help="pre-tokenization processes (default: CPU count)")
    h.add_argument("--out", default=None, metavar="FILE.json", help="default out/handout-answers.json")
    h.add_argument("--publish", action="store_true",
                   help="write the committed docs/handout-answers.json (refused from a tree with uncommitted changes)")
    h.set_defaults(func=cmd_handout)


def _add_figures_parser(sub) -> None:
    fig = sub.add_parser("figures", help="check the figures the pages quote against the committed result files")
    fig.add_argument("pages", nargs="*", help="pages to check (default: README.md, docs/, profiles/README.md)")
    fig.add_argument("--update", action="store_true", help="rewrite every quoted figure from its result file")
    fig.set_defaults(func=cmd_figures)


def _add_encode_parser(sub) -> None:
    encode = sub.add_parser("encode", help="encode a text file into a .npy of token ids (uint16 when the vocab fits)")
    encode.add_argument("--tokenizer", required=True, metavar="DIR", help="a tokenizer saved by train --out DIR")
    encode.add_argument("--data", required=True, help="data set name or file path")
    encode.add_argument("--out", required=True, metavar="FILE.npy", help="where the ids go (written atomically)")
    encode.add_argument("--workers", type=int, default=None, help="encoding processes (default: CPU count)")
    encode.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="invalid UTF-8: fail naming the offset (strict) or decode with U+FFFD (replace)")
    encode.add_argument("--chunk-size", default="1MiB", metavar="SIZE",
                        help="text per task (default 1MiB); memory grows with it, not with the file")
    encode.add_argument("--peers", action="store_true",
                        help="then time tiktoken on the same text, merges and threads; check the ids are identical")
    encode.set_defaults(func=cmd_encode)


def _add_merge_cost_parser(sub) -> None:
    cost = sub.add_parser("merge-cost", help="compare merge algorithms alone (build + merges) on the same "
                                             "pre-token counts, for tuning")
    cost.add_argument("candidates", nargs="+", metavar="CANDIDATE",
                      help="a variant name (v6) or the path of a file that defines Merger")
    _add_training_args(cost, guarded=False)
    cost.add_argument("--repeat", type=int, default=5, help="runs per candidate, taking turns (default 5)")
    cost.add_argument("--instructions", action="store_true",
                      help="also count each candidate's instructions once under valgrind (deterministic)")
    cost.set_defaults(func=cmd_merge_cost)


def _add_report_parser(sub) -> None:
    report = sub.add_parser("report", help="bench every variant and write docs/report.md with plots")
    _add_training_args(report)
    report.add_argument("--reduced-vocab-size", type=int, default=2_000,
                        help="second table's vocab, for variants too slow at the main vocab (default 2000)")
    report.add_argument("--v1-vocab-size", type=int, default=300,
                        help="third table's vocab, for v1 when it is too slow at both (default 300)")
    report.add_argument("--no-scaling", action="store_true",
                        help="skip the time-against-corpus-size and time-against-workers runs")
    report.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); medians are reported")
    report.add_argument("--peers", action="store_true", help="also time the peers (bpe/lab/peers.py, with v6)")
    report.add_argument("--out-dir", default=None,
                        help="where report.md and the plots go (default out/report/; docs/ with --publish)")
    report.add_argument("--publish", action="store_true",
                        help="rewrite the committed report (docs/, or --out-dir such as docs/web); refused from a "
                             "tree with uncommitted changes, so its provenance names a real commit")
    report.add_argument("--variant", action="append", default=None, metavar="V",
                        help="as for bench: ladder variants and/or your own trainer (a .py file or "
                             "module:function), comma list, repeatable (default: every ladder variant)")
    report.set_defaults(func=cmd_report)


def _add_profile_parser(sub) -> None:
    profile = sub.add_parser("profile", help="profile one variant's training under scalene; write "
                                             "profiles/<variant>-<data>-<vocab>.{json,md}")
    profile.add_argument("--variant", default=None, help="v1..vN (required unless --summarize)")
    _add_training_args(profile)
    profile.add_argument("--out-dir", default=None,
                         help="where the profile goes (default out/profiles/; profiles/ with --publish)")
    profile.add_argument("--publish", action="store_true",
                         help="rewrite the committed profile in profiles/; refused when the code has uncommitted "
                              "changes (docs/ and profiles/ do not count)")
    profile.add_argument("--top", type=int, default=10, help="lines listed per table (default 10)")
    profile.add_argument("--summarize", default=None, metavar="FILE.json",
                         help="print the markdown summary of a saved scalene profile instead")
    profile.add_argument("--clean", nargs="+", default=None, metavar="FILE.json",
                         help="rewrite saved profiles' machine paths as repo-relative ones (and their summaries)")
    profile.set_defaults(func=cmd_profile)


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
                       help=f"special token for --text (repeatable; default {defaults.SPECIAL_TOKEN})")
    trace.add_argument("--no-special", action="store_true", help="--text without special tokens")
    trace.set_defaults(func=cmd_trace)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bpe", description="byte-level BPE training, a ladder of optimizations")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on error")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a tokenizer")
    train.add_argument("--variant", default=None, help="v1..vN (default: the fastest)")
    _add_training_args(train)
    train.add_argument("--errors", choices=["strict", "replace"], default="strict",
                       help="invalid UTF-8: fail naming the offset (strict) or decode with U+FFFD (replace)")
    train.add_argument("--out", default=None, metavar="DIR",
                       help="write DIR/vocab.json, DIR/merges.txt (GPT-2 format) and DIR/train.json")
    train.add_argument("--format", action="append", choices=["tiktoken", "hf"], default=None,
                       help="with --out, also write DIR/tokenizer.tiktoken or DIR/tokenizer.json (repeatable)")
    train.set_defaults(func=cmd_train)

    bench = sub.add_parser("bench", help="time each stage of training; compare variants")
    bench.add_argument("--variant", action="append", default=None, metavar="V",
                       help="v1..vN, 'all', your own trainer (a .py file defining Merger or train_bpe, or "
                            "module:function), or a comma list of these; repeatable (default: the fastest). "
                            "Exit status 1 if a run fails or its merges differ from the reference")
    _add_training_args(bench)
    bench.add_argument("--repeat", type=int, default=3, help="runs per variant (default 3); the median is reported")
    bench.add_argument("--json", default=None, metavar="OUT", help="write every figure as JSON to OUT")
    bench.add_argument("--busy", type=int, default=0, metavar="N",
                       help="measure with N other processes each spinning on a core (a machine that is not idle)")
    bench.add_argument("--peers", nargs="?", const="all", default=None, metavar="NAMES",
                       help="also train the peers on the same data: all of them, or a comma list of tokenizers, "
                            "tokenizers-file, rustbpe, bpeasy (pip install -e '.[peers]')")
    bench.set_defaults(func=cmd_bench)
    _add_trace_parser(sub)
    _add_report_parser(sub)
    _add_merge_cost_parser(sub)
    _add_profile_parser(sub)

    estimate = sub.add_parser("estimate", help="estimate each variant's time and memory on some data, "
                                               "without training")
    estimate.add_argument("--variant", default=None, help="v1..vN or a comma list (default: all)")
    _add_training_args(estimate, guarded=False, shows_progress=False)
    estimate.add_argument("--size", default=None, metavar="SIZE",
                          help="estimate for SIZE bytes of text that goes on like DATA (e.g. 2.1GB)")
    estimate.add_argument("--json", default=None, metavar="OUT", help="also write the estimates as JSON to OUT")
    estimate.set_defaults(func=cmd_estimate)
    _add_encode_parser(sub)
    _add_figures_parser(sub)
    _add_reproduce_parser(sub)
    _add_handout_parser(sub)

    data = sub.add_parser("data", help="list the data sets, download one")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    data_sub.add_parser("list", help="every data set name, its file, size and whether it is present")
    get = data_sub.add_parser("get", help="download a data set into data/ (resumes an interrupted download)")
    get.add_argument("name", help="gutenberg-books, tinystories, tinystories-valid, owt, owt-valid (downloaded); "
                                  "webtext-synth, tinystories-synth (generated)")
    get.add_argument("--size", default=None, metavar="SIZE",
                     help="generated data sets only: how many bytes (default 100MB), e.g. 20MB")
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    data.set_defaults(func=cmd_data)
    return parser


class _PipeSafeStdout:
    """stdout that survives its reader leaving (``bpe train ... | head -1``): later writes are dropped, so the
    run goes on and saves its files instead of dying on the next print."""

    def __init__(self, stream):
        self._stream = stream

    def _closed_reader(self) -> None:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed_reader()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed_reader()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _interrupt_once(signum, frame):
    """The first Ctrl-C interrupts; later ones are ignored, so none can break the clean-up or the message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    from bpe.dependencies import missing_dependencies, missing_dependency_message

    missing = missing_dependencies()
    if missing:  # before anything imports them: one line, not an import traceback
        print(f"bpe: error: {missing_dependency_message(missing)}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    stdout = sys.stdout
    sys.stdout = _PipeSafeStdout(stdout)
    handle_sigint = (threading.current_thread() is threading.main_thread()
                     and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if handle_sigint:
        signal.signal(signal.SIGINT, _interrupt_once)
    try:
        return _run(args)
    finally:
        sys.stdout = stdout
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
    except KeyboardInterrupt as exc:
        if args.debug:
            raise
        from bpe.errors import Terminated

        if isinstance(exc, Terminated):
            print(f"bpe: terminated ({signal.Signals(exc.signum).name})", file=sys.stderr)
            return 128 + exc.signum
        print("bpe: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        if args.debug:
            raise
        print("bpe: error: out of memory; train on less (--limit 100MB), with a smaller --vocab-size, or with a "
              "variant that needs less (python -m bpe estimate shows each one's peak)", file=sys.stderr)
        return 2
    except OSError as exc:  # the environment failed us mid-run (disk full, file vanished): still one line
        if args.debug:
            raise
        where = f": {exc.filename}" if exc.filename else ""
        print(f"bpe: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
