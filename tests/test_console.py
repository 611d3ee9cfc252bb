"""Every subcommand meets SIGTERM and SIGHUP as it meets Ctrl-C: one line, exit status 128 + the signal,
and any later signal ignored while the clean-up runs.  In this process: each subcommand's work is replaced
by a function that signals its own process (the real commands, in real processes, are in
``tests/flows/test_signals.py``)."""

from __future__ import annotations

import argparse
import os
import signal
import threading

import pytest

import bpe.cli
from bpe.cli import build_parser, main
from bpe.errors import STOP_SIGNALS

pytestmark = pytest.mark.usefixtures("sighup_not_ignored")

#: The smallest command line of every subcommand (a new subcommand must be added here).
ARGV = {"train": [], "bench": [], "trace": [], "report": [], "merge-cost": ["v6"], "profile": [], "estimate": [],
        "encode": ["--tokenizer", "t", "--data", "d", "--out", "o.npy"], "figures": [], "ablation": [],
        "reproduce": [], "handout": [], "data": ["list"], "walkthrough": ["--out", "o.html"]}


@pytest.fixture(autouse=True)
def handlers_kept():
    """An interrupted run leaves the stop signals ignored (its clean-up may still run): not in this process."""
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
