"""How a command meets its terminal: stdout that survives its reader leaving, one Ctrl-C (or SIGTERM, or
SIGHUP), also one that comes as the command starts, and the one line (and exit status) a failure prints.
:func:`bpe.cli.main` runs every subcommand inside :func:`console`; ``python -m bpe`` and the ``bpe`` command
handle the stop signals from their first moment (:func:`handle_from_the_start`)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import NoReturn

from bpe.errors import STOP_SIGNALS, ArgumentError, BPEError, InterruptOnce, Terminated, out_of_memory


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


def _untouched(signum: int) -> bool:
    """Whether ``signum`` still has Python's default (an ignored SIGHUP, as under ``nohup``, stays ignored), or
    the command line's own from its start (:func:`handle_from_the_start`), which a run takes over."""
    current = signal.getsignal(signum)
    return isinstance(current, FromTheStart) or current is (
        signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)


class FromTheStart(InterruptOnce):
    """The ``bpe`` process's handler of the stop signals from its first moment until :func:`console` takes
    them for the run (and again after it, until :func:`exit_with` ignores them)."""


#: TEST-ONLY: a file.  The ``bpe`` process writes it once its stop signals are in hand, before it imports the
#: command line's modules; with :data:`HOLD_AT_START_ENV` set too it then waits there for a signal, so a test
#: sends one at that point, not after a pause.
STARTED_ENV = "BPE_TEST_STARTED"
HOLD_AT_START_ENV = "BPE_TEST_HOLD_AT_START"


def handle_from_the_start() -> None:
    """The ``bpe`` process's first act (``bpe/__main__.py``): each stop signal still at Python's default handled
    by a :class:`FromTheStart`, so one that comes while the command's modules are imported (numpy alone takes
    a few hundred milliseconds) ends the run with its one line and status, as one that comes later does,
    instead of a ``KeyboardInterrupt`` traceback (SIGINT) or a silent death (SIGTERM, SIGHUP).  Main thread
    only; a caller of :func:`bpe.cli.main` in its own process keeps its own dispositions."""
    if threading.current_thread() is not threading.main_thread():
        return
    handler = FromTheStart()
    for signum in STOP_SIGNALS:
        if _untouched(signum):
            signal.signal(signum, handler)


def started_for_tests() -> None:
    """:data:`STARTED_ENV`'s file written, and with :data:`HOLD_AT_START_ENV`, a signal waited for (tests only)."""
    marker = os.environ.get(STARTED_ENV)
    if not marker:
        return
    with open(marker, "w") as f:
        f.write(str(os.getpid()))
    while os.environ.get(HOLD_AT_START_ENV):
        signal.pause()  # the handler's interrupt ends the wait


@contextmanager
def console():
    """stdout made :class:`PipeSafeStdout` for the block, and each stop signal that still has Python's
    default (from the main thread) handled by one :class:`~bpe.errors.InterruptOnce`: the first of
    SIGINT, SIGTERM and SIGHUP interrupts (SIGTERM and SIGHUP as :class:`~bpe.errors.Terminated`, so every
    clean-up that Ctrl-C runs runs for them: a pool terminated, a child's process group ended, a
    half-written file removed), and every later one is dropped until the block ends.

    Whatever happens in the block, interrupted or not, the signals' dispositions are left as they were
    found: a caller of :func:`bpe.cli.main` in its own process (a test runner, a notebook, a script)
    must still hear the next Ctrl-C, and so must every process it starts later.
    """
    stdout = sys.stdout
    sys.stdout = PipeSafeStdout(stdout)
    found = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS} \
        if threading.current_thread() is threading.main_thread() else {}
    handler = InterruptOnce()
    for signum in found:
        if _untouched(signum):
            signal.signal(signum, handler)
    try:
        yield
    finally:
        sys.stdout = stdout
        # From here the handler only notes a signal: one that comes while the dispositions are put back
        # is passed on to them afterwards, unless the block was interrupted (then it is a later one).
        interrupted, handler.interrupted = handler.interrupted, True
        for signum, disposition in found.items():
            if disposition is not None and signal.getsignal(signum) is not disposition:  # None: set outside Python
                signal.signal(signum, disposition)
        if not interrupted and handler.dropped:
            os.kill(os.getpid(), handler.dropped[0])


_told = [False]  # whether this process has told its one line (exit_with then adds none)


def tell(line: str) -> None:
    """``line`` on stderr; when stderr is gone (its terminal closed: SIGHUP), the line is dropped and so is
    any later output, so the exit status still says what ended the run (not 1 for a second error, nor 120
    for a stream that cannot be flushed at exit)."""
    _told[0] = True
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
        except (OSError, ValueError):
            pass


def failure(exc: BaseException) -> tuple[str, int]:
    """The one line and the exit status of a run that ``exc`` ended: an argument refused is named by its flag
    (:class:`~bpe.errors.ArgumentError`)."""
    if isinstance(exc, BPEError):
        return f"bpe: error: {exc.flagged if isinstance(exc, ArgumentError) else exc}", 2
    if isinstance(exc, KeyboardInterrupt):
        # one that came once the output was in place (bpe.io.outputs.save_tokenizer) says the save stands
        after = " after the save had finished" if getattr(exc, "saved", None) else ""
        if isinstance(exc, Terminated):
            return f"bpe: terminated ({signal.Signals(exc.signum).name}){after}", 128 + exc.signum
        return f"bpe: interrupted{after}", 130
    if isinstance(exc, MemoryError):
        return f"bpe: error: {out_of_memory()}", 2
    # OSError: the environment failed us mid-run (disk full, file vanished): still one line
    where = f": {exc.filename}" if exc.filename else ""
    return f"bpe: error: {exc.strerror or exc}{where}", 2


def exit_with(main: Callable[[], int], debugging: Callable[[], bool]) -> NoReturn:
    """``main()``, then exit with its status.

    main leaves the stop signals as it found them: here, the process's own handler from its start
    (:func:`handle_from_the_start`).  The run has ended and said so by then, and this process only exits: a
    signal in that last moment (the third Ctrl-C of an impatient user) must not add a traceback, nor one
    during the exit change the status.  One that came before main's own handling began (while the command's
    modules were imported) is the run's end, and its one line is said here.  Nothing is started from here
    on, so no child inherits the ignored signals.  ``debugging()``: whether main was given ``--debug`` (an
    interrupt that came after its own handling then shows its traceback).
    """
    status = None
    while True:  # until the stop signals are ignored: one may still land between any two lines here
        try:
            if status is None:
                status = main()
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)
            break
        except KeyboardInterrupt as exc:
            if status is None:  # came before main's own handling began, or after it ended (or --debug let it out)
                if debugging():
                    raise
                status = 128 + getattr(exc, "signum", signal.SIGINT)
                if not _told[0]:  # before the run could say anything (its modules being imported): its line now
                    tell(failure(exc)[0])
            # else: the run had ended with its status, which stands; the dispositions are set again
    sys.exit(status)
