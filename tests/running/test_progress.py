"""Progress (bpe/running/progress.py): the events come over the bytes, then the merges; a bar only on a terminal
unless asked."""

from __future__ import annotations

import io

import pytest

from bpe import train_bpe
from bpe.running.progress import Progress, wants_progress
from bpe.training.observer import Observer
from conftest import CORPUS_EN


class Recording(Progress):
    def __init__(self):
        self.events = []

    def start_bytes(self, total):
        self.events.append(("start_bytes", total))

    def on_bytes(self, done):
        self.events.append(("bytes", done))

    def start_merges(self, total):
        self.events.append(("start_merges", total))

    def on_merge(self):
        self.events.append(("merge", 1))


@pytest.mark.parametrize("variant", ["v2", "v6"])
def test_progress_hears_every_byte_then_every_merge(variant):
    progress = Recording()
    _, merges = train_bpe(CORPUS_EN, 300, ["<|endoftext|>"], variant=variant, workers=2,
                          observer=Observer(progress=progress))
    kinds = [kind for kind, _ in progress.events]
    assert kinds[0] == "start_bytes" and progress.events[0][1] == CORPUS_EN.stat().st_size
    assert sum(n for kind, n in progress.events if kind == "bytes") == CORPUS_EN.stat().st_size
    assert kinds.index("start_merges") > max(i for i, kind in enumerate(kinds) if kind == "bytes")
    assert ("start_merges", 300 - 257) in progress.events and kinds.count("merge") == len(merges)


def test_progress_only_on_a_terminal_unless_asked():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert wants_progress(False, Tty()) and not wants_progress(True, Tty())
    assert not wants_progress(False, io.StringIO())
