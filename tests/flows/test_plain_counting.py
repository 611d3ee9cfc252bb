"""v1-v5 count with the plain pre-tokenizer: profiled, no function of the fast one runs, in this process or in
the pool's workers, and its codec error handler never runs; v6 and v7 do run the fast one (the control).

A profile hook (``sys.setprofile``) set before the pool forks stays set in the workers; it writes a line to a
file, from whichever process, for every call of a function whose code is in ``bpe/split/fast.py`` or
``bpe/counting/fast.py``.
The error handler that finds the islands is replaced, under its codec name, by a spy that writes a line too.
"""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path

import pytest

import bpe.counting.fast as fast_counter
import bpe.split.fast as pretokenize_fast
from bpe import VARIANTS
from bpe.counting.plain import count_text

EOT = "<|endoftext|>"
FAST_FILES = {os.path.realpath(pretokenize_fast.__file__), os.path.realpath(fast_counter.__file__)}


class FastCalls:
    """Records, in a file shared with forked workers, each call into the fast module and each run of its
    codec error handler: ``(pid, what)`` lines."""

    def __init__(self, path: Path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def _write(self, what: str) -> None:
        os.write(self.fd, f"{os.getpid()} {what}\n".encode())

    def profile(self, frame, event, arg):
        if event == "call" and os.path.realpath(frame.f_code.co_filename) in FAST_FILES:
            self._write(frame.f_code.co_name)

    def handler(self, exc):
        self._write("codec error handler")
        return pretokenize_fast._island_handler(exc)

    def __enter__(self):
        codecs.register_error(pretokenize_fast._ISLANDS, self.handler)
        sys.setprofile(self.profile)
        return self

    def __exit__(self, *exc_info):
        sys.setprofile(None)
        codecs.register_error(pretokenize_fast._ISLANDS, pretokenize_fast._island_handler)
        os.close(self.fd)

    def seen(self) -> list[tuple[int, str]]:
        lines = self.path.read_text().splitlines()
        return [(int(pid), what) for pid, _, what in (line.partition(" ") for line in lines)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """About 1 MB, several documents, with non-ASCII words far enough apart to be cut into islands by the
    fast counter, and enough bytes for a pool of 2 workers to get several chunks."""
    doc = ("The caf\u00e9 owner \u2014 Zo\u00eb \u2014 said \u201cna\u00efve\u201d things, 42 times.\n"
           + "Plain words here. " * 12) * 40
    path = tmp_path_factory.mktemp("plain") / "corpus.txt"
    path.write_text(EOT.join([doc] * 100), encoding="utf-8")
    return path


def profiled(tmp_path, count_pretokens, path, workers):
    with FastCalls(tmp_path / "calls.txt") as calls:
        counts = count_pretokens(path, [EOT], workers=workers)
    return counts, calls.seen()


@pytest.mark.parametrize("name, workers", [("v1", None), ("v2", None), ("v3", 1), ("v3", 2), ("v4", 2), ("v5", 2)])
def test_v1_to_v5_count_without_the_fast_pre_tokenizer(tmp_path, corpus, name, workers):
    counts, seen = profiled(tmp_path, VARIANTS[name].count_pretokens, corpus, workers)
    assert counts == count_text(corpus.read_text(encoding="utf-8"), [EOT])
    assert seen == []


@pytest.mark.parametrize("name, workers", [("v6", 1), ("v6", 2), ("v7", 2)])
def test_the_check_sees_the_fast_pre_tokenizer_where_it_runs(tmp_path, corpus, name, workers):
    # the control: v6's and v7's counting is profiled the same way and its calls are seen, in the workers too
    counts, seen = profiled(tmp_path, VARIANTS[name].count_pretokens, corpus, workers)
    if name == "v7":  # a handle; on this few distinct pre-tokens the counts come home (no shard processes)
        counts.close()
        counts = counts.local
    assert counts == count_text(corpus.read_text(encoding="utf-8"), [EOT])
    names = {what for _, what in seen}
    assert {"count_text_fast" if workers == 2 else "count_file_serial_fast", "codec error handler"} <= names
    pids = {pid for pid, _ in seen}
    assert (os.getpid() in pids) == (workers == 1)
    assert len(pids) == workers
