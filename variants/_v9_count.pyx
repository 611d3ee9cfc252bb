# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""v9's compiled counter: the GPT-2 pattern as a scanner, its pre-tokens counted in C tables.

Unlike v8's counter (v6's fast pre-tokenizer in a process pool), nothing here is a Python object
while the text is counted, and no regex engine runs.  Each structure replaces one of v8's:

* the **scanner** (``scan_piece``, in ``_gpt2_scanner.pxi``, which the compiled encoder includes too)
  replaces ``regex.findall`` (and ``re``'s ASCII twin): the GPT-2 pattern is six alternatives over
  three character classes, so one pass over the UTF-8 bytes, one character class looked up per
  character, decides every pre-token with no backtracking (GPT-4's and GPT-4o's patterns have scanners
  of their own, ``_scanners.pxi``, one chosen when the counter is made; a custom pattern's pre-tokens
  come from ``regex`` itself, on the same threads, through ``add_tokens``);
* the **tables** (``Table``) replace a ``Counter`` per chunk: open addressing on a 32-bit hash of the
  bytes, a short key kept in its slot, a long one in an arena; one table per thread, so the threads
  share nothing while they count;
* the **partitioned merge** (``merge_part``) replaces pickling each worker's counts to the parent and
  summing dicts: thread ``p`` gathers the keys whose hash falls in part ``p`` from every table into a
  table of its own, so the parts are merged at once, in parallel, and no key is in two parts;
* the **arrays** (``write_part``) replace the final ``dict[bytes, int]``: every distinct pre-token's
  bytes end to end, where each ends, and its count, which v8's merge state reads as they are.

Every function below that runs without the GIL reports failure by its return value (an allocation
that failed, bytes that are not UTF-8, a stop asked for); the Python methods turn each into one
exception.
"""

from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.long cimport PyLong_AsSsize_t
from cpython.unicode cimport PyUnicode_AsUTF8AndSize

cdef extern from "_hints.h":
    void prefetch "BPE_PREFETCH"(const void *p) nogil

cdef extern from *:
    """
    /* Zeros written into a fresh block, a store per page through a volatile pointer first: a compiler
       may turn malloc and memset(0) back into calloc, whose pages are mapped on first use (see
       new_slots), and it may not drop a volatile store. */
    #include <string.h>
    static void v9_written_zeros(void *p, size_t size) {
        volatile char *page = (volatile char *)p;
        size_t i;
        for (i = 0; i < size; i += 4096) page[i] = 0;
        memset(p, 0, size);
    }
    """
    void written_zeros "v9_written_zeros"(void *p, size_t size) nogil

cdef extern from *:
    """
    /* A block of slots aligned to a cache line, so that no 32-byte slot spans two lines (malloc's large
       blocks start 16 bytes into a page: every other slot would).  ``huge``: on 2 MiB pages where the
       system has them (Linux's transparent huge pages, asked for with madvise), aligned to a page, then
       advised; the advice may be refused (THP set to "never") and the block is then on 4 KiB pages.
       Elsewhere (macOS) it is aligned to the line alone. */
    #include <stdlib.h>
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    static void *v9_slot_block(size_t size, int huge) {
        void *p = NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (huge) {
            if (posix_memalign(&p, (size_t)2 << 20, size) != 0) return NULL;
            madvise(p, size, MADV_HUGEPAGE);
            return p;
        }
    #endif
        (void)huge;
        if (posix_memalign(&p, 64, size) != 0) return NULL;
        return p;
    }
    """
    void *slot_block "v9_slot_block"(size_t size, int huge) nogil

include "_scanners.pxi"

cdef enum:
    INLINE = 16                  # keys this long or shorter live in their slot
    ARENA_BLOCK = 1 << 20        # the arena's blocks; a key of more than an eighth of one gets its own
    AHEAD = 8                    # pre-tokens hashed and their slots fetched before the first is added
    HUGE_FROM = 256 << 20        # a thread's table of this many bytes or more is put on 2 MiB pages


# --- The tables: pre-token bytes -> count --------------------------------------------------------------
# Open addressing with linear probing, at most two thirds full.  A slot is 32 bytes, two to a cache
# line: the count, the hash (compared before any key byte), the length, and the key itself when it has
# 16 bytes or fewer (most pre-tokens of any text: a word and its space), else a pointer to it in the
# arena.  The arena is a list of 1 MiB blocks that never move, so a pointer into one stays good while
# the table grows, and across the merge of the tables.  Why not a table of pointers to keys, as a
# Python dict is: every probe would then be a second miss, to the key, where here the slot holds it.
# 2 MiB pages (madvise) for a thread's table of 256 MB or more only: timed on 100 MB of web text, they made
# counting slower, as Linux compacts memory to find them when each growing table is first touched; on
# 1 GB, asked for tables of 64 MB and more, they gained nothing in counting and slowed the merge of the
# tables, whose parts are left on 4 KiB pages.  But at 11.9 GB, where each thread's table holds gigabytes,
# the fetches ahead (below) no longer hide the misses: a probe misses the TLB and its page walk misses the
# cache, and the counting took 1.7x as long on 4 KiB pages (new_slots).

ctypedef struct Slot:
    int64_t count            # 0: an empty slot
    uint32_t hash
    uint32_t length
    uint8_t key[INLINE]      # the key, or (longer than INLINE) a pointer to it, its first 8 bytes

ctypedef struct Table:
    Slot *slots
    size_t mask              # slots - 1 (a power of two)
    uint32_t spread          # a key's home slot: the top bits of (hash x spread), 32 bits (home_of)
    int shift                # 32 - log2(slots)
    size_t used
    int64_t total            # pre-tokens counted, all of them
    uint8_t **blocks         # the arena: its blocks, the last one being filled
    size_t num_blocks, blocks_capacity
    size_t block_used, block_size
    bint copy_keys           # a per-thread table copies long keys into its arena; a merged part points


cdef inline uint32_t hash_bytes(const uint8_t *p, size_t n) noexcept nogil:
    """A 32-bit hash of the bytes: 8 bytes at a time, each mixed by a rotate, xor and multiply (as
    FxHash), then one final mix so that the low bits, which pick the slot, depend on every byte."""
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ n, w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (((h << 5) | (h >> 59)) ^ w) * 0x517CC1B727220A95ULL
        p += 8
        n -= 8
    if n:
        w = 0
        memcpy(&w, p, n)
        h = (((h << 5) | (h >> 59)) ^ w) * 0x517CC1B727220A95ULL
    h ^= h >> 31
    h *= 0xBF58476D1CE4E5B9ULL
    h ^= h >> 32
    return <uint32_t>h


cdef inline size_t home_of(const Table *t, uint32_t h) noexcept nogil:
    """Where a key's probe starts: the hash's top bits, not its low ones.  So in a thread's table (spread
    1) the keys of one part of the merge (a range of hashes) sit in one range of slots, and the part's
    thread reads that range alone.  A part's own table holds one range of hashes, so it first spreads
    them over all 32 bits (spread: the number of parts)."""
    return <uint32_t>(h * t.spread) >> t.shift


cdef inline int log2_of(size_t capacity) noexcept nogil:
    cdef int bits = 0
    while (<size_t>1 << bits) < capacity:
        bits += 1
    return bits


cdef inline const uint8_t *key_of(const Slot *s) noexcept nogil:
    cdef const uint8_t *p
    if s.length <= INLINE:
        return s.key
    memcpy(&p, s.key, sizeof(p))
    return p


cdef Slot *new_slots(size_t capacity, bint probed=False) noexcept nogil:
    """``capacity`` empty slots, written now: not ``calloc``.  calloc leaves a large block's pages
    unmapped, a first read of each (a probe) maps the shared zero page, and the first write after it
    is a copy-on-write fault that flushes the TLB of every core running one of this process's
    threads.  With two threads counting, those flushes were half the kernel's time and made two
    threads no faster than one (measured on 100 MB of web-like text); zeros written at once are
    plain faults, one per page, with no flush.

    ``probed``: a thread's table, probed at random for every pre-token, on 2 MiB pages once it holds
    ``HUGE_FROM`` bytes (:c:func:`v9_slot_block`).  On 4 KiB pages a probe of a table of gigabytes
    misses the TLB as well as the cache, and the page walk misses too: on 11.9 GB of web-like text the
    counting took 101 s on 4 KiB pages and 60 s on 2 MiB ones (docs/v10.md).  Smaller tables gain
    nothing, and on 100 MB lost time to the kernel compacting memory to find the pages; the parts,
    written once and read once, are left on 4 KiB pages."""
    cdef Slot *slots
    cdef size_t size = capacity * sizeof(Slot)
    if capacity > (<size_t>1 << 40) // sizeof(Slot):
        return NULL
    slots = <Slot *>slot_block(size, probed and size >= HUGE_FROM)
    if slots != NULL:
        written_zeros(slots, capacity * sizeof(Slot))
    return slots


cdef int table_init(Table *t, size_t capacity, bint copy_keys, uint32_t spread) noexcept nogil:
    """An empty table of ``capacity`` slots (a power of two, at most 2**32: a home is 32 bits of the
    hash); NO_MEMORY when it cannot be had."""
    if capacity > (<size_t>1 << 32):
        return NO_MEMORY
    t.slots = new_slots(capacity, copy_keys)  # a thread's own table copies its keys: it is the one probed
    if t.slots == NULL:
        return NO_MEMORY
    t.mask = capacity - 1
    t.spread = spread
    t.shift = 32 - log2_of(capacity)
    t.used = 0
    t.total = 0
    t.blocks = NULL
    t.num_blocks = t.blocks_capacity = 0
    t.block_used = t.block_size = 0
    t.copy_keys = copy_keys
    return DONE


cdef void table_free(Table *t) noexcept nogil:
    cdef size_t i
    for i in range(t.num_blocks):
        free(t.blocks[i])
    free(t.blocks)
    free(t.slots)
    t.slots = NULL
    t.blocks = NULL
    t.num_blocks = t.blocks_capacity = 0
    t.mask = t.used = 0


cdef int table_grow(Table *t) noexcept nogil:
    """Twice the slots, every key moved by its kept hash.  The new array is had before the old one is
    let go, so a table that cannot grow is still whole."""
    cdef size_t capacity = (t.mask + 1) * 2, i, j
    cdef Slot *slots
    if capacity > (<size_t>1 << 32):
        return NO_MEMORY
    slots = new_slots(capacity, t.copy_keys)
    if slots == NULL:
        return NO_MEMORY
    t.shift -= 1  # one more bit of the hash: a key's home moves from i to 2i or 2i + 1
    for i in range(t.mask + 1):
        if t.slots[i].count != 0:
            j = home_of(t, t.slots[i].hash)
            while slots[j].count != 0:
                j = (j + 1) & (capacity - 1)
            slots[j] = t.slots[i]
    free(t.slots)
    t.slots = slots
    t.mask = capacity - 1
    return DONE


cdef const uint8_t *arena_copy(Table *t, const uint8_t *key, size_t length) noexcept nogil:
    """``key`` copied into the arena, or NULL when memory ran out."""
    cdef uint8_t **blocks
    cdef uint8_t *block
    cdef size_t size
    if t.num_blocks == t.blocks_capacity:
        size = t.blocks_capacity * 2 if t.blocks_capacity else 16
        blocks = <uint8_t **>malloc(size * sizeof(uint8_t *))
        if blocks == NULL:
            return NULL
        if t.num_blocks:
            memcpy(blocks, t.blocks, t.num_blocks * sizeof(uint8_t *))
        free(t.blocks)
        t.blocks = blocks
        t.blocks_capacity = size
    if length > ARENA_BLOCK // 8:  # a long key gets a block of its own, listed before the one being filled
        block = <uint8_t *>malloc(length)
        if block == NULL:
            return NULL
        memcpy(block, key, length)
        if t.num_blocks:
            t.blocks[t.num_blocks] = t.blocks[t.num_blocks - 1]
            t.blocks[t.num_blocks - 1] = block
        else:
            t.blocks[0] = block
            t.block_used = t.block_size = 0  # no block being filled yet
        t.num_blocks += 1
        return block
    if t.num_blocks == 0 or t.block_size == 0 or t.block_used + length > t.block_size:
        block = <uint8_t *>malloc(ARENA_BLOCK)
        if block == NULL:
            return NULL
        t.blocks[t.num_blocks] = block
        t.num_blocks += 1
        t.block_used = 0
        t.block_size = ARENA_BLOCK
    block = t.blocks[t.num_blocks - 1] + t.block_used
    memcpy(block, key, length)
    t.block_used += length
    return block


cdef int table_add(Table *t, const uint8_t *key, size_t length, uint32_t h, int64_t count) noexcept nogil:
    """``count`` more of ``key``: DONE, or NO_MEMORY (the table is unchanged)."""
    cdef size_t i = home_of(t, h)
    cdef Slot *s
    cdef const uint8_t *kept
    while True:
        s = &t.slots[i]
        if s.count == 0:
            break
        if s.hash == h and s.length == length and memcmp(key_of(s), key, length) == 0:
            s.count += count
            return DONE
        i = (i + 1) & t.mask
    if (t.used + 1) * 3 > (t.mask + 1) * 2:  # a new key would fill it past two thirds: grow first
        if table_grow(t) != DONE:
            return NO_MEMORY
        i = home_of(t, h)
        while t.slots[i].count != 0:
            i = (i + 1) & t.mask
        s = &t.slots[i]
    if length <= INLINE:
        memcpy(s.key, key, length)
    else:
        kept = arena_copy(t, key, length) if t.copy_keys else key
        if kept == NULL:
            return NO_MEMORY
        memcpy(s.key, &kept, sizeof(kept))
    s.hash = h
    s.length = <uint32_t>length
    s.count = count
    t.used += 1
    return DONE


# --- Adding: a few pre-tokens in flight ----------------------------------------------------------------
# Most pre-tokens of web text are frequent words, whose slots stay in the cache; the rest are rare, and
# each of those is a miss to memory (the table of 1.2 million keys of 100 MB of web text is 128 MB).
# Added at once, each miss would stall the scanner.  Instead a pre-token's slot is fetched as soon as the
# pre-token is found, and it is added AHEAD pre-tokens later: by then its line has arrived, and up to
# AHEAD misses are on their way at once.  (v8's merge fetches its words ahead the same way.)

ctypedef struct Pending:
    const uint8_t *key
    uint32_t length
    uint32_t hash

ctypedef struct InFlight:
    Pending items[AHEAD]
    int next                 # where the next pre-token goes, and the oldest one waits
    int size


cdef inline int add(Table *t, InFlight *flight, const uint8_t *key, Py_ssize_t length) noexcept nogil:
    """One more of ``key``, added once AHEAD later pre-tokens are found: DONE, NO_MEMORY, or TOO_LONG
    for a pre-token v8's merge cannot hold."""
    cdef Pending *item = &flight.items[flight.next]
    cdef uint32_t h
    cdef int result = DONE
    if length > MAX_TOKEN:
        return TOO_LONG
    h = hash_bytes(key, <size_t>length)
    prefetch(&t.slots[home_of(t, h)])
    if flight.size == AHEAD:  # the oldest pre-token, whose slot was fetched AHEAD pre-tokens ago
        result = table_add(t, item.key, item.length, item.hash, 1)
    else:
        flight.size += 1
    item.key, item.length, item.hash = key, <uint32_t>length, h
    flight.next = (flight.next + 1) % AHEAD
    t.total += 1
    return result


ctypedef struct CountSink:
    Table *table
    InFlight flight


cdef int count_one(void *sink, const uint8_t *pretoken, Py_ssize_t length) noexcept nogil:
    """The scanner's ``Emit`` for counting: one more of the pre-token, through the pre-tokens in flight."""
    cdef CountSink *counts = <CountSink *>sink
    return add(counts.table, &counts.flight, pretoken, length)


cdef int land(Table *t, InFlight *flight) noexcept nogil:
    """Add the pre-tokens still in flight (before the text they point into is let go)."""
    cdef int k, result
    for k in range(flight.size):
        result = table_add(t, flight.items[k].key, flight.items[k].length, flight.items[k].hash, 1)
        if result != DONE:
            return result
    flight.size = flight.next = 0
    return DONE


#: What each state of a part is (``Counter.part_state``).
cdef enum:
    PART_OPEN = 0            # not merged: its keys are in the threads' tables
    PART_MERGING = 1         # merge_part running
    PART_MERGED = 2          # merged: write_part may read it
cdef inline Py_ssize_t utf8_offset(const uint8_t *data, Py_ssize_t size, bint ascii, Py_ssize_t byte,
                                    Py_ssize_t index, Py_ssize_t target) noexcept nogil:
    """The byte offset of character ``target`` in ``data`` (a text's UTF-8, ``size`` bytes), walking from
    character ``index`` at byte ``byte``: one step per character, a character's length read off its first
    byte (Python made these bytes: they are UTF-8); in an ASCII text, characters are bytes.  Never past
    ``size``."""
    if ascii:
        byte += target - index
        return byte if byte <= size else size
    while index < target and byte < size:
        byte += 1 if data[byte] < 0x80 else 2 if data[byte] < 0xE0 else 3 if data[byte] < 0xF0 else 4
        index += 1
    return byte if byte <= size else size


cdef class Counter:
    """One table per thread, the class tables and the special tokens; ``count`` counts a span of a buffer
    into a thread's table without the GIL, ``merge_part`` and ``write_part`` make the arrays.

    The threads themselves are Python's (``variants/v9_counting_compiled.py`` starts them): each call
    releases the GIL for its whole span, so N threads count on N cores with no process, no pickling
    and no OpenMP, which macOS's clang lacks.

    Its life runs one way, and a call out of turn is a ``RuntimeError``, never a read of freed or unmade
    tables: ``count`` and ``add_counts`` until the first ``merge_part`` (with one table, the part takes the
    table over); each part merged once, and written (``write_part``) only once merged; after ``release()``,
    nothing but ``release()`` and ``stop()``; ``release()`` refused while a call runs on another thread.
    These checks run with the GIL held, before a call lets it go, so two threads cannot both pass one."""

    cdef Classes classes
    cdef bytes stage1, stage2                 # kept alive: classes points into them
    cdef Folds folds                          # the contractions' letters in any case (cl100k, o200k)
    cdef readonly int pattern                 # which scanner (_scanners.pxi): GPT-2's unless told
    cdef Table *tables
    cdef Table *parts
    cdef int num_tables
    cdef int stop_flag
    cdef list special                         # the tokens' bytes, longest first (kept alive)
    cdef const uint8_t **tokens
    cdef Py_ssize_t *lengths
    cdef uint8_t starts[256]
    cdef int one_start, num_special
    cdef uint8_t *states                      # each part's PART_OPEN, PART_MERGING or PART_MERGED
    cdef bint released, merging               # release() called; a merge_part called (counting is over)
    cdef int running                          # calls under way now that read or write the tables

    def __cinit__(self, int threads, special_tokens, bytes stage1, bytes stage2, int spread=1, int pattern=0,
                  folds=()):
        """``spread``: for one table that will hold one part, a range of hashes (``add_counts`` of a part: a
        cluster's sum), an odd multiplier, so that its keys' homes cover every slot (``home_of``); with
        several tables it must be 1, as ``merge_part`` reads each part's range of slots.  ``pattern``: the
        scanner's number (``bpe.split.patterns.SCANNERS``), ``stage1`` and ``stage2`` that pattern's
        tables and ``folds`` its contractions' letters (``scanner_tables``, ``contraction_folds``)."""
        cdef int i, code
        self.tables = NULL
        self.parts = NULL
        self.tokens = NULL
        self.lengths = NULL
        self.states = NULL
        self.num_tables = 0
        self.released = self.merging = False
        self.running = 0
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        if spread < 1 or (threads > 1 and spread != 1):
            raise ValueError(f"spread must be 1 with several tables, and at least 1, got {spread}")
        if len(stage1) != 2 * (0x110000 >> 8) or len(stage2) % 256 != 0:
            raise ValueError("the class tables have the wrong size")
        self.stage1, self.stage2 = stage1, stage2
        self.classes.stage1 = <const uint16_t *><const char *>self.stage1
        self.classes.stage2 = <const uint8_t *><const char *>self.stage2
        for i in range(0x110000 >> 8):  # every row a stage-1 entry names must exist
            if self.classes.stage1[i] * 256 >= len(stage2):
                raise ValueError("the class tables disagree")
        for i in range(128):
            self.classes.ascii[i] = self.classes.stage2[(<size_t>self.classes.stage1[0] << 8) | i]
        set_up_pattern(&self.classes, &self.folds, pattern, folds)
        self.pattern = pattern
        self.special = sorted((t.encode("utf-8") for t in special_tokens), key=len, reverse=True)
        if self.special:
            self.tokens = <const uint8_t **>malloc(len(self.special) * sizeof(uint8_t *))
            self.lengths = <Py_ssize_t *>malloc(len(self.special) * sizeof(Py_ssize_t))
            if self.tokens == NULL or self.lengths == NULL:
                raise MemoryError()
        for i in range(256):
            self.starts[i] = 0
        for i, token in enumerate(self.special):
            if len(token) == 0:
                raise ValueError("special tokens must not be empty")
            self.tokens[i] = <const uint8_t *><const char *>token
            self.lengths[i] = len(token)
            self.starts[self.tokens[i][0]] = 1
        self.num_special = len(self.special)
        self.one_start = -1
        code = 0
        for i in range(256):
            code += self.starts[i]
        if code == 1:  # every token starts with the same byte: memchr finds the candidates
            self.one_start = self.tokens[0][0]
        self.tables = <Table *>calloc(threads, sizeof(Table))
        self.parts = <Table *>calloc(threads, sizeof(Table))
        self.states = <uint8_t *>calloc(threads, sizeof(uint8_t))
        if self.tables == NULL or self.parts == NULL or self.states == NULL:
            raise MemoryError()
        self.num_tables = threads
        for i in range(threads):
            if table_init(&self.tables[i], 1 << 12, True, <uint32_t>spread) != DONE:
                raise MemoryError()
        self.stop_flag = 0

    def __dealloc__(self):
        self._free_tables()
        free(self.tables)
        free(self.parts)
        free(self.states)
        free(self.tokens)
        free(self.lengths)

    cdef void _free_tables(self) noexcept:
        cdef int i
        if self.tables != NULL:
            for i in range(self.num_tables):
                table_free(&self.tables[i])
        if self.parts != NULL:
            for i in range(self.num_tables):
                table_free(&self.parts[i])
        self.released = True

    def release(self):
        """Let go of every table (the arrays written by ``write_part`` are the caller's); every later call but
        ``release()`` and ``stop()`` is refused.  Refused itself while a call runs on another thread."""
        if self.running:
            raise RuntimeError(f"this Counter is in use ({self.running} call(s) under way on other threads): "
                               "release it once they have returned")
        self._free_tables()

    cdef int _usable(self) except -1:
        if self.released:
            raise RuntimeError("this Counter was released (release()): its tables are gone; make a new Counter")
        return 0

    cdef int _countable(self, int thread) except -1:
        self._usable()
        if self.merging:
            raise RuntimeError("this Counter's tables are being merged into parts (merge_part): counting is over; "
                               "make a new Counter to count more")
        if thread < 0 or thread >= self.num_tables:
            raise IndexError(f"no table {thread}: {self.num_tables} threads")
        return 0

    def part_state(self, int part):
        """``"open"`` (its keys still in the threads' tables), ``"merging"`` or ``"merged"``."""
        self._usable()
        if part < 0 or part >= self.num_tables:
            raise IndexError(f"no part {part}")
        return ("open", "merging", "merged")[self.states[part]]

    def stop(self):
        """Ask every ``count`` running now to return (within ``CHECK_EVERY`` bytes): Ctrl-C, or a failure
        in another thread."""
        V9_STORE(&self.stop_flag, 1)

    def count(self, int thread, const uint8_t[::1] data):
        """Count the pre-tokens of ``data`` (a safely cut span of the text) into table ``thread``.

        Returns -1, or the offset in ``data`` of the first byte that is not UTF-8 (the table may then
        hold part of the span: the caller gives up, or checks the span first with ``first_invalid``).
        Raises ``MemoryError``, ``KeyboardInterrupt`` (after ``stop()``) or a ``ValueError`` for a
        pre-token of 2 GiB or more."""
        cdef Py_ssize_t bad = -1, n = data.shape[0]
        cdef int result = DONE
        cdef const uint8_t *p
        cdef CountSink sink
        self._countable(thread)
        if n == 0:
            return -1
        sink.table = &self.tables[thread]
        sink.flight.size = sink.flight.next = 0
        p = &data[0]
        self.running += 1
        try:
            self._count(p, n, &sink, &result, &bad)
        finally:
            self.running -= 1
        return self._outcome(result, bad)

    cdef void _count(self, const uint8_t *p, Py_ssize_t n, CountSink *sink, int *outcome,
                     Py_ssize_t *bad_at) noexcept:
        """``count``'s loop, without the GIL: the result into ``outcome``, the first bad byte into ``bad_at``."""
        cdef Py_ssize_t bad = -1, i = 0, end, found_length = 0
        cdef int result = DONE
        with nogil:
            while True:
                if V9_LOAD(&self.stop_flag):  # between pieces too: a text of short documents may have no long one
                    result = STOPPED
                    break
                end = find_special(p, i, n, self.tokens, self.lengths, self.num_special, self.starts,
                                   self.one_start, &found_length)
                result = scan_with(self.pattern, &self.classes, &self.folds, p + i, end - i, count_one, sink,
                                   &self.stop_flag, &bad)
                if result != DONE:
                    if result == BAD_UTF8:
                        bad += i
                    break
                if end >= n:
                    result = land(sink.table, &sink.flight)
                    break
                i = end + found_length
        outcome[0] = result
        bad_at[0] = bad

    def add_tokens(self, int thread, list tokens):
        """Count each of ``tokens`` once more in table ``thread``: a ``str`` as its UTF-8, a ``bytes`` as it is.
        The pre-tokens of a custom pattern, which ``regex`` found on this thread (v9's Python side): so any
        pattern counts into the same tables, on threads, with nothing pickled.

        Each token's bytes are found with the GIL held, in C (a ``str`` keeps its UTF-8, made once, and an
        ASCII one is its own), then all are hashed and added without it, through the pre-tokens in flight.
        Raises ``TypeError`` for a token of another type, ``UnicodeEncodeError`` for a lone surrogate (before
        anything is added), ``MemoryError``, ``KeyboardInterrupt`` after ``stop()``, and ``ValueError`` for a
        token of 2 GiB or more."""
        cdef Py_ssize_t k, n = len(tokens), size = 0
        cdef const char *data
        cdef Pending *items
        cdef InFlight flight
        cdef int result = DONE
        cdef Table *t
        cdef object token
        self._countable(thread)
        if n == 0:
            return
        if <size_t>n > (<size_t>-1) // sizeof(Pending):
            raise MemoryError()
        items = <Pending *>malloc(<size_t>n * sizeof(Pending))
        if items == NULL:
            raise MemoryError()
        try:
            for k in range(n):  # the list is not changed meanwhile: no Python code runs in this loop
                token = tokens[k]
                if type(token) is str:
                    data = PyUnicode_AsUTF8AndSize(token, &size)
                elif type(token) is bytes:
                    data, size = PyBytes_AS_STRING(token), PyBytes_GET_SIZE(token)
                else:
                    raise TypeError(f"a pre-token is str or bytes, not {type(token).__name__}")
                if size > MAX_TOKEN:
                    result = TOO_LONG
                    break
                items[k].key = <const uint8_t *>data
                items[k].length = <uint32_t>size
            t = &self.tables[thread]
            flight.size = flight.next = 0
            self.running += 1  # release() refuses while a call is under way
            try:
                with nogil:
                    k = 0
                    while result == DONE and k < n:
                        if (k & 0xFFFF) == 0 and V9_LOAD(&self.stop_flag):
                            result = STOPPED
                            break
                        result = add(t, &flight, items[k].key, items[k].length)
                        k += 1
                    if result == DONE:
                        result = land(t, &flight)  # the tokens' bytes live while the list does: until we return
            finally:
                self.running -= 1
        finally:
            free(items)
        self._outcome(result, -1)

    def add_spans(self, int thread, str text, Py_ssize_t start, list ends, Py_ssize_t at_char=0,
                  Py_ssize_t at_byte=0):
        """Count the pre-tokens ``text[start:ends[0]]``, ``text[ends[0]:ends[1]]``, ... once more in table
        ``thread``, as UTF-8: a custom pattern's next matches, end to end, by their ends in characters (a
        ``regex`` match's ``ends(1)``).  Cheaper under the GIL than ``add_tokens``: no ``str`` per token, one
        ``int`` each, read in C; the text's UTF-8 is made once (an ASCII text is its own), and the walk from
        characters to bytes, the hashing and the adding run without the GIL.

        ``(at_char, at_byte)``: a character offset at or before ``start`` and its byte offset in the text's
        UTF-8, so that a text matched in several batches is walked once (the start: ``0, 0``).  Returns
        ``(added, end_char, end_byte)``: the tokens added, which are fewer than ``ends`` where the next is
        empty (a pattern's empty match: the caller takes over there, findall having rules of its own for
        those), and where the last one added ends (``start``'s offsets where none was).  Raises
        ``ValueError`` for offsets that go back or past the text, ``MemoryError``, ``KeyboardInterrupt``
        after ``stop()``."""
        cdef Py_ssize_t k, n = len(ends), chars = len(text), size = 0, c, b, e, next_b, added = 0
        cdef const uint8_t *data
        cdef Py_ssize_t *offsets
        cdef bint ascii = text.isascii()
        cdef InFlight flight
        cdef int result = DONE
        cdef Table *t
        self._countable(thread)
        data = <const uint8_t *>PyUnicode_AsUTF8AndSize(text, &size)
        if not (0 <= at_char <= start <= chars and 0 <= at_byte <= size):
            raise ValueError(f"offsets out of order: {at_char}, {start} of {chars} characters; byte {at_byte}")
        if <size_t>n > (<size_t>-1) // sizeof(Py_ssize_t):
            raise MemoryError()
        offsets = <Py_ssize_t *>malloc(<size_t>(n if n else 1) * sizeof(Py_ssize_t))
        if offsets == NULL:
            raise MemoryError()
        try:
            c = start
            for k in range(n):  # every end checked before anything is added
                e = PyLong_AsSsize_t(ends[k])
                if e < c or e > chars:
                    raise ValueError(f"end {k}, {e}, goes back or past the text ({chars} characters)")
                offsets[k] = c = e
            t = &self.tables[thread]
            flight.size = flight.next = 0
            self.running += 1  # release() refuses while a call is under way
            try:
                with nogil:
                    c, b = at_char, at_byte
                    b = utf8_offset(data, size, ascii, b, c, start)
                    c = start
                    while added < n:
                        e = offsets[added]
                        if e == c:  # an empty token
                            break
                        if (added & 0xFFFF) == 0 and V9_LOAD(&self.stop_flag):
                            result = STOPPED
                            break
                        next_b = utf8_offset(data, size, ascii, b, c, e)
                        result = add(t, &flight, data + b, next_b - b)
                        if result != DONE:
                            break
                        c, b = e, next_b
                        added += 1
                    if result == DONE:
                        result = land(t, &flight)  # the text's UTF-8 lives while the text does: until we return
            finally:
                self.running -= 1
        finally:
            free(offsets)
        self._outcome(result, -1)
        return added, c, b

    def add_counts(self, int thread, const uint8_t[::1] keys, const int64_t[::1] ends, const int64_t[::1] counts):
        """Add counts already made into table ``thread``: pre-token ``k`` is ``keys[ends[k - 1]:ends[k]]``
        (from 0 for the first), counted ``counts[k]`` times: arrays as ``write_part`` writes them, sent
        from another process (a cluster's part, summed by ``bpe/corpus/cluster.py``).  Each key is
        copied, so the arrays may go.  Raises ``ValueError`` for arrays that do not hold what they say (an
        end before its start or past the keys, an empty or too long key, a count below 1), checked before
        anything is added, ``MemoryError``, or ``KeyboardInterrupt`` after ``stop()``."""
        cdef Py_ssize_t k, n = ends.shape[0], bad = -1
        cdef int64_t start = 0, end, size = keys.shape[0]
        cdef int result = DONE
        cdef Table *t
        self._countable(thread)
        if counts.shape[0] != n:
            raise ValueError(f"{n} ends but {counts.shape[0]} counts")
        if n == 0:
            return
        t = &self.tables[thread]
        with nogil:
            for k in range(n):  # every entry checked before any is added: a bad array changes nothing
                end = ends[k]
                if end <= start or end > size or end - start > MAX_TOKEN or counts[k] < 1:
                    bad = k
                    break
                start = end
        if bad >= 0:
            raise ValueError(f"entry {bad} of the counts' arrays is not a pre-token (its end, its count)")
        self.running += 1
        try:
            result = self._add_arrays(t, keys, ends, counts, n)
        finally:
            self.running -= 1
        self._outcome(result, -1)

    cdef int _add_arrays(self, Table *t, const uint8_t[::1] keys, const int64_t[::1] ends,
                         const int64_t[::1] counts, Py_ssize_t n) noexcept:
        """``add_counts``'s loop, without the GIL, over arrays checked: DONE or why not."""
        cdef Py_ssize_t k
        cdef int64_t start = 0, end
        cdef int result = DONE
        with nogil:
            # An empty table is grown to hold the arrays' keys at once (all distinct): no key moved n times.
            while t.used == 0 and <size_t>n * 3 > (t.mask + 1) * 2 and result == DONE:
                result = table_grow(t)
            for k in range(n):
                if result != DONE:
                    break
                if (k & 0xFFFF) == 0 and V9_LOAD(&self.stop_flag):
                    result = STOPPED
                    break
                end = ends[k]
                result = table_add(t, &keys[start], <size_t>(end - start),
                                   hash_bytes(&keys[start], <size_t>(end - start)), counts[k])
                if result != DONE:
                    break
                t.total += counts[k]
                start = end
        return result

    def first_invalid(self, const uint8_t[::1] data):
        """The offset of the first byte of ``data`` that is not UTF-8, or -1 (what Python's strict
        decoder would stop at)."""
        cdef Py_ssize_t i = 0, n = data.shape[0]
        cdef uint32_t cp
        cdef int width
        self._usable()
        with nogil:
            while i < n:
                if data[i] < 0x80:
                    i += 1
                    continue
                width = decode(&data[i], n - i, &cp)
                if width == 0:
                    break
                i += width
        return i if i < n else -1

    cdef object _outcome(self, int result, Py_ssize_t bad):
        if result == DONE:
            return -1
        if result == BAD_UTF8:
            return bad
        if result == NO_MEMORY:
            raise MemoryError()
        if result == STOPPED:
            raise KeyboardInterrupt()
        raise ValueError("a pre-token of 2 GiB or more: v8's merge keeps a word's length in 32 bits")

    def totals(self):
        """``(distinct pre-tokens in each thread's table, pre-tokens counted in all)``."""
        self._usable()
        return [self.tables[i].used for i in range(self.num_tables)], sum(self.tables[i].total
                                                                          for i in range(self.num_tables))

    def release_thread_slots(self):
        """Let go of the threads' slot arrays once every part is merged: the parts hold every key and count
        by then, so the slots are the largest thing left that nothing reads (a long key's bytes stay: the
        parts point into the threads' arenas).  ``write_part`` then allocates its arrays beside the parts
        alone, where they were beside both.  ``totals()`` still answers; merging a part again is refused
        (each part is merged once)."""
        cdef int i
        self._usable()
        if self.running:
            raise RuntimeError(f"this Counter is in use ({self.running} call(s) under way on other threads): "
                               "let go of the slots once they have returned")
        for i in range(self.num_tables):
            if self.states[i] != PART_MERGED:
                raise RuntimeError(f"part {i} is not merged: the threads' slots still hold its keys")
        for i in range(self.num_tables):
            free(self.tables[i].slots)  # the used and total fields stay, for totals()
            self.tables[i].slots = NULL
            self.tables[i].mask = 0

    def merge_part(self, int part):
        """Gather the keys of part ``part`` (their hash's top bits, scaled to the number of parts) from
        every thread's table into a table of its own, summing their counts.  Each part is merged by one
        thread with the GIL released; the parts are disjoint, so the threads share nothing.
        Returns the part's distinct pre-tokens and their bytes.  Each part is merged once; the first call
        ends the counting (``count`` is refused after it)."""
        cdef int result = DONE
        cdef Table *into
        self._usable()
        if part < 0 or part >= self.num_tables:
            raise IndexError(f"no part {part}")
        if self.running and not self.merging:
            raise RuntimeError("a count is under way on another thread: merge the parts once every count has "
                               "returned")
        if self.states[part] != PART_OPEN:
            raise RuntimeError(f"part {part} is {'merged' if self.states[part] == PART_MERGED else 'being merged'}"
                               " already: each part is merged once")
        self.merging = True
        self.states[part] = PART_MERGING
        into = &self.parts[part]
        table_free(into)
        if self.num_tables == 1:  # one table holds the one part already: it becomes the part, no copy
            into[0] = self.tables[0]
            self.tables[0].slots = NULL
            self.tables[0].blocks = NULL
            self.tables[0].num_blocks = self.tables[0].blocks_capacity = 0
            self.tables[0].used = 0
            self.tables[0].mask = 0
            self.states[part] = PART_MERGED
            return into.used, part_bytes(into)
        self.running += 1
        try:
            result = self._merge_part(part, into)
        finally:
            self.running -= 1
            # merged, or open again: a part that failed (memory, a stop) is whole in the threads' tables still
            self.states[part] = PART_MERGED if result == DONE else PART_OPEN
        self._outcome(result, -1)
        return into.used, part_bytes(into)

    cdef int _merge_part(self, int part, Table *into) noexcept:
        """``merge_part``'s gathering of part ``part`` into ``into``, without the GIL: DONE or why not."""
        cdef int t, k, result = DONE
        cdef size_t i, largest = 0, total = 0, wanted, capacity = 1 << 12
        cdef Slot *s
        cdef Slot *waiting[AHEAD]  # slots whose place in the part was fetched, added AHEAD slots later
        cdef int next_waiting = 0, num_waiting = 0
        cdef uint64_t parts = self.num_tables
        # the part's hashes: lowest to highest, those h with (h x parts) >> 32 == part
        cdef uint64_t lowest = ((<uint64_t>part << 32) + parts - 1) // parts
        cdef uint64_t highest = (((<uint64_t>(part + 1) << 32) + parts - 1) // parts) - 1
        cdef size_t first, span, step
        with nogil:
            # Room for twice the largest table's share of the part (or all the shares, if fewer): the
            # threads' tables hold mostly the same keys, so the part is seldom much larger than a share,
            # and a table that need not grow is filled without moving a key.
            for t in range(self.num_tables):
                total += self.tables[t].used // self.num_tables + 1
                if self.tables[t].used // self.num_tables + 1 > largest:
                    largest = self.tables[t].used // self.num_tables + 1
            wanted = total if total < 2 * largest else 2 * largest
            while capacity * 2 < wanted * 3:
                capacity *= 2
            result = table_init(into, capacity, False, <uint32_t>parts)  # long keys stay in the threads' arenas
            t = 0
            while result == DONE and t < self.num_tables:
                # The part's range of slots in this table (from the home of its smallest hash to that of
                # its largest), then on past it to the first empty slot: keys pushed there by probing.
                first = lowest >> self.tables[t].shift
                span = (highest >> self.tables[t].shift) - first + 1
                step = 0
                while step <= self.tables[t].mask + span:
                    s = &self.tables[t].slots[(first + step) & self.tables[t].mask]
                    step += 1
                    if s.count == 0:
                        if step > span:
                            break
                        continue
                    if <int>((<uint64_t>s.hash * parts) >> 32) != part:
                        continue
                    # the slot's place in the part is a miss at random: fetched now, filled AHEAD later
                    prefetch(&into.slots[home_of(into, s.hash)])
                    if num_waiting == AHEAD:
                        result = table_add(into, key_of(waiting[next_waiting]), waiting[next_waiting].length,
                                           waiting[next_waiting].hash, waiting[next_waiting].count)
                        if result != DONE:
                            break
                    else:
                        num_waiting += 1
                    waiting[next_waiting] = s
                    next_waiting = (next_waiting + 1) % AHEAD
                if V9_LOAD(&self.stop_flag):
                    result = STOPPED
                t += 1
            k = 0
            while result == DONE and k < num_waiting:  # the last few still waiting
                result = table_add(into, key_of(waiting[k]), waiting[k].length, waiting[k].hash, waiting[k].count)
                k += 1
        return result

    def write_part(self, int part, uint8_t[::1] keys, int64_t[::1] ends, int64_t[::1] counts,
                   Py_ssize_t first, int64_t at):
        """Write part ``part``'s pre-tokens into the arrays from entry ``first`` and key byte ``at``
        on: the bytes end to end in ``keys``, where each ends in ``ends``, its count in ``counts``."""
        cdef Table *table
        cdef size_t i
        cdef Py_ssize_t k = first
        cdef int64_t written = at
        cdef Slot *s
        self._usable()
        if part < 0 or part >= self.num_tables:
            raise IndexError(f"no part {part}")
        if self.states[part] != PART_MERGED:
            raise RuntimeError(f"part {part} is not merged: call merge_part({part}) first")
        table = &self.parts[part]
        if first < 0 or <size_t>first + table.used > <size_t>ends.shape[0] or ends.shape[0] != counts.shape[0]:
            raise IndexError("the arrays cannot hold this part")
        with nogil:
            for i in range(table.mask + 1):
                s = &table.slots[i]
                if s.count == 0:
                    continue
                if written + s.length > keys.shape[0]:
                    break
                if s.length:  # an empty pre-token (a custom pattern's empty match) has no byte to copy
                    memcpy(&keys[written], key_of(s), s.length)
                written += s.length
                ends[k] = written
                counts[k] = s.count
                k += 1
        if k != first + <Py_ssize_t>table.used:
            raise IndexError("the key array cannot hold this part")
        return k


cdef int64_t part_bytes(const Table *t) noexcept:
    """The bytes of every key in the table, end to end."""
    cdef int64_t total = 0
    cdef size_t i
    for i in range(t.mask + 1):
        if t.slots[i].count != 0:
            total += t.slots[i].length
    return total
