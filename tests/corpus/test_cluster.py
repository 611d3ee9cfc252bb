"""bpe/corpus/cluster.py on the real engine: a ``LocalCluster`` of 2 worker processes, started once for the
module (no mock scheduler).  Counting there gives the local path's merges on both regimes and every input form;
a worker killed while its task counts is retried by Dask and the merges stay right; Ctrl-C while the cluster
counts ends ``bpe train --cluster`` with one line and leaves no task of its run on the cluster.

The tasks announce themselves through the test hook (``TASKS_STARTED_ENV``: a file per task started, and a
``hold`` file that keeps a started task waiting), so a test kills or interrupts on that event, never after a
pause.
"""

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import bpe.corpus.cluster as cluster_module
import bpe.corpus.scheduler as scheduler_module
from bpe import train_bpe
from bpe.errors import BPEError
from bpe.running.leftovers import LEFTOVERS
from conftest import DEFAULT_CORPUS, REPO_ROOT, alive, child_env, live_processes, read_stderr_until, wait_for

distributed = pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def hook(tmp_path_factory) -> Path:
    """The folder the cluster's tasks write their start into (``TASKS_STARTED_ENV``)."""
    return tmp_path_factory.mktemp("tasks")


@pytest.fixture(scope="module")
def client(hook):
    """A ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)``, in a process of its own
    (:func:`bpe.corpus.scheduler.local_cluster`: this process keeps no child of it), and a client."""
    with scheduler_module.local_cluster(2, env={cluster_module.TASKS_STARTED_ENV: str(hook)}) as address, \
            distributed.Client(address) as connected:
        connected.wait_for_workers(2)
        yield connected


def written(folder: Path, kind: str) -> Path:
    """A few hundred KB of a regime in ``folder``, and its documents in every form."""
    text_file = folder / "corpus.txt"
    if kind == "gutenberg":
        text = DEFAULT_CORPUS.read_text(encoding="utf-8")
        text_file.write_text(text[:text.index(EOT, 300_000)], encoding="utf-8")
    else:
        from bpe.data.webtext import generate

        generate(text_file, 300_000)
    documents = text_file.read_text(encoding="utf-8").split(EOT)
    lines = "".join(json.dumps({"text": d}) + "\n" for d in documents).encode()
    (folder / "docs.jsonl.gz").write_bytes(gzip.compress(lines))
    pq.write_table(pa.table({"text": documents}), folder / "docs.parquet", row_group_size=200)
    shards = folder / "shards"
    shards.mkdir()
    for i in range(5):
        part = documents[i * len(documents) // 5:(i + 1) * len(documents) // 5]
        (shards / f"part-{i}.txt").write_text(EOT.join(part), encoding="utf-8")
    return folder


@pytest.fixture(scope="module", params=["gutenberg", "webtext"])
def regime(request, tmp_path_factory) -> Path:
    return written(tmp_path_factory.mktemp(request.param), request.param)


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> Path:
    return written(tmp_path_factory.mktemp("books"), "gutenberg")


def test_the_cluster_gives_the_local_merges_on_every_form(client, regime, monkeypatch):
    monkeypatch.setattr(cluster_module, "MIN_TASK_BYTES", 50_000)  # the text file is cut into byte ranges too
    expected = train_bpe(regime / "corpus.txt", 400, [EOT], variant="v9")
    for given in ("corpus.txt", "docs.jsonl.gz", "docs.parquet", "shards"):
        assert train_bpe(regime / given, 400, [EOT], variant="v9", cluster=client) == expected, given
    # the fast counter (v6) and the plain one (v2, on the books alone: its merges are slow on web text) as well
    for variant in ("v6", "v2") if regime.name.startswith("gutenberg") else ("v6",):
        assert train_bpe(regime / "shards", 400, [EOT], variant=variant, cluster=client) == expected, variant


def started_tasks(hook: Path) -> list[Path]:
    return sorted(hook.glob("started-*"))


@pytest.fixture
def held(hook):
    """Tasks wait once started, until the test lets them go (and they are let go whatever happens)."""
    for mark in started_tasks(hook):
        mark.unlink()
    (hook / "hold").write_text("")
    yield hook
    (hook / "hold").unlink(missing_ok=True)


def test_a_worker_killed_while_counting_is_retried_and_the_merges_stay_right(client, books, held):
    expected = train_bpe(books / "shards", 400, [EOT], variant="v9")
    outcome = {}

    def train() -> None:
        try:
            outcome["result"] = train_bpe(books / "shards", 400, [EOT], variant="v9", cluster=client)
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            outcome["error"] = exc

    runner = threading.Thread(target=train)
    runner.start()
    try:
        wait_for(lambda: started_tasks(held), "no counting task started")
        victim = int(started_tasks(held)[0].read_text())
        os.kill(victim, signal.SIGKILL)
        wait_for(lambda: not alive(victim), "the worker did not die")
    finally:
        (held / "hold").unlink()
        runner.join()
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"] == expected
    client.wait_for_workers(2)  # the nanny has started another worker for the next test


def our_tasks(client) -> list[str]:
    return client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks if "bpe-" in str(k)])


def test_ctrl_c_while_the_cluster_counts_ends_with_one_line_and_cancels_its_tasks(client, books, held):
    address = client.scheduler.address
    argv = [sys.executable, "-m", "bpe", "train", "--data", str(books / "shards"), "--vocab-size", "400",
            "--cluster", address, "--quiet"]
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=child_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        seen = read_stderr_until(proc, f"counting on the Dask cluster at {address}")
        wait_for(lambda: started_tasks(held), "no counting task started", proc)
        wait_for(lambda: our_tasks(client), "the run's tasks never reached the scheduler", proc)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert (seen + err).strip().splitlines()[-1] == "bpe: interrupted"
    assert "Traceback" not in seen + err
    wait_for(lambda: not our_tasks(client), "the run's tasks were left on the cluster")


def test_a_cluster_takes_files_and_says_so_in_one_line(client, books):
    datasets = pytest.importorskip("datasets")
    with pytest.raises(BPEError, match="^a cluster counts files its workers can read"):
        train_bpe(datasets.Dataset.from_dict({"text": ["a", "b"]}), 300, cluster=client)
    with pytest.raises(BPEError, match="^--limit is not taken with --cluster"):
        train_bpe(books / "shards", 300, [EOT], cluster=client, limit="10KB")
    with pytest.raises(BPEError, match="^cluster must be a dask.distributed Client or a scheduler's address, got 3$"):
        train_bpe(books / "shards", 300, [EOT], cluster=3)


def test_a_local_cluster_leaves_no_process_or_file_behind(books, tmp_path, monkeypatch):
    """``--cluster local`` starts a LocalCluster for the run, in a process of its own, and ends it; its
    workers' scratch folder (``$TMPDIR/bpe-dask-PID-*``, not Dask's default ``dask-scratch-space``) goes with
    it, and so do the ones runs killed outright left, once their process and their cluster's are gone
    (:mod:`bpe.running.leftovers`; tests/corpus/test_scheduler.py kills a run for real)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its pid names a process that has ended
    left = temp / f"bpe-dask-{ended.pid}-orphan"
    serving = temp / f"bpe-dask-{ended.pid}-cluster-alive"  # its cluster's process (this one, here) runs on
    running = temp / f"bpe-dask-{os.getpid()}-owner-alive"
    for folder in (left, serving, running):
        folder.mkdir()
    (left / LEFTOVERS).write_text(f"{ended.pid}\n")
    (serving / LEFTOVERS).write_text(f"{os.getpid()}\n")
    before = set(live_processes(parent=os.getpid()))
    expected = train_bpe(books / "shards", 300, [EOT], variant="v9")
    assert train_bpe(books / "shards", 300, [EOT], variant="v9", cluster="local") == expected
    assert set(live_processes(parent=os.getpid())) == before
    assert sorted(p.name for p in temp.iterdir()) == sorted([serving.name, running.name])


def test_without_dask_cluster_says_what_to_install(tmp_path):
    (tmp_path / "a.txt").write_text("hello world")
    code = ("import sys; sys.modules['distributed'] = None\n"
            "from bpe.cli import main\n"
            f"sys.exit(main(['train', '--data', {str(tmp_path / 'a.txt')!r}, '--cluster', 'local', '--quiet']))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=child_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == ("bpe: error: counting on a cluster (--cluster) needs dask[distributed], which this Python "
                           "lacks: pip install 'bpe-lab[cluster]' (or: pip install 'dask[distributed]')\n")


def test_a_thread_refused_while_waiting_on_the_cluster_is_one_line():
    """Under an address-space limit Dask's client may fail to start a thread while it waits for a result (seen
    at ``ulimit -v 700000`` with ``--cluster local``): one line, not its traceback."""
    class Refused:
        def result(self):
            raise RuntimeError("can't start new thread")

    with pytest.raises(BPEError) as error:
        cluster_module._result(Refused(), [])
    assert str(error.value) == ("out of memory while counting on the cluster: a thread could not be started (can't "
                                "start new thread), in this process or on a worker; raise the address-space limit "
                                "(ulimit -v) where it is set, or lift it")
