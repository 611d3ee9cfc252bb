# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""v8's compiled merge: v6's algorithm on C arrays (the Python side is ``v8_compiled.py``).

Unlike v6, nothing here is a Python object while the merges run.  Each structure below replaces one
of v6's, and says what it replaces and why; the algorithm is v6's, step for step:

* a word is a record in one block of memory (its count, its length, a visit stamp, its token ids),
  where v6 had a ``str`` in a list beside an ``int`` in another list;
* a pair is a slot in one array (count, holders, the two tokens), found through an open-addressing
  table keyed by the two ids, where v6 had ``dict[str, int]`` and ``dict[str, list[int]]``;
* the lazy index is each slot's array of word numbers, grown by doubling, never searched;
* the heap is an array of (count, slot) ordered by count and then the pair's bytes, where v6 had
  ``heapq`` over tuples holding inverted-key strings;
* the diff grouped by neighbour is a table indexed by token id, where v6 had two ``defaultdict(list)``.

Counts are 64-bit everywhere: a pair's count is a sum of word counts and can pass 2**31 (a 32-bit
count is a real bug some trainers shipped).  Long loops call ``PyErr_CheckSignals`` every few
thousand words, so Ctrl-C and SIGTERM land within a fraction of a second even in a merge that
rewrites millions of words.  Every allocation is checked: a failure raises ``MemoryError``.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, INT32_MAX
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_Check
from cpython.dict cimport PyDict_Next
from cpython.exc cimport PyErr_CheckSignals
from cpython.long cimport PyLong_AsLongLong
from cpython.ref cimport PyObject

cdef extern from "_v8_tricks.h":
    # A prefetch a few words ahead of the one being rewritten: the merge visits words in index order,
    # scattered over the block, and a miss on each first touch is most of a merge's time.  (The hint is
    # _hints.h's, shared with the other compiled modules; a no-op where unsupported.)
    void V8_FETCH(const void *p) nogil
    # The two tricks on top of v6's algorithm, fetching ahead and deferring the probes (below), each on
    # unless a build turns it off (_v8_tricks.h says how, and why a switch costs the rung nothing): the
    # ablation times v8 without each in turn.
    const bint WITH_PREFETCH "V8_PREFETCH"
    const bint WITH_DEFERRED_PROBES "V8_DEFERRED_PROBES"


# --- Words: one block of records ----------------------------------------------------------------------
# A record is a 16-byte head and the word's token ids (int32), padded to a multiple of 16 bytes, so a
# word of up to 12 tokens (16 + 12 * 4 = 64 bytes) takes no more than a 64-byte cache line with its count
# and length: one line, or two where the record, which starts at a multiple of 16 bytes, crosses a line's
# end.  A merge shortens a word in place; the record keeps its size.  v6's `words[i]` and
# `word_counts[i]` were two pointer chases into two lists, then into a str object and an int object
# elsewhere on the heap.
#
# A word is named by its number, which is what the index stores, and a number leads to the record's
# offset (16-byte units: up to 64 GiB of records), 4 bytes a word in one dense array.

ctypedef struct WordHead:
    int64_t count      # the pre-token's count in the corpus
    int32_t length     # tokens now
    int32_t stamp      # the merge that last visited it: a word listed twice is rewritten once

cdef inline WordHead *word_at(char *block, uint32_t offset) noexcept nogil:
    return <WordHead *>(block + (<size_t>offset << 4))

cdef inline int32_t *tokens_of(WordHead *head) noexcept nogil:
    return <int32_t *>(head + 1)



# --- Pairs: slots, and a table from (first, second) to a slot -------------------------------------------
# A slot is never freed: a pair whose count falls to zero keeps its slot (and frees its holders), so the
# table needs no deletion and no tombstones.  Holders are word numbers, appended and never removed
# (v6's lazy index): a visit that finds no occurrence is skipped.  The build's holders are slices of one
# block (capacity -1: not owned, never grown, since a byte pair can never be gained again: every merged
# token is two bytes or more).  A pair a merge makes gets an array of its own with its first word, grown
# by doubling.

ctypedef struct PairSlot:
    int64_t count
    uint32_t *holders  # word numbers: capacity > 0, an array of its own; -1, a slice of the build's block;
                       # 0, none yet
    int32_t size
    int32_t capacity
    int32_t first
    int32_t second

ctypedef struct TableEntry:
    uint64_t key       # (first << 32) | second
    int32_t slot       # -1: empty

cdef inline uint64_t pair_key(int32_t first, int32_t second) noexcept nogil:
    return (<uint64_t><uint32_t>first << 32) | <uint32_t>second

cdef inline size_t spread(uint64_t key) noexcept nogil:
    # Fibonacci hashing: the multiply mixes both ids into the high bits, which the table's mask reads.
    return <size_t>((key * <uint64_t>0x9E3779B97F4A7C15ULL) >> 17)


# --- The heap: (count, slot), best first ----------------------------------------------------------------
# Ordered by count, then by the pair's bytes, compared as v1 compares (bytes, bytes) tuples: the first
# tokens by memcmp and length, then the second ones.  v6 built an inverted-key string per entry so that
# heapq's tuple comparison gave that order; here the comparison reads the tokens' bytes directly, and
# only when two counts tie.  Lazy deletion as in v5 and v6: a popped entry whose count is stale is
# re-keyed with the live count, or dropped when the pair is gone.

ctypedef struct HeapEntry:
    int64_t count
    int32_t slot


# --- The neighbour table: v6's diff grouped by neighbour --------------------------------------------------
# A word with one occurrence of the merged pair (a, b) -> n, between x and y, loses (x, a) and (b, y)
# and gains (x, n) and (n, y).  Those pairs depend only on x (or y), so each neighbour token has a row,
# indexed by its id, filled on its first word in a merge (the stamp says which merge filled it).  A word
# then adds its count to two rows and to two gained slots: no hash probe, no scattered write.  The losses
# wait in the rows until the merge ends, when each row's lost pair is found and lowered once, with
# the table and the slots fetched ahead: a miss per distinct neighbour, overlapped, instead of a miss
# per word, one after the other.  v6 grouped the same way with two dicts of lists.

ctypedef struct Half:
    int64_t lost    # the count the lost pair loses: (x, a) before, (b, y) after
    int32_t stamp   # the merge that filled this half
    int32_t gained  # the gained pair's slot: (x, n) before, (n, y) after

ctypedef struct NeighbourRow:
    Half side[2]    # [BEFORE]: the token is x, right before an occurrence; [AFTER]: y, right after one


# --- The build's source: a dict of counts, or counts kept as arrays ---------------------------------------
ctypedef struct WordSource:
    PyObject *counts               # a dict of bytes -> int, or NULL: the arrays below
    const unsigned char *keys      # the arrays: every pre-token's bytes end to end,
    const int64_t *ends            # where each ends,
    const int64_t *word_counts     # and its count
    Py_ssize_t size


cdef enum:
    BEFORE = 0
    AFTER = 1

cdef enum:
    SIGNAL_EVERY = 1 << 14   # word visits between two checks for a signal (Ctrl-C, SIGTERM)
    PREFETCH_AHEAD = 16      # how many words ahead of the one being rewritten a record is fetched


cdef class MergeState:
    """The words, the pair counts, the index and the heap, in C arrays; one merge per ``merge`` call.

    Built once, by ``__init__``: every method of a state whose build did not run or failed partway (a
    subclass that skips it, ``MergeState.__new__``, a ``MemoryError`` or a Ctrl-C during the build) is a
    ``RuntimeError``, never a read of arrays not made; a second ``__init__`` is refused too (it would lose
    the first build's arrays), and so is a merge after one stopped partway (``broken``)."""

    # words
    cdef char *block
    cdef size_t block_units
    cdef uint32_t *offsets       # each word's record, by word number
    cdef Py_ssize_t num_words
    # tokens: their bytes as Python objects (what the rung answers with) and one id per distinct byte
    # string, as v6 keeps them; their bytes again in C for the heap's tie-break; the neighbour rows
    cdef list token_list
    cdef dict token_ids
    cdef char *token_bytes
    cdef size_t token_bytes_size, token_bytes_capacity
    cdef int64_t *token_start
    cdef int32_t *token_length
    cdef NeighbourRow *neighbours
    cdef int32_t num_tokens, token_capacity
    # pairs
    cdef PairSlot *pairs
    cdef int32_t num_pairs, pair_capacity
    cdef TableEntry *table
    cdef size_t table_mask
    cdef uint32_t *build_holders
    cdef size_t build_holders_size   # its entries (allocated: at least one)
    # heap
    cdef HeapEntry *heap
    cdef Py_ssize_t heap_size, heap_capacity
    # per merge
    cdef int32_t stamp
    cdef int32_t newest_made     # the largest token id a merge has made: n above it is a fresh token
    cdef bint fresh              # this merge's n is fresh: no pair holding it exists yet
    cdef int32_t *touched[2]     # the neighbour rows filled in this merge, by side; capacity: the tokens
    cdef Py_ssize_t num_touched[2]
    cdef int32_t *pending        # slots made in this merge, filed in the table when it ends
    cdef Py_ssize_t num_pending, pending_capacity
    cdef int32_t *work_slots     # the lost pairs' slots and counts, found when the merge ends
    cdef int64_t *work_counts
    cdef int32_t *lowered
    cdef Py_ssize_t num_lowered, lowered_capacity
    cdef int32_t *scratch
    cdef Py_ssize_t scratch_capacity
    cdef bint broken             # a merge stopped partway (an interrupt, or an internal error): refuse more
    cdef bint built              # __init__ ran to its end: every array is made
    cdef bint fail_next_table_for_tests  # the next table allocation fails, as malloc would (tests only)
    cdef bint interrupt_for_tests        # the next check for a signal raises KeyboardInterrupt (tests only)
    # what a run reports
    cdef public int64_t visits, stale_visits, stale_pops

    def __cinit__(self, *arguments, **keywords):  # (a Python subclass, v8's Merger, passes its own along)
        self.block = NULL
        self.offsets = NULL
        self.token_bytes = NULL
        self.token_start = NULL
        self.token_length = NULL
        self.neighbours = NULL
        self.pairs = NULL
        self.table = NULL
        self.build_holders = NULL
        self.heap = NULL
        self.touched[BEFORE] = self.touched[AFTER] = NULL
        self.pending = NULL
        self.work_slots = NULL
        self.work_counts = NULL
        self.lowered = NULL
        self.scratch = NULL

    def __dealloc__(self):
        cdef int32_t i
        if self.pairs != NULL:
            for i in range(self.num_pairs):
                if self.pairs[i].capacity > 0:
                    free(self.pairs[i].holders)
        free(self.block); free(self.offsets); free(self.token_bytes); free(self.token_start)
        free(self.token_length); free(self.neighbours); free(self.pairs); free(self.table)
        free(self.build_holders); free(self.heap); free(self.touched[BEFORE]); free(self.touched[AFTER])
        free(self.pending); free(self.work_slots); free(self.work_counts); free(self.lowered); free(self.scratch)

    def __init__(self, pretoken_counts):
        """Phase pair_count: the words' records, each byte pair's count and holders, and the heap.

        ``pretoken_counts`` is a dict (a ``Counter`` is one) of pre-token bytes to counts, or (counts a
        compiled counter kept in C) an object whose ``pretoken_arrays()`` gives them as three arrays, read
        where they are: every pre-token's bytes end to end (uint8), where each ends (int64), and its count
        (int64)."""
        cdef int32_t i
        cdef int side
        cdef WordSource source
        if self.built or self.token_bytes != NULL:
            raise RuntimeError("this v8 merge state was built already (or its build failed partway): a state is "
                               "built once; build a new one from the pre-token counts")
        if isinstance(pretoken_counts, dict):
            source.counts = <PyObject *>pretoken_counts
        elif hasattr(pretoken_counts, "pretoken_arrays"):
            keys, ends, counts = pretoken_counts.pretoken_arrays()
            source_from_arrays(&source, keys, ends, counts)
        else:
            raise TypeError(f"pre-token counts must be a dict, got {type(pretoken_counts).__name__}")
        self.token_capacity = 512
        self.token_bytes_capacity = 4096
        self.token_bytes = <char *>check(malloc(self.token_bytes_capacity))
        self.token_start = <int64_t *>check(malloc(self.token_capacity * sizeof(int64_t)))
        self.token_length = <int32_t *>check(malloc(self.token_capacity * sizeof(int32_t)))
        self.neighbours = <NeighbourRow *>check(calloc(self.token_capacity, sizeof(NeighbourRow)))
        for side in (BEFORE, AFTER):
            self.touched[side] = <int32_t *>check(malloc(self.token_capacity * sizeof(int32_t)))
        self.work_slots = <int32_t *>check(malloc(2 * self.token_capacity * sizeof(int32_t)))
        self.work_counts = <int64_t *>check(malloc(2 * self.token_capacity * sizeof(int64_t)))
        self.token_list = [bytes([i]) for i in range(256)]
        self.token_ids = {token: i for i, token in enumerate(self.token_list)}
        for i in range(256):  # tokens 0-255: the bytes
            self.token_bytes[i] = <char>i
            self.token_start[i] = i
            self.token_length[i] = 1
        self.num_tokens = 256
        self.newest_made = 255
        self.token_bytes_size = 256
        self.pending_capacity = self.lowered_capacity = 1024
        self.pending = <int32_t *>check(malloc(self.pending_capacity * sizeof(int32_t)))
        self.lowered = <int32_t *>check(malloc(self.lowered_capacity * sizeof(int32_t)))
        self.scratch_capacity = 256
        self.scratch = <int32_t *>check(malloc(self.scratch_capacity * sizeof(int32_t)))
        self._build_words(&source)
        self._build_pairs()
        self._build_heap()
        self.built = True

    cdef inline int _ready(self) except -1:
        if not self.built:
            raise RuntimeError("this v8 merge state was never built (its __init__ did not run, or failed "
                               "partway): build a new one from the pre-token counts")
        return 0

    # -- the build ----------------------------------------------------------------------------------------

    cdef int _build_words(self, WordSource *source) except -1:
        """Copy each pre-token of two bytes or more into its record, reading the bytes where they are kept
        (a dict's keys, or the arrays: no copy into a Python object on the way), in the order they come.
        Two passes over the source: the first checks it and sizes the block, the second fills it."""
        cdef Py_ssize_t position = 0, length, j, n = 0
        cdef size_t total = 0, at = 0
        cdef int64_t count
        cdef const unsigned char *text
        cdef WordHead *head
        cdef int32_t *tokens
        # First pass: check the counts and lengths, and size the block.
        while next_word(source, &position, &text, &length, &count):
            if length > 1:
                checked_word_length(length)  # a record's length is 32 bits: refused, never wrapped
                total += record_units(length)
                n += 1
        if total >= (<size_t>1 << 32):
            raise MemoryError("v8's words need more than 64 GiB of records")
        self.block = <char *>check(malloc(max(total, 1) << 4))
        self.offsets = <uint32_t *>check(malloc(max(n, 1) * sizeof(uint32_t)))
        self.block_units = total
        self.num_words = n
        # Second pass: the records, one after another.
        position = 0
        n = 0
        while next_word(source, &position, &text, &length, &count):
            if length <= 1:
                continue
            head = word_at(self.block, <uint32_t>at)
            head.count = count
            head.length = checked_word_length(length)
            head.stamp = 0
            tokens = tokens_of(head)
            for j in range(length):
                tokens[j] = text[j]
            self.offsets[n] = <uint32_t>at
            at += record_units(length)
            n += 1
            if (n & (SIGNAL_EVERY - 1)) == 0:
                self.check_signals()
        return 0

    cdef int check_signals(self) except -1:
        """Let a pending Ctrl-C or SIGTERM raise here, between two words (or, set by a test, a
        KeyboardInterrupt as Ctrl-C's, at a point the test knows)."""
        if self.interrupt_for_tests:
            self.interrupt_for_tests = False
            raise KeyboardInterrupt()
        return PyErr_CheckSignals()

    cdef int _build_pairs(self) except -1:
        """Each byte pair's count and holders.  A byte pair is one of 65,536, so the build indexes a
        dense table by ``256 * first + second`` instead of hashing; the holders of all pairs are then
        slices of one block (a counting sort), each word listed once per pair it holds."""
        cdef int64_t *counts = <int64_t *>check(calloc(65536, sizeof(int64_t)))
        cdef int64_t *sizes = <int64_t *>calloc(65536, sizeof(int64_t))
        cdef uint32_t *last = <uint32_t *>malloc(65536 * sizeof(uint32_t))
        cdef int64_t *fill = NULL
        cdef int32_t code, slot
        cdef int64_t total = 0
        try:
            if sizes == NULL or last == NULL:
                raise MemoryError()
            self._scan_byte_pairs(last, counts, sizes, NULL)  # each pair's count, and how many words hold it
            # One slot per byte pair that occurs; its holders a slice of one block.
            fill = <int64_t *>check(malloc(65536 * sizeof(int64_t)))
            for code in range(65536):
                fill[code] = total
                total += sizes[code]
            self.build_holders = <uint32_t *>check(malloc(max(total, 1) * sizeof(uint32_t)))
            self.build_holders_size = max(total, 1)
            self._init_table(1 << 16)
            for code in range(65536):
                if counts[code]:
                    slot = self._new_slot(code >> 8, code & 255)
                    self.pairs[slot].count = counts[code]
                    self.pairs[slot].holders = self.build_holders + fill[code]
                    self.pairs[slot].size = <int32_t>sizes[code]
                    self.pairs[slot].capacity = -1
            self._scan_byte_pairs(last, NULL, NULL, fill)  # each word listed under each pair it holds
        finally:
            free(counts); free(sizes); free(last); free(fill)
        return 0

    cdef int _scan_byte_pairs(self, uint32_t *last, int64_t *counts, int64_t *sizes, int64_t *fill) except -1:
        """One pass over every word's byte pairs, by code ``256 * first + second``: the first pass adds to
        ``counts`` and ``sizes`` (the words holding the pair), the second (``fill`` given) lists each word
        once under each pair it holds.  ``last`` is each code's last word: a word counts once per pair."""
        cdef Py_ssize_t w, j
        cdef WordHead *head
        cdef int32_t *tokens
        cdef int32_t code
        memset(last, 0xFF, 65536 * sizeof(uint32_t))
        for w in range(self.num_words):
            head = word_at(self.block, self.offsets[w])
            tokens = tokens_of(head)
            for j in range(head.length - 1):
                code = (tokens[j] << 8) | tokens[j + 1]
                if fill == NULL:
                    counts[code] += head.count
                if last[code] != <uint32_t>w:
                    last[code] = <uint32_t>w
                    if fill == NULL:
                        sizes[code] += 1
                    else:
                        self.build_holders[fill[code]] = <uint32_t>w
                        fill[code] += 1
            if (w & (SIGNAL_EVERY - 1)) == 0:
                self.check_signals()
        return 0

    cdef int _build_heap(self) except -1:
        cdef int32_t slot
        cdef Py_ssize_t i
        self.heap_capacity = max(self.num_pairs * 2, 1024)
        self.heap = <HeapEntry *>check(malloc(self.heap_capacity * sizeof(HeapEntry)))
        self.heap_size = 0
        for slot in range(self.num_pairs):
            self.heap[self.heap_size].count = self.pairs[slot].count
            self.heap[self.heap_size].slot = slot
            self.heap_size += 1
        i = self.heap_size // 2
        while i > 0:
            i -= 1
            self._sift_down(i)
        return 0

    # -- tokens ---------------------------------------------------------------------------------------------

    def add_token(self, bytes merged):
        """The id of the token ``merged``: an existing one if a merge already made these bytes.

        v1's tokens *are* bytes, so should two merges ever make the same bytes ((a, bc) and (ab, c)),
        they make one token here too, and the second merge's pairs may already exist."""
        self._ready()
        found = self.token_ids.get(merged)
        if found is not None:
            return found
        return self._new_token(merged)

    cdef int32_t _new_token(self, bytes merged) except -1:
        cdef Py_ssize_t length = len(merged)
        cdef int32_t new = self.num_tokens
        cdef int32_t capacity
        cdef int side
        cdef size_t byte_capacity = self.token_bytes_capacity
        if new == self.token_capacity:  # (each capacity is raised only once every array has grown)
            capacity = 2 * self.token_capacity
            self.token_start = <int64_t *>grow(self.token_start, capacity * sizeof(int64_t))
            self.token_length = <int32_t *>grow(self.token_length, capacity * sizeof(int32_t))
            self.neighbours = <NeighbourRow *>grow(self.neighbours, capacity * sizeof(NeighbourRow))
            memset(self.neighbours + new, 0, (capacity - new) * sizeof(NeighbourRow))
            for side in (BEFORE, AFTER):
                self.touched[side] = <int32_t *>grow(self.touched[side], capacity * sizeof(int32_t))
            self.work_slots = <int32_t *>grow(self.work_slots, 2 * capacity * sizeof(int32_t))
            self.work_counts = <int64_t *>grow(self.work_counts, 2 * capacity * sizeof(int64_t))
            self.token_capacity = capacity
        while self.token_bytes_size + length > byte_capacity:
            byte_capacity *= 2
        if byte_capacity != self.token_bytes_capacity:
            self.token_bytes = <char *>grow(self.token_bytes, byte_capacity)
            self.token_bytes_capacity = byte_capacity
        memcpy(self.token_bytes + self.token_bytes_size, PyBytes_AS_STRING(merged), length)
        self.token_start[new] = self.token_bytes_size
        self.token_length[new] = <int32_t>length
        self.token_bytes_size += length
        self.token_list.append(merged)
        self.token_ids[merged] = new
        self.num_tokens += 1
        return new

    cdef inline int compare_tokens(self, int32_t s, int32_t t) noexcept nogil:
        """<0, 0, >0 as bytes(s) <, ==, > bytes(t): memcmp, then the shorter is smaller (Python's order)."""
        cdef int32_t ls = self.token_length[s], lt = self.token_length[t]
        cdef int c
        if s == t:
            return 0
        c = memcmp(self.token_bytes + self.token_start[s], self.token_bytes + self.token_start[t],
                   ls if ls < lt else lt)
        if c != 0:
            return c
        return ls - lt

    # -- the pair table -------------------------------------------------------------------------------------

    cdef TableEntry *_empty_table(self, size_t capacity) except NULL:
        """A table of ``capacity`` buckets (a power of two), every one empty; the state's is not touched."""
        cdef size_t i
        cdef TableEntry *table
        if self.fail_next_table_for_tests:
            self.fail_next_table_for_tests = False
            raise MemoryError("a table allocation failed (injected by a test)")
        table = <TableEntry *>check(malloc(capacity * sizeof(TableEntry)))
        for i in range(capacity):
            table[i].slot = -1
        return table

    cdef int _init_table(self, size_t capacity) except -1:
        self.table = self._empty_table(capacity)
        self.table_mask = capacity - 1
        return 0

    cdef int _grow_table(self, size_t pairs) except -1:
        """Double the table until ``pairs`` slots fill at most half of it, and re-file every slot counted
        (a new slot is counted, and filed, once the table has grown for it).  The new table is allocated
        before the old one is freed: a MemoryError leaves the state as it was, table and all.  One merge
        can add more slots than one doubling makes room for, hence the loop."""
        cdef size_t capacity = self.table_mask + 1
        cdef int32_t slot
        cdef TableEntry *old = self.table
        while pairs * 2 > capacity:
            capacity *= 2
        self.table = self._empty_table(capacity)  # on failure, self.table is still the old one
        self.table_mask = capacity - 1
        free(old)
        for slot in range(self.num_pairs):
            self._file(slot)
        return 0

    cdef inline int32_t find(self, int32_t first, int32_t second) noexcept nogil:
        """The slot of (first, second), or -1 if the pair never occurred."""
        cdef uint64_t key = pair_key(first, second)
        cdef size_t i = spread(key) & self.table_mask
        while self.table[i].slot >= 0:
            if self.table[i].key == key:
                return self.table[i].slot
            i = (i + 1) & self.table_mask
        return -1

    cdef int32_t held_slot(self, int32_t first, int32_t second) except -1:
        """The slot of a pair a word holds now, which was filed when a word first gained it.  A miss
        breaks that invariant: a clear internal error, and the state refuses further merges, rather than
        a write at ``pairs[-1]`` (bounds are not checked here)."""
        cdef int32_t slot = self.find(first, second)
        if slot < 0:
            self.broken = True
            raise RuntimeError(f"internal error in v8's merge: the pair ({first}, {second}) is held by a word "
                               f"but missing from the pair table")
        return slot

    cdef int32_t _new_slot(self, int32_t first, int32_t second, bint file=True) except -1:
        """A fresh slot for a pair known not to be in the table: filed in it now, or (``file`` false)
        listed as pending and filed when the merge ends (:meth:`_file_pending`)."""
        cdef int32_t slot = self.num_pairs
        cdef int32_t capacity
        if slot == self.pair_capacity:
            capacity = max(doubled_capacity(self.pair_capacity), 1024)
            self.pairs = <PairSlot *>grow(self.pairs, capacity * sizeof(PairSlot))
            self.pair_capacity = capacity
        if file and <size_t>(slot + 1) * 2 > self.table_mask + 1:
            # Grown before the slot is counted, so a failure leaves no slot made and unfiled.
            self._grow_table(slot + 1)
        self.pairs[slot].count = 0
        self.pairs[slot].size = 0
        self.pairs[slot].capacity = 0
        self.pairs[slot].first = first
        self.pairs[slot].second = second
        self.num_pairs += 1
        if not file:
            if self.num_pending == self.pending_capacity:
                self.pending = <int32_t *>grow(self.pending, 2 * self.pending_capacity * sizeof(int32_t))
                self.pending_capacity *= 2
            self.pending[self.num_pending] = slot
            self.num_pending += 1
        else:
            self._file(slot)
        return slot

    cdef inline void _file(self, int32_t slot) noexcept nogil:
        cdef uint64_t key = pair_key(self.pairs[slot].first, self.pairs[slot].second)
        cdef size_t i = spread(key) & self.table_mask
        while self.table[i].slot >= 0:
            i = (i + 1) & self.table_mask
        self.table[i].key = key
        self.table[i].slot = slot

    cdef int _file_pending(self) except -1:
        """File the slots this merge made, each bucket fetched a few slots ahead."""
        cdef Py_ssize_t i
        cdef int32_t ahead
        if <size_t>self.num_pairs * 2 > self.table_mask + 1:
            self._grow_table(self.num_pairs)  # files every slot, the pending ones included
        else:
            for i in range(self.num_pending):
                if WITH_PREFETCH and i + PREFETCH_AHEAD < self.num_pending:
                    ahead = self.pending[i + PREFETCH_AHEAD]
                    V8_FETCH(&self.table[spread(pair_key(self.pairs[ahead].first, self.pairs[ahead].second))
                                            & self.table_mask])
                self._file(self.pending[i])
        self.num_pending = 0
        return 0

    cdef inline int32_t find_or_add(self, int32_t first, int32_t second) except -1:
        cdef int32_t slot = self.find(first, second)
        if slot >= 0:
            return slot
        return self._new_slot(first, second)

    cdef inline int add_holder(self, int32_t slot, uint32_t word) except -1:
        cdef PairSlot *pair = &self.pairs[slot]
        cdef int32_t capacity
        cdef uint32_t *holders
        if pair.capacity == 0:  # its first word: an array of its own
            pair.holders = <uint32_t *>check(malloc(8 * sizeof(uint32_t)))
            pair.capacity = 8
        elif pair.size == pair.capacity or pair.capacity < 0:
            capacity = max(8, doubled_capacity(pair.size))
            if pair.capacity < 0:  # a slice of the build's block: copy it out before growing
                holders = <uint32_t *>check(malloc(capacity * sizeof(uint32_t)))
                memcpy(holders, pair.holders, pair.size * sizeof(uint32_t))
            else:
                holders = <uint32_t *>grow(pair.holders, capacity * sizeof(uint32_t))
            pair.holders = holders
            pair.capacity = capacity
        pair.holders[pair.size] = word
        pair.size += 1
        return 0

    cdef inline void release_holders(self, int32_t slot) noexcept nogil:
        """A pair whose count is zero lists no word: its holders go (v6 drops it from the index)."""
        cdef PairSlot *pair = &self.pairs[slot]
        if pair.capacity > 0:
            free(pair.holders)
        pair.holders = NULL
        pair.size = 0
        pair.capacity = 0

    # -- the heap -------------------------------------------------------------------------------------------

    cdef inline bint better(self, HeapEntry *e, HeapEntry *f) noexcept nogil:
        """Whether ``e`` comes out of the heap before ``f``: a larger count, or the same count and the
        larger (first, second) by bytes."""
        cdef int c
        cdef PairSlot *p
        cdef PairSlot *q
        if e.count != f.count:
            return e.count > f.count
        p = &self.pairs[e.slot]
        q = &self.pairs[f.slot]
        c = self.compare_tokens(p.first, q.first)
        if c == 0:
            c = self.compare_tokens(p.second, q.second)
        return c > 0

    cdef void _sift_down(self, Py_ssize_t i) noexcept nogil:
        cdef HeapEntry moving = self.heap[i]
        cdef Py_ssize_t child
        while True:
            child = 2 * i + 1
            if child >= self.heap_size:
                break
            if child + 1 < self.heap_size and self.better(&self.heap[child + 1], &self.heap[child]):
                child += 1
            if not self.better(&self.heap[child], &moving):
                break
            self.heap[i] = self.heap[child]
            i = child
        self.heap[i] = moving

    cdef int push(self, int64_t count, int32_t slot) except -1:
        cdef Py_ssize_t i, parent
        cdef HeapEntry entry
        if self.heap_size == self.heap_capacity:
            self.heap = <HeapEntry *>grow(self.heap, 2 * self.heap_capacity * sizeof(HeapEntry))
            self.heap_capacity *= 2
        entry.count = count
        entry.slot = slot
        i = self.heap_size
        self.heap_size += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not self.better(&entry, &self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = entry
        return 0

    cdef void pop(self) noexcept nogil:
        self.heap_size -= 1
        if self.heap_size > 0:
            self.heap[0] = self.heap[self.heap_size]
            self._sift_down(0)

    def select_best_pair(self):
        """The pair to merge next, as ``(bytes, bytes)``, or ``None`` when no pair is left.

        The top entry is only peeked at: once its pair is merged, its count is zero and it is dropped."""
        cdef int64_t live
        cdef int32_t slot
        self._ready()
        while self.heap_size > 0:
            slot = self.heap[0].slot
            live = self.pairs[slot].count
            if live == self.heap[0].count:
                return self.token_list[self.pairs[slot].first], self.token_list[self.pairs[slot].second]
            if live == 0 or live > self.heap[0].count:
                self.pop()  # gone, or a newer entry with the larger count is in the heap
                self.stale_pops += 1
            else:
                self.heap[0].count = live  # the count fell since it was pushed: re-key in place
                self._sift_down(0)
        return None

    def set_aside(self, pair):
        """The pair just selected is never to be merged (``max_token_length``; bpe/training/merge_loop.py): its
        live entry, the heap's top, is popped.  One pushed again when its count rises surfaces and is set
        aside again."""
        cdef PairSlot *top
        first, second = pair
        if self.heap_size > 0:
            top = &self.pairs[self.heap[0].slot]
            if self.token_list[top.first] == first and self.token_list[top.second] == second:
                self.pop()
                return
        raise ValueError(f"set_aside({pair!r}) must follow select_best_pair() returning that pair")

    def count_of(self, pair):
        """The pair's count now (``min_frequency``, continued training): 0 for a token no merge has made here."""
        first, second = pair
        a, b = self.token_ids.get(first), self.token_ids.get(second)
        return 0 if a is None or b is None else self.pair_count(a, b)

    # -- the merge ------------------------------------------------------------------------------------------

    cdef inline int lower(self, int32_t slot, int64_t count) except -1:
        """Lower a pair's count now (a word with several occurrences); checked for zero when the merge ends."""
        self.pairs[slot].count -= count
        if self.num_lowered == self.lowered_capacity:
            self.lowered = <int32_t *>grow(self.lowered, 2 * self.lowered_capacity * sizeof(int32_t))
            self.lowered_capacity *= 2
        self.lowered[self.num_lowered] = slot
        self.num_lowered += 1
        return 0

    cdef inline int gain(self, int32_t slot, int64_t count, uint32_t word) except -1:
        """Raise a pair holding n and list the word under it (the lazy index only grows)."""
        self.pairs[slot].count += count
        return self.add_holder(slot, word)

    cdef inline int32_t gained_slot(self, int32_t first, int32_t second) except -1:
        """The slot of a pair holding n.  When n is fresh, no such pair exists: the slot is made without
        a probe of the table and filed when the merge ends."""
        if WITH_DEFERRED_PROBES and self.fresh:
            return self._new_slot(first, second, False)
        return self.find_or_add(first, second)

    cdef inline Half *half(self, int side, int32_t token, int32_t n) except NULL:
        """The token's half row on ``side``, filled on its first word in this merge: the slot of the pair
        it gains, (token, n) before or (n, token) after, and no loss yet."""
        cdef Half *h = &self.neighbours[token].side[side]
        if h.stamp != self.stamp:
            h.gained = self.gained_slot(token, n) if side == BEFORE else self.gained_slot(n, token)
            h.stamp = self.stamp
            h.lost = 0
            self.touched[side][self.num_touched[side]] = token
            self.num_touched[side] += 1
        return h

    def merge(self, pair):
        """Merge ``pair`` (two tokens' bytes) into one token in every word that holds it, and update the
        counts, the index and the heap.  The bookkeeping of the ids is here, not in Python around the
        call: a Python method per merge cost a fifth of the merge phase on web-like text."""
        self._ready()
        first, second = pair
        self._merge(self.token_ids[first], self.token_ids[second], self.add_token(first + second))

    def merge_ids(self, int32_t a, int32_t b, int32_t n):
        """:meth:`merge` by token ids, the new one from :meth:`add_token` (for tests of the state)."""
        self._ready()
        self._merge(a, b, n)

    cdef int _merge(self, int32_t a, int32_t b, int32_t n) except -1:
        """Merge (a, b) into token n in every word that holds it and update the counts, index and heap."""
        cdef int32_t merged_slot, slot
        cdef uint32_t *listed
        cdef Py_ssize_t size, i, visited = 0
        cdef uint32_t word
        cdef WordHead *head
        cdef int32_t *tokens
        cdef int32_t length, j, k, x, y
        cdef int64_t count
        cdef Half *h
        cdef int side
        if self.broken:
            raise RuntimeError("this v8 merger stopped partway through a merge (interrupted, or an internal "
                               "error), so its state is incomplete: build a new one from the pre-token counts")
        if not (0 <= a < self.num_tokens and 0 <= b < self.num_tokens and 256 <= n < self.num_tokens):
            raise ValueError(f"token ids out of range: ({a}, {b}) -> {n}")
        merged_slot = self.find(a, b)
        if merged_slot < 0 or self.pairs[merged_slot].count == 0:
            return 0  # no word holds the pair: nothing changes (v1 would rewrite nothing)
        self.broken = True  # until the merge is done: an interrupt leaves the state half-updated
        self.stamp += 1
        self.fresh = n > self.newest_made
        if self.fresh:
            self.newest_made = n
        self.num_touched[BEFORE] = self.num_touched[AFTER] = self.num_lowered = self.num_pending = 0
        size = self.pairs[merged_slot].size
        listed = self.pairs[merged_slot].holders  # (the merged pair gains no word: its array stays put)
        # 1. Rewrite every word listed under (a, b).  Two words ahead, its offset is fetched; one word
        #    ahead, its record.
        for i in range(size):
            if WITH_PREFETCH and i + 2 * PREFETCH_AHEAD < size:
                V8_FETCH(&self.offsets[listed[i + 2 * PREFETCH_AHEAD]])
            if WITH_PREFETCH and i + PREFETCH_AHEAD < size:
                V8_FETCH(word_at(self.block, self.offsets[listed[i + PREFETCH_AHEAD]]))
            word = listed[i]
            head = word_at(self.block, self.offsets[word])
            if head.stamp == self.stamp:
                continue  # listed twice (the index keeps a word once per pair it gained)
            head.stamp = self.stamp
            self.visits += 1
            visited += 1
            if (visited & (SIGNAL_EVERY - 1)) == 0:
                self.check_signals()
            tokens = tokens_of(head)
            length = head.length
            j = 0
            while j < length - 1 and not (tokens[j] == a and tokens[j + 1] == b):
                j += 1
            if j >= length - 1:
                self.stale_visits += 1
                continue  # stale: the word lost the pair in an earlier merge
            if self._occurs_after(tokens, length, j + 2, a, b):
                self._rewrite_several(head, word, a, b, n)
                continue
            # One occurrence (nearly every visit): rewrite in place, then add to its neighbours' rows.
            count = head.count
            x = tokens[j - 1] if j > 0 else -1
            y = tokens[j + 2] if j + 2 < length else -1
            tokens[j] = n
            for k in range(j + 1, length - 1):  # a few ids: a loop beats a call to memmove
                tokens[k] = tokens[k + 1]
            head.length = length - 1
            if x >= 0:
                h = self.half(BEFORE, x, n)
                if WITH_DEFERRED_PROBES:
                    h.lost += count
                else:
                    self.lower(self.held_slot(x, a), count)
                self.gain(h.gained, count, word)
            if y >= 0:
                h = self.half(AFTER, y, n)
                if not (a == b and y == b):  # (b, y) is the merged pair itself, as in "aaa": it goes to 0 below
                    if WITH_DEFERRED_PROBES:
                        h.lost += count
                    else:
                        self.lower(self.held_slot(b, y), count)
                self.gain(h.gained, count, word)
        # 2. The rows' losses, one lowered pair per neighbour; the slots made, filed.
        if WITH_DEFERRED_PROBES:
            self._apply_losses(a, b)
        self._file_pending()
        # 3. The merged pair is gone from every word; the pairs that fell to zero free their holders.
        self.pairs[merged_slot].count = 0
        self.release_holders(merged_slot)
        for i in range(self.num_lowered):
            slot = self.lowered[i]
            if self.pairs[slot].count == 0:
                self.release_holders(slot)
        # 4. Each pair that gained is pushed once, with its count now; its older entries are stale.
        for side in (BEFORE, AFTER):
            for i in range(self.num_touched[side]):
                slot = self.neighbours[self.touched[side][i]].side[side].gained
                if self.pairs[slot].count > 0:
                    self.push(self.pairs[slot].count, slot)
        self.broken = False
        return 0

    cdef int _apply_losses(self, int32_t a, int32_t b) except -1:
        """Lower (x, a) and (b, y) once per row filled in this merge.  First every lost pair's slot is
        found, its table bucket fetched a few rows ahead; then every count is lowered, its slot fetched
        ahead: the misses overlap instead of following one another."""
        cdef Py_ssize_t i, k = 0, total = self.num_touched[BEFORE] + self.num_touched[AFTER]
        cdef int32_t first, second, slot
        cdef int64_t lost
        for i in range(total + PREFETCH_AHEAD):
            if WITH_PREFETCH and i < total:  # fetch the bucket of the row PREFETCH_AHEAD ahead
                first, second = self._lost_pair(i, a, b)
                V8_FETCH(&self.table[spread(pair_key(first, second)) & self.table_mask])
            if i >= PREFETCH_AHEAD:
                lost = self._lost_count(i - PREFETCH_AHEAD)
                if lost:
                    first, second = self._lost_pair(i - PREFETCH_AHEAD, a, b)
                    self.work_slots[k] = self.held_slot(first, second)
                    self.work_counts[k] = lost
                    V8_FETCH(&self.pairs[self.work_slots[k]])
                    k += 1
        for i in range(k):
            slot = self.work_slots[i]
            self.pairs[slot].count -= self.work_counts[i]
            if self.pairs[slot].count == 0:
                self.release_holders(slot)
        return 0

    cdef inline (int32_t, int32_t) _lost_pair(self, Py_ssize_t i, int32_t a, int32_t b) noexcept nogil:
        """The pair the i-th row filled in this merge loses: (x, a) for a "before" row, (b, y) for an "after" one."""
        if i < self.num_touched[BEFORE]:
            return self.touched[BEFORE][i], a
        return b, self.touched[AFTER][i - self.num_touched[BEFORE]]

    cdef inline int64_t _lost_count(self, Py_ssize_t i) noexcept nogil:
        if i < self.num_touched[BEFORE]:
            return self.neighbours[self.touched[BEFORE][i]].side[BEFORE].lost
        return self.neighbours[self.touched[AFTER][i - self.num_touched[BEFORE]]].side[AFTER].lost

    cdef inline bint _occurs_after(self, int32_t *tokens, int32_t length, int32_t start, int32_t a,
                                   int32_t b) noexcept nogil:
        cdef int32_t j
        for j in range(start, length - 1):
            if tokens[j] == a and tokens[j + 1] == b:
                return True
        return False

    cdef int _rewrite_several(self, WordHead *head, uint32_t word, int32_t a, int32_t b,
                              int32_t n) except -1:
        """A word with several occurrences (rare): rewrite it left to right without overlap, as v1 does,
        and apply the difference of its pair multisets: every old pair lowered, every new pair raised
        (the pairs holding n through the neighbour rows, so each is one slot and pushed once)."""
        cdef int32_t length = head.length, j, out = 0, first, second
        cdef int32_t *tokens = tokens_of(head)
        cdef int32_t *old
        cdef int64_t count = head.count
        if length > self.scratch_capacity:
            self.scratch = <int32_t *>grow(self.scratch, length * sizeof(int32_t))
            self.scratch_capacity = length
        old = self.scratch
        memcpy(old, tokens, length * sizeof(int32_t))
        j = 0
        while j < length:
            if j + 1 < length and old[j] == a and old[j + 1] == b:
                tokens[out] = n
                j += 2
            else:
                tokens[out] = old[j]
                j += 1
            out += 1
        head.length = out
        for j in range(length - 1):
            first, second = old[j], old[j + 1]
            if not (first == a and second == b):
                self.lower(self.held_slot(first, second), count)
        for j in range(out - 1):
            first, second = tokens[j], tokens[j + 1]
            if second == n:  # (x, n), (n, n) included
                self.gain(self.half(BEFORE, first, n).gained, count, word)
            elif first == n:  # (n, y)
                self.gain(self.half(AFTER, second, n).gained, count, word)
            else:  # a pair the word had before: lowered above, restored here
                self.pairs[self.held_slot(first, second)].count += count
        return 0

    # -- what the Python side reads ---------------------------------------------------------------------------

    @property
    def tokens(self):
        """Each token's bytes, by id."""
        self._ready()
        return self.token_list

    def pair_count(self, int32_t first, int32_t second):
        cdef int32_t slot
        self._ready()
        slot = self.find(first, second)
        return 0 if slot < 0 else self.pairs[slot].count

    def live_pairs(self):
        """``{(first id, second id): count}`` of every pair with a count above zero (``bpe trace``)."""
        cdef int32_t slot
        self._ready()
        return {(self.pairs[slot].first, self.pairs[slot].second): self.pairs[slot].count
                for slot in range(self.num_pairs) if self.pairs[slot].count > 0}

    def words(self):
        """``[(token ids, count)]`` of every word, in build order (``bpe trace``)."""
        cdef Py_ssize_t w
        cdef WordHead *head
        cdef int32_t j
        self._ready()
        result = []
        for w in range(self.num_words):
            head = word_at(self.block, self.offsets[w])
            result.append(([tokens_of(head)[j] for j in range(head.length)], head.count))
        return result

    def holders(self, int32_t first, int32_t second):
        """The word numbers listed under a pair (lazy: may name words that lost it), for ``bpe trace``."""
        cdef int32_t slot
        cdef Py_ssize_t w
        self._ready()
        slot = self.find(first, second)
        if slot < 0:
            return []
        return sorted({self.pairs[slot].holders[w] for w in range(self.pairs[slot].size)})

    @property
    def table_buckets(self):
        """The pair table's buckets (a power of two, at least twice the slots)."""
        self._ready()
        return self.table_mask + 1

    # -- test-only hooks: faults no real input can cause ------------------------------------------------------

    def _fail_next_table_allocation_for_tests(self):
        """Make the next allocation of the pair table fail as malloc would (tests of ``_grow_table``)."""
        self._ready()
        self.fail_next_table_for_tests = True

    def _interrupt_at_next_check_for_tests(self):
        """Make the next check for a signal (every 16,384 words a loop visits) raise KeyboardInterrupt, as a
        Ctrl-C arriving then would (tests of a merge interrupted partway)."""
        self._ready()
        self.interrupt_for_tests = True

    def _unfile_pair_for_tests(self, int32_t first, int32_t second):
        """Make a filed pair unfindable (a broken table, for tests of ``held_slot``): its bucket keeps its
        slot, so other pairs' probes still pass it, but its key becomes one no pair of ids has."""
        cdef uint64_t key = pair_key(first, second)
        cdef size_t i
        self._ready()
        i = spread(key) & self.table_mask
        while self.table[i].slot >= 0:
            if self.table[i].key == key:
                self.table[i].key = pair_key(-1, -1)
                return
            i = (i + 1) & self.table_mask
        raise KeyError((first, second))

    @property
    def heap_entries(self):
        self._ready()
        return self.heap_size

    @property
    def pair_slots(self):
        """The slots made so far, a pair's slot kept when its count falls to zero: the table holds them at
        most half full (tests of its growth)."""
        self._ready()
        return self.num_pairs

    def memory_bytes(self):
        """The bytes of C memory the state holds now: every block it has allocated and not yet freed, each
        counted at its allocated size (a block grown by doubling has room to spare)."""
        cdef int64_t total = 0
        cdef int32_t slot
        self._ready()
        # words: the records and their offsets
        total += max(self.block_units, 1) * 16 + max(self.num_words, 1) * sizeof(uint32_t)
        # tokens: their bytes, where each starts and its length, the neighbour rows, the rows touched
        # in a merge (two sides), and the lost pairs' slots and counts (two per row)
        total += self.token_bytes_capacity
        total += self.token_capacity * (sizeof(int64_t) + sizeof(int32_t) + sizeof(NeighbourRow)
                                        + 2 * sizeof(int32_t) + 2 * (sizeof(int32_t) + sizeof(int64_t)))
        # pairs: the slots, the table, the build's block of holders, and each pair's own array of them
        total += self.pair_capacity * sizeof(PairSlot) + (self.table_mask + 1) * sizeof(TableEntry)
        total += self.build_holders_size * sizeof(uint32_t)
        for slot in range(self.num_pairs):
            if self.pairs[slot].capacity > 0:
                total += self.pairs[slot].capacity * sizeof(uint32_t)
        # the heap, and the lists a merge keeps: slots made, slots lowered, a word's old tokens
        total += self.heap_capacity * sizeof(HeapEntry)
        total += (self.pending_capacity + self.lowered_capacity + self.scratch_capacity) * sizeof(int32_t)
        return total


# --- helpers ----------------------------------------------------------------------------------------------

cpdef int32_t checked_word_length(Py_ssize_t length) except -1:
    """A pre-token's length in bytes as a word's 32-bit length, or a clear error past 2**31-1 (the cast
    alone would wrap it negative and the word would vanish from the counts).  Public for its tests."""
    if length > INT32_MAX:
        raise OverflowError(f"a pre-token of {length} bytes is longer than v8's limit of 2**31-1 bytes")
    return <int32_t>length

cpdef int32_t doubled_capacity(int32_t capacity) except -1:
    """Twice a 32-bit capacity (pair slots, a pair's holders), or a clear error where twice would pass
    2**31-1 and wrap negative.  Public for its tests."""
    if capacity > INT32_MAX // 2:
        raise OverflowError(f"v8 cannot grow past {capacity} entries: twice that passes 2**31-1")
    return 2 * capacity

cdef inline int64_t checked_count(object value) except? -1:
    """A pre-token's count as a positive 64-bit integer, or a clear error."""
    cdef int64_t count
    try:
        count = PyLong_AsLongLong(value)
    except OverflowError:
        raise OverflowError(f"a pre-token's count does not fit in 64 bits: {value!r}") from None
    if count <= 0:
        raise ValueError(f"a pre-token's count must be positive, got {value!r}")
    return count

cdef int source_from_arrays(WordSource *source, const unsigned char[::1] keys, const int64_t[::1] ends,
                            const int64_t[::1] counts) except -1:
    """Point ``source`` at the three arrays, once their shapes agree (each entry is checked as it is read)."""
    if ends.shape[0] != counts.shape[0]:
        raise ValueError(f"{ends.shape[0]} ends but {counts.shape[0]} counts")
    if ends.shape[0] and ends[ends.shape[0] - 1] != keys.shape[0]:
        raise ValueError("the last pre-token does not end where the key bytes do")
    source.counts = NULL
    source.keys = &keys[0] if keys.shape[0] else NULL
    source.ends = &ends[0] if ends.shape[0] else NULL
    source.word_counts = &counts[0] if counts.shape[0] else NULL
    source.size = ends.shape[0]
    return 0


cdef inline bint next_word(WordSource *source, Py_ssize_t *position, const unsigned char **text,
                           Py_ssize_t *length, int64_t *count) except -1:
    """The pre-token at ``*position`` (then moved on): its bytes, length and count; False at the end.
    A dict's key must be bytes and its count a positive 64-bit int; an array's entry must not end
    before the one before it, nor have a count below 1."""
    cdef PyObject *key
    cdef PyObject *value
    cdef int64_t start
    if source.counts != NULL:
        if not PyDict_Next(<object>source.counts, position, &key, &value):
            return False
        if not PyBytes_Check(<object>key):
            raise TypeError(f"pre-tokens must be bytes, got {type(<object>key).__name__}")
        text[0] = <const unsigned char *>PyBytes_AS_STRING(<object>key)
        length[0] = PyBytes_GET_SIZE(<object>key)
        count[0] = checked_count(<object>value)
        return True
    if position[0] >= source.size:
        return False
    start = source.ends[position[0] - 1] if position[0] else 0
    if source.ends[position[0]] <= start:
        raise ValueError(f"pre-token {position[0]} ends at {source.ends[position[0]]}, not after {start}")
    if source.word_counts[position[0]] <= 0:
        raise ValueError(f"a pre-token's count must be positive, got {source.word_counts[position[0]]}")
    text[0] = source.keys + start
    length[0] = source.ends[position[0]] - start
    count[0] = source.word_counts[position[0]]
    position[0] += 1
    return True


cdef inline size_t record_units(Py_ssize_t length) noexcept nogil:
    """16-byte units of a word's record: the head and ``length`` int32 ids, rounded up."""
    return 1 + (<size_t>length * 4 + 15) // 16

cdef inline void *check(void *pointer) except NULL:
    if pointer == NULL:
        raise MemoryError()
    return pointer

cdef inline void *grow(void *pointer, size_t size) except NULL:
    """realloc, keeping the old block on failure (then freed with its owner)."""
    cdef void *larger = realloc(pointer, size)
    if larger == NULL:
        raise MemoryError()
    return larger
