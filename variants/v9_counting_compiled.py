r"""v9 — counting compiled: the GPT-2 pattern as a scanner, the counts in C tables, threads in one process.

Unlike v8: pre-tokenization and counting compiled.  The GPT-2 pattern is written out as a scanner (no
regex engine on the hot path), the counts go into C hash tables, one per thread, with the GIL released,
and the counts go to v8's compiled merge as arrays, never as a Python dict.  Its merge is v8's, unchanged.

Why this is the step after v8.  v8 made the merge fast, and the run became the pre-tokenizer's, most of
it on both kinds of text (docs/v8.md, "Where the time goes now").  Half of that stage or more was not the
matching a second worker shares: a ``Counter`` update per pre-token, each distinct pre-token pickled from
process to process, dicts joined; measured on a shared 2-core machine, v8's counting took no less time
with two workers than with one (docs/v3.md, "Measured").  So v9 changes what a pre-token costs, not how
many cores count:

1. **a scanner instead of a regex engine** (``scan_piece`` in ``bpe/split/_gpt2_scanner.pxi``, which
   ``variants/_v9_count.pyx`` includes).  The pattern is
   six alternatives over three character classes, so one pass over the UTF-8 bytes decides every
   pre-token, with one class looked up per character and no backtracking; the page teaches it as a
   state machine (docs/v9.md).  The classes are read off the ``regex`` module itself, over every code
   point, at first use (:mod:`bpe.split.gpt2_classes`): exact by construction, and held to
   ``regex.findall`` by a property test over every kind of character;
2. **a C table per thread instead of a Counter**: a pre-token is a hash and a probe, its bytes kept in
   the slot when short; the text is the file's bytes, read into a buffer, never decoded into a ``str``;
3. **threads instead of processes**: each chunk is counted by a call that releases the GIL, so N
   threads count on N cores in one address space, and nothing is pickled; then the tables are merged by
   part (thread ``p`` sums every key whose hash falls in part ``p``), in parallel;
4. **arrays instead of a dict**: the merged counts are three arrays (every pre-token's bytes end to end,
   where each ends, its count), which v8's ``MergeState`` reads in place.  At OpenWebText's size the
   dict was 55 million ``bytes`` objects and the peak of the run.

Other patterns.  ``count_pretokens``, ``count_texts`` and ``count_bytes`` take ``pattern=`` (default
``"gpt2"``): GPT-4's ``"cl100k"`` and GPT-4o's ``"o200k"`` have scanners of their own
(``bpe/split/_cl100k_scanner.pxi``, ``bpe/split/_o200k_scanner.pxi``), chosen when the counter is made;
any other regex is counted by ``regex`` itself, on the same threads into the same tables
(:func:`_count_with_regex`).  Each pattern has its own rule for where a file may be cut
(:func:`bpe.split.patterns.cuts_of`).

What it leaves out: a faster merge (v8's, now the larger part of a web-like run); SIMD classification of the text
(the scanner reads a byte at a time, with ASCII in its tight loop).  Encoding uses the same scanner:
``bpe/io/_encoder.pyx`` includes it (``bpe encode``, docs/encoding.md).

Complexity: as v8.  Memory while counting: each thread's table, 32 bytes a slot at most two thirds
full, and the long keys; then the arrays, about the distinct pre-tokens' bytes plus 16 bytes each.

Measured: docs/v9.md.

Walkthrough: docs/v9.md.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from itertools import accumulate, chain, islice, repeat
from operator import add, eq
from pathlib import Path

import regex

from bpe.corpus.text_file import check_input_file, decode_utf8
from bpe.errors import BPEError
from bpe.interface import not_built
from bpe.running.cores import choose_workers, plan_chunk_count, workers_for
from bpe.running.disk_cache import stored_tables
from bpe.running.pool import record_workers
from bpe.running.threads import read_span, run_threads
from bpe.split.chunking import find_chunk_boundaries, has_hidden_content
from bpe.split.pattern_classes import contraction_folds
from bpe.split.patterns import CUSTOM, SCANNERS, custom_regex, cuts_of, resolve_pattern, split_on_special_tokens

from . import v8_compiled

#: Where it counts with more than one worker (bpe/training/rung.py): threads of this process, no pool.
COUNTS_IN = "threads"
#: Its counter of texts takes a plain file's chunks as UTF-8 bytes too (bpe/corpus/corpus.py): no decoding.
COUNTS_BYTES = True

IDEA = "counting compiled: the GPT-2 pattern as a scanner, counts in C tables one per thread, arrays into v8's merge"

try:
    from ._v9_count import Counter
except ImportError:  # built without a C compiler: the rest of the ladder works, v9 says why it does not
    Counter = None

#: The line v9 answers with where its compiled counter was not built (its fix worded for how bpe-lab was
#: installed), and where v8's merge was not built either (no C compiler: the usual case).
NOT_BUILT = not_built("v9 is", "its compiled counter needs")
NEITHER_BUILT = not_built("v9 and v8 are", "their compiled counter and merge need")
#: Why v9 cannot run here, or ``None`` (the registry reads it): it needs its own counter and v8's merge.
UNAVAILABLE: str | None = (v8_compiled.UNAVAILABLE if Counter is not None else
                           NEITHER_BUILT if v8_compiled.UNAVAILABLE is not None else NOT_BUILT)


class CompiledCounts(Mapping):
    """What v9's ``count_pretokens`` returns: the counts as three arrays, which v9's ``Merger`` hands to
    v8's compiled state as they are (``pretoken_arrays``).

    It answers what every rung's counts answer (``len()``, ``total()``, ``close()``), and it is a
    ``Mapping`` of pre-token bytes to counts for the tests and the lab, which build that dict on first
    use; training never does.

    >>> counts = CompiledCounts(b"lowlower", int64s([3, 8]), int64s([2, 1]), 3)
    >>> len(counts), counts.total(), dict(counts)
    (2, 3, {b'low': 2, b'lower': 1})
    """

    def __init__(self, keys: bytes | bytearray, ends: memoryview, counts: memoryview, total: int, *,
                 has_empty: bool = False):
        self._keys, self._ends, self._counts, self._total = keys, ends, counts, total
        #: Whether an empty pre-token is among them: a custom pattern's empty match, which ``findall`` counts
        #: (and so do these counts) but v8's state does not read from arrays (v9's ``Merger`` then reads the dict).
        self.has_empty = has_empty
        self._dict: dict[bytes, int] | None = None
        self._distinct: int | None = None  # set once the arrays are let go

    def pretoken_arrays(self) -> tuple[bytes | bytearray, memoryview, memoryview]:
        """The bytes of every pre-token end to end (uint8), where each ends (int64), its count (int64)."""
        if self._distinct is not None:
            raise ValueError("these counts were closed: a Merger has taken them over")
        return self._keys, self._ends, self._counts

    def __len__(self) -> int:
        return len(self._counts) if self._distinct is None else self._distinct

    def total(self) -> int:
        """All the pre-tokens counted, the distinct ones as often as they occur."""
        return self._total

    def close(self) -> None:
        """Let go of the arrays: ``train_bpe`` calls it when a run fails before the merge takes them, and
        v9's ``Merger`` once it has built its state from them.  ``len()`` and ``total()`` still answer."""
        if self._distinct is None:  # a second close() keeps what the first one knew
            self._distinct = len(self._counts)
        self._keys, self._ends, self._counts, self._dict = b"", int64s([]), int64s([]), None

    def _as_dict(self) -> dict[bytes, int]:
        if self._distinct is not None:
            raise ValueError("these counts were closed: a Merger has taken them over")
        if self._dict is None:
            data, ends = bytes(self._keys), self._ends.tolist()
            starts = [0, *ends[:-1]]
            self._dict = {data[start:end]: count for start, end, count in zip(starts, ends, self._counts.tolist())}
        return self._dict

    def __getitem__(self, pretoken: bytes) -> int:
        return self._as_dict()[pretoken]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._as_dict())


#: Python's decoder accepted bytes the scanner's refused: a bug of the scanner's, said in one line.
_DISAGREE = ("internal error: v9's scanner found a byte that is not UTF-8 in {source} where Python's decoder "
             "found none; please report it (--variant v8 counts the same text)")


def count_pretokens(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, pattern: str = "gpt2",
) -> CompiledCounts:
    """The pre-token counts of the file (or its first ``end`` bytes), counted by the compiled scanner on
    ``workers`` threads (default: the cores other processes leave free).

    The file is cut where no pre-token spans the cut (:mod:`bpe.split.chunking`, v3's rule); each
    chunk is read into its thread's buffer and counted into that thread's table, then the tables are
    merged by part into the arrays.  (Not a memory map: its pages would count as the process's memory,
    the whole file of it by the end.)  A byte that is not UTF-8 gives the plain counter's one line,
    naming the first such byte of the file; with ``errors="replace"`` a chunk holding one is decoded as
    Python decodes it and counted from that.  ``pattern``: a name (:mod:`bpe.split.patterns`) or a regex.
    """
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    name, pattern = resolve_pattern(pattern)
    path = Path(path) if end is not None else check_input_file(path)
    size = path.stat().st_size if end is None else end
    whole = None
    if size == 0 and has_hidden_content(path):  # /proc/cpuinfo: a size of 0, and bytes all the same
        whole = path.read_bytes()
        size = len(whole)
    threads = workers_for(workers, size)
    if whole is not None or size == 0:
        boundaries = [0, size]
    else:
        boundaries = find_chunk_boundaries(path, special_tokens, plan_chunk_count(size, threads), end=size,
                                           errors=errors, cuts=cuts_of(name))
    spans = [(start, stop) for start, stop in zip(boundaries[:-1], boundaries[1:]) if stop > start]
    buffers = [bytearray() for _ in range(threads)]
    counter = _counter(threads, special_tokens, name)

    def count_span(thread: int, span: tuple[int, int]) -> int:
        start, stop = span
        data = memoryview(whole)[start:stop] if whole is not None else read_span(path, start, stop, buffers,
                                                                                   thread)
        if name == CUSTOM:  # the plain counter's decoding, its one line for a bad byte, then regex
            text = decode_utf8(bytes(data), offset=start, errors=errors, source=str(path))
            _count_with_regex(counter, thread, text, special_tokens, pattern)
        elif errors == "replace" and counter.first_invalid(data) >= 0:
            # Python's own decoder decides what replaces what; the scanner counts its result.
            fixed = bytes(data).decode("utf-8", "replace").encode("utf-8")
            counter.count(thread, fixed)
        elif counter.count(thread, data) >= 0:  # the chunk's first bad byte: the plain counter's line
            decode_utf8(bytes(data), offset=start, errors="strict", source=str(path))
            raise BPEError(_DISAGREE.format(source=path))
        return stop - start

    try:
        record_workers(threads)
        run_threads(count_span, spans, threads=threads, stop=counter.stop,
                    on_result=None if on_bytes is None else lambda i, n: on_bytes(n))
        return _arrays(counter, threads, name)
    finally:
        counter.release()


#: How many texts of a stream each thread is given at a time (:func:`count_texts`): enough that a slow one
#: leaves the others busy, few enough that memory holds a window of batches, never the corpus.
TEXTS_PER_THREAD = 4


def count_texts(texts: Iterable[str | bytes], special_tokens: Sequence[str], *, workers: int | None = None,
                on_text: Callable[[int], None] | None = None, pattern: str = "gpt2") -> CompiledCounts:
    """A stream of texts (a corpus's batches of documents, ``bpe/corpus/corpus.py``) counted by the same
    scanner into the same tables as a file's chunks, on ``workers`` threads (default: the free cores).

    Each text is encoded to UTF-8 by the thread that counts it (the corpus reader has checked it can
    be; a plain file's chunk comes as its bytes, checked), then counted with the GIL released.  The stream is
    taken a window at a time, ``TEXTS_PER_THREAD`` texts a thread, so memory holds a window of texts and the
    tables, not the corpus.  ``on_text(i)`` is called as text ``i`` (from 0) is counted.  ``pattern``: a name
    or a regex, as for :func:`count_pretokens`.
    """
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    name, pattern = resolve_pattern(pattern)
    texts = iter(texts)
    first = list(islice(texts, 2))  # a stream of one text is counted on this thread alone
    threads = 1 if len(first) < 2 else choose_workers(workers)
    counter = _counter(threads, special_tokens, name)

    def count_text(thread: int, item: tuple[int, str | bytes]) -> int:
        index, text = item
        if name == CUSTOM:
            _count_with_regex(counter, thread, text if isinstance(text, str) else text.decode("utf-8"),
                              special_tokens, pattern)
        elif counter.count(thread, _utf8(text)) >= 0:  # checked by the reader: valid UTF-8
            raise BPEError(_DISAGREE.format(source="a batch of documents"))
        return index

    try:
        record_workers(threads)
        items = enumerate(chain(first, texts))
        while window := list(islice(items, threads * TEXTS_PER_THREAD)):
            run_threads(count_text, window, threads=threads, stop=counter.stop,
                        on_result=None if on_text is None else lambda i, index: on_text(index))
        return _arrays(counter, threads, name)
    finally:
        counter.release()


# --- A cluster's parts (bpe/corpus/cluster.py): the counts split by the tables' own hash, as arrays ---------
# A cluster's counting task sends its counts on in parts, one to each part's summing task.  As dicts, every
# distinct pre-token would become a Python object three times (the task's dict, the sum's, this process's);
# as the arrays ``write_part`` writes, they are copied in C and pickled as three blocks of bytes.


def count_parts(texts: Iterable[str | bytes], special_tokens: Sequence[str],
                parts: int) -> list[tuple[bytes, bytes, bytes]]:
    """The texts counted on this thread, split into ``parts`` parts by the tables' hash (``merge_part``), each
    as its arrays in bytes: every pre-token's bytes end to end, where each ends, its count (int64)."""
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    counter = Counter(parts, list(special_tokens), *stored_tables("gpt2"))
    try:
        for text in texts:
            if counter.count(0, _utf8(text)) >= 0:  # checked by the reader: valid UTF-8
                raise BPEError(_DISAGREE.format(source="a batch of documents"))
        return [_part_arrays(counter, part) for part in range(parts)]
    finally:
        counter.release()


def sum_parts(*parts: tuple[bytes, bytes, bytes]) -> tuple[bytes, bytes, bytes]:
    """One part of every counting task, summed in one table, as the same arrays.  The part's keys hold one
    range of hashes: the table spreads them over all its slots (``spread``: Fibonacci hashing's odd
    multiplier, which scatters any range of hashes), else they would crowd into that range's share of the
    slots and probe past one another for ever longer."""
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    counter = Counter(1, [], *stored_tables("gpt2"), spread=0x61C88647)
    try:
        for keys, ends, counts in parts:
            counter.add_counts(0, keys, memoryview(ends).cast("q"), memoryview(counts).cast("q"))
        return _part_arrays(counter, 0)
    finally:
        counter.release()


def joined_parts(parts: Sequence[tuple[bytes, bytes, bytes]]) -> CompiledCounts:
    """The summed parts, disjoint, as the counts v9's merge reads: their arrays end to end, each part's
    ends moved on by the keys before it (in C: ``map`` of ``add``), no table."""
    keys = b"".join(part[0] for part in parts)
    ends, counts, at = array("q"), array("q"), 0
    for part_keys, part_ends, part_counts in parts:
        ends.extend(map(add, memoryview(part_ends).cast("q"), repeat(at)))
        counts.frombytes(part_counts)
        at += len(part_keys)
    return CompiledCounts(keys, _int64_view(ends), _int64_view(counts), sum(counts))


def _utf8(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8")


def _part_arrays(counter, part: int) -> tuple[bytes, bytes, bytes]:
    distinct, size = counter.merge_part(part)
    keys, ends, counts = bytearray(size), int64s(distinct), int64s(distinct)
    counter.write_part(part, keys, ends, counts, 0, 0)
    return bytes(keys), ends.tobytes(), counts.tobytes()


def count_bytes(data: bytes, special_tokens: Sequence[str] = (), *, pattern: str = "gpt2") -> CompiledCounts:
    """The pre-token counts of one UTF-8 text in memory, on this thread: the scanner without the file.

    >>> sorted(count_bytes("don't stop, 42x<|endoftext|>x".encode(), ["<|endoftext|>"]).items())
    [(b' 42', 1), (b' stop', 1), (b"'t", 1), (b',', 1), (b'don', 1), (b'x', 2)]
    >>> sorted(count_bytes("DON'T stop, 2024".encode(), pattern="o200k").items())
    [(b' ', 1), (b' stop', 1), (b',', 1), (b'202', 1), (b'4', 1), (b"DON'T", 1)]
    """
    if UNAVAILABLE is not None:
        raise BPEError(UNAVAILABLE)
    name, pattern = resolve_pattern(pattern)
    counter = _counter(1, special_tokens, name)
    try:
        if name == CUSTOM:
            _count_with_regex(counter, 0, decode_utf8(bytes(data)), special_tokens, pattern)
        elif counter.count(0, data) >= 0:
            decode_utf8(bytes(data))
            raise BPEError(_DISAGREE.format(source="the text"))
        return _arrays(counter, 1, name)
    finally:
        counter.release()


def _counter(threads: int, special_tokens: Sequence[str], name: str):
    """A counter of ``threads`` tables whose scanner is the named pattern's; GPT-2's is made as it always
    was.  A custom pattern's counter scans nothing (its pre-tokens come from ``regex``: ``add_tokens``), so
    it is given GPT-2's tables, which it does not read."""
    if name in ("gpt2", CUSTOM):
        return Counter(threads, list(special_tokens), *stored_tables("gpt2"))
    return Counter(threads, list(special_tokens), *stored_tables(name), pattern=SCANNERS[name],
                   folds=contraction_folds())


# --- A custom pattern: regex's matches counted on the threads, into the same tables ----------------------------
# ``regex`` releases the GIL while it matches when asked (``concurrent=True``), but ``findall`` takes it back
# for every match to make its string: with two threads they spend their time handing the GIL to each other,
# and two count no faster than one.  So each thread asks for many pre-tokens per match: the pattern
# repeated, each repetition captured, ``(?:(?>(PATTERN))){1,BATCH}``, is one search that runs without the
# GIL, and its captures are the next pre-tokens findall would give, in order.  Not as strings: where each
# ends (``ends(1)``, a list of ints, cheaper to make), which ``add_spans`` reads in C and turns into byte
# offsets in the text's UTF-8 without the GIL, hashing and adding each pre-token there.  What still holds
# the GIL (the list of ends, the split at special tokens) is about a tenth of the work on one thread.
#
# Why the captures are findall's.  Each repetition is the pattern's first match where the last one ended:
# the atomic group ``(?>...)`` keeps the engine from going back into a repetition to try another of the
# pattern's matches (it would, to avoid an empty one), and the repetition stops where the pattern fails.
# findall, too, takes the pattern's first match where the last one ended, and where there is none it
# searches on, as the next ``search`` does.  Two things differ: an empty match (findall's rules for those
# are its own; so at the first empty capture the rest of the piece goes to findall itself, from there),
# and anything that names the start of the search or the whole pattern (``\G``, recursion ``(?R)``), or
# searches differently (reversed, POSIX, best match): such patterns are counted by findall alone.

#: Pre-tokens one search hands over at most: it bounds the captures held at once, and how long a thread
#: runs before it looks at the stop flag again (``add_tokens`` does).
BATCH = 4096
_UNSAFE_FLAGS = regex.REVERSE | regex.POSIX | regex.BESTMATCH | regex.ENHANCEMATCH


def _repeated(compiled: regex.Pattern) -> regex.Pattern | None:
    """The pattern repeated and captured (above), or None where findall alone gives its matches."""
    if compiled.flags & _UNSAFE_FLAGS or any(part in compiled.pattern for part in ("\\G", "(?R)", "(?0)")):
        return None
    try:
        return regex.compile(f"(?:(?>({compiled.pattern}))){{1,{BATCH}}}", flags=compiled.flags)
    except regex.error:
        return None


_repeated_of = cache(_repeated)


def _count_with_regex(counter, thread: int, text: str, special_tokens: Sequence[str], pattern: str) -> None:
    """Count the custom pattern's pre-tokens of ``text`` into table ``thread``: the pieces between special
    tokens as the plain counter cuts them, each matched by ``regex`` a batch at a time (above), or by
    ``findall`` where the batches cannot stand for it."""
    compiled = custom_regex(pattern)
    repeated = _repeated_of(compiled)
    for piece in split_on_special_tokens(text, special_tokens):
        if repeated is None:
            counter.add_tokens(thread, compiled.findall(piece))
            continue
        pos, at_char, at_byte = 0, 0, 0
        while (found := repeated.search(piece, pos, concurrent=True)) is not None:
            ends = found.ends(1)
            added, at_char, at_byte = counter.add_spans(thread, piece, found.start(), ends, at_char, at_byte)
            if added < len(ends):  # an empty match, at at_char: findall goes on from there, by its own rules
                counter.add_tokens(thread, compiled.findall(piece, at_char))
                break
            pos = found.end()


def _arrays(counter, threads: int, name: str = "gpt2") -> CompiledCounts:
    """Merge the threads' tables by part, each part on its own thread, then write the parts into one set
    of arrays, each part into its own range.  A custom pattern may have counted an empty match: the arrays
    say so (an end equal to the one before, in C: ``map`` of ``eq``)."""
    parts = run_threads(lambda thread, part: counter.merge_part(part), range(threads), threads=threads,
                        stop=counter.stop)
    counter.release_thread_slots()  # the parts hold every count now: the arrays come beside them alone
    firsts = list(accumulate((n for n, _ in parts), initial=0))
    ats = list(accumulate((size for _, size in parts), initial=0))
    keys, ends, counts = bytearray(ats[-1]), int64s(firsts[-1]), int64s(firsts[-1])
    run_threads(lambda thread, part: counter.write_part(part, keys, ends, counts, firsts[part], ats[part]),
                range(threads), threads=threads, stop=counter.stop)
    _, total = counter.totals()
    counter.release()  # the tables, before the merge builds its state beside the arrays
    has_empty = name == CUSTOM and len(ends) > 0 and (ends[0] == 0 or any(map(eq, ends[1:], ends[:-1])))
    return CompiledCounts(keys, ends, counts, total, has_empty=has_empty)


def int64s(values: int | list[int]) -> memoryview:
    """A zeroed array of that many 64-bit integers, or of those values (no numpy: importing it starts
    OpenBLAS's threads, which spin on the cores the counting threads need)."""
    if isinstance(values, int):
        return memoryview(bytearray(8 * values)).cast("q")
    return _int64_view(array("q", values))


def _int64_view(values: array) -> memoryview:
    return memoryview(values).cast("B").cast("q")


class Merger(v8_compiled.Merger):
    """v8's merge, unchanged: the compiled state builds its words from v9's arrays where it is given them,
    and from a plain mapping otherwise (the lab's and the tests' counts)."""

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        if UNAVAILABLE is not None:
            raise BPEError(UNAVAILABLE)
        if isinstance(pretoken_counts, CompiledCounts):
            if pretoken_counts.has_empty:  # the state reads an empty pre-token from a dict, not from arrays
                super().__init__(pretoken_counts)
            else:
                v8_compiled.MergeState.__init__(self, pretoken_counts)  # the arrays, read where they are
            # The state holds every word now: the arrays would only sit beside it through the merges (1.5 GB
            # at OpenWebText's size), so the Merger takes them over and lets them go, as v7's shards do theirs.
            pretoken_counts.close()
        else:
            super().__init__(pretoken_counts)
