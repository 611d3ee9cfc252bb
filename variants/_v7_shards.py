"""Words kept in worker processes from counting to the last merge: the process machinery under v7.

v7 (``variants/v7_sharded.py``) holds the idea: what a shard of the words is, how a merge is split
among the shards and how their answers are added up.  This module holds what moves the shards
between processes, on top of :mod:`bpe.running.pool`:

* :func:`count_into_shard_pool`: count the file in the pool that will hold the shards, leaving part
  ``p`` of the pre-token counts in worker ``p`` (:func:`~bpe.counting.parallel.count_into_parts`, with
  v6's fast pre-tokenizer, :mod:`bpe.split.fast`);
  the counts come back as a :class:`ShardedCounts` handle, never through the parent;
* :class:`ShardProcesses`: the shard processes of one ``Merger``: build a shard in each worker, send
  each merge over a channel of its own and read the answers, fetch every shard's state back (the
  trace, the gather), stop them all;
* :func:`gathered`: the shards' states joined into one, as v6 holds its words (the gather; ``bpe
  trace`` joins them the same way, :func:`joined_shards`).

Why a merge channel beside the pool's own pipe: a merge is a round trip with every shard, tens of
thousands of times, and the pool's task protocol (a task number, the function by reference, a wait
on every pipe and process sentinel) is made for fewer, larger tasks (docs/v7.md, "The merge
channel").  So while merging each shard process runs one long pool task, :func:`_serve_merges`,
that reads merges from its own channel (the pool's ``channels=True``: only that worker holds the other
end).  Without fork there are no shard processes (v7 is then v6, in one process).  The pool still
starts, watches and stops the processes: a shard that dies or raises closes its channel, and the
parent then raises the pool's one-line error for that worker, naming the phase (counting, building
shards, merging, gathering shards).  The worker of the counting pool that holds no shard (worker 0,
whose part goes to the parent) is retired once its part is taken: no idle process is left to die
unseen while the others merge.

On the channel, each end polls before it sleeps (:func:`spin_then_recv`: waking a sleeping process
costs more than most merges), and the pairs to forget travel packed into one string
(:func:`pack_pairs`: one object to pickle per message, not one per pair).
"""

from __future__ import annotations

import gc
import multiprocessing
import time
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import add

from bpe.corpus.text_file import check_input_file
from bpe.counting.fast import count_file_serial_fast, count_text_fast
from bpe.counting.parallel import PART_KEY, _take_part, count_file_parallel_fast, count_into_parts, counters_for
from bpe.errors import BPEError
from bpe.running.cores import plan_chunk_count
from bpe.running.pool import WorkerPool, default_workers
from bpe.running.workers import CHANNEL_KEY, worker_state
from bpe.split.patterns import DEFAULT_PATTERN

#: The longest a process waiting for the other end of a merge channel polls it before it sleeps.  The
#: other end usually answers within a fraction of a millisecond, and waking a sleeping process costs a
#: scheduler round trip per message (docs/v7.md, "Waiting without sleeping"): polling trades that for
#: CPU time, which is only worth it while a core is free for each end.
SPIN_SECONDS = 0.002

_spin = [SPIN_SECONDS]  # this process's current poll budget (see spin_then_recv)


def spin_then_recv(conn):
    """``conn.recv()``, after polling for up to the current budget so as not to sleep.

    The budget adapts: an answer that came while polling keeps it (up to ``SPIN_SECONDS``); a poll that
    ran out halves it, since the time was spent on a core the other end (or another program) may have
    needed.  A sleep that turned out shorter than ``SPIN_SECONDS`` doubles it back.  On an idle machine
    nearly every answer comes while polling; with the cores taken, the budget falls towards zero.
    """
    if conn.poll():
        return conn.recv()
    budget = _spin[0]
    start = time.perf_counter()
    deadline = start + budget
    while not conn.poll():
        if time.perf_counter() >= deadline:
            break
    else:
        return conn.recv()
    message = conn.recv()  # sleep until it comes
    if time.perf_counter() - start < SPIN_SECONDS:  # polling a little longer would have caught it
        _spin[0] = min(SPIN_SECONDS, max(2 * budget, 1e-5))
    else:
        _spin[0] = budget / 2 if budget > 1e-5 else 0.0
    return message


def pack_pairs(pairs: Sequence[str]) -> str:
    """Pairs (2-character strings) as one string for the channel: one object to pickle, not a list of them."""
    return "".join(pairs)


def unpack_pairs(packed: str) -> list[str]:
    return [packed[i:i + 2] for i in range(0, len(packed), 2)]

# --- what the workers run (module-level, so they pickle by reference); the shard lives in the worker's
# state between tasks.


def _part_totals() -> tuple[int, int]:
    counts = worker_state()[PART_KEY]
    return len(counts), sum(counts.values())


def _build_shard(make_shard: Callable, more: dict[bytes, int]):
    """Build this worker's shard from its counted part (if counting left one) and ``more`` words."""
    state = worker_state()
    counts = state.pop(PART_KEY, None)
    if counts is None:
        counts = more
    else:
        counts.update(more)  # disjoint: the parent's spare words
    shard = state["shard"] = make_shard(counts)
    gc.freeze()  # the worker holds nothing else: keep the collector off the shard's objects
    return shard.initial_pair_counts


def _serve_merges() -> None:
    """Task: answer merges over this worker's own channel until told to stop.

    A message is ``(pair, new token, packed pairs to forget)``; each answer is ``(the shard's answer,
    CPU seconds it took)``: the parent compares the work with the wall time of the round trip
    (:class:`~bpe.variants._v7_policy.StallWatch`).
    """
    conn = worker_state()[CHANNEL_KEY]
    try:
        merge, cpu = worker_state()["shard"].merge, time.thread_time
        while (message := spin_then_recv(conn)) is not None:
            started = cpu()
            the_pair, new_char, forget = message
            answer = merge(the_pair, new_char, unpack_pairs(forget))
            conn.send((answer, cpu() - started))
    except BaseException:  # the parent must see EOF, then it reads the error from the pool
        conn.close()
        raise


def shard_state(shard=None) -> tuple:
    """A shard's ``(words, word_counts, pair_to_words)``; without one, as a task: this worker's."""
    shard = worker_state()["shard"] if shard is None else shard
    return shard.words, shard.word_counts, shard.pair_to_words


# --- the parent ------------------------------------------------------------------------------------

def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def open_shard_pool(workers: int, source: str | None = None, doing: str = "counting") -> WorkerPool:
    """A :class:`~bpe.running.pool.WorkerPool` for shards, with a merge channel per worker."""
    return WorkerPool(workers, what="shard", doing=doing, source=source, channels=True)


class ShardedCounts:
    """Pre-token counts as :func:`count_into_shard_pool` leaves them: held by pool workers, part ``p``
    in worker ``p`` (``pool``), or gathered in this process (``local``) when shards would not pay.

    ``len()``, ``total()`` and ``close()`` answer as those of every rung's counts
    (:class:`~bpe.counting.plain.PretokenCounts`) do.
    """

    def __init__(self, pool=None, local: Mapping[bytes, int] | None = None):
        self.pool, self.local = pool, local
        if pool is not None:
            self._totals = pool.broadcast(_part_totals)
        else:
            self._totals = [(len(local), sum(local.values()))]

    def __len__(self) -> int:
        return sum(distinct for distinct, _ in self._totals)

    def total(self) -> int:
        return sum(total for _, total in self._totals)

    def close(self) -> None:
        """Stop the workers holding the counts (if no merger took them over)."""
        if self.pool is not None:
            self.pool.terminate()


def count_into_shard_pool(path, special_tokens: Sequence[str], *, workers: int | None, errors: str,
                          end: int | None, on_bytes: Callable[[int], None] | None,
                          worth_shards: Callable[[int], bool], pattern: str = DEFAULT_PATTERN) -> ShardedCounts:
    """Count the file in a shard pool; part ``p``'s pre-token counts stay in worker ``p``.  ``pattern``: GPT-2's
    is counted by the fast counter, any other by its plain counter (v6's rule,
    :func:`bpe.counting.parallel.counters_for`), the file cut by its rule either way.

    ``worth_shards(distinct pre-tokens)`` says whether shard processes pay; if not, the parts are
    gathered here and the pool is stopped.  One worker, no fork, or a file too small for two chunks
    is counted as v6 counts it (:func:`~bpe.counting.parallel.count_file_parallel_fast`), in a
    ``local`` handle.
    """
    if end is None:  # a direct call: check the path here; train_bpe gives it checked, with its end
        path = check_input_file(path)
        end = path.stat().st_size or None  # a size that reads 0 (/proc files) stays open-ended
    workers = default_workers() if workers is None else workers
    size = end or 0
    # A file whose size reads 0 (/proc files) is counted as v6 counts it, and is far too small for shards.
    if workers == 1 or size == 0 or plan_chunk_count(size, workers) < 2 or not can_fork():
        return ShardedCounts(local=count_file_parallel_fast(path, special_tokens, workers=workers, errors=errors,
                                                            end=end, on_bytes=on_bytes, pattern=pattern))
    pool = open_shard_pool(workers, str(path))
    try:
        counter, _ = counters_for(count_text_fast, count_file_serial_fast, pattern)
        distinct = sum(count_into_parts(pool, path, special_tokens, errors=errors, end=end, on_bytes=on_bytes,
                                        counter=counter, pattern=pattern))
        if worth_shards(distinct):
            return ShardedCounts(pool)
        counts: dict[bytes, int] = {}
        for part in pool.broadcast(_take_part):
            counts.update(part)  # disjoint parts: a C-level join
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    return ShardedCounts(local=counts)


class ShardProcesses:
    """The shard processes of one merger: build, merge over the channels, bring the state back, stop.

    ``remote`` are the pool workers that hold a shard, in order; a worker of the counting pool whose
    part went to the parent (worker 0) holds none, and is retired.
    """

    def __init__(self, pool: WorkerPool, remote: list[int]):
        self.pool, self.remote = pool, remote
        self.channels = [pool.channels[worker] for worker in remote]
        pool.doing = "building shards"
        self._serving = False
        self.cpu_seconds = 0.0  # the shards' CPU time on the last merge

    @classmethod
    def start(cls, processes: int) -> "ShardProcesses | None":
        """``processes`` fresh shard processes (None without fork: the caller merges in one process)."""
        if not can_fork():
            return None
        return cls(open_shard_pool(processes, doing="building shards"), list(range(processes)))

    @classmethod
    def from_counts(cls, counts: ShardedCounts) -> tuple["ShardProcesses", dict[bytes, int]]:
        """Take over the pool holding ``counts``: worker 0's part comes here, the others hold shards."""
        self = cls(counts.pool, list(range(1, counts.pool.size)))
        try:
            self.pool.submit(0, _take_part)
            part = self.pool.result(0)
            self.pool.retire(0)
            return self, part
        except BaseException:
            self.close()
            raise

    def start_building(self, make_shard: Callable, parts: Sequence[dict[bytes, int]]) -> None:
        """Each shard process builds ``make_shard(its counted part + parts[i])``; read the pair counts
        with :meth:`built` (the parent builds its own shard meanwhile)."""
        for worker, more in zip(self.remote, parts):
            self.pool.submit(worker, _build_shard, make_shard, more)

    def built(self):
        """Each shard's initial pair counts, in order."""
        return [self.pool.result(worker) for worker in self.remote]

    def send(self, the_pair: str, new_char: str, forget: Sequence[str]) -> None:
        """Send a merge to every shard process (the first starts their merge tasks)."""
        if not self._serving:  # until the first merge the workers answer pool tasks (build, trace)
            self.pool.doing = "merging"
            for worker in self.remote:
                self.pool.submit(worker, _serve_merges)
            self._serving = True
        message = (the_pair, new_char, pack_pairs(forget))
        self.cpu_seconds = 0.0
        for i, conn in enumerate(self.channels):
            try:
                conn.send(message)
            except OSError:  # the shard died or failed
                self._failed(i)

    def answers(self):
        """Each shard process's answer to the last merge sent, read as iterated; their CPU seconds add
        up in ``cpu_seconds``."""
        for i, conn in enumerate(self.channels):
            try:
                answer, seconds = spin_then_recv(conn)
            except (EOFError, OSError):  # the shard died or failed
                self._failed(i)
            self.cpu_seconds += seconds
            yield answer

    def states(self, own) -> list[tuple]:
        """Every shard's ``(words, word_counts, pair_to_words)``: the processes' first (the larger; the
        first is extended when joined), then ``own``, the parent's shard."""
        self._stop_serving()
        self.pool.doing = "gathering shards"
        for worker in self.remote:
            self.pool.submit(worker, shard_state)
        return [self.pool.result(worker) for worker in self.remote] + [shard_state(own)]

    def close(self) -> None:
        """Stop every process at once: their state is not needed any more, no orderly goodbye."""
        self.pool.terminate()

    def _stop_serving(self) -> None:
        """End the merge tasks, so that the pool takes tasks again."""
        if self._serving:
            for i, conn in enumerate(self.channels):
                try:
                    conn.send(None)
                except OSError:  # the shard died or failed since its last answer
                    self._failed(i)
            for worker in self.remote:
                self.pool.result(worker)
            self._serving = False

    def _failed(self, i: int):
        """Raise the pool's error for a shard whose channel broke (it names the signal or the exception)."""
        self.pool.result(self.remote[i])  # raises: the serve task of that worker ended
        raise BPEError(f"merge shard {self.remote[i]} stopped answering")


# --- the shards joined into one -----------------------------------------------------------------------


def joined_shards(states: list[tuple]) -> tuple[list[str], list[int], dict[str, list[int]]]:
    """Shards' ``(words, word_counts, pair_to_words)`` as one, word ids numbered across the shards in
    order.  The first shard's lists are extended in place; the others are left as they were."""
    words, word_counts, index = states[0]
    for shard_words, shard_counts, shard_index in states[1:]:
        offset = len(words)
        words += shard_words
        word_counts += shard_counts
        for pair, listed in shard_index.items():
            moved = list(map(add, listed, repeat(offset)))  # in C
            mine = index.get(pair)
            if mine is None:
                index[pair] = moved
            else:
                mine += moved
    return words, word_counts, index


def gathered(shards: "ShardProcesses", own, forget: Sequence[str]) -> tuple[list[str], list[int], dict[str, list[int]]]:
    """Every shard's words, the processes' and ``own`` (the parent's shard), joined as v6 holds its words,
    less the index lists of ``forget``: pairs at zero that the shards have not been told of yet, which
    v6 would have dropped.

    The collector is off from the first state received: unpickling the shards' words and index lists
    makes millions of objects and no cycle, and a collection every few thousand of them walks all the
    earlier ones again (as in v6's build); measured on 20 MB of web-like text, a gather with the
    collector on took about a second longer."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        words, word_counts, index = joined_shards(shards.states(own))
        for pair in forget:
            index.pop(pair, None)
    finally:
        if collecting:
            gc.enable()
    return words, word_counts, index

