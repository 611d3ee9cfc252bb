"""Every subcommand meets SIGTERM and SIGHUP as it meets Ctrl-C: one line, exit status 128 + the signal,
and any later signal dropped while the clean-up runs.  In this process: each subcommand's work is replaced
by a function that signals its own process (the real commands, in real processes, are in
``tests/flows/test_signals.py``).

A caller of ``main()`` in its own process gets its signals back as it had them: a real ``bpe train`` here
signals itself once its first file is written, and every disposition afterwards, and what a child started
during the clean-up or after it inherits, is compared with what it was before.  A signal the caller handles
itself stays its own during the run (a handler that does not raise lets the run go on), and ``train_bpe``
sets no handler at all (docs/reliability.md states the rule)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager

import pytest

import bpe.cli
import bpe.commands.train as train_command
import bpe.io.outputs as outputs
from bpe.cli import build_parser, main
from bpe.errors import STOP_SIGNALS
from bpe.training.observer import Observer
from bpe.training.train import train_bpe
from conftest import CORPUS_EN, HANG_GUARD_SECONDS

EOT = "<|endoftext|>"

pytestmark = pytest.mark.usefixtures("sighup_not_ignored")

#: The smallest command line of every subcommand (a new subcommand must be added here).
ARGV = {"train": [], "bench": [], "trace": [], "report": [], "profile": [], "estimate": [],
        "encode": ["--tokenizer", "t", "--data", "d", "--out", "o.npy"], "data": ["list"],
        "walkthrough": ["--out", "o.html"]}


@pytest.fixture(autouse=True)
def handlers_kept():
    """Whatever a test sets (or a failing run leaves), the next test starts with this process's own."""
    saved = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def every_command_does(monkeypatch, work) -> None:
    for name in dir(bpe.cli):
        if name.startswith("cmd_"):
            monkeypatch.setattr(bpe.cli, name, work)


def test_the_table_names_every_subcommand():
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(subparsers.choices) == set(ARGV)


@pytest.mark.parametrize("command", sorted(ARGV))
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_every_subcommand_ends_on_one_line(monkeypatch, capsys, command, signum):
    def work(args):
        try:
            os.kill(os.getpid(), signum)
            raise AssertionError("the signal did not interrupt the command")
        finally:  # an impatient sender, another signal, a Ctrl-C: none breaks the clean-up
            for later in STOP_SIGNALS:
                os.kill(os.getpid(), later)

    every_command_does(monkeypatch, work)
    assert main([command, *ARGV[command]]) == 128 + signum
    assert capsys.readouterr().err == f"bpe: terminated ({signal.Signals(signum).name})\n"


def test_handlers_are_restored_after_a_run(monkeypatch):
    every_command_does(monkeypatch, lambda args: 0)
    assert main(["trace"]) == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_sighup_stays_ignored(monkeypatch):
    """Under ``nohup`` a closed terminal must not end the run."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def work(args):
        os.kill(os.getpid(), signal.SIGHUP)
        return 0

    every_command_does(monkeypatch, work)
    assert main(["trace"]) == 0


def test_a_signal_in_a_held_block_waits_for_its_end(monkeypatch, capsys):
    """Even one the kernel hands to another thread (numpy's BLAS threads do not block it), whose handler
    then runs in the main thread inside the block: a fork's hooks there would drop its exception."""
    from bpe.errors import stop_signals_held

    went_on = []

    def work(args):
        go = threading.Event()
        other = threading.Thread(target=lambda: go.wait() and signal.pthread_kill(threading.get_ident(),
                                                                                  signal.SIGTERM))
        other.start()  # before the block: this thread does not block the signal
        with stop_signals_held():
            go.set()
            other.join()
            for _ in range(1000):  # many chances for the handler to run here
                went_on.append(len(went_on))
        raise AssertionError("the held signal did not interrupt at the end of the block")

    every_command_does(monkeypatch, work)
    assert main(["trace"]) == 128 + signal.SIGTERM
    assert capsys.readouterr().err == "bpe: terminated (SIGTERM)\n" and len(went_on) == 1000


# --- a signal once the new tokenizer is in place: the save stands and is said -----------------------

def signal_at(monkeypatch, moment: str, signum: int) -> None:
    """Make ``bpe train`` signal itself at ``moment``: in the save's held block once the new folder has
    replaced the old (the signal waits for the block's end), or as the summary is made."""
    if moment == "swapped":
        real_held = outputs.stop_signals_held

        @contextmanager
        def held_then_signal():
            with real_held():
                yield
                os.kill(os.getpid(), signum)

        monkeypatch.setattr(outputs, "stop_signals_held", held_then_signal)
    else:
        def signal_instead(*args):
            os.kill(os.getpid(), signum)
            raise AssertionError("the signal did not interrupt the summary")

        monkeypatch.setattr(train_command, "summary_lines", signal_instead)


@pytest.mark.parametrize("moment", ["swapped", "summary"])
@pytest.mark.parametrize("signum", sorted(STOP_SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_a_signal_after_the_swap_says_what_was_written(monkeypatch, capsys, tmp_path, moment, signum):
    out = tmp_path / "tok"
    argv = ["train", "--variant", "v2", "--data", "corpus-en", "--quiet", "--out", str(out)]
    assert main([*argv, "--vocab-size", "280"]) == 0  # the old tokenizer
    capsys.readouterr()
    signal_at(monkeypatch, moment, signum)
    assert main([*argv, "--vocab-size", "300"]) == 128 + signum
    captured = capsys.readouterr()
    name = "interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"
    assert captured.err == f"bpe: {name} after the save had finished\n"
    assert captured.out.splitlines()[-1] == f"wrote {out / 'vocab.json'}, {out / 'merges.txt'}, {out / 'train.json'}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]
    assert len(outputs.load_tokenizer(out).merges) == 300 - 257  # the new tokenizer, whole


def test_a_signal_before_the_swap_says_nothing_was_saved(monkeypatch, capsys, tmp_path):
    """The contrast: a signal while the files are written leaves the old tokenizer and says only that."""
    out = tmp_path / "tok"
    argv = ["train", "--variant", "v2", "--data", "corpus-en", "--quiet", "--out", str(out)]
    assert main([*argv, "--vocab-size", "280"]) == 0
    capsys.readouterr()
    assert train_interrupted_while_saving(monkeypatch, tmp_path, signal.SIGTERM, lambda: None,
                                          [*argv, "--vocab-size", "300"]) == 128 + signal.SIGTERM
    captured = capsys.readouterr()
    assert captured.err == "bpe: terminated (SIGTERM)\n" and "wrote" not in captured.out
    assert len(outputs.load_tokenizer(out).merges) == 280 - 257  # the old one, untouched


# --- a caller of main() in its own process: as it was before, interrupted or not ----------------------

def caller_handler(signum, frame):
    """A caller's own SIGTERM handler (a service's, a test runner's): it notes the signals it gets."""
    CALLER_GOT.append(signum)


CALLER_GOT: list[int] = []

#: The caller's dispositions before main(): Python's defaults; or its own SIGTERM handler and SIGHUP
#: ignored (as under nohup), which the CLI leaves to the caller and so only SIGINT interrupts.
CALLERS = {"defaults": {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL,
                        signal.SIGHUP: signal.SIG_DFL},
           "own": {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: caller_handler,
                   signal.SIGHUP: signal.SIG_IGN}}
INTERRUPTED = [pytest.param("defaults", signum, id=f"defaults-{signal.Signals(signum).name}")
               for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)] + [
               pytest.param("own", signal.SIGINT, id="own-SIGINT")]

#: A child's report of the stop signals it was started with ignored.
_IGNORED = ("import signal; print(*(int(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) "
            "if signal.getsignal(s) is signal.SIG_IGN))")


def ignored_in_a_child() -> set[int]:
    """The stop signals a process started now inherits as ignored."""
    out = subprocess.run([sys.executable, "-c", _IGNORED], capture_output=True, text=True, check=True,
                         timeout=HANG_GUARD_SECONDS).stdout  # the timeout only guards against a hang
    return {int(word) for word in out.split()}


def dispositions() -> dict[int, object]:
    return {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}


def train_interrupted_while_saving(monkeypatch, tmp_path, signum: int, during_clean_up, argv=None) -> int:
    """A real ``bpe train`` in this process (``argv``, or a small one into ``tmp_path``): once its first file is
    written, it signals itself; while the clean-up runs, every stop signal comes again and
    ``during_clean_up()`` runs.  The exit status."""
    real_write = outputs.write_flushed
    sent = []

    def write_then_signal(path, text, *, shown):
        real_write(path, text, shown=shown)
        if sent:
            return
        sent.append(signum)
        try:
            os.kill(os.getpid(), signum)
            raise AssertionError("the signal did not interrupt the run")
        finally:  # the run is interrupted, its clean-up starts here
            for later in STOP_SIGNALS:
                os.kill(os.getpid(), later)
            during_clean_up()

    monkeypatch.setattr(outputs, "write_flushed", write_then_signal)
    return main(argv or ["train", "--variant", "v2", "--data", "corpus-en", "--vocab-size", "300", "--quiet",
                         "--out", str(tmp_path / "tok")])


def set_caller(caller: str) -> dict[int, object]:
    CALLER_GOT.clear()
    for signum, disposition in CALLERS[caller].items():
        signal.signal(signum, disposition)
    return dispositions()


@pytest.mark.parametrize("caller, signum", INTERRUPTED)
def test_an_interrupted_run_leaves_the_callers_dispositions(monkeypatch, capsys, tmp_path, caller, signum):
    before = set_caller(caller)
    while_cleaning = []
    status = train_interrupted_while_saving(monkeypatch, tmp_path, signum,
                                            lambda: while_cleaning.append(dispositions()))
    assert status == 128 + signum
    name = "interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"
    assert capsys.readouterr().err == f"bpe: {name}\n"
    assert dispositions() == before
    during = while_cleaning[0]
    if caller == "defaults":  # the later signals were dropped by the CLI's handler, none was ignored
        assert signal.SIG_IGN not in during.values()
    else:  # what the CLI leaves to the caller stays the caller's, also while it cleans up
        assert during[signal.SIGTERM] is caller_handler and during[signal.SIGHUP] is signal.SIG_IGN
        assert CALLER_GOT == [signal.SIGTERM]


@pytest.mark.parametrize("caller, signum", INTERRUPTED)
def test_no_child_inherits_an_ignored_signal(monkeypatch, capsys, tmp_path, caller, signum):
    """Neither one started while the interrupted run cleans up nor one the caller starts afterwards: only
    a SIGHUP the caller itself ignores stays ignored."""
    set_caller(caller)
    started_before = ignored_in_a_child()
    assert started_before == ({signal.SIGHUP} if caller == "own" else set())
    started_while_cleaning = []
    assert train_interrupted_while_saving(monkeypatch, tmp_path, signum,
                                          lambda: started_while_cleaning.append(ignored_in_a_child())) == 128 + signum
    assert started_while_cleaning == [started_before]
    assert ignored_in_a_child() == started_before
    assert not {signal.SIGINT, signal.SIGTERM} & started_before


def test_a_signal_after_an_interrupted_run_reaches_the_caller(monkeypatch, capsys, tmp_path):
    """The CLI's handling ends with the run: the caller's next Ctrl-C is its own KeyboardInterrupt again,
    and the next SIGTERM its own handler's."""
    set_caller("own")
    assert train_interrupted_while_saving(monkeypatch, tmp_path, signal.SIGINT, lambda: None) == 130
    assert CALLER_GOT == [signal.SIGTERM]  # the later one sent during the clean-up
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("SIGINT did not interrupt the caller")
    os.kill(os.getpid(), signal.SIGTERM)
    assert CALLER_GOT == [signal.SIGTERM, signal.SIGTERM]


def test_a_callers_own_handlers_keep_their_signals_through_a_run(monkeypatch, capsys, tmp_path):
    """A caller that handles Ctrl-C and SIGTERM itself without raising (it decided what they do) keeps them
    during main(): both reach its handler, and the run goes on and saves; it ignores Ctrl-C, by design."""
    signal.signal(signal.SIGINT, caller_handler)
    signal.signal(signal.SIGTERM, caller_handler)
    before = dispositions()
    CALLER_GOT.clear()
    real_write, during = outputs.write_flushed, []

    def write_then_signal(path, text, *, shown):
        real_write(path, text, shown=shown)
        if not during:
            during.append(dispositions())
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(outputs, "write_flushed", write_then_signal)
    out = tmp_path / "tok"
    assert main(["train", "--variant", "v2", "--data", "corpus-en", "--vocab-size", "300", "--quiet",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out.splitlines()[-1].startswith(f"wrote {out / 'vocab.json'}")
    assert CALLER_GOT == [signal.SIGINT, signal.SIGTERM]
    assert during[0][signal.SIGINT] is caller_handler and during[0][signal.SIGTERM] is caller_handler
    assert dispositions() == before


def test_a_callers_handler_that_raises_ends_the_run_as_ctrl_c(monkeypatch, capsys):
    def raising(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, raising)

    def work(args):
        os.kill(os.getpid(), signal.SIGINT)
        raise AssertionError("the caller's handler did not interrupt the command")

    every_command_does(monkeypatch, work)
    assert main(["trace"]) == 130
    assert capsys.readouterr().err == "bpe: interrupted\n" and signal.getsignal(signal.SIGINT) is raising


class SignalsOnCorpus(Observer):
    """Sends every stop signal to this process once the pre-tokens are counted (in the main thread), noting
    the dispositions it sees then."""

    def on_corpus(self, corpus) -> None:
        super().on_corpus(corpus)
        self.seen = dispositions()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            os.kill(os.getpid(), signum)


def test_train_bpe_sets_no_handler(tmp_path):
    """The library leaves every stop signal to its caller: none is changed during the run, a caller's
    handler hears them and the run goes on, with the merges of an undisturbed run."""
    signal.signal(signal.SIGINT, caller_handler)
    signal.signal(signal.SIGTERM, caller_handler)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    before = dispositions()
    CALLER_GOT.clear()
    observer = SignalsOnCorpus()
    result = train_bpe(CORPUS_EN, 300, [EOT], variant="v6", workers=2, observer=observer)
    assert observer.seen == before and dispositions() == before
    assert CALLER_GOT == [signal.SIGINT, signal.SIGTERM]
    assert result == train_bpe(CORPUS_EN, 300, [EOT], variant="v6", workers=2)


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_the_command_ends_quietly_on_a_signal_after_its_run(monkeypatch, capsys, debug):
    """``bpe`` / ``python -m bpe``: a Ctrl-C that comes once main has put the defaults back (the run has
    ended and said so) ends the command with 130 and no traceback; with --debug it shows its traceback."""
    real_main = bpe.cli.main

    def main_then_ctrl_c(argv=None):
        status = real_main(argv)
        os.kill(os.getpid(), signal.SIGINT)
        return status

    every_command_does(monkeypatch, lambda args: 0)
    monkeypatch.setattr(bpe.cli, "main", main_then_ctrl_c)
    monkeypatch.setattr(sys, "argv", ["bpe", *(["--debug"] if debug else []), "trace"])
    with pytest.raises(KeyboardInterrupt if debug else SystemExit) as raised:
        bpe.cli.run()
    if not debug:
        assert raised.value.code == 130
    assert capsys.readouterr().err == ""
