"""bpe/corpus/scheduler.py: reaching a Dask scheduler.  An address where no scheduler answers is one line
naming it, within ``--cluster-timeout`` (real servers on loopback: a web server, one that accepts and never
answers, one that answers in another protocol, one that hangs up); a local cluster that cannot start says
why (its first exception, not Dask's last INFO line); Ctrl-C while it starts ends it at once; a killed
run's scratch folder is kept while its cluster lives and removed once both are gone.

The local cluster's process is made to fail, or to wait, by a ``sitecustomize`` on its path that acts only
where ``DASK_TEMPORARY_DIRECTORY`` is set (the cluster's processes, not bpe's), and it writes a file when it
waits: the test acts on that file, never after a pause.
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bpe import train_bpe
from bpe.cli import main
from bpe.corpus import scheduler
from bpe.errors import ArgumentError, BPEError
from bpe.running.leftovers import LEFTOVERS, remove_orphans
from conftest import HANG_GUARD_SECONDS, REPO_ROOT, alive, child_env, wait_for

distributed = pytest.importorskip("distributed")

EOT = "<|endoftext|>"
#: Seconds the servers below are given: they never answer as a scheduler, so every test waits this long at most.
QUICK = 0.5


@pytest.fixture
def shards(tmp_path) -> Path:
    folder = tmp_path / "shards"
    folder.mkdir()
    (folder / "a.txt").write_text("some words to count<|endoftext|>and more", encoding="utf-8")
    return folder


def listening(answer=None) -> tuple[str, socket.socket]:
    """A server on loopback that accepts every connection and keeps it, sending ``answer`` first if given (None:
    nothing, ever; b"": it hangs up at once); its address and its socket (closed by the caller)."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            if answer == b"":
                connection.close()
                continue
            if answer:
                connection.sendall(answer)
            held.append(connection)

    threading.Thread(target=serve, daemon=True).start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", server


def train_on(cluster: str, shards: Path, timeout: float = QUICK) -> str:
    """The one line ``train_bpe`` answers with, counting ``shards`` on ``cluster``; a hang fails the test."""
    outcome = {}

    def train() -> None:
        try:
            train_bpe(shards, 300, [EOT], variant="v2", cluster=cluster, cluster_timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome["error"] = exc

    runner = threading.Thread(target=train, daemon=True)
    runner.start()
    runner.join(HANG_GUARD_SECONDS)
    assert not runner.is_alive(), f"train_bpe still waits on {cluster}"
    assert isinstance(outcome.get("error"), BPEError), outcome
    return str(outcome["error"])


def test_a_web_server_is_one_line_naming_the_address(shards):
    """A web server waits for a request, as Dask's client waits for the scheduler's greeting: Dask alone would
    hang there, or read the server's ``HTTP/1.0 400`` as a message of 3 EiB ("out of memory")."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.server_address[1]}"
    try:
        said = train_on(address, shards)
    finally:
        server.shutdown()
        server.server_close()
    assert said == (f"no Dask scheduler answered at {address}: the server took the connection but sent nothing in "
                    f"{QUICK:g} s, where a scheduler greets at once (a web server, for one, waits for a request); "
                    "check the address, or wait longer with --cluster-timeout SECONDS")


def test_a_server_that_never_answers_times_out_within_the_cluster_timeout(shards, capsys):
    """Dask's ``Client(timeout=...)`` bounds the connection, not the handshake after it: this held it for good."""
    address, server = listening(None)
    try:
        assert "sent nothing in 0.5 s" in train_on(address, shards)
        assert main(["train", "--data", str(shards), "--vocab-size", "300", "--cluster", address,
                     "--cluster-timeout", str(QUICK), "--quiet"]) == 2
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith(f"bpe: error: no Dask scheduler answered at {address}: ")
    assert "Traceback" not in err


@pytest.mark.parametrize("answer, said", [
    (b"SSH-2.0-OpenSSH_9.2\r\n", "is not a Dask scheduler: it answered b'SSH-2.0-', where a scheduler greets with "
                                 "its own handshake; check the address (a scheduler listens on port 8786 by "
                                 "default, its dashboard on 8787)"),
    (b"", "is not a Dask scheduler: it closed the connection without a word, where a scheduler greets at once; "
          "check the address"),
], ids=["another protocol", "hangs up"])
def test_a_server_that_is_not_a_scheduler_is_one_line_at_once(shards, answer, said):
    address, server = listening(answer)
    try:
        assert train_on(address, shards, timeout=HANG_GUARD_SECONDS) == f"the server at {address} {said}"
    finally:
        server.close()


def test_no_server_is_one_line(shards):
    with socket.socket() as unused:  # a port bound, never listened on: a connection is refused
        unused.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{unused.getsockname()[1]}"
        assert train_on(address, shards) == f"cannot reach the Dask scheduler at {address}: Connection refused"


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "10", True])
def test_the_cluster_timeout_is_a_number_of_seconds(shards, timeout):
    with pytest.raises(ArgumentError) as error:
        train_bpe(shards, 300, [EOT], cluster="local", cluster_timeout=timeout)
    assert str(error.value) == f"cluster_timeout must be a number of seconds above 0, got {timeout!r}"
    assert error.value.flagged.startswith(f"--cluster-timeout must be a number of seconds above 0, got {timeout!r} (or "
                                          "omit it: 20 s)")


def test_a_real_scheduler_passes_the_probe():
    with scheduler.local_cluster(1) as address:
        scheduler.probe(address, HANG_GUARD_SECONDS)


# --- A local cluster: why it did not start, Ctrl-C while it starts, a killed run's folder ---------------------

SITECUSTOMIZE = """
import os
if "DASK_TEMPORARY_DIRECTORY" in os.environ:  # the local cluster's processes, not bpe's
    if os.environ.get("BPE_TEST_CLUSTER_NO_THREADS"):  # what an address-space limit does to them
        import threading
        def refused(self):
            raise RuntimeError("can't start new thread")
        threading.Thread.start = refused
    if os.environ.get("BPE_TEST_CLUSTER_HOLD"):  # a cluster that takes its time to start: it waits here
        import signal
        with open(os.environ["BPE_TEST_CLUSTER_HOLD"], "w") as marker:
            marker.write(str(os.getpid()))
        while True:
            signal.pause()
"""


@pytest.fixture
def cluster_hooks(tmp_path) -> Path:
    """A folder holding :data:`SITECUSTOMIZE`, for the path of the cluster's processes."""
    folder = tmp_path / "hooks"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return folder


def test_a_local_cluster_short_of_memory_names_the_cause(cluster_hooks):
    """Its log ends with Dask's INFO lines on its way out ("reaping stray process"); the cause comes first."""
    with pytest.raises(BPEError) as error:
        with scheduler.local_cluster(1, env={"PYTHONPATH": str(cluster_hooks), "BPE_TEST_CLUSTER_NO_THREADS": "1"}):
            pass
    said = str(error.value)
    assert said.startswith("a local Dask cluster did not start (exit status 1): out of memory (RuntimeError: can't "
                           "start new thread); "), said
    assert said.endswith(", or count in this process (leave out --cluster)") and "INFO" not in said


@pytest.mark.parametrize("limit, then", [(None, "; free some memory"),
                                         (500_000 << 10, "; the address-space limit is 488 MiB (ulimit -v 500000): "
                                                         "raise it or lift it")])
def test_the_cause_is_the_first_exception_of_the_log(monkeypatch, limit, then):
    log = ("2026-12-07 16:42:26,359 - distributed.nanny - ERROR - Failed to start process\n"
           "Traceback (most recent call last):\n  File \"process.py\", line 223, in _start\n"
           "RuntimeError: can't start new thread\nAssertionError: Status.starting\n"
           "RuntimeError: Nanny failed to start.\n"
           "2026-12-07 16:42:28,487 - distributed.process - INFO - reaping stray process <SpawnProcess ...>\n")
    monkeypatch.setattr(scheduler, "address_space_limit", lambda: limit)
    assert scheduler.did_not_start(log, 1) == ("a local Dask cluster did not start (exit status 1): out of memory "
                                               f"(RuntimeError: can't start new thread){then}, or count in this "
                                               "process (leave out --cluster)")
    other = "Traceback (most recent call last):\nValueError: bad port\n... - INFO - closing\n"
    assert scheduler.did_not_start(other, 1) == ("a local Dask cluster did not start (exit status 1): ValueError: "
                                                 "bad port")
    assert scheduler.did_not_start("... - INFO - a line\n", -9).startswith(
        "a local Dask cluster did not start (killed by SIGKILL): out of memory (killed by SIGKILL, as the OOM killer "
        "does)")


def start_held(tmp_path, cluster_hooks) -> tuple[subprocess.Popen, int, Path]:
    """``bpe train --cluster local`` in a session of its own, its temporary folder ``tmp_path/temp``, its cluster
    held as it starts: the run, the cluster's pid, the temporary folder."""
    temp, marker = tmp_path / "temp", tmp_path / "cluster-started"
    temp.mkdir()
    (tmp_path / "a.txt").write_text("some words<|endoftext|>more words", encoding="utf-8")
    env = child_env(TMPDIR=str(temp), BPE_TEST_CLUSTER_HOLD=str(marker))
    env["PYTHONPATH"] = os.pathsep.join([str(cluster_hooks), env["PYTHONPATH"]])
    proc = subprocess.Popen([sys.executable, "-m", "bpe", "train", "--data", str(tmp_path / "a.txt"), "--vocab-size",
                             "300", "--cluster", "local", "--quiet"], cwd=REPO_ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    wait_for(lambda: marker.exists() and marker.read_text(), "the local cluster never started", proc)
    wait_for(lambda: list(temp.glob(f"bpe-dask-*/{LEFTOVERS}")), "the run never noted its cluster", proc)
    return proc, int(marker.read_text()), temp


def test_ctrl_c_while_a_local_cluster_starts_ends_it_at_once(tmp_path, cluster_hooks):
    """The run used to close its cluster by asking it to (it listens once started: 3.5-5.3 s later); now an
    interrupted run kills the cluster's process group.  The held cluster never starts, so a run that waited for
    it would end only when its 60 s of patience ran out: the wait below is shorter than that."""
    proc, cluster, temp = start_held(tmp_path, cluster_hooks)
    try:
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C: the cluster, in its own session, hears none
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if alive(cluster):
            os.kill(cluster, signal.SIGKILL)
    assert proc.returncode == 130 and err.splitlines()[-1] == "bpe: interrupted", err
    assert "Traceback" not in err
    wait_for(lambda: not alive(cluster), "the cluster outlived the run")
    assert list(temp.iterdir()) == []


def test_a_killed_runs_cluster_folder_stays_while_its_cluster_lives_then_goes(tmp_path, cluster_hooks):
    """``kill -9`` runs none of the run's clean-up: its ``bpe-dask-PID-*`` stays.  The folder names the cluster's
    process too (its ``leftovers``), so a later run keeps it while that process lives, then removes it."""
    proc, cluster, temp = start_held(tmp_path, cluster_hooks)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        [folder] = list(temp.iterdir())
        assert folder.name.startswith(f"bpe-dask-{proc.pid}-")
        assert (folder / LEFTOVERS).read_text() == f"{cluster}\n"
        remove_orphans(temp)  # what the next local cluster does first
        assert folder.exists(), "removed while its cluster still runs"
    finally:
        os.kill(cluster, signal.SIGKILL)
        proc.communicate()
    wait_for(lambda: not alive(cluster), "the held cluster did not die")
    remove_orphans(temp)
    assert list(temp.iterdir()) == []
