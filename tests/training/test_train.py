"""train_bpe (bpe/training/train.py): its phases (arguments checked before counting, what the observer hears,
the processes each rung counted in among it, the counts handle closed) and its semantics (special tokens,
vocab layout, early stop, bytes taken exactly, --limit's subset on every variant, the path checked once,
clear errors)."""

from __future__ import annotations

import math
import os
from collections import Counter
from types import SimpleNamespace

import pytest

from bpe import VARIANTS, BPEError, train_bpe
from bpe.counting.plain import count_file_serial
from bpe.running import cores
from bpe.running.timer import STAGES, StageTimer
from bpe.split.chunking import find_limit_end
from bpe.training.observer import Corpus, Observer
from bpe.training.rung import parallel as rung_is_parallel
from conftest import CORPUS_EN, DEFAULT_CORPUS, cs336_merges, cs336_vocab

ALL_VARIANTS = list(VARIANTS)
EOT = "<|endoftext|>"
V2 = VARIANTS["v2"]


def rung(count_pretokens=V2.count_pretokens, merger=V2.Merger):
    """A rung as train_bpe takes it: any object with a ``count_pretokens`` and a ``Merger``."""
    return SimpleNamespace(count_pretokens=count_pretokens, Merger=merger)


class Events(Observer):
    """An observer that also notes the order in which it hears things."""

    def __init__(self, events: list, **kwargs):
        super().__init__(**kwargs)
        self.events = events

    def on_corpus(self, corpus):
        self.events.append("corpus")
        super().on_corpus(corpus)

    def on_summary(self, summary):
        self.events.append("summary")
        super().on_summary(summary)


def test_positional_call_matches_the_cs336_merges():
    vocab, merges = train_bpe(CORPUS_EN, 500, [EOT])  # the assignment's call: three positional arguments
    assert merges == cs336_merges()
    assert set(vocab.values()) == set(cs336_vocab().values()) and set(vocab) == set(range(500))


BAD_ARGUMENTS = [
    ({"input_path": 42}, "input_path must be a file path"),
    ({"special_tokens": EOT}, "must be a list of strings, not a single string"),
    ({"special_tokens": [EOT, EOT]}, "listed more than once"),
    ({"vocab_size": 256}, "vocab_size 256 is too small"),
    ({"vocab_size": "300"}, "vocab_size must be an integer"),
    ({"errors": "ignore"}, "errors must be 'strict' or 'replace'"),
    ({"workers": 0}, "workers must be at least 1"),
    ({"limit": "fifty"}, "cannot read limit 'fifty'"),
    ({"input_path": CORPUS_EN.parent / "missing.txt"}, "input file not found"),
]


@pytest.mark.parametrize("bad, message", BAD_ARGUMENTS, ids=[next(iter(b)) + f"-{i}" for i, (b, _) in
                                                            enumerate(BAD_ARGUMENTS)])
def test_bad_arguments_are_refused_before_any_counting(bad, message):
    counted = []

    def count(*args, **kwargs):
        counted.append(args)
        return V2.count_pretokens(*args, **kwargs)

    arguments = {"input_path": CORPUS_EN, "vocab_size": 300, "special_tokens": [EOT], **bad}
    observer = Events([], timer=StageTimer())
    with pytest.raises(BPEError, match=message):
        train_bpe(arguments.pop("input_path"), arguments.pop("vocab_size"), arguments.pop("special_tokens"),
                  variant=rung(count), observer=observer, **arguments)
    assert counted == [] and observer.events == [] and observer.timer.stages == {}


def test_an_unknown_variant_is_refused_before_any_counting():
    observer = Observer(timer=StageTimer())
    with pytest.raises(BPEError, match="unknown variant 'v99'"):
        train_bpe(CORPUS_EN, 300, [EOT], variant="v99", observer=observer)
    assert observer.timer.stages == {} and observer.corpus is None


def test_the_observer_hears_the_corpus_the_stage_times_and_the_summary():
    events = []
    facts = {"words": None}

    class Summarising(V2.Merger):
        def summary(self):
            facts["words"] = len(self.words)
            return facts

        def close(self):
            events.append("close")

    observer = Events(events, timer=StageTimer())
    _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant=rung(merger=Summarising), observer=observer)
    assert merges == cs336_merges()
    counts = count_file_serial(CORPUS_EN, [EOT])
    size = CORPUS_EN.stat().st_size
    assert observer.corpus == Corpus(file_bytes=size, bytes_used=size, limit=None, pretokens=counts.total(),
                                     distinct_pretokens=len(counts))
    assert observer.summary is facts and facts["words"] == len(counts)  # handed over untouched
    assert events == ["corpus", "close", "summary"]  # the summary after the merges, once the merger is closed
    assert set(observer.timer.stages) == set(STAGES) and observer.timer.merges == len(merges)
    assert observer.timer.checkpoints[-1][0] == len(merges)


@pytest.mark.parametrize("name", ALL_VARIANTS)
def test_the_observer_hears_the_workers_a_rung_counted_in_as_given_whatever_the_cores(name, monkeypatch):
    # Every core looks taken: a rung left to choose counts in this process alone, and one given a count
    # uses it (corpus.en makes two chunks); v1 and v2 count in this process whatever they are given.
    monkeypatch.setattr(cores, "_last_look", [-math.inf, None])
    monkeypatch.setattr(cores, "measure_busy_cores", lambda: float(os.cpu_count() or 1))
    pooled = rung_is_parallel(VARIANTS[name])
    for workers, expected in ((2, 2 if pooled else 1), (None, 1)):
        observer = Observer()
        _, merges = train_bpe(CORPUS_EN, 300, [EOT], variant=name, workers=workers, observer=observer)
        assert observer.workers == expected, (name, workers)
        assert merges == cs336_merges()[:len(merges)] and len(merges) == 300 - 257


def test_a_limit_is_in_the_corpus_figures():
    observer = Observer()
    train_bpe(CORPUS_EN, 300, [EOT], variant="v2", limit="20KB", observer=observer)
    assert observer.corpus.limit == 20_000 and 20_000 <= observer.corpus.bytes_used < observer.corpus.file_bytes


def test_a_limit_ends_where_the_patterns_rule_allows(tmp_path):
    """--limit's end is a safe cut for the pattern: a newline after punctuation is one for GPT-2's, not for
    cl100k's, whose pre-tokens hold it (``"!\n"``); every rung then counts the same first bytes."""
    path = tmp_path / "lines.txt"
    path.write_text("Go on!\nAnd on 2024.\n" * 2000, encoding="utf-8")
    gpt2_end = find_limit_end(path, 1000, [])
    cl100k_end = find_limit_end(path, 1000, [], cuts="spaces")
    assert path.read_bytes()[gpt2_end:gpt2_end + 1] == b"\n" and path.read_bytes()[cl100k_end:cl100k_end + 1] == b" "
    expected = train_bpe(path, 300, [], variant="v1", limit=1000, pattern="cl100k")
    observer = Observer()
    for name in VARIANTS:
        assert train_bpe(path, 300, [], variant=name, limit=1000, pattern="cl100k", observer=observer) == expected
        assert observer.corpus.bytes_used == cl100k_end, name


def test_a_merger_without_summary_works():
    assert not hasattr(V2.Merger, "summary")
    observer = Observer()
    _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant="v2", observer=observer)
    assert merges == cs336_merges() and observer.summary == {}


def test_a_summary_that_is_not_a_dict_is_named():
    class Chatty(V2.Merger):
        def summary(self):
            return "done"

    with pytest.raises(BPEError, match=r"Chatty.summary\(\) must return a dict, got str"):
        train_bpe(CORPUS_EN, 300, [EOT], variant=rung(merger=Chatty))


class Handle(Counter):
    """Counts kept elsewhere, as v7's are: ``close()`` releases them."""

    closed = False

    def close(self):
        self.closed = True


def handle_counter(handles: list):
    def count(*args, **kwargs):
        handles.append(Handle(V2.count_pretokens(*args, **kwargs)))
        return handles[-1]

    return count


def test_the_counts_handle_of_a_failed_merger_build_is_closed():
    handles = []

    class Failing(V2.Merger):
        def __init__(self, pretoken_counts):
            raise RuntimeError("no room for the pair counts")

    with pytest.raises(RuntimeError, match="no room"):
        train_bpe(CORPUS_EN, 300, [EOT], variant=rung(handle_counter(handles), Failing))
    assert len(handles) == 1 and handles[0].closed


def test_the_counts_handle_is_closed_when_the_observer_fails_on_the_corpus():
    handles = []

    class Failing(Observer):
        def on_corpus(self, corpus):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_bpe(CORPUS_EN, 300, [EOT], variant=rung(handle_counter(handles)), observer=Failing())
    assert len(handles) == 1 and handles[0].closed


def test_a_merger_that_takes_the_handle_over_keeps_it_open():
    handles = []
    _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant=rung(handle_counter(handles)))
    assert merges == cs336_merges() and not handles[0].closed  # the Merger's to release, not train_bpe's


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_special_tokens_never_merged(write_corpus, variant):
    specials = ["<|endoftext|>", "<|sep|>", "<pad>"]
    text = ("<|endoftext|>the cat<|sep|><|sep|>the hat<pad><|endoftext|>" * 20) + "the end<|sep|>"
    path = write_corpus(text)
    vocab, merges = train_bpe(path, 300, specials, variant=variant)
    for token in specials:
        assert list(vocab.values()).count(token.encode()) == 1
    # "<", "|" and ">" occur only inside special tokens, so no merge may contain them
    assert merges and not any(set(a + b) & set(b"<|>") for a, b in merges)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_special_token_text_does_not_leak_into_counts(write_corpus, variant):
    # With the special split out, only "ab" pairs exist; "<", "|" never get merged.
    path = write_corpus("<|x|>ab<|x|>ab<|x|>")
    vocab, merges = train_bpe(path, 300, ["<|x|>"], variant=variant)
    assert merges == [(b"a", b"b")]
    assert vocab[256] == b"<|x|>" and vocab[257] == b"ab"


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_overlapping_special_tokens_longest_wins(write_corpus, variant):
    path = write_corpus("xy<|a|><|b|>xy<|a|>zz")
    _, merges = train_bpe(path, 300, ["<|a|>", "<|a|><|b|>"], variant=variant)
    merged = {a + b for a, b in merges}
    assert merged == {b"xy", b"zz"}


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_early_stop_returns_fewer_merges(write_corpus, variant):
    path = write_corpus("abcabc")
    vocab, merges = train_bpe(path, 1000, [], variant=variant)
    # ab and bc tie at 2: the larger pair (b, c) wins; then (a, bc), then the two halves.
    assert merges == [(b"b", b"c"), (b"a", b"bc"), (b"abc", b"abc")]
    assert len(vocab) == 256 + len(merges)


def test_bytes_taken_exactly(write_corpus):
    # CRLF stays CRLF: "\r\n" is one whitespace pre-token and can be merged.
    path = write_corpus(b"a\r\nb\r\nc\r\n")
    _, merges = train_bpe(path, 257, [], variant="v1")
    assert merges == [(b"\r", b"\n")]


@pytest.mark.parametrize("bad", [255, 0, -5])
def test_vocab_too_small_is_a_clear_error(write_corpus, bad):
    path = write_corpus("hello")
    with pytest.raises(BPEError, match=r"vocab_size .* too small: it must be at least 257"):
        train_bpe(path, bad, ["<|endoftext|>"])


def test_errors_name_the_problem(write_corpus, tmp_path):
    path = write_corpus("hello")
    with pytest.raises(BPEError, match="input file not found"):
        train_bpe(tmp_path / "missing.txt", 300, [])
    (tmp_path / "empty").mkdir()  # a directory is a corpus (bpe/corpus/corpus.py): this one has no file to read
    with pytest.raises(BPEError, match="no file of text, JSON lines or Parquet in the directory"):
        train_bpe(tmp_path / "empty", 300, [])
    with pytest.raises(BPEError, match="unknown variant 'v99'; valid variants: v1, v2"):
        train_bpe(path, 300, [], variant="v99")
    with pytest.raises(BPEError, match="must not be empty"):
        train_bpe(path, 300, [""])
    with pytest.raises(BPEError, match="listed more than once"):
        train_bpe(path, 300, ["<s>", "<s>"])


def test_invalid_utf8_names_the_offset(write_corpus):
    path = write_corpus(b"hello \xff world")
    with pytest.raises(BPEError, match="invalid UTF-8 at byte offset 6"):
        train_bpe(path, 300, [], variant="v1")
    _, merges = train_bpe(path, 300, [], variant="v1", errors="replace")
    assert merges  # decoded with U+FFFD and trained


def test_empty_file_gives_no_merges(write_corpus):
    vocab, merges = train_bpe(write_corpus(b""), 300, ["<|endoftext|>"])
    assert merges == [] and len(vocab) == 257


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize("workers, limit", [(1, None), (2, None), (2, "20KB")])
def test_the_path_is_checked_once(monkeypatch, variant, workers, limit):
    # train_bpe checks the path where it comes in and passes its end down; no layer below checks again.
    import bpe.corpus.text_file
    import bpe.counting.parallel
    import bpe.training.train
    import bpe.variants._v7_shards
    from conftest import DEFAULT_CORPUS

    checked = []
    real = bpe.corpus.text_file.check_input_file

    def counting(path):
        checked.append(path)
        return real(path)

    for module in (bpe.training.train, bpe.counting.parallel, bpe.corpus.text_file, bpe.variants._v7_shards):
        monkeypatch.setattr(module, "check_input_file", counting)
    _, merges = train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant=variant, workers=workers, limit=limit)
    assert merges and len(checked) == 1


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_trains_on_the_same_subset(write_corpus, variant):
    end = find_limit_end(DEFAULT_CORPUS, 60_000, [EOT])
    subset = write_corpus(DEFAULT_CORPUS.read_bytes()[:end])
    observer = Observer()
    assert train_bpe(DEFAULT_CORPUS, 400, [EOT], variant=variant, limit="60KB", observer=observer) == \
        train_bpe(subset, 400, [EOT], variant="v2")
    assert observer.corpus.bytes_used == end and observer.corpus.file_bytes == DEFAULT_CORPUS.stat().st_size
