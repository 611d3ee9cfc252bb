"""What training shows while it runs: bytes pre-tokenized, then merges made.

:func:`bpe.training.train.train_bpe` reports to the :class:`Progress` its observer holds
(:mod:`bpe.training.observer`; ``Observer(progress=True)`` gives :class:`BarProgress`, two tqdm bars on
stderr); the CLI turns it on by default when stderr is a terminal and off with ``--quiet`` or when output
goes to a file or a pipe.  Algorithms never call it: the pre-tokenizer reports bytes through its
``on_bytes`` callback and the merge loop reports merges, so a variant file holds nothing but its algorithm.
"""

from __future__ import annotations

import sys

from bpe.errors import stop_signals_held


class Progress:
    """The interface, and the silent implementation: every call is a no-op."""

    def start_bytes(self, total: int) -> None:
        pass

    def on_bytes(self, done: int) -> None:
        """``done`` more input bytes were pre-tokenized."""

    def start_merges(self, total: int) -> None:
        pass

    def on_merge(self) -> None:
        pass

    def close(self) -> None:
        pass


class BarProgress(Progress):
    """A tqdm bar over input bytes while pre-tokenizing, then one over merges."""

    def __init__(self, file=None, prefix: str = "") -> None:
        self.file = file or sys.stderr
        self.prefix = prefix  # e.g. "v2 run 1/3: " when the bench shows several runs one after another
        self.bar = None

    def _open(self, **kwargs) -> None:
        from tqdm import tqdm  # noqa: PLC0415 (third-party: off the start-up of bpe.cli, which imports this)

        self.close()
        # A Ctrl-C between the bar's first drawing and its assignment would leave it drawn, with nothing to
        # close it, and the CLI's last line glued to it: the bar is made whole first.
        with stop_signals_held():
            self.bar = tqdm(file=self.file, dynamic_ncols=True, leave=False, **kwargs)

    def start_bytes(self, total: int) -> None:
        self._open(total=total, unit="B", unit_scale=True, desc=f"{self.prefix}pre-tokenizing")

    def on_bytes(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done)

    def start_merges(self, total: int) -> None:
        self._open(total=total, unit="merge", desc=f"{self.prefix}merging")

    def on_merge(self) -> None:
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def make_progress(progress: bool | Progress | None) -> Progress:
    """``True`` -> bars, ``False``/``None`` -> silent, a :class:`Progress` -> itself."""
    if isinstance(progress, Progress):
        return progress
    return BarProgress() if progress else Progress()


def wants_progress(quiet: bool, stream=None) -> bool:
    """Progress by default on a terminal: off with ``--quiet`` or when ``stream`` (stderr) is not a tty."""
    stream = stream or sys.stderr
    return not quiet and hasattr(stream, "isatty") and stream.isatty()
