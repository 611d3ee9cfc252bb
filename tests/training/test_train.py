"""train_bpe's phases: arguments checked before counting, what the observer hears, the counts handle closed."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from bpe import VARIANTS, BPEError, train_bpe
from bpe.training.observer import Corpus, Observer
from bpe.training.pretokenize import count_file_serial
from bpe.training.timer import STAGES, StageTimer
from conftest import CORPUS_EN, reference_merges, reference_vocab

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


def test_positional_call_matches_the_cs336_reference():
    vocab, merges = train_bpe(CORPUS_EN, 500, [EOT])  # the assignment's call: three positional arguments
    assert merges == reference_merges()
    assert set(vocab.values()) == set(reference_vocab().values()) and set(vocab) == set(range(500))


BAD_ARGUMENTS = [
    ({"input_path": 42}, "input_path must be a file path"),
    ({"special_tokens": EOT}, "must be a list of strings, not a single string"),
    ({"special_tokens": [EOT, EOT]}, "listed more than once"),
    ({"vocab_size": 256}, "vocab_size 256 is too small"),
    ({"vocab_size": "300"}, "vocab_size must be an integer"),
    ({"errors": "ignore"}, "errors must be 'strict' or 'replace'"),
    ({"workers": 0}, "workers must be at least 1"),
    ({"limit": "fifty"}, "size"),
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
    assert merges == reference_merges()
    counts = count_file_serial(CORPUS_EN, [EOT])
    size = CORPUS_EN.stat().st_size
    assert observer.corpus == Corpus(file_bytes=size, bytes_used=size, limit=None, pretokens=counts.total(),
                                     distinct_pretokens=len(counts))
    assert observer.summary is facts and facts["words"] == len(counts)  # handed over untouched
    assert events == ["corpus", "close", "summary"]  # the summary after the merges, once the merger is closed
    assert set(observer.timer.stages) == set(STAGES) and observer.timer.merges == len(merges)
    assert observer.timer.checkpoints[-1][0] == len(merges)


def test_a_limit_is_in_the_corpus_figures():
    observer = Observer()
    train_bpe(CORPUS_EN, 300, [EOT], variant="v2", limit="20KB", observer=observer)
    assert observer.corpus.limit == 20_000 and 20_000 <= observer.corpus.bytes_used < observer.corpus.file_bytes


def test_a_merger_without_summary_works():
    assert not hasattr(V2.Merger, "summary")
    observer = Observer()
    _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant="v2", observer=observer)
    assert merges == reference_merges() and observer.summary == {}


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
    assert merges == reference_merges() and not handles[0].closed  # the Merger's to release, not train_bpe's
