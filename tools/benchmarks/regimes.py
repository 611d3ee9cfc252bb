"""What the benchmark suite times: three regimes of text, each at two sizes, and the data of each.

The rungs of the ladder rank differently on different text (docs/data.md), so the suite times the
ladder on three kinds:

* **gutenberg-like**: the shipped ``gutenberg-sample`` (books in ~2 KB documents);
* **tinystories-like**: generated children's stories (``tinystories-synth``): few distinct words, so
  even v1 finishes in seconds, and it is timed there only;
* **web-like**: generated web text (``webtext-synth``): many distinct pre-tokens and pairs, where the
  ``max()`` scan of v2-v4 costs most.

Each regime has a **full** size, what ``make benchmark`` times: every rung of the regime and the peers,
three rounds each, take about five minutes at most on an idle 2-core machine; and a **tiny** one, what
the suite runs on when nothing is timed (``--benchmark-disable``, as ``make test`` runs it), so every
benchmark's assertions run in the test suite in seconds.  ``BPE_BENCH_SIZE=tiny`` times the tiny size.

All the data is made by the project's own code in a fresh checkout: the shipped file, or a generator
(``python -m bpe data get webtext-synth --size 1MB`` makes the same file), kept in ``data/``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bpe.data.datasets import resolve_data
from bpe.defaults import SPECIAL_TOKENS
from bpe.errors import BPEError

#: The environment variable that picks the size timed: ``full`` (the default) or ``tiny``.
SIZE_ENV = "BPE_BENCH_SIZE"
SIZES = ("full", "tiny")

#: The peers timed in every regime, as their own benchmarks (``bpe/lab/measure/peers.py``; ``.[peers]``).
PEERS = ("tokenizers", "rustbpe")


@dataclass(frozen=True)
class Setting:
    """One training setting: a data set (``bpe/data/datasets.py``), its first ``limit`` bytes or all of
    it, and the vocab size."""

    data: str
    vocab_size: int
    limit: str | None = None  # a size (``64KB``): the first that many bytes, to a document boundary

    @property
    def label(self) -> str:
        """The data's name: ``webtext-synth-1MB``, ``gutenberg-sample-first-64KB``."""
        return self.data + (f"-first-{self.limit}" if self.limit else "")

    @property
    def key(self) -> str:
        """The name of this setting's reference merges in ``references.json``."""
        return f"{self.label}, vocab {self.vocab_size}"


@dataclass(frozen=True)
class Regime:
    name: str
    rungs: tuple[str, ...]
    full: Setting
    tiny: Setting

    def setting(self, size: str) -> Setting:
        return self.full if size == "full" else self.tiny


_LADDER = ("v2", "v3", "v4", "v5", "v6", "v7")

REGIMES = (
    Regime("gutenberg-like", _LADDER, full=Setting("gutenberg-sample", 1000),
           tiny=Setting("gutenberg-sample", 400, limit="64KB")),
    Regime("tinystories-like", ("v1", *_LADDER), full=Setting("tinystories-synth-2MB", 2000),
           tiny=Setting("tinystories-synth-64KB", 400)),
    Regime("web-like", _LADDER, full=Setting("webtext-synth-1MB", 1000),
           tiny=Setting("webtext-synth-64KB", 400)),
)


def chosen_size(timed: bool) -> str:
    """``tiny`` when nothing is timed; else ``$BPE_BENCH_SIZE``, ``full`` by default."""
    if not timed:
        return "tiny"
    size = os.environ.get(SIZE_ENV, "full")
    if size not in SIZES:
        raise BPEError(f"{SIZE_ENV}={size!r}: the benchmarks' sizes are {' or '.join(SIZES)}")
    return size


def make_data(setting: Setting, folder: Path) -> Path:
    """The file ``setting`` trains on: the data set (generated into ``data/`` if missing), or for a
    ``limit`` its first bytes to a document boundary, written into ``folder`` (the peers read whole files)."""
    from bpe.lab.measure.timed_run import write_prefix
    from bpe.running.sizes import parse_size
    from bpe.split.chunking import find_limit_end

    path = resolve_data(setting.data)
    if setting.limit is None:
        return path
    end = find_limit_end(path, parse_size(setting.limit), list(SPECIAL_TOKENS))
    return write_prefix(path, end, folder / f"{setting.label}.txt")
