"""Reaching a Dask scheduler for a cluster run (:mod:`bpe.corpus.cluster`): an address probed before Dask's client
connects to it, or a ``LocalCluster`` started for the run in a process of its own.

Before Dask's client connects, :func:`probe` opens a connection itself and waits for the scheduler's greeting (a
scheduler writes its handshake as it accepts), at most :data:`CLUSTER_TIMEOUT` seconds (``--cluster-timeout``):
Dask's client writes first and then reads with no time limit, so a server that never answers would hold it for
good (``Client(timeout=...)`` bounds the connection, not the handshake), and one that answers in another
protocol (a web server's ``HTTP/1.0 400``, read as a message length of 3 EiB) would end it as "out of memory".
Each is one line naming the address instead.

A local cluster (``--cluster local``) that cannot start is one line with the cause its log gives (Dask's last
line is an INFO line on its way out), memory named where it ran short; Ctrl-C while it starts, or while it
counts, ends it at once; its scratch folder, left by a run killed outright, is removed by the next
(:mod:`bpe.running.leftovers`).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bpe.defaults import CLUSTER_TIMEOUT
from bpe.dependencies import address_space_limit, optional_module
from bpe.errors import ArgumentError, BPEError
from bpe.running.leftovers import LEFTOVERS, remove_orphans


def distributed():
    """``dask.distributed``, or the one line saying how to install it."""
    return optional_module("distributed", "counting on a cluster (--cluster)", "cluster", "dask[distributed]")


#: A scheduler's greeting starts with its length, 8 bytes little-endian: a few hundred bytes.  Text read so
#: (``HTTP/1.0``, ``SSH-2.0-``) is a length past 10**17.
GREETING_MAX_BYTES = 1 << 24


def check_cluster_timeout(timeout) -> float:
    """``timeout`` (seconds to wait for a scheduler's answer) if it is a number above 0, else one line."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        why = f"must be a number of seconds above 0, got {timeout!r}"
        raise ArgumentError(f"cluster_timeout {why}", f"--cluster-timeout {why} (or omit it: {CLUSTER_TIMEOUT:g} s)")
    return float(timeout)


#: What a local cluster's own process runs: a LocalCluster, its address on stdout, then a wait for stdin to
#: close (the training process closes it when done, or dies and the system closes it).  Its workers keep
#: their lock files in the folder given, not in Dask's default (``$TMPDIR/dask-scratch-space``, left behind).
_LOCAL_CLUSTER = """
import sys
from distributed import LocalCluster
with LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True, dashboard_address=None,
                  local_directory=sys.argv[2]) as c:
    print(c.scheduler_address, flush=True)
    sys.stdin.read()
"""


@contextmanager
def local_cluster(workers: int | None = None, env: dict[str, str] | None = None) -> Iterator[str]:
    """A Dask ``LocalCluster`` of ``workers`` processes (default: the cores), one thread each, for the block;
    its scheduler's address.  It runs in a process of its own, in a session of its own: the caller's
    process is left as it was found (a LocalCluster started in it leaves multiprocessing's resource
    tracker behind as its child), and a Ctrl-C at the terminal reaches the training process alone, which
    closes the cluster on its way out: at once (its whole process group killed) when the block failed or
    was interrupted, also while the cluster starts, and by closing it when the block ended well.  Its scratch
    folder is a temporary one, ``bpe-dask-PID-*``, removed after it; one that a run killed outright left is
    removed by the next (:mod:`bpe.running.leftovers`).  ``env``: more environment for the cluster's processes."""
    distributed()
    workers = workers or os.cpu_count() or 1
    remove_orphans()
    with tempfile.TemporaryFile() as log, \
            tempfile.TemporaryDirectory(prefix=f"bpe-dask-{os.getpid()}-", ignore_cleanup_errors=True) as scratch:
        process = subprocess.Popen([sys.executable, "-c", _LOCAL_CLUSTER, str(workers), scratch],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                   start_new_session=True,
                                   env={**os.environ, "DASK_TEMPORARY_DIRECTORY": scratch, **(env or {})})
        try:
            # the folder is the cluster's too: a later run keeps it while the cluster's process lives
            (Path(scratch) / LEFTOVERS).write_text(f"{process.pid}\n")
            address = process.stdout.readline().strip()
            if not address:
                process.wait()
                log.seek(0)
                raise BPEError(did_not_start(log.read().decode(errors="replace"), process.returncode))
            yield address
        except BaseException:  # failed or interrupted: nothing it holds is of use, and nothing need wait for it
            _kill_group(process)
            raise
        finally:
            process.stdin.close()  # the cluster closes and its process ends
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                _kill_group(process)


def _kill_group(process: subprocess.Popen) -> None:
    """The cluster's process and its workers (its process group) killed, the process reaped."""
    try:
        os.killpg(process.pid, signal.SIGKILL)  # not yet reaped: the group's number is still the cluster's
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


#: A line of a Python traceback that names the exception and says something: ``RuntimeError: can't start ...``.
_RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception)(?::\s*\S.*)?$")
#: What an exception says when memory ran short (a thread's stack counts: it is address space).
_SHORT_OF_MEMORY = ("MemoryError", "can't start new thread", "Cannot allocate memory", "out of memory")


def did_not_start(log: str, status: int) -> str:
    """The one line for a local cluster whose process ended before it gave its address: the cause in its log
    (the first exception, the root of the ones after it; Dask's last line is an INFO line on its way out),
    and, where memory ran short, the limit it met and what to do.

    >>> did_not_start("RuntimeError: can't start new thread\\n... - INFO - reaping stray process", 1)[:96]
    "a local Dask cluster did not start (exit status 1): out of memory (RuntimeError: can't start new"
    """
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    raised = [line for line in lines if _RAISED.match(line)]
    short = [line for line in raised if any(words in line for words in _SHORT_OF_MEMORY)]
    said = f"a local Dask cluster did not start ({_status(status)})"
    if short or status == -signal.SIGKILL:
        limit = address_space_limit()
        where = (f"; the address-space limit is {limit >> 20} MiB (ulimit -v {limit >> 10}): raise it or lift it"
                 if limit is not None else "; free some memory")
        return (f"{said}: out of memory ({short[0] if short else 'killed by SIGKILL, as the OOM killer does'})"
                f"{where}, or count in this process (leave out --cluster)")
    cause = raised[0] if raised else next((line for line in reversed(lines) if " - ERROR - " in line),
                                          lines[-1] if lines else "nothing said")
    return f"{said}: {cause}"


def _status(status: int) -> str:
    return f"killed by {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"


def connect(cluster, stack: ExitStack, timeout: float = CLUSTER_TIMEOUT):
    """The client given, or one connected to the address (``local``: :func:`local_cluster`, started here),
    what this run starts entered into ``stack`` to be closed with it.  An address is first probed (:func:`probe`):
    ``timeout`` seconds for the scheduler's greeting, then for Dask's client to connect."""
    dist = distributed()
    if not isinstance(cluster, str):
        return cluster
    local = cluster.strip() == "local"
    address = stack.enter_context(local_cluster()) if local else cluster
    if not local:
        probe(address, timeout)
    try:
        return stack.enter_context(dist.Client(address, timeout=f"{timeout}s"))
    except (OSError, TimeoutError, ValueError) as exc:
        raise BPEError(f"cannot reach the Dask scheduler at {cluster}: {exc}") from None
    except MemoryError:  # a reply in another protocol, read as a message's length
        raise BPEError(f"{cluster} answered, but not as a Dask scheduler does (its reply reads as a message of "
                       "exabytes); check the address: a scheduler listens on port 8786 by default") from None


def probe(address: str, timeout: float) -> None:
    """One line unless a Dask scheduler greets at ``address`` (``tcp://host:port``, or ``host:port``) within
    ``timeout`` seconds: no server, one that says nothing (Dask's client would wait on it for good), one that
    closes the connection, or one that speaks another protocol.  Other protocols (``tls://``) are left to
    Dask's client.  Nothing is sent: a scheduler writes its greeting as it accepts, and reads ours after."""
    from distributed.comm.addressing import parse_address, parse_host_port  # noqa: PLC0415 (Dask: optional)

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location, 8786)
    except ValueError as exc:
        raise BPEError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    if scheme != "tcp":
        return
    deadline = time.monotonic() + timeout
    try:
        connection = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise BPEError(f"cannot reach the Dask scheduler at {address}: no answer to the connection in "
                       f"{timeout:g} s; check the address, or wait longer with --cluster-timeout SECONDS") from None
    except OSError as exc:
        raise BPEError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}") from None
    with connection:
        greeting, closed = _read_greeting(connection, deadline)
    if len(greeting) == 8 and 0 < int.from_bytes(greeting, "little") <= GREETING_MAX_BYTES:
        return
    if greeting:
        raise BPEError(f"the server at {address} is not a Dask scheduler: it answered {greeting!r}, where a "
                       "scheduler greets with its own handshake; check the address (a scheduler listens on port "
                       "8786 by default, its dashboard on 8787)")
    if closed:
        raise BPEError(f"the server at {address} is not a Dask scheduler: it closed the connection without a word, "
                       "where a scheduler greets at once; check the address")
    raise BPEError(f"no Dask scheduler answered at {address}: the server took the connection but sent nothing in "
                   f"{timeout:g} s, where a scheduler greets at once (a web server, for one, waits for a request); "
                   "check the address, or wait longer with --cluster-timeout SECONDS")


def _read_greeting(connection: socket.socket, deadline: float) -> tuple[bytes, bool]:
    """The first 8 bytes the server sends before ``deadline`` (fewer if it stops), and whether it closed."""
    got = b""
    while len(got) < 8:
        left = deadline - time.monotonic()
        if left <= 0:
            return got, False
        connection.settimeout(left)
        try:
            data = connection.recv(8 - len(got))
        except TimeoutError:
            return got, False
        except OSError:  # reset by the peer
            return got, True
        if not data:
            return got, True
        got += data
    return got, False


