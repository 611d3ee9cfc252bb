"""``train_bpe``: the CS336 interface, shared by every variant, in four phases.

1. check the arguments, all of them, before a byte is read (:func:`check_arguments`);
2. count the pre-tokens with the rung's ``count_pretokens`` (:func:`count_corpus`);
3. merge with the rung's ``Merger`` (:func:`make_merges`);
4. return the vocab (bytes, special tokens, one id per merge: :func:`build_vocab`) and the merges.

What a run reports beyond ``(vocab, merges)`` (stage times, progress, the processes it counted in,
the corpus figures, the merger's own summary) goes to the :class:`~bpe.training.observer.Observer`
the caller passes in.

>>> vocab, merges = train_bpe("tests/fixtures/corpus.en", 260, ["<|endoftext|>"], variant="v2")
>>> len(vocab), merges[0]
(260, (b' ', b't'))
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike

from bpe.corpus.cluster import check_cluster, count_on_cluster
from bpe.corpus.corpus import Corpus as TrainingCorpus  # (Corpus below is the observer's: a run's figures)
from bpe.corpus.corpus import open_corpus
from bpe.corpus.scheduler import check_cluster_timeout
from bpe.corpus.sources import is_dataset
from bpe.corpus.text_file import check_input_file
from bpe.counting.documents import count_documents, counts_bytes
from bpe.counting.parts import parts_of
from bpe.counting.plain import PretokenCounts
from bpe.defaults import CLUSTER_TIMEOUT, SPECIAL_TOKENS
from bpe.errors import ArgumentError, BPEError
from bpe.running.cores import check_workers
from bpe.running.pool import pools_started
from bpe.running.sizes import parse_size
from bpe.split.chunking import find_limit_end
from bpe.split.patterns import DEFAULT_PATTERN, cuts_of
from bpe.training.merge_loop import Pair, Rules, run_merges
from bpe.training.observer import Corpus, Observer
from bpe.training.options import (
    Continued,
    check_initial_merges,
    check_max_token_length,
    check_min_count,
    check_min_frequency,
    check_pattern,
)
from bpe.training.registry import get_variant
from bpe.training.rung import merger_summary, pattern_keyword

Vocab = dict[int, bytes]


def check_special_tokens(special_tokens: Sequence[str]) -> list[str]:
    if isinstance(special_tokens, (str, bytes)):  # list("<|endoftext|>") would be 13 one-character tokens
        raise BPEError(f"special_tokens must be a list of strings, not a single string: {special_tokens!r}")
    special_tokens = list(special_tokens)
    for token in special_tokens:
        if not isinstance(token, str):
            raise BPEError(f"special tokens must be strings, got {token!r}")
        if token == "":
            raise BPEError("special tokens must not be empty")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            raise BPEError(f"special token {token!r} cannot be encoded as UTF-8") from None
    duplicates = sorted({t for t in special_tokens if special_tokens.count(t) > 1})
    if duplicates:
        raise BPEError(f"special token listed more than once: {', '.join(map(repr, duplicates))}")
    return special_tokens


def check_vocab_size(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """The number of merges to make, or a clear error when the vocab cannot even hold the base."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise BPEError(f"vocab_size must be an integer, got {vocab_size!r}")
    minimum = 256 + len(special_tokens)
    if vocab_size < minimum:
        why = (f"{vocab_size} is too small: it must be at least {minimum} (256 byte tokens + "
               f"{len(special_tokens)} special token(s))")
        raise ArgumentError(f"vocab_size {why}", f"--vocab-size {why}")
    return vocab_size - minimum


def build_vocab(special_tokens: Sequence[str], merges: Sequence[Pair]) -> Vocab:
    """ids 0-255: the bytes; then the special tokens in the order given; then one id per merge."""
    vocab: Vocab = {i: bytes([i]) for i in range(256)}
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    for first, second in merges:
        vocab[len(vocab)] = first + second
    return vocab


@dataclass(frozen=True)
class Arguments:
    """``train_bpe``'s arguments once checked (phase 1): what the other phases read."""

    path: str | PathLike
    file_bytes: int
    special_tokens: list[str]
    num_merges: int
    rung: object  # the variant module, or any object with its ``count_pretokens`` and ``Merger``
    workers: int | None
    errors: str
    limit: int | None  # bytes
    # Any other corpus than one local text file (bpe/corpus/corpus.py: files of JSON lines or Parquet,
    # several files, documents in memory); ``path`` is then None and ``file_bytes`` its files' size.
    corpus: object = None
    cluster: object = None  # a dask.distributed Client or a scheduler's address: the counting goes there
    min_count: int | None = None  # pre-tokens counted fewer times are dropped before the merges
    rules: Rules = field(default_factory=Rules)  # min_frequency, max_token_length: what may be merged
    continued: Continued = field(default_factory=lambda: Continued([]))  # the merges made first, the vocab kept
    cluster_timeout: float = CLUSTER_TIMEOUT  # seconds a scheduler at an address has to answer
    pattern: str = DEFAULT_PATTERN  # the pre-tokenization pattern: a name (gpt2, cl100k, o200k) or a regex


def check_arguments(input_path, vocab_size, special_tokens, variant, workers, errors, limit, *,
                    text_column: str = "text", cluster=None, min_count: int | None = None,
                    min_frequency: int | None = None, max_token_length: int | None = None,
                    initial_merges=None, cluster_timeout: float = CLUSTER_TIMEOUT,
                    pattern: str = DEFAULT_PATTERN) -> Arguments:
    """Phase 1: every argument checked, each failure one :class:`BPEError` naming it, before a byte is read
    (apart from the files' sizes and, on a cluster, the scheduler's answer)."""
    special_tokens = check_special_tokens(special_tokens)
    num_merges = check_vocab_size(vocab_size, special_tokens)
    if errors not in ("strict", "replace"):
        raise BPEError(f"errors must be 'strict' or 'replace', got {errors!r}")
    check_workers(workers)
    rung = variant if hasattr(variant, "Merger") else get_variant(variant)
    limit = parse_size(limit, "limit") if limit is not None else None
    check_min_count(min_count)
    check_min_frequency(min_frequency)
    check_max_token_length(max_token_length)
    cluster_timeout = check_cluster_timeout(cluster_timeout)
    check_pattern(pattern, cluster)
    continued = check_initial_merges(initial_merges, special_tokens, vocab_size)
    if continued.vocab is not None:  # a tokenizer's vocab, kept as it is: the new merges fill it to vocab_size
        num_merges = len(continued.merges) + vocab_size - len(continued.vocab)
    options = dict(min_count=min_count, rules=Rules(min_frequency, max_token_length), continued=continued,
                   cluster_timeout=cluster_timeout, pattern=pattern)
    # The one check of the path: every layer below trusts it, and the end it is given.
    corpus = open_corpus(input_path, text_column=text_column)
    if cluster is not None:
        check_cluster(cluster, corpus, limit)
    path = corpus.plain_file
    if path is not None and cluster is None:  # one local text file: counted as it always was
        file_bytes = check_input_file(path).stat().st_size
        # the file itself, where a directory or a glob named just it
        return Arguments(path, file_bytes, special_tokens, num_merges, rung, workers, errors, limit,
                         **options)  # the file itself, where a directory or a glob named just it
    return Arguments(None, corpus.size or 0, special_tokens, num_merges, rung, workers, errors, limit, corpus,
                     cluster, **options)


def count_corpus(arguments: Arguments, observer: Observer) -> PretokenCounts:
    """Phase 2: the rung's ``count_pretokens`` over the text, timed as ``pretokenize``, telling the
    progress of the bytes as it counts them; then the observer hears how many processes counted and the
    :class:`Corpus` figures.

    Returns what ``count_pretokens`` does: the counts (:class:`~bpe.counting.plain.PretokenCounts`, or
    v7's, which answer the same).
    """
    timer, progress = observer.timer, observer.progress
    path, special_tokens, errors = arguments.path, arguments.special_tokens, arguments.errors
    if arguments.corpus is not None:
        return count_documents_of(arguments, observer)
    timer.start()
    try:
        with timer.stage("pretokenize"):
            # A given `end` tells the counter the path is checked.  A size that reads 0 (an empty file,
            # or /proc/cpuinfo, which has bytes all the same) stays open-ended, so it is read to its real end.
            end = arguments.file_bytes or None
            if arguments.limit is not None:
                end = find_limit_end(path, arguments.limit, special_tokens, errors=errors,
                                     cuts=cuts_of(arguments.pattern))
            progress.start_bytes(arguments.file_bytes if end is None else end)
            with pools_started() as pools:  # the processes it used, which the rung may choose itself
                pretoken_counts = arguments.rung.count_pretokens(path, special_tokens, workers=arguments.workers,
                                                                 errors=errors, end=end, on_bytes=progress.on_bytes,
                                                                 **pattern_keyword(arguments.pattern))
    finally:
        progress.close()
    with closed_on_error(pretoken_counts):
        observer.on_workers(max(pools, default=1))
        observer.on_corpus(Corpus(file_bytes=arguments.file_bytes,
                                  bytes_used=arguments.file_bytes if end is None else end, limit=arguments.limit,
                                  pretokens=pretoken_counts.total(), distinct_pretokens=len(pretoken_counts)))
    return pretoken_counts


def count_documents_of(arguments: Arguments, observer: Observer) -> PretokenCounts:
    """Phase 2 for any other corpus (:mod:`bpe.corpus.corpus`): its documents read as a stream and counted
    by the rung's counter of texts, here or on a cluster (:mod:`bpe.corpus.cluster`); then the observer
    hears as :func:`count_corpus` tells it."""
    timer, progress, corpus = observer.timer, observer.progress, arguments.corpus
    timer.start()
    try:
        with timer.stage("pretokenize"):
            progress.start_bytes(corpus.size)
            with pools_started() as pools:
                if arguments.cluster is not None:
                    pretoken_counts, used = count_on_cluster(
                        arguments.cluster, parts_of(arguments.rung), corpus, arguments.special_tokens,
                        raw=counts_bytes(arguments.rung), errors=arguments.errors, on_bytes=progress.on_bytes,
                        timeout=arguments.cluster_timeout)
                else:
                    pretoken_counts, used = count_documents(
                        arguments.rung, corpus, arguments.special_tokens, workers=arguments.workers,
                        errors=arguments.errors, limit=arguments.limit, on_bytes=progress.on_bytes,
                        pattern=arguments.pattern)
    finally:
        progress.close()
    with closed_on_error(pretoken_counts):
        observer.on_workers(max(pools, default=1))
        observer.on_corpus(Corpus(file_bytes=corpus.size if corpus.size is not None else used, bytes_used=used,
                                  limit=arguments.limit, pretokens=pretoken_counts.total(),
                                  distinct_pretokens=len(pretoken_counts)))
    return pretoken_counts


def at_least(pretoken_counts: PretokenCounts, min_count: int) -> PretokenCounts:
    """The counts without the pre-tokens counted fewer than ``min_count`` times (``--min-count``, as
    SentencePiece trims rare words; not ``min_frequency``, a rule of the merges): what the merges start from.
    The merges change (a dropped pre-token's pairs no longer count), so it is off unless asked for; it bounds the
    merge state's memory, which grows with the distinct pre-tokens (docs/scaling-out.md)."""
    with closed_on_error(pretoken_counts):
        kept = PretokenCounts({token: count for token, count in pretoken_counts.items() if count >= min_count})
    pretoken_counts.close()
    return kept


@contextmanager
def closed_on_error(pretoken_counts: PretokenCounts):
    """The counts are released (v7's: their worker processes stopped) if what runs inside fails before a
    ``Merger`` has taken them over."""
    try:
        yield
    except BaseException:
        pretoken_counts.close()
        raise


def make_merges(arguments: Arguments, pretoken_counts: PretokenCounts, observer: Observer) -> list[Pair]:
    """Phase 3: the rung's ``Merger`` built over the counts (``pair_count``), the merges of a continued run
    made first (timed as ``update``), then up to ``num_merges`` merges in all
    (:func:`~bpe.training.merge_loop.run_merges`: ``select`` and ``update``, as the ``rules`` allow).

    Then the observer hears why the merges stopped early where an option stopped them, and the Merger's
    ``summary()``, untouched; like ``close()`` it is optional.
    """
    timer, rules = observer.timer, arguments.rules
    with closed_on_error(pretoken_counts), timer.stage("pair_count"):
        merger = arguments.rung.Merger(pretoken_counts)
    merges = run_merges(merger, arguments.num_merges, timer, progress=observer.progress, rules=rules,
                        initial=arguments.continued.merges)
    timer.finish()
    if rules.why is not None:
        observer.on_stopped(rules.why)
    facts = merger_summary(merger)
    if facts is not None:
        observer.on_summary(facts)
    return merges


def train_bpe(
    input_path: str | PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    variant=None,
    workers: int | None = None,
    errors: str = "strict",
    limit: int | str | None = None,
    observer: Observer | None = None,
    text_column: str = "text",
    cluster=None,
    min_count: int | None = None,
    min_frequency: int | None = None,
    max_token_length: int | None = None,
    initial_merges=None,
    cluster_timeout: float = CLUSTER_TIMEOUT,
    pattern: str = DEFAULT_PATTERN,
) -> tuple[Vocab, list[Pair]]:
    """Train a byte-level BPE tokenizer on the file at ``input_path``.

    Returns ``(vocab, merges)`` with CS336 semantics: the 256 single bytes and each special token are
    in the vocab; ``merges`` lists the merged pairs in the order they were made and may be shorter
    than ``vocab_size`` asks for if the corpus runs out of pairs.  ``variant`` picks the algorithm
    (default: the fastest; or any object with a variant module's ``count_pretokens`` and ``Merger``,
    as the lab passes a candidate's); all variants return identical results.  ``workers``: the
    processes of a parallel variant.  ``errors="replace"`` decodes invalid UTF-8 with U+FFFD instead
    of failing.  ``limit`` (bytes, or a size such as ``"50MB"``) trains on the first ``limit`` bytes
    extended to the next document boundary (see :func:`bpe.split.chunking.find_limit_end`); every
    variant sees exactly the same bytes.  ``observer`` (:class:`bpe.training.observer.Observer`) hears
    what the run reports beyond the result: stage times, progress, the corpus figures, the merger's summary.

    ``input_path`` may also be a corpus as it comes (:mod:`bpe.corpus.corpus`): a directory, a glob, a
    list of paths, an fsspec URL (``s3://``, ``hf://``), files of JSON lines (``.jsonl``, ``.json.gz``,
    ``.jsonl.zst``: the text in field ``text_column``) or Parquet (the text in column ``text_column``), or a
    Hugging Face ``datasets`` object; each document then ends with the first special token, so none
    merges across, and the merges equal those of one file of the documents so separated.  ``cluster`` (a
    ``dask.distributed.Client`` or a scheduler's address) counts the files on its workers
    (:mod:`bpe.corpus.cluster`); ``cluster_timeout``: the seconds a scheduler at an address has to answer
    (:mod:`bpe.corpus.scheduler`), else one line says so.  ``min_count`` drops the pre-tokens counted fewer
    times before the merges: it changes the merges, so it is off by default.  ``pattern`` splits the text into
    pre-tokens: ``"gpt2"`` (the default, the CS336 handout's), ``"cl100k"`` (GPT-4's), ``"o200k"`` (GPT-4o's),
    or any other string as a regex of one's own (:mod:`bpe.split.patterns`, docs/patterns.md); every variant
    gives the same merges with every pattern.

    Off by default too (:mod:`bpe.training.options`): ``min_frequency`` (a pair counted fewer times is never
    merged), ``max_token_length`` (no merge makes a longer token, in bytes), ``initial_merges`` (continued
    training from a list of merges or a ``Tokenizer``, whose ids are kept: one run's result on the same corpus).
    """
    # 1. Check the arguments, all of them, before a byte is read.
    arguments = check_arguments(input_path, vocab_size, special_tokens, variant, workers, errors, limit,
                                text_column=text_column, cluster=cluster, min_count=min_count,
                                min_frequency=min_frequency, max_token_length=max_token_length,
                                initial_merges=initial_merges, cluster_timeout=cluster_timeout, pattern=pattern)
    observer = observer if observer is not None else Observer()
    # 2. Count the pre-tokens.
    pretoken_counts = count_corpus(arguments, observer)
    if arguments.min_count is not None:
        pretoken_counts = at_least(pretoken_counts, arguments.min_count)
    # 3. Merge.
    merges = make_merges(arguments, pretoken_counts, observer)
    # 4. The vocab and the merges.
    if arguments.continued.vocab is not None:  # a tokenizer continued: its vocab kept, the new ids after it
        return arguments.continued.vocab_after(merges), merges
    return build_vocab(arguments.special_tokens, merges), merges


def train_bpe_from_iterator(
    iterator,
    vocab_size: int,
    special_tokens: Sequence[str] = SPECIAL_TOKENS,
    *,
    length: int | None = None,
    variant=None,
    workers: int | None = None,
    errors: str = "strict",
    limit: int | str | None = None,
    observer: Observer | None = None,
    text_column: str = "text",
    min_count: int | None = None,
    min_frequency: int | None = None,
    max_token_length: int | None = None,
    initial_merges=None,
    pattern: str = DEFAULT_PATTERN,
) -> tuple[Vocab, list[Pair]]:
    """Train on documents in memory, as HF ``tokenizers``' and rustbpe's ``train_from_iterator`` do: an
    iterator of strings, or of lists of strings (HF's batches), or a Hugging Face ``datasets`` object (its
    ``text_column``).  Each document ends with the first special token (``<|endoftext|>`` by default), so
    the merges equal those of a file of the documents joined by it; the iterator is read once, as a
    stream, and counted as it is read.  ``length`` is accepted for HF's signature (the number of items,
    which HF shows as progress) and not needed here.  The other arguments are :func:`train_bpe`'s.
    """
    if isinstance(iterator, (str, bytes, PathLike)):
        raise BPEError("train_bpe_from_iterator takes documents (an iterator of strings), not a path or one "
                       "string: give a file to train_bpe, or a list of documents here")
    if length is not None and (isinstance(length, bool) or not isinstance(length, int) or length < 0):
        raise BPEError(f"length must be a number of items, got {length!r}")
    if not is_dataset(iterator) and not hasattr(iterator, "__iter__"):
        raise BPEError(f"train_bpe_from_iterator takes an iterator of strings, got {type(iterator).__name__}")
    corpus = TrainingCorpus(documents=iterator, text_column=text_column,
                            label="the dataset" if is_dataset(iterator) else "the iterator")
    return train_bpe(corpus, vocab_size, special_tokens, variant=variant, workers=workers, errors=errors,
                     limit=limit, observer=observer, text_column=text_column, min_count=min_count,
                     min_frequency=min_frequency, max_token_length=max_token_length, initial_merges=initial_merges,
                     pattern=pattern)
