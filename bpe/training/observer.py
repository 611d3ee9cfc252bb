"""What a training run reports beyond ``(vocab, merges)``: one object the harness passes in.

:func:`bpe.training.train.train_bpe` returns what CS336 asks for and nothing else.  A caller that wants
more (the bench, ``bpe train``) passes an :class:`Observer` and reads it afterwards:

>>> from bpe.running.timer import StageTimer
>>> from bpe.training.train import train_bpe
>>> observer = Observer(timer=StageTimer())
>>> vocab, merges = train_bpe("tests/fixtures/corpus.en", 300, ["<|endoftext|>"], variant="v2", observer=observer)
>>> observer.corpus.bytes_used == observer.corpus.file_bytes, observer.summary, observer.workers
(True, {}, 1)
>>> sorted(observer.timer.as_dict()["stages"])
['pair_count', 'pretokenize', 'select', 'update']

What it holds, and who tells it what:

* ``timer``: the stage timer (:mod:`bpe.running.timer`), whose stages ``train_bpe`` and the merge
  loop enter; a :class:`~bpe.running.timer.NullTimer` when nobody measures;
* ``progress``: the display (:mod:`bpe.running.progress`), told of the bytes by the pre-tokenizer
  and of the merges by the merge loop; silent unless asked (``progress=True``: bars on stderr);
* ``on_workers(processes)``: once the pre-tokens are counted, how many processes counted them (the
  largest pool the counting started; 1: this process alone), whatever count was asked for;
* ``on_corpus(corpus)``: then the :class:`Corpus` figures;
* ``on_stopped(why)``: once the merges are made, if an option ended them before the vocab asked for
  (``min_frequency``, ``max_token_length``: :class:`~bpe.training.merge_loop.Rules`), why, as a phrase
  the "stopped early" line ends with (:func:`~bpe.training.options.stopped_early`);
* ``on_summary(summary)``: once the merges are made, what the rung's ``Merger.summary()`` returned,
  untouched (v7: ``{"gathered_at": ...}``); a Merger without ``summary`` tells it nothing.

The default keeps what it hears (``workers``, ``corpus``, ``stopped``, ``summary``); a subclass may act on it as it
comes.

Why the timer and the progress stay objects of their own rather than ``on_stage``/``on_merge``
methods here: the merge loop enters two stages per merge, and a timer's stage is a reused context
manager (:mod:`bpe.running.timer`); relaying each through the observer would add a call per stage
to the loop being measured.  Why one object instead of a keyword per report: ``train_bpe``'s
signature stays the CS336 one plus the options a user chooses (variant, workers, errors, limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from bpe.running.progress import Progress, make_progress
from bpe.running.timer import NullTimer


@dataclass(frozen=True)
class Corpus:
    """The figures of the text a run trained on (``train.json``'s ``corpus``)."""

    file_bytes: int  # the file's size
    bytes_used: int  # what was counted: the file, or its first ``limit`` bytes to a document boundary
    limit: int | None  # the ``limit`` asked for, in bytes; ``None``: the whole file
    pretokens: int  # pre-tokens counted, repeats included
    distinct_pretokens: int


class Observer:
    """Hears one training run: its stages (``timer``), its progress, its corpus and its merger's summary."""

    def __init__(self, timer=None, progress: bool | Progress = False) -> None:
        self.timer = timer if timer is not None else NullTimer()
        self.progress = make_progress(progress)
        self.workers: int | None = None
        self.corpus: Corpus | None = None
        self.stopped: str | None = None
        self.summary: dict = {}

    def on_workers(self, processes: int) -> None:
        """The pre-tokens are counted: in this many processes (1: in this one)."""
        self.workers = processes

    def on_corpus(self, corpus: Corpus) -> None:
        """The pre-tokens are counted: the figures of the text."""
        self.corpus = corpus

    def on_stopped(self, why: str) -> None:
        """The merges are made, fewer than asked for: an option stopped them, for this reason."""
        self.stopped = why

    def on_summary(self, summary: dict) -> None:
        """The merges are made: the Merger's own facts about its run (its ``summary()``)."""
        self.summary = summary
