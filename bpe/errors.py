"""The one exception type users see, and the signals that interrupt a run.

Every problem a user can cause (bad path, bad vocab size, bad bytes, a worker that died) is raised as
:class:`BPEError` with a sentence that names the problem; the CLI prints that sentence and exits
non-zero instead of showing a traceback.  SIGTERM and SIGHUP are raised as :class:`Terminated`, a
``KeyboardInterrupt``, so the clean-up that Ctrl-C runs runs for them too.
"""

import signal

#: The signals that interrupt a run: SIGINT (Ctrl-C: ``KeyboardInterrupt``) and, where the CLI
#: (:mod:`bpe.console`) or :class:`signals_as_interrupt` handles them, SIGTERM (``kill``, a service manager)
#: and SIGHUP (the terminal closed): :class:`Terminated`.  Code that must not be cut in two holds all of them.
STOP_SIGNALS = frozenset(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class BPEError(Exception):
    """A problem with the user's input or environment, with a message meant for the user."""


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
        import threading

        self.previous = {}
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum in self.SIGNALS:
            if signal.getsignal(signum) is signal.SIG_DFL:
                self.previous[signum] = signal.signal(signum, self._raise)
        return self

    @staticmethod
    def _raise(signum, frame):
        for other in signals_as_interrupt.SIGNALS:  # a second one, of either kind, must not interrupt the clean-up
            signal.signal(other, signal.SIG_IGN)
        raise Terminated(signum)

    def __exit__(self, *exc) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
