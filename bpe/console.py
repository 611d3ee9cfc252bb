"""How a command meets its terminal: stdout that survives its reader leaving, one Ctrl-C, and the one
line (and exit status) a failure prints.  :func:`bpe.cli.main` runs every subcommand inside :func:`console`."""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager


class PipeSafeStdout:
    """stdout that survives its reader leaving (``bpe train ... | head -1``): later writes are dropped, so the
    run goes on and saves its files instead of dying on the next print."""

    def __init__(self, stream):
        self._stream = stream

    def _closed_reader(self) -> None:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed_reader()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed_reader()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _interrupt_once(signum, frame):
    """The first Ctrl-C interrupts; later ones are ignored, so none can break the clean-up or the message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


@contextmanager
def console():
    """stdout made :class:`PipeSafeStdout` and SIGINT :func:`_interrupt_once` (from the main thread, when
    the default handler is in place) for the block; both restored after it unless it was interrupted."""
    stdout = sys.stdout
    sys.stdout = PipeSafeStdout(stdout)
    handle_sigint = (threading.current_thread() is threading.main_thread()
                     and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if handle_sigint:
        signal.signal(signal.SIGINT, _interrupt_once)
    try:
        yield
    finally:
        sys.stdout = stdout
        if handle_sigint and signal.getsignal(signal.SIGINT) is _interrupt_once:  # not interrupted: restore
            signal.signal(signal.SIGINT, signal.default_int_handler)


def failure(exc: BaseException) -> tuple[str, int]:
    """The one line and the exit status of a run that ``exc`` ended."""
    from bpe.errors import BPEError, Terminated

    if isinstance(exc, BPEError):
        return f"bpe: error: {exc}", 2
    if isinstance(exc, Terminated):
        return f"bpe: terminated ({signal.Signals(exc.signum).name})", 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return "bpe: interrupted", 130
    if isinstance(exc, MemoryError):
        from bpe.interface import option

        return (f"bpe: error: out of memory; train on less ({option('--limit', '100MB')}), with a smaller "
                f"{option('--vocab-size', 'N')}, or with a variant that needs less (python -m bpe estimate shows "
                "each one's peak)", 2)
    # OSError: the environment failed us mid-run (disk full, file vanished): still one line
    where = f": {exc.filename}" if exc.filename else ""
    return f"bpe: error: {exc.strerror or exc}{where}", 2
