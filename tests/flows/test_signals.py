"""SIGTERM (``kill``, a service manager) and SIGHUP (the terminal closed) end a command as Ctrl-C does.

Each command runs in a real process on small data, in a session of its own.  The test waits until the
command is in the phase under test (its pool's workers exist; the bench's timed child has workers of
its own; encode's temporary ``.npy`` exists, with its pool's workers or its threads; scalene's child runs the
training, its files in /tmp), sends the signal to the command's process alone, and checks: one line,
``bpe: terminated (SIGTERM)``, exit
status 128 + the signal; no process it started still alive (those seen before the signal, and anything
left in its session); no temporary file or folder left, nor scalene's files in /tmp for the processes it
started.  Saving is reached from inside: the file writer signals its own process after the first file,
or the save's held block once the new folder is in place (then the run says what it wrote).
Waits are bounded by :data:`HANG_GUARD_SECONDS`; nothing asserts a duration.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from bpe.cli import main
from bpe.training.registry import VARIANTS
from conftest import (
    DEFAULT_CORPUS,
    HANG_GUARD_SECONDS,
    REPO_ROOT,
    alive,
    child_env,
    descendants,
    live_processes,
    scalene_files,
    scalene_runs_the_training,
    threads_running,
    timed_child_has_workers,
    wait_for,
    workers_running,
    write_letter_runs,
)

pytestmark = pytest.mark.usefixtures("sighup_not_ignored")

SIGNALS = [signal.SIGTERM, signal.SIGHUP]


def signal_in_phase(argv: list[str], signum: int, in_phase, env: dict[str, str] | None = None):
    """Run ``bpe argv``; once ``in_phase(proc)`` holds, send ``signum`` to it alone.  Returns the process, its
    stderr and the processes it had started by then."""
    proc = subprocess.Popen([sys.executable, "-m", "bpe", *argv], cwd=REPO_ROOT, env=env or child_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: proc.poll() is not None or in_phase(proc), "the command never reached the phase")
        assert proc.poll() is None, f"it ended before the signal: {proc.communicate()[1]}"
        started = descendants(proc.pid)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, err, started


def assert_ended_cleanly(proc, err: str, started: list[int], signum: int) -> None:
    assert err == f"bpe: terminated ({signal.Signals(signum).name})\n", err
    assert proc.returncode == 128 + signum
    wait_for(lambda: not [pid for pid in started if alive(pid)] and not live_processes(session=proc.pid),
             f"processes left over: {started}")


@pytest.mark.parametrize("hold", [True, False], ids=["at its start", "as its modules are imported"])
@pytest.mark.parametrize("signum", [signal.SIGINT, *SIGNALS], ids=lambda s: signal.Signals(s).name)
def test_a_signal_as_the_command_starts_is_its_one_line(tmp_path, signum, hold):
    """The stop signals are in hand before the command line's modules are imported (numpy alone takes a few
    hundred milliseconds): a signal then used to end ``bpe`` with no line (SIGTERM, SIGHUP: killed by it) or a
    ``KeyboardInterrupt`` traceback (SIGINT).  The process writes a file once its signals are in hand
    (``bpe.console.STARTED_ENV``), and, held, waits there for the signal; not held, it goes on with its
    imports, and the signal, sent as soon as the file is there, lands in them."""
    from bpe.console import HOLD_AT_START_ENV, STARTED_ENV

    marker = tmp_path / "started"
    env = child_env(**{STARTED_ENV: str(marker)}, **({HOLD_AT_START_ENV: "1"} if hold else {}))
    proc = subprocess.Popen([sys.executable, "-m", "bpe", "train", "--variant", "v2", "--data", str(DEFAULT_CORPUS),
                             "--quiet", "--out", str(tmp_path / "tok")], cwd=REPO_ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: marker.exists(), "the command never took its signals in hand", proc)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    name = "interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})"
    assert err == f"bpe: {name}\n", err
    assert proc.returncode == 128 + signum and out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["started"]


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_train_in_its_pool(tmp_path, signum):
    out = tmp_path / "tok"
    proc, err, started = signal_in_phase(
        ["train", "--variant", "v6", "--data", str(DEFAULT_CORPUS), "--vocab-size", "2000", "--workers", "2",
         "--quiet", "--out", str(out)], signum, workers_running)
    assert started, "no pool worker was seen"
    assert_ended_cleanly(proc, err, started, signum)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, nothing half-made


def counting_threads_running(proc) -> bool:
    """v9 counts on threads of its own process, not in a pool: the process holds more than its main thread
    (and, with --quiet, nothing else starts one)."""
    try:
        return len(os.listdir(f"/proc/{proc.pid}/task")) >= 3
    except FileNotFoundError:
        return False


@pytest.mark.skipif("v9" not in VARIANTS, reason="v9's compiled counter is not built here")
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_train_while_v9_counts_on_its_threads(tmp_path, signum):
    big = tmp_path / "big.txt"
    big.write_bytes(DEFAULT_CORPUS.read_bytes() * 25)  # about 58 MB: a few tenths of a second of counting
    out = tmp_path / "tok"
    proc, err, started = signal_in_phase(
        ["train", "--variant", "v9", "--data", str(big), "--vocab-size", "2000", "--workers", "2", "--quiet",
         "--out", str(out)], signum, counting_threads_running)
    assert started == []  # threads, no process
    assert_ended_cleanly(proc, err, started, signum)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]  # no output, nothing half-made


def test_train_when_its_terminal_is_gone(tmp_path):
    """A closed terminal: SIGHUP, and stderr no longer takes the line; the exit status still says SIGHUP."""
    proc = subprocess.Popen([sys.executable, "-m", "bpe", "train", "--variant", "v6", "--data", str(DEFAULT_CORPUS),
                             "--vocab-size", "2000", "--workers", "2", "--quiet"], cwd=REPO_ROOT, env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: workers_running(proc), "the pool never started", proc)
        started = descendants(proc.pid)
        proc.stderr.close()  # nobody reads it any more: writing it fails (EPIPE)
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert started and proc.returncode == 128 + signal.SIGHUP
    wait_for(lambda: not [pid for pid in started if alive(pid)], f"processes left over: {started}")


_SIGNAL_WHILE_SAVING = """
import os, sys
import bpe.io.outputs as outputs
from bpe.cli import main
from bpe.training.registry import VARIANTS
real_write = outputs.write_flushed
def write_then_signal(path, text, *, shown):
    real_write(path, text, shown=shown)
    os.kill(os.getpid(), int(sys.argv[1]))  # the first file is in the new folder; the swap has not begun
outputs.write_flushed = write_then_signal
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_train_while_saving(tmp_path, signum):
    out = tmp_path / "tok"
    proc = subprocess.run([sys.executable, "-c", _SIGNAL_WHILE_SAVING, str(int(signum)), "train", "--variant", "v2",
                           "--data", "corpus-en", "--vocab-size", "300", "--quiet", "--out", str(out)],
                          cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert proc.stderr == f"bpe: terminated ({signal.Signals(signum).name})\n", proc.stderr
    assert proc.returncode == 128 + signum
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no .tok.new-* folder, no tok


_SIGNAL_AFTER_THE_SWAP = """
import os, sys
from contextlib import contextmanager
import bpe.io.outputs as outputs
from bpe.cli import main
real_held = outputs.stop_signals_held
@contextmanager
def held_then_signal():
    with real_held():
        yield
        os.kill(os.getpid(), int(sys.argv[1]))  # the new folder has replaced the old; the signal waits for the block
outputs.stop_signals_held = held_then_signal
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_train_signalled_after_the_swap_says_what_it_wrote(tmp_path, signum):
    """The new tokenizer is in place when the signal lands: the save stands, the run says what it wrote and
    that the save had finished, then ends with 128 + the signal."""
    from bpe.io.outputs import load_tokenizer

    out = tmp_path / "tok"
    argv = ["train", "--variant", "v2", "--data", "corpus-en", "--quiet", "--out", str(out)]
    assert main([*argv, "--vocab-size", "280"]) == 0  # the old tokenizer, replaced below
    proc = subprocess.run([sys.executable, "-c", _SIGNAL_AFTER_THE_SWAP, str(int(signum)), *argv,
                           "--vocab-size", "300"],
                          cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert proc.stderr == f"bpe: terminated ({signal.Signals(signum).name}) after the save had finished\n", proc.stderr
    assert proc.returncode == 128 + signum
    wrote = [line for line in proc.stdout.splitlines() if line.startswith("wrote ")]
    assert wrote == [f"wrote {out / 'vocab.json'}, {out / 'merges.txt'}, {out / 'train.json'}"], proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]  # no .tok.old-*, .tok.new-*, .tok.lock
    assert len(load_tokenizer(out).merges) == 300 - 257  # the new tokenizer, whole


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_bench_in_its_timed_child(tmp_path, signum):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc, err, started = signal_in_phase(
        ["bench", "--variant", "v6", "--data", str(DEFAULT_CORPUS), "--vocab-size", "2000", "--workers", "2",
         "--repeat", "3"], signum, timed_child_has_workers, env=child_env(TMPDIR=str(scratch)))
    assert len(started) >= 3, f"the timed child and its workers were not all seen: {started}"
    assert_ended_cleanly(proc, err, started, signum)
    assert list(scratch.iterdir()) == []  # neither the bench's folder nor the timed child's


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_encode_while_writing(tmp_path, signum):
    tok = tmp_path / "tok"
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "300", "--limit", "100KB", "--workers", "1",
                 "--quiet", "--out", str(tok)]) == 0
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:  # long enough to be still running when the signal comes
        for _ in range(10):
            f.write(DEFAULT_CORPUS.read_bytes())
    out = tmp_path / "ids.npy"

    def writing(proc) -> bool:
        return workers_running(proc) and (tmp_path / f".ids.npy.{proc.pid}.tmp").exists()

    proc, err, started = signal_in_phase(["encode", "--tokenizer", str(tok), "--data", str(big), "--out", str(out),
                                          "--workers", "2", "--chunk-size", "64KiB", "--encoder", "python"],
                                         signum, writing)
    assert_ended_cleanly(proc, err, started, signum)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "tok"]  # no .npy, no .tmp


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_encode_on_threads(tmp_path, signum):
    """The compiled encoder: its threads stop (each looks at its flag), the .npy's temporary file goes."""
    from bpe.io import compiled

    if compiled.UNAVAILABLE:
        pytest.skip(compiled.UNAVAILABLE)
    tok = tmp_path / "tok"
    assert main(["train", "--data", str(DEFAULT_CORPUS), "--vocab-size", "300", "--limit", "100KB", "--workers", "1",
                 "--quiet", "--out", str(tok)]) == 0
    big = write_letter_runs(tmp_path / "big.txt", runs=64, run_bytes=512 * 1024)  # long words: seconds of chunks
    out = tmp_path / "ids.npy"

    def writing(proc) -> bool:
        return threads_running(proc) and (tmp_path / f".ids.npy.{proc.pid}.tmp").exists()

    proc, err, started = signal_in_phase(["encode", "--tokenizer", str(tok), "--data", str(big), "--out", str(out),
                                          "--workers", "2", "--chunk-size", "64KiB", "--encoder", "compiled"],
                                         signum, writing)
    assert_ended_cleanly(proc, err, started, signum)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "tok"]  # no .npy, no .tmp


def test_profile_ends_scalene_and_its_child(tmp_path):
    pytest.importorskip("scalene")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc, err, started = signal_in_phase(
        ["profile", "--variant", "v2", "--data", str(DEFAULT_CORPUS), "--vocab-size", "2000", "--out-dir",
         str(tmp_path / "out")], signal.SIGTERM, scalene_runs_the_training, env=child_env(TMPDIR=str(scratch)))
    assert len(started) >= 2, f"scalene and the run it profiles were not both seen: {started}"
    assert_ended_cleanly(proc, err, started, signal.SIGTERM)
    assert list(scratch.iterdir()) == [] and not list((tmp_path / "out").glob("**/*"))  # no profile written
    # its native library writes to /tmp whatever TMPDIR says: every such file of the run's processes is gone
    assert not scalene_files(started), f"scalene's files in /tmp were left behind: {scalene_files(started)}"
