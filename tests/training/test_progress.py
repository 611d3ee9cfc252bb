"""What a user sees: shared defaults in every header, progress over bytes then merges, the train summary."""

from __future__ import annotations

import io

import pytest

from bpe import best_variant, defaults, train_bpe
from bpe.cli import main
from bpe.data.datasets import DATASETS, default_vocab_size
from bpe.training.progress import Progress, wants_progress

from conftest import CORPUS_EN, DEFAULT_CORPUS


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
    _, merges = train_bpe(CORPUS_EN, 300, ["<|endoftext|>"], variant=variant, progress=progress, workers=2)
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


def test_defaults_live_in_one_place():
    assert default_vocab_size(None) == defaults.VOCAB_SIZE == 10_000
    assert default_vocab_size("tinystories") == 10_000 and default_vocab_size("owt") == 32_000
    assert all(d.vocab_size in (defaults.VOCAB_SIZE, defaults.WEB_VOCAB_SIZE) for d in DATASETS.values())


def test_every_header_shows_the_vocab_and_special_tokens(monkeypatch, capsys):
    monkeypatch.setattr("bpe.lab.bench.run_once", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["bench", "--data", "corpus-en", "--repeat", "1"]) == 130  # stop after the header
    assert "vocab 10,000 (9,743 merges), special ['<|endoftext|>']" in capsys.readouterr().out
    assert main(["train", "--data", "corpus-en", "--no-special", "--vocab-size", "300"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"bpe-lab train: {best_variant()} on corpus-en (133,027 bytes), vocab 300, special []; estimate {best_variant()} ~")


def test_train_prints_peak_memory_and_longest_words(capsys):
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "10000", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "peak memory: " in out and " MB (training process)" in out
    longest = next(line for line in out.splitlines() if line.startswith("longest tokens: "))
    assert "'" + " " * 44 + "' (44 bytes" in longest  # indentation in the books: whitespace only
    worded = next(line for line in out.splitlines() if line.startswith("longest tokens that are not only whitespace"))
    assert "' disappointment' (15 bytes" in worded
