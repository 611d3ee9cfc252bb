"""Counting on a Dask cluster: a corpus's files counted on the cluster's workers, the counts summed there by
part, and only the sums brought to this process, which merges.

Past one machine the counting is a map-reduce and only the merge needs one process.  Dask runs it: it is
Python's own engine, the scientific stack's, and its ``LocalCluster`` runs the real scheduler and worker
processes on one machine, so the tests and the one-machine bench run the engine a cluster runs.  The
work, in three steps:

1. **map**: about :data:`TASKS_PER_THREAD` tasks a worker thread, each a share of the bytes: small files
   grouped, a large plain-text file cut into byte ranges where no pre-token spans the cut (v3's rule).  A
   task reads its files on the worker (they must be readable there: a shared file system, or fsspec URLs
   such as ``s3://`` and ``hf://``), counts them with the rung's own counter of texts on one thread, as
   the local path counts a corpus (:func:`bpe.counting.documents.count_documents`), and splits its counts
   into ``P`` parts by a hash of the pre-token, ``P`` being the cluster's threads: as dicts, each part
   pickled whole (:func:`bpe.counting.parts.count_dict_parts`), or as the rung keeps them (v9: its
   arrays, by its tables' own hash; :func:`bpe.counting.parts.parts_of` says which).
2. **reduce**: one task per part sums part ``p`` of every map task; a pre-token is in one part only,
   whichever file it came from.
3. **gather**: this process takes the ``P`` sums, disjoint, and joins them with ``dict.update``.

What travels: a file's name to a worker; each file's distinct pre-tokens from its worker to their parts'
reducers; the corpus's distinct pre-tokens, once, to this process.  Never the text, never a file's counts
to this process.

Failures.  A worker lost mid-count is the engine's to retry: the scheduler runs the lost worker's tasks
again elsewhere (up to ``distributed.scheduler.allowed-failures`` times), and the counts stay exact
because a task is a pure function of its file, summed only once it has ended.  Past that, or when a file
is bad, the run ends with one line naming the file.  Ctrl-C (or SIGTERM) cancels every task this run
gave the cluster before it leaves.

The scheduler is reached (an address probed first, or a local cluster started for the run) by
:mod:`bpe.corpus.scheduler`.

Without Dask installed, the one line says what to install: ``pip install 'bpe-lab[cluster]'``.
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

from bpe.corpus.batches import batches, counting_tokens, separator_of
from bpe.corpus.corpus import Corpus
from bpe.corpus.scheduler import CLUSTER_TIMEOUT, connect, distributed
from bpe.corpus.sources import source_pieces, text_spans
from bpe.errors import BPEError

#: The keys of this module's tasks begin so (``COUNT_TASK-i-run``, ``SUM_TASK-p-run``): a failure names its task
#: by them, and the cluster bench (tools/cluster_bench.py) tells the kinds apart in Dask's task stream.
COUNT_TASK, SUM_TASK = "bpe-count", "bpe-sum"
#: A map task counts at least this many bytes (a range of a file, or files grouped): less is not worth a task.
MIN_TASK_BYTES = 4 * 1024 * 1024
#: About this many map tasks per worker thread, so that a slow file leaves no worker idle at the end.
TASKS_PER_THREAD = 2

#: TEST-ONLY: a directory.  Each counting task, as it starts, writes a file there named for its process
#: (``started-PID-N``), then waits while a file named ``hold`` is there: so a test kills a worker, or
#: interrupts a run, while a task is counting, waiting for the file rather than for time to pass.
TASKS_STARTED_ENV = "BPE_TEST_CLUSTER_TASKS"


def check_cluster(cluster, corpus: Corpus, limit: int | None) -> None:
    """Phase 1 for a cluster run: Dask installed, a client or an address, files the workers can read."""
    distributed()
    if not isinstance(cluster, str) and not callable(getattr(cluster, "submit", None)):
        raise BPEError(f"cluster must be a dask.distributed Client or a scheduler's address, got {cluster!r}")
    if isinstance(cluster, str) and not cluster.strip():
        raise BPEError("--cluster needs a scheduler's address (tcp://host:8786) or local")
    if corpus.documents is not None:
        raise BPEError("a cluster counts files its workers can read (paths, globs, s3:// or hf:// URLs); documents "
                       "in memory are counted in this process: leave out the cluster")
    if limit is not None:
        raise BPEError("--limit is not taken with --cluster: the cluster counts whole files; give the files to count")


def count_on_cluster(cluster, parts_of_counts: tuple[Callable, Callable, Callable], corpus: Corpus,
                     special_tokens: Sequence[str], *, raw: bool = False, errors: str = "strict",
                     on_bytes: Callable[[int], None] | None = None, timeout: float = CLUSTER_TIMEOUT):
    """The pre-token counts of ``corpus``'s files, counted on ``cluster`` (a Client, or an address), as
    ``(counts, text bytes counted)``; ``on_bytes(n)`` as each file (or range) is counted, in bytes read;
    ``timeout``: seconds to wait for the scheduler at an address to answer (:func:`connect`).

    ``parts_of_counts`` is how the rung's counts travel, ``(count_parts, sum_parts, joined_parts)``
    (:func:`bpe.counting.parts.parts_of`), and ``raw`` whether its counter takes plain text as bytes."""
    dist = distributed()
    stack = ExitStack()
    futures: list = []
    try:
        client = connect(cluster, stack, timeout)
        parts = max(1, sum(client.nthreads().values()))
        count_parts, sum_parts, joined_parts = parts_of_counts
        tasks = _tasks(corpus, counting_tokens(special_tokens), parts, errors)
        run = uuid.uuid4().hex[:12]  # the tasks' keys: this run's own, and each names its task for a message
        maps = [client.submit(count_task, count_parts, task, list(special_tokens), corpus.text_column, errors, parts,
                              raw, pure=False, key=f"{COUNT_TASK}-{i}-{run}")
                for i, task in enumerate(tasks)]
        futures += maps
        stats = [client.submit(_stats_of, m, pure=False) for m in maps]
        pieces = [[client.submit(_part_of, m, p, pure=False) for m in maps] for p in range(parts)]
        futures += stats + [f for part in pieces for f in part]
        sums = [client.submit(sum_parts, *part, pure=False, key=f"{SUM_TASK}-{p}-{run}")
                for p, part in enumerate(pieces)]
        futures += sums
        used = 0
        for done in dist.as_completed(stats):
            text_bytes, read = _result(done, tasks)
            used += text_bytes
            if on_bytes is not None and read:
                on_bytes(read)
        return joined_parts([_result(done, tasks) for done in sums]), used
    finally:
        with stack:  # the client and the local cluster this run started, closed once the futures are
            if futures:
                client.cancel(futures)  # also on Ctrl-C: nothing of this run is left running on the cluster


def _stats_of(found: dict) -> tuple[int, int]:
    return found["text_bytes"], found["read"]


def _part_of(found: dict, part: int):
    return found["parts"][part]


def _tasks(corpus: Corpus, special_tokens: Sequence[str], parts: int, errors: str) -> list[list[tuple]]:
    """What each map task counts: a list of ``(source, span)``, a file (``span`` None) or a byte range of a
    large plain text file.  About :data:`TASKS_PER_THREAD` tasks a thread: a large file is cut into ranges,
    small files are grouped, in order, until a task holds its share of the bytes, for each distinct
    pre-token of a task is sent on and summed once, however many files it came from."""
    share = max(MIN_TASK_BYTES, -(-sum(source.size for source in corpus.sources) // (TASKS_PER_THREAD * parts)))
    tasks: list[list[tuple]] = []
    group: list[tuple] = []
    held = 0
    for source in corpus.sources:
        ranges = min(-(-source.size // share), max(1, source.size // MIN_TASK_BYTES))
        if source.kind == "text" and ranges > 1:
            tasks += [[(source, span)] for span in text_spans(source, special_tokens, ranges, errors=errors)]
            continue
        group.append((source, None))
        held += source.size
        if held >= share:
            tasks.append(group)
            group, held = [], 0
    if group:
        tasks.append(group)
    return tasks


def _result(future, tasks):
    """A future's result; a task that failed for good is one line naming its file."""
    dist = distributed()
    try:
        return future.result()
    except BPEError:
        raise
    except dist.CancelledError:
        raise BPEError("the cluster cancelled the count (was the scheduler restarted?)") from None
    except Exception as exc:  # noqa: BLE001 - said in one line, with the file where a task names one
        if type(exc).__name__ == "KilledWorker":
            raise BPEError(f"cluster workers died counting {_task_named(exc, tasks)} as often as the scheduler "
                           "allows (distributed.scheduler.allowed-failures): out of memory, or killed; see the "
                           "workers' logs") from None
        if "can't start new thread" in str(exc):  # short of address space for a thread's stack (ulimit -v)
            raise BPEError(f"out of memory while counting on the cluster: a thread could not be started ({exc}), in "
                           "this process or on a worker; raise the address-space limit (ulimit -v) where it is set, "
                           "or lift it") from None
        if isinstance(exc, ImportError):
            raise BPEError(f"a cluster worker cannot import what counting needs ({exc}): install bpe-lab, at this "
                           "version, where the workers run") from None
        if isinstance(exc, OSError):
            raise BPEError(f"lost the Dask cluster while counting: {exc}") from None
        raise


def _task_named(exc, tasks) -> str:
    """The file of the task a ``KilledWorker`` names (its key holds the task's number), else "a file"."""
    text = str(exc)
    for i, task in enumerate(tasks):
        if f"{COUNT_TASK}-{i}-" in text:
            return " and ".join(source.location + ("" if span is None else f" (bytes {span[0]:,} to {span[1]:,})")
                                for source, span in task)
    return "a file"


# --- what the workers run --------------------------------------------------------------------------


def count_task(count_parts: Callable, task: list[tuple], special_tokens: list[str], text_column: str,
               errors: str, parts: int, raw: bool = False) -> dict:
    """One map task: its files (or a file's span) read here and counted on this thread into ``parts`` parts
    by ``count_parts``; with the bytes of text counted and of the files read."""
    _test_hook()
    tokens = counting_tokens(special_tokens)
    pieces = itertools.chain.from_iterable(source_pieces(source, tokens, text_column=text_column, errors=errors,
                                                         span=span, raw=raw) for source, span in task)
    found = {"text_bytes": 0, "read": 0}

    def texts():
        for batch in batches(pieces, separator_of(special_tokens), errors=errors):
            found["text_bytes"] += batch.text_bytes
            found["read"] += batch.read
            yield batch.text

    found["parts"] = count_parts(texts(), tokens, parts)
    return found


def _test_hook() -> None:
    """:data:`TASKS_STARTED_ENV`'s file written, and its ``hold`` waited out (tests only)."""
    folder = os.environ.get(TASKS_STARTED_ENV)
    if not folder:
        return
    folder = Path(folder)
    for n in itertools.count():
        mark = folder / f"started-{os.getpid()}-{n}"
        if not mark.exists():
            mark.write_text(str(os.getpid()))
            break
    while (folder / "hold").exists():
        time.sleep(0.01)
