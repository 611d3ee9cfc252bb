"""The one exception type users see, and the signals that interrupt a run.

Every problem a user can cause (bad path, bad vocab size, bad bytes, a worker that died) is raised as
:class:`BPEError` with a sentence that names the problem; the CLI prints that sentence and exits
non-zero instead of showing a traceback.  SIGTERM and SIGHUP are raised as :class:`Terminated`, a
``KeyboardInterrupt``, so the clean-up that Ctrl-C runs runs for them too.
"""

import signal
from contextlib import contextmanager

#: The signals that interrupt a run: SIGINT (Ctrl-C: ``KeyboardInterrupt``) and, where the CLI
#: (:mod:`bpe.console`) or :class:`signals_as_interrupt` handles them, SIGTERM (``kill``, a service manager)
#: and SIGHUP (the terminal closed): :class:`Terminated`.  Code that must not be cut in two holds all of them.
STOP_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


_held = {"depth": 0, "pending": None}  # stop_signals_held blocks now open, and a signal that came meanwhile


@contextmanager
def stop_signals_held():
    """Hold back the stop signals for the block (forking a worker, a pool's clean-up, the two renames of a
    save); one that arrives meanwhile interrupts when the block ends.

    Blocking them (``pthread_sigmask``) is not enough: the mask is the main thread's, and the kernel hands
    a process-wide signal to any thread that does not block it (numpy's BLAS threads), whose handler still
    interrupts the main thread.  So the handler (:func:`stop`) also defers it itself.
    """
    can_block = hasattr(signal, "pthread_sigmask")
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ()) if can_block else None  # the mask as it is
    _held["depth"] += 1
    try:
        if can_block:
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        yield
    finally:
        _held["depth"] -= 1
        if can_block:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if not _held["depth"] and _held["pending"] is not None:
            signum, _held["pending"] = _held["pending"], None
            raise _interruption(signum)


def stop(signum: int) -> None:
    """What a stop signal's handler does the first time (:class:`InterruptOnce`): interrupt now, or where
    :func:`stop_signals_held`'s block ends if one is open."""
    if not _held["depth"]:
        raise _interruption(signum)
    if _held["pending"] is None:
        _held["pending"] = signum


class InterruptOnce:
    """A handler for the stop signals of one block (the CLI's, :class:`signals_as_interrupt`'s): the first
    signal interrupts (:func:`stop`); every later one, of any kind it handles, is dropped, so none can
    break the clean-up or its message.

    Dropped by this handler, not ignored with ``SIG_IGN``: an ignored signal is inherited by every process
    started meanwhile (through fork and exec alike) and stays ignored after the block unless someone puts
    the handler back; a caught one reverts to its default in an exec'd child.
    """

    def __init__(self) -> None:
        self.interrupted = False
        self.dropped: list[int] = []  # the later ones, in order

    def __call__(self, signum, frame) -> None:
        if self.interrupted:
            self.dropped.append(signum)
            return
        self.interrupted = True
        stop(signum)


def _interruption(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


class BPEError(Exception):
    """A problem with the user's input or environment, with a message meant for the user."""


class ArgumentError(BPEError):
    """A refused argument, worded for both interfaces: ``str()`` for a library call, naming the parameter
    (``workers must be at least 1, got 0``), and :attr:`flagged` for the command line, naming its flag and
    the fix there (``--workers must be at least 1, got 0 (or omit it ...)``), which the CLI prints
    (:func:`bpe.console.failure`).

    Both wordings are the exception's ``args``: it comes back whole from a pool worker, which pickles it.
    """

    def __init__(self, message: str, flagged: str | None = None) -> None:
        super().__init__(message, message if flagged is None else flagged)

    def __str__(self) -> str:
        return str(self.args[0])

    @property
    def flagged(self) -> str:
        return str(self.args[1])


def flag_of(parameter: str) -> str:
    """The command line's flag for a library parameter (a flag stays as it is).

    >>> flag_of("vocab_size"), flag_of("--limit")
    ('--vocab-size', '--limit')
    """
    return parameter if parameter.startswith("-") else "--" + parameter.replace("_", "-")


def out_of_memory(where: str = "", *, advice: str | None = None) -> str:
    """The out-of-memory sentence, in the words of the interface in use: ``where`` memory ran out ("" for
    this process; a pool names its worker and phase) and what to try, ``advice`` if given."""
    from bpe.interface import option  # noqa: PLC0415 (keeps import bpe light: about 3 ms)

    if advice is None:
        fewer = f"with fewer workers ({option('--workers', '1')}), " if where else ""
        advice = (f"train on less ({option('--limit', '100MB')}), {fewer}with a smaller {option('--vocab-size', 'N')}, "
                  "or with a variant that needs less (python -m bpe estimate shows each one's peak)")
    return f"out of memory{where}; {advice}"


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is (see :func:`signals_as_interrupt`), so the clean-up
    that Ctrl-C runs (a half-written file removed) runs for them too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class signals_as_interrupt:
    """Within ``with signals_as_interrupt():``, SIGTERM and SIGHUP raise :class:`Terminated` (main thread
    only; elsewhere, and for signals already handled, nothing changes)."""

    SIGNALS = STOP_SIGNALS - {signal.SIGINT}

    def __enter__(self):
        import threading  # noqa: PLC0415 (keeps import bpe light)

        self.previous = {}
        if threading.current_thread() is not threading.main_thread():
            return self
        handler = InterruptOnce()
        for signum in self.SIGNALS:
            if signal.getsignal(signum) is signal.SIG_DFL:
                self.previous[signum] = signal.signal(signum, handler)
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
