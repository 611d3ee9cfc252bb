r"""v7 — sharded: the words live in worker processes from counting to the last merge.

What it adds over v6: the update stage, the largest one on web-like text, runs in parallel.  The
words (distinct pre-tokens) are split into ``workers`` shards by a stable hash: the parent holds one
shard itself and ``workers - 1`` worker processes hold the others, each with its words, their counts
and its own lazy index (v6's technique: a word is a str with one character per token).  The parent
also keeps what is global: the pair counts and v6's heap.  Each merge is one round trip:

1. the parent picks the best pair (v6's heap, byte-order tie-break) and sends ``(pair, new token,
   pairs to forget)`` to the shard processes, then rewrites its own shard while they rewrite theirs;
2. each shard rewrites its words holding the pair (v6's phases) and answers with its pair-count
   changes: ``[(pair, count lost), ...]`` and ``{new pair: count gained}`` (pairs as 2-char strings);
3. the parent adds the deltas to the global counts and pushes the gained pairs on the heap.  A pair
   whose global count reaches zero is sent to the shards with the next merge, so they drop its list.

Why the parent holds a shard: with 2 workers, two busy processes on two cores instead of three (two
shard processes and a parent that mostly waits).  It takes a smaller share (``PARENT_WEIGHT``), as
it also runs the heap and adds every shard's deltas.  Each end of a merge channel polls it briefly
before sleeping (``bpe.training.pool.spin_then_recv``): waking a sleeping process cost about 0.2 ms
per merge.

Why this split pays where parallelising the max-pair search does not: the search is O(log H) on a
heap and cannot be cut into parts worth a message; the rewrite is O(words holding the pair) and is
cut by the shards for free.  What crosses a pipe per merge is the pair and the changes, about
1 KB, never words.

With ``count_pretokens`` from this module (``train_bpe``), the pre-token counts stay in the counting
pool's workers (partition ``p`` in worker ``p``); worker 0's part comes to the parent, which keeps
its share and sends the rest to the shard processes.  ``Merger(counter)`` with a plain ``Counter``
(``bpe trace``, ``bpe merge-cost``, tests) shards it itself.  With ``workers=1``, or fewer distinct
pre-tokens than two shards' worth (``MIN_WORDS_PER_SHARD`` each), v7 *is* v6, in this process.

What it leaves out: shards do not tell the parent which pairs they hold (every merge goes to every
shard process; most pairs are in every shard); a merge is not pipelined with the next selection
(the next best pair depends on the deltas).

Complexity: as v6, with the per-merge rewrite divided among the shards, plus one round trip per
merge per shard and O(changed pairs per shard) parent work to apply the deltas.

Headline (README, "Measured on web-like text"): on 100 MB of ``webtext-synth``, vocab 32,000, 2 workers,
idle 2-core machine, 36.1 s against v6's 40.9 s, 1.13x (``python -m bpe bench --variant v6,v7 --data
webtext-synth --vocab-size 32000 --repeat 3 --workers 2``); with another job holding a core, 0.86x-0.95x.
On Gutenberg-like text v7 runs v6's code.  Walkthrough: docs/v7.md.
"""

from __future__ import annotations

import gc
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from heapq import heappush
from itertools import repeat
from operator import add

from bpe.errors import BPEError
from bpe.training.merge_loop import Pair
from bpe.training.parallel import PART_KEY, count_file_parallel, count_into_parts, partition
from bpe.training.pool import WorkerPool, default_workers, spin_then_recv, worker_state
from bpe.training.pretokenize import add_counts
from variants.v6_tuned import Merger as V6Merger
from variants.v6_tuned import add_neighbour_changes, count_pairs, index_gained, rewrite_words

IDEA = ("words sharded across worker processes that stay alive from counting to the last merge "
        "(v6 itself below two shards' worth of words)")
POOLED = True

#: A shard process pays for itself only with enough words to rewrite: below this many distinct words
#: per shard, fewer shards are used, and with one shard v7 is v6 in this process (docs/v7.md: two
#: shards gained nothing on the 284 k words of 10 MB of web-like text, 1.36x on the 681 k of 40 MB).
MIN_WORDS_PER_SHARD = 150_000


#: How many words the parent's own shard holds, against 1 for a shard process: the parent also runs
#: the heap and sums the deltas, so it takes a smaller share.  With 2 workers it keeps 0.6 / 1.6 =
#: 37.5 % of the words, which balanced the parent's and the shard process's CPU time (docs/v7.md).
PARENT_WEIGHT = 0.6


def shard_count(words: int, workers: int | None) -> int:
    """How many shards ``words`` distinct pre-tokens are worth, the parent's included: 1 means v6 in this process.

    >>> shard_count(100_000, 2), shard_count(400_000, 2), shard_count(400_000, 16), shard_count(10**7, 1)
    (1, 2, 2, 1)
    """
    workers = default_workers() if workers is None else workers
    return max(1, min(workers, words // MIN_WORDS_PER_SHARD))


def split_counts(pretoken_counts: Mapping[bytes, int], shards: int) -> list[dict[bytes, int]]:
    """``pretoken_counts`` split into ``shards`` disjoint dicts, as the counting pool splits them."""
    parts: list[dict[bytes, int]] = [{} for _ in range(shards)]
    for token, count in pretoken_counts.items():
        parts[partition(token, shards)][token] = count
    return parts


def parent_share(parts: Sequence[Mapping[bytes, int]]) -> tuple[dict[bytes, int], list[dict[bytes, int]]]:
    """``parts`` (one per shard, as :func:`split_counts` makes them) re-cut so that the parent's shard is
    smaller: it keeps a ``PARENT_WEIGHT`` share of part 0 and gives the rest to the other parts.

    Returns (the parent's words, the words of each shard process).  Any disjoint split gives the same
    merges; this one is stable (a second ``crc32``-derived number decides, not ``hash``).

    >>> mine, theirs = parent_share(split_counts({bytes([b]) * 2: 1 for b in range(200)}, 2))
    >>> len(mine), len(theirs[0])
    (74, 126)
    """
    shards = len(parts)
    keep = round(1024 * shards * PARENT_WEIGHT / (PARENT_WEIGHT + shards - 1))
    mine: dict[bytes, int] = {}
    theirs = [dict(part) for part in parts[1:]]
    for token, count in parts[0].items():
        h = zlib.crc32(token) // shards  # the part is crc32 % shards: use the other bits
        if h % 1024 < keep:
            mine[token] = count
        else:
            theirs[h % (shards - 1)][token] = count
    return mine, theirs


class Shard:
    """One shard of the words: builds its words and pair counts, applies merges, answers with deltas.

    >>> shard = Shard({b"low": 5, b"lower": 2})
    >>> shard.initial_pair_counts["ow"]
    7
    >>> shard.merge("ow", "\u0100", "")   # (o, w) -> token 256: (l, o) and (w, e) lost, (l, 256) and (256, e) gained
    ([('we', 2), ('lo', 7)], {'Āe': 2, 'lĀ': 7})
    >>> shard.words
    ['lĀ', 'lĀer']
    """

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        tokens = [token for token in pretoken_counts if len(token) > 1]
        self.words = [token.decode("latin-1") for token in tokens]  # as v6: chr(id) per token
        self.word_counts = list(map(pretoken_counts.__getitem__, tokens))
        collecting = gc.isenabled()
        gc.disable()  # no cycles in what is built (as v6)
        try:
            self.initial_pair_counts, self.pair_to_words = count_pairs(self.words, self.word_counts)
        finally:
            if collecting:
                gc.enable()

    def merge(self, the_pair: str, new_char: str, forget: str) -> tuple[list, dict[str, int]] | None:
        """Rewrite the words holding ``the_pair``; ``([(pair, count lost), ...], {pair: count gained})``.

        ``forget`` is a string of pairs (two characters each) whose global count fell to zero: their
        index lists are dropped first.  None when no word of this shard holds ``the_pair``.
        v6's phases of a merge; the count changes are returned, not applied.
        """
        index = self.pair_to_words
        for i in range(0, len(forget), 2):
            index.pop(forget[i:i + 2], None)
        listed = index.pop(the_pair, None)
        if listed is None:
            return None
        lost_in_several: dict[str, int] = {}
        gained: dict[str, list] = {}  # new pairs (all contain new) -> [count gained, word ids]
        by_previous, by_next = rewrite_words(self.words, self.word_counts, listed, the_pair, new_char,
                                             lost_in_several, gained)
        lost = add_neighbour_changes(by_previous, by_next, the_pair, new_char, self.word_counts, gained)
        lost += lost_in_several.items()
        index_gained(index, gained)
        return lost, {pair: count for pair, (count, _) in gained.items()}


# --- the shards in worker processes -----------------------------------------------------------------
# Task functions run inside a pool worker (module-level, so they pickle by reference); the shard lives
# in the worker's state between tasks.

def _take_counts() -> dict[bytes, int]:
    return worker_state().pop(PART_KEY)


def _build_shard(more: dict[bytes, int]) -> dict[str, int]:
    """Build this worker's shard from its counted part (if counting left one) and ``more`` words."""
    state = worker_state()
    counts = state.pop(PART_KEY, None)
    if counts is None:
        counts = more
    else:
        counts.update(more)  # disjoint: the parent's spare words
    shard = state["shard"] = Shard(counts)
    gc.freeze()  # the worker holds nothing else: keep the collector off the shard's objects
    return shard.initial_pair_counts


def _merge_in_shard(the_pair: str, new_char: str, forget: str):
    return worker_state()["shard"].merge(the_pair, new_char, forget)


def _serve_merges(worker: int) -> None:
    """Task: answer merges over this worker's own channel (see :func:`open_shard_pool`) until told to stop."""
    conn = None
    try:
        for other, (parent_end, shard_end) in enumerate(_CHANNELS):  # forked copies: keep only our own end
            parent_end.close()
            if other == worker:
                conn = shard_end
            else:
                shard_end.close()
        merge = worker_state()["shard"].merge
        while (message := spin_then_recv(conn)) is not None:
            conn.send(merge(*message))
    except BaseException:  # the parent must see EOF, then it reads the error from the pool
        if conn is not None:
            conn.close()
        raise


def _shard_state():
    shard = worker_state()["shard"]
    return shard.words, shard.word_counts, shard.pair_to_words


def _shard_totals() -> tuple[int, int]:
    counts = worker_state()[PART_KEY]
    return len(counts), sum(counts.values())


#: The merge channels of the shard pool being started: one duplex pipe per worker, made *before* the pool
#: forks so that every worker inherits them (see open_shard_pool).
_CHANNELS: list = []


def open_shard_pool(workers: int, source: str | None = None):
    """A :class:`~bpe.training.pool.WorkerPool` for shards, and one merge channel per worker (or None).

    A merge is a round trip with every shard, tens of thousands of times.  The pool's task protocol
    (a task number, the function by reference, a wait on every pipe and process sentinel) is made
    for fewer, larger tasks: with a plain pipe per shard, read in turn, the parent's CPU time for
    16,000 merges on 10 MB of web-like text fell from 2.94 s to 2.55 s.  So while merging, each
    shard runs one long task, :func:`_serve_merges`, that reads merges
    from its own pipe; the pool still starts, watches and stops the processes (a shard that dies or
    fails closes its pipe, and the parent then gets the pool's error for it).  The pipes must exist
    before the workers fork, so this only works with fork; elsewhere the merges go through the pool.
    """
    import multiprocessing

    global _CHANNELS
    forking = "fork" in multiprocessing.get_all_start_methods()
    _CHANNELS = [multiprocessing.Pipe(duplex=True) for _ in range(workers)] if forking else []
    try:
        pool = WorkerPool(workers, what="merge shard", doing="merging", source=source)
    except BaseException:
        _close_channels(_CHANNELS)
        raise
    channels, _CHANNELS = _CHANNELS, []
    for _, shard_end in channels:
        shard_end.close()  # the workers hold these now
    return pool, [parent_end for parent_end, _ in channels] or None


def _close_channels(channels) -> None:
    for ends in channels:
        for conn in (ends if isinstance(ends, tuple) else (ends,)):
            conn.close()


class ShardedCounts:
    """Pre-token counts split into shards: what :func:`count_pretokens` returns, :class:`Merger` takes over.

    Either held by pool workers, partition ``p`` in worker ``p`` (``pool``), or, with one shard, a
    mapping in this process (``local``).  ``len()`` and ``total()`` answer as a ``Counter`` would.
    """

    def __init__(self, pool=None, local: Mapping[bytes, int] | None = None, channels=None):
        self.pool, self.local, self.channels = pool, local, channels
        if pool is not None:
            self._totals = pool.broadcast(_shard_totals)
        else:
            self._totals = [(len(local), sum(local.values()))]

    def __len__(self) -> int:
        return sum(distinct for distinct, _ in self._totals)

    def total(self) -> int:
        return sum(total for _, total in self._totals)

    def close(self) -> None:
        """Stop the workers holding the counts (if the merger never took them over)."""
        if self.pool is not None:
            self.pool.terminate()
            _close_channels(self.channels or [])


def count_pretokens(path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
                    end: int | None = None, on_bytes: Callable[[int], None] | None = None) -> ShardedCounts:
    """Count the file in the shard pool; shard ``p``'s pre-token counts stay in worker ``p``.

    The workers count chunks and reduce the counts among themselves
    (:func:`~bpe.training.parallel.count_into_parts`), so the counts never pass through the parent.
    If there are too few distinct pre-tokens for shard processes to pay (see :func:`shard_count`),
    the parts are gathered here and the pool is stopped: v7 then runs as v6.
    """
    from bpe.training.chunking import plan_chunk_count
    from bpe.training.pretokenize import check_input_file

    path = check_input_file(path)
    workers = default_workers() if workers is None else workers
    size = path.stat().st_size if end is None else end
    # One worker, a file too small for two chunks, or one whose size reads 0 (/proc files): counted
    # as the shared counter counts it, and then far too small for shards.
    if workers == 1 or size == 0 or plan_chunk_count(size, workers) < 2:
        return ShardedCounts(local=count_file_parallel(path, special_tokens, workers=workers, errors=errors,
                                                       end=end, on_bytes=on_bytes))
    pool, channels = open_shard_pool(workers, str(path))
    try:
        distinct = sum(count_into_parts(pool, path, special_tokens, errors=errors, end=end,
                                                 on_bytes=on_bytes))
        if shard_count(distinct, workers) > 1:
            return ShardedCounts(pool, channels=channels)
        counts: dict[bytes, int] = {}
        for part in pool.broadcast(_take_counts):
            counts.update(part)  # disjoint parts: a C-level join
    except BaseException:
        pool.terminate()
        _close_channels(channels or [])
        raise
    pool.close()
    _close_channels(channels or [])
    return ShardedCounts(local=counts)


#: When the shards come home (:meth:`Merger.gather`): over each window of ``STALL_WINDOW`` merges, the
#: parent compares the time it spent waiting for the shard processes with the time it spent working
#: (sending, rewriting its own shard, adding its deltas).  Idle, the shard processes work while the
#: parent does, and the wait is a fraction of the work; when the wait exceeds ``STALL_RATIO`` times the
#: work, the round trips cost more than the split saves: a core is taken by another program (each
#: round trip then waits for the scheduler), or the merges have become too small to be worth a
#: message (the last thousands, each touching a few words).  One process is cheaper in both cases.
STALL_RATIO = 2.0
STALL_WINDOW = 256


class GatherWhenStalled:
    """The default rule for :meth:`Merger.gather`: called after every merge with the merge's number,
    the parent's working time and its waiting time (from the merger's clock, which a test injects).

    >>> rule = GatherWhenStalled(ratio=2.0, window=2)
    >>> rule(1, 1.0, 1.0), rule(2, 1.0, 1.5), rule(3, 1.0, 1.5), rule(4, 1.0, 2.6)
    (False, False, False, True)
    """

    def __init__(self, ratio: float | None = None, window: int | None = None):
        self.ratio = STALL_RATIO if ratio is None else ratio
        self.window = STALL_WINDOW if window is None else window
        self.worked = self.waited = 0.0
        self.seen = 0

    def __call__(self, merge_number: int, worked: float, waited: float) -> bool:
        self.worked += worked
        self.waited += waited
        self.seen += 1
        if self.seen < self.window:
            return False
        stalled = self.waited > self.ratio * self.worked
        self.worked = self.waited = 0.0
        self.seen = 0
        return stalled




class Merger(V6Merger):
    """v6's heap in this process, v6's words in ``workers`` shards: one here, the others in processes.

    ``pretoken_counts`` is a :class:`ShardedCounts` (from :func:`count_pretokens`) or any mapping of
    pre-token bytes to counts, which is then split into shards here.
    """

    def __init__(self, pretoken_counts, workers: int | None = None, *, gather_when=None, clock=time.perf_counter):
        self._gather_when = GatherWhenStalled() if gather_when is None else gather_when
        self._clock = clock
        self.merges_done = 0
        self.gathered_at: int | None = None  # the merge after which the shards came here (gather)
        self._pool = None
        self._remote: list[int] = []  # the pool workers holding a shard
        channels = self._all_channels = None  # a pipe per pool worker, from open_shard_pool
        self._channels = None  # one pipe per shard process while merging (see open_shard_pool)
        self._serving = False
        self._forget = ""  # pairs whose count fell to zero, told to the shards with the next merge
        if isinstance(pretoken_counts, ShardedCounts):
            self._pool, channels = pretoken_counts.pool, pretoken_counts.channels
            pretoken_counts = pretoken_counts.local
        else:
            shards = shard_count(len(pretoken_counts), workers)
            if shards > 1:  # the parent holds one shard: shards - 1 processes
                self._pool, channels = open_shard_pool(shards - 1)
        if self._pool is None:  # too few words for a shard process to pay (or one worker): this is v6
            super().__init__(pretoken_counts)
            return
        self._all_channels = channels
        try:
            if pretoken_counts is None:
                # counted in the pool: part 0 comes here, the parent's spare words go to the others
                self._pool.submit(0, _take_counts)
                parts = [self._pool.result(0)] + [{}] * (self._pool.size - 1)
                self._remote = list(range(1, self._pool.size))
            else:  # a plain Counter
                parts = split_counts(pretoken_counts, self._pool.size + 1)
                self._remote = list(range(self._pool.size))
            mine, theirs = parent_share(parts)
            del parts
            if channels is not None:
                self._channels = [channels[worker] for worker in self._remote]
            for worker, more in zip(self._remote, theirs):
                self._pool.submit(worker, _build_shard, more)
            del theirs
            self._init_tokens()
            self._shard = Shard(mine)  # built while the processes build theirs
            self.pair_counts = dict(self._shard.initial_pair_counts)
            for worker in self._remote:
                add_counts(self.pair_counts, self._pool.result(worker))
            self._init_heap()
        except BaseException:
            self.close()
            raise
        gc.freeze()  # as v6: the heap, the counts and the parent's shard live until close(), which unfreezes

    def close(self) -> None:
        """Stop the shard processes (called by ``run_merges`` in every case: done, error, Ctrl-C)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()  # the shards' state is not needed any more: no orderly goodbye
            _close_channels(self._all_channels or [])
        super().close()

    def merge(self, pair: Pair) -> None:
        if self._pool is None:
            return super().merge(pair)
        ids, clock = self.token_ids, self._clock
        the_pair = chr(ids[pair[0]]) + chr(ids[pair[1]])
        new_char = chr(self._new_token(*pair))
        forget, self._forget = self._forget, ""
        gone: list[str] = []
        gained_pairs: set[str] = set()
        started = clock()
        # The processes get the merge first; the parent rewrites its own shard while they rewrite theirs.
        answers = self._merge_in_shards(the_pair, new_char, forget)
        self._add_deltas(self._shard.merge(the_pair, new_char, forget), gone, gained_pairs)
        worked = clock()
        for deltas in answers:
            self._add_deltas(deltas, gone, gained_pairs)
        waited = clock() - worked
        pair_counts = self.pair_counts
        pair_counts.pop(the_pair, None)
        # A pair lost in one shard may be gained in another (only when a merge makes bytes an earlier
        # merge made too): it is gone only if it is still at zero after every shard.
        self._forget = "".join(pair for pair in gone if pair not in pair_counts)
        keys, heap, waiting, floor = self.token_keys, self.heap, self.waiting, 1 << self.floor_bits
        # v6's offer rule (heap at or above the floor, else a bucket), inlined as in v6's _add_gained;
        # here once per pair, with the total over every shard.
        for pair in gained_pairs:
            total = pair_counts[pair]
            if total >= floor:
                heappush(heap, (-total, keys[ord(pair[0])] + keys[ord(pair[1])], pair))
            else:
                waiting[total.bit_length()].append(pair)
        self.merges_done += 1
        if self._gather_when(self.merges_done, worked - started, waited):
            self.gather()

    def _add_deltas(self, deltas, gone: list[str], gained_pairs: set[str]) -> None:
        """Apply one shard's answer to the global pair counts."""
        if deltas is None:
            return
        pair_counts = self.pair_counts
        lost, gains = deltas
        for lost_pair, count in lost:
            remaining = pair_counts[lost_pair] - count
            if remaining:
                pair_counts[lost_pair] = remaining
            else:
                del pair_counts[lost_pair]
                gone.append(lost_pair)
        gained_pairs.update(gains)
        add_counts(pair_counts, gains)  # most gained pairs are new: copied in C

    def gather(self) -> None:
        """Bring every shard's words here and go on as v6 in this process: the same merges from here.

        The shards' lazy indexes are joined with the word ids shifted past the shards before them,
        and pairs whose count fell to zero are dropped, as v6 would have; the pair counts and the heap
        are already the parent's.  The shard processes then stop, freeing their cores.
        """
        if self._pool is None:
            return
        self.stop_serving()
        for worker in self._remote:
            self._pool.submit(worker, _shard_state)
        collecting = gc.isenabled()
        gc.disable()  # as in v6's build: no cycles in what comes back
        try:
            states = [(self._shard.words, self._shard.word_counts, self._shard.pair_to_words)]
            states += [self._pool.result(worker) for worker in self._remote]
            words, word_counts, index = states[0][0], states[0][1], states[0][2]
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
            for i in range(0, len(self._forget), 2):
                index.pop(self._forget[i:i + 2], None)
        finally:
            if collecting:
                gc.enable()
        self._forget = ""
        self.words, self.word_counts, self.pair_to_words = words, word_counts, index
        self._shard = None
        pool, self._pool = self._pool, None
        pool.terminate()
        _close_channels(self._all_channels or [])
        gc.freeze()
        self.gathered_at = self.merges_done

    def stop_serving(self) -> None:
        """End the shards' merge tasks, so that the pool takes tasks again (e.g. for trace_state)."""
        if self._serving:
            for conn in self._channels:
                conn.send(None)
            for worker in self._remote:
                self._pool.result(worker)
            self._serving = False

    def trace_state(self) -> dict:
        """The words of every shard, numbered across shards, for ``bpe trace`` only."""
        if self._pool is None:
            return super().trace_state()
        self.stop_serving()
        token_bytes = self.token_bytes
        for worker in self._remote:
            self._pool.submit(worker, _shard_state)
        states = [(self._shard.words, self._shard.word_counts, self._shard.pair_to_words)]
        states += [self._pool.result(worker) for worker in self._remote]
        words, index, offset = [], {}, 0
        for shard_words, shard_counts, shard_index in states:
            words += [(tuple(token_bytes[ord(t)] for t in word), count)
                      for word, count in zip(shard_words, shard_counts)]
            for pair, ids in shard_index.items():
                live = sorted(offset + i for i in set(ids) if pair in shard_words[i])
                if live:
                    index.setdefault((token_bytes[ord(pair[0])], token_bytes[ord(pair[1])]), []).extend(live)
            offset += len(shard_words)
        return {
            "pair_counts": {(token_bytes[ord(p[0])], token_bytes[ord(p[1])]): c for p, c in self.pair_counts.items()},
            "words": words,
            "pair_to_words": index,
            "heap_size": len(self.heap),
        }

    def _merge_in_shards(self, the_pair: str, new_char: str, forget: str):
        """Send the merge to every shard process; their deltas, read (lazily) when iterated."""
        pool, channels = self._pool, self._channels
        if channels is not None:
            if not self._serving:
                # started on the first merge: until then the workers answer pool tasks (build, trace)
                for worker in self._remote:
                    pool.submit(worker, _serve_merges, worker)
                self._serving = True
            message = (the_pair, new_char, forget)
            for i, conn in enumerate(channels):
                try:
                    conn.send(message)
                except OSError:  # the shard died or failed
                    self._shard_failed(i)
            return map(self._answer, range(len(channels)))
        for worker in self._remote:
            pool.submit(worker, _merge_in_shard, the_pair, new_char, forget)
        return (pool.result(worker) for worker in self._remote)

    def _answer(self, i: int):
        try:
            return spin_then_recv(self._channels[i])
        except (EOFError, OSError):  # the shard died or failed
            self._shard_failed(i)

    def _shard_failed(self, i: int):
        """Raise the pool's error for a shard whose channel broke (it names the signal or the exception)."""
        self._pool.result(self._remote[i])  # raises: the serve task of that worker ended
        raise BPEError(f"merge shard {self._remote[i]} stopped answering")

