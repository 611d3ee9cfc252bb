"""``bpe train``: one training run as the command line asks for it, its files and its summary, in the
order a user relies on: the settings checked and the ``--out`` directory checked and locked; the first
line with the cost estimate (a long run refused unless forced), and a line saying why where the default rung
is not the fastest (v9 not built); ``train_bpe`` with an
:class:`~bpe.training.observer.Observer`; the tokenizer and ``train.json`` saved before anything more
is printed (a reader that leaves early costs no file); then the summary and what was written, which a
stop signal once the tokenizer is in place does not silence.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bpe.commands.arguments import show_progress, special_tokens, vocab_size
from bpe.corpus.corpus import open_corpus
from bpe.corpus.scheduler import distributed
from bpe.data.datasets import data_label, resolve_data
from bpe.defaults import CLUSTER_TIMEOUT
from bpe.errors import BPEError
from bpe.io.outputs import OutputLock, check_output_dir, load_tokenizer, save_tokenizer, tiktoken_warning, token_report
from bpe.lab.measure.estimate import check_affordable, estimate_file
from bpe.lab.measure.publish import machine_info
from bpe.running.cores import check_workers
from bpe.running.sizes import format_size, parse_size
from bpe.running.timer import StageTimer
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name
from bpe.training import train as training  # train_bpe looked up as each run starts: tests replace it
from bpe.training.observer import Observer
from bpe.training.options import (
    check_initial_merges,
    check_max_token_length,
    check_min_count,
    check_min_frequency,
    check_pattern,
    stopped_early,
)
from bpe.training.registry import DEFAULT_VARIANTS, best_variant, default_note, get_variant


@dataclass(frozen=True)
class TrainSettings:
    """What one ``bpe train`` was asked for (``vocab_size`` and ``special_tokens`` already resolved;
    ``special_tokens`` is None where ``--continue`` takes the saved tokenizer's)."""

    data: str | None
    variant: str | None  # None: the fastest rung (bpe.training.registry.best_variant)
    vocab_size: int
    special_tokens: list[str] | None
    workers: int | None = None
    limit: str | None = None  # e.g. "50MB": the first bytes, to the next document boundary
    errors: str = "strict"
    out_dir: str | None = None
    formats: tuple[str, ...] = ()
    force: bool = False
    progress: bool = False
    text_column: str = "text"  # the JSON field or Parquet column of a corpus's text
    cluster: str | None = None  # a Dask scheduler's address (or local): the counting goes there
    min_count: int | None = None  # pre-tokens counted fewer times are dropped (changes the merges)
    # The options of bpe/training/options.py: as typed (a value that is not a whole number is refused there).
    min_frequency: int | str | None = None  # a pair counted fewer times is never merged
    max_token_length: int | str | None = None  # no token longer, in bytes
    continue_from: str | None = None  # a saved tokenizer's directory: its merges first, its ids kept
    cluster_timeout: float = CLUSTER_TIMEOUT  # seconds a scheduler at an address has to answer
    pattern: str = DEFAULT_PATTERN  # the pre-tokenization pattern: gpt2, cl100k, o200k or a regex


def run(args) -> int:
    """The command, from its parsed arguments."""
    saved_specials = args.continue_from is not None and args.special is None and not args.no_special
    run_train(TrainSettings(args.data, args.variant, vocab_size(args), None if saved_specials else special_tokens(args),
                            args.workers, args.limit, args.errors, args.out, tuple(args.format or ()), args.force,
                            show_progress(args), args.text_column, args.cluster, args.min_count,
                            whole_number(args.min_frequency), whole_number(args.max_token_length),
                            args.continue_from, args.cluster_timeout, pattern=args.pattern))
    return 0


def whole_number(text: str | None) -> int | str | None:
    """A flag's value as an int where it reads as one; else as typed, for the check to name it."""
    return int(text) if text is not None and re.fullmatch(r"\s*[-+]?[0-9]+\s*", text) else text


def run_train(settings: TrainSettings, out=None) -> list[Path]:
    """Train as ``settings`` ask, save (with ``out_dir``) and print the summary; the paths written."""
    check_workers(settings.workers)
    check_min_count(settings.min_count)
    check_min_frequency(settings.min_frequency)
    check_max_token_length(settings.max_token_length)
    check_pattern(settings.pattern, settings.cluster)  # a bad regex: its one line before anything is read
    continued = None
    if settings.continue_from is not None:  # loaded and checked now: a wrong directory fails before training
        continued = load_tokenizer(settings.continue_from)
        if settings.special_tokens is None:
            settings = replace(settings, special_tokens=list(continued.special_tokens))
        check_initial_merges(continued, settings.special_tokens, settings.vocab_size)
    path = resolve_data(settings.data)
    open_corpus(path, text_column=settings.text_column)  # a glob that matches nothing fails now
    if settings.cluster is not None:
        distributed()  # without Dask: the one line saying what to install
    variant = settings.variant or best_variant()
    get_variant(variant)
    if settings.formats and settings.out_dir is None:
        raise BPEError("--format needs --out DIR (where to write the exported files)")
    if settings.out_dir is None:
        return _train(settings, path, variant, out or sys.stdout, continued)
    check_output_dir(settings.out_dir)  # fail now, not after training
    with OutputLock(settings.out_dir):  # held until saved: a second run into the same directory fails at once
        return _train(settings, path, variant, out or sys.stdout, continued)


def _train(settings: TrainSettings, path: Path, variant: str, out, continued=None) -> list[Path]:
    s, data = settings, data_label(settings.data)
    corpus = open_corpus(path, text_column=s.text_column)
    size, text = corpus.size, corpus.text_size
    if text is None:  # Parquet, JSON lines, compressed: the files' size is not the text's
        subset = (f"the first ~{parse_size(s.limit, '--limit'):,} bytes of its text, --limit {s.limit}; "
                  if s.limit is not None else "") + f"{size:,} bytes on disk, its text's counted as it is read"
    else:
        subset = (f"the first ~{min(parse_size(s.limit, '--limit'), size):,} of {size:,} bytes, --limit {s.limit}"
                  if s.limit is not None else f"{size:,} bytes")
    if corpus.plain_file is not None:  # the cost model reads a text file's sample
        estimate = estimate_file(corpus.plain_file, [variant], s.vocab_size, s.special_tokens, s.workers, s.limit)
        said = f"estimate {estimate[0].describe()}"
    else:
        estimate, said = [], f"{len(corpus.sources):,} file(s), counted as they are read (no estimate)"
    pattern = "" if pattern_name(s.pattern) == DEFAULT_PATTERN else f", pattern {pattern_name(s.pattern)}"
    print(f"bpe-lab train: {variant} on {data} ({subset}), vocab {s.vocab_size:,}, special {s.special_tokens}"
          f"{pattern}; {said}", file=out)
    if s.variant is None and variant != DEFAULT_VARIANTS[0]:  # the default is not the fastest here: say why
        print(default_note(), file=out)
    check_affordable(estimate, f"training {variant} on {data} at vocab {s.vocab_size:,}", s.force)
    if s.min_count is not None:
        print(f"--min-count {s.min_count:,}: pre-tokens counted fewer times are dropped before the merges, which "
              "then differ from training on every pre-token", file=out)
    if continued is not None:
        print(f"--continue {s.continue_from}: its {len(continued.merges):,} merges are made first, every id and its "
              "special tokens kept, then more are learned", file=out)
    if s.cluster is not None:  # the line a user (and a test) sees before the cluster counts
        print(f"counting on the Dask cluster at {s.cluster}", file=sys.stderr, flush=True)
    observer = Observer(timer=StageTimer(), progress=s.progress)
    started = time.perf_counter()
    vocab, merges = training.train_bpe(path, s.vocab_size, s.special_tokens, variant=variant, workers=s.workers,
                                       errors=s.errors, limit=s.limit, observer=observer,
                                       text_column=s.text_column, cluster=s.cluster, min_count=s.min_count,
                                       min_frequency=s.min_frequency, max_token_length=s.max_token_length,
                                       initial_merges=continued, cluster_timeout=s.cluster_timeout,
                                       pattern=s.pattern)
    elapsed = time.perf_counter() - started
    written: list[Path] = []
    told = False  # whether the wrote line is out
    try:
        written = _save(settings, variant, path, vocab, merges, observer)  # saved before anything is printed
        for line in summary_lines(settings, variant, vocab, merges, observer, elapsed, text is not None):
            print(line, file=out)
        if written:
            print(_wrote(written), file=out)
            told = True
    except KeyboardInterrupt as exc:
        # A stop signal once the new tokenizer is in place (also one held back while it was swapped in) does
        # not undo the save: what was written is said before the run's one line, which says so too.
        written = written or getattr(exc, "saved", [])
        if written:
            if not told:
                print(_wrote(written), file=out)
            exc.saved = written
        raise
    if not written:
        print("nothing saved: give --out DIR to write the tokenizer (vocab.json, merges.txt)", file=out)
    return written


def _wrote(written: list[Path]) -> str:
    return "wrote " + ", ".join(str(p) for p in written)


def summary_lines(settings: TrainSettings, variant: str, vocab, merges, observer, elapsed: float,
                  plain: bool = True) -> list[str]:
    """What is printed after training: merges and seconds, each stage, peak memory, the longest tokens.
    ``plain``: the files' size was the text's (else the text's bytes, counted, are said)."""
    timer, corpus = observer.timer, observer.corpus
    if not plain:
        subset = f" ({corpus.bytes_used:,} bytes of text{', --limit' if settings.limit else ''})"
    else:
        subset = f" (first {corpus.bytes_used:,} of {corpus.file_bytes:,} bytes)" if settings.limit else ""
    lines = [f"trained {variant} on {data_label(settings.data)}{subset}: {len(merges):,} merges, "
             f"vocab {len(vocab):,}, {elapsed:.2f}s"]
    asked = settings.vocab_size - 256 - len(settings.special_tokens)
    stopped = stopped_early(len(merges), asked, corpus.bytes_used, observer.stopped)
    if stopped:
        lines.append(stopped)
    lines += [f"  {name:<12} {seconds:8.3f}s" for name, seconds in timer.as_dict()["stages"].items()]
    peak = timer.peak_rss
    workers = f", {format_size(peak['children'])} (largest pre-tokenization worker)" if peak["children"] else ""
    lines.append(f"peak memory: {format_size(peak['self'])} (training process){workers}")
    if merges:  # no merge, no learned token to show
        lines += token_report(vocab, settings.special_tokens)
    return lines


def _save(settings: TrainSettings, variant: str, path: Path, vocab, merges, observer) -> list[Path]:
    """With ``out_dir``: the tokenizer and ``train.json`` saved; the paths written (none without it)."""
    if settings.out_dir is None:
        return []
    s = settings
    info = {
        "settings": {"variant": variant, "data": data_label(s.data), "path": str(path), "vocab_size": s.vocab_size,
                     "special_tokens": s.special_tokens, "workers": s.workers, "limit": s.limit, "errors": s.errors,
                     "text_column": s.text_column, "cluster": s.cluster, "min_count": s.min_count,
                     "min_frequency": s.min_frequency, "max_token_length": s.max_token_length,
                     "continued_from": s.continue_from, "pattern": s.pattern},
        "corpus": asdict(observer.corpus),
        "merger": observer.summary,  # the merger's own facts (v7: gathered_at); {} for most
        "result": {"merges": len(merges), "vocab_size": len(vocab)},
        "timings": observer.timer.as_dict(),
        "machine": machine_info(),
    }
    written = save_tokenizer(settings.out_dir, vocab, merges, settings.special_tokens, formats=settings.formats,
                             train_info=info, pattern=s.pattern)
    warning = tiktoken_warning(vocab, s.pattern) if "tiktoken" in s.formats else None
    if warning is not None:
        print(f"bpe: warning: {warning}", file=sys.stderr)
    return written
