# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""v10's compiled merge: v8's algorithm in fewer bytes a word, its rewrites shared by threads (the Python
side is ``v10_threads_compact.py``).

v8's merge is the algorithm here, step for step (v4's diff grouped by neighbour, the deferred probes, the
lazy-deletion heap with the byte-order tie-break, v2's lazy index).  Two ideas change how it holds and does
the work:

**Compact.**  v8 spent 171 bytes a distinct pre-token at OpenWebText's size (302 on 100 MB of web-like text
at vocab 32,000), most of them on things a merge barely reads.  Each structure below says what it replaces:

* a word's record is an 8-byte head (a 32-bit count, a 16-bit length, a 16-bit size) and its token ids as
  16 bits while the vocabulary fits (32 from the 65,537th token on, the block then copied wider once),
  padded to 4 bytes, where v8 had a 16-byte head and 32-bit ids padded to 16 bytes: a 10-byte word, the
  mean on web text, takes 28 bytes, not 64, and more of the block stays in the cache;
* a word is named by its record's place in the block (in 4-byte units), not by a number that an array
  turns into that place: no 4 bytes a word for the array, and no cache miss on it before the record's;
* a pair's slot is 24 bytes (v8: 32) and keeps its first two holders in place (three pairs in four have no
  more), its table bucket 8 bytes (v8: 16), and its list of holders, sorted, is made once, of exactly its
  words, in the merge that makes the pair, never grown by doubling;
* the heap holds the pairs near the top only (v6's floor), not every pair: most never get near it.

A pair's holders stay lazy as v8's by default: a word that leaves a pair stays listed, and the merge of the
pair reads it to find that out (a stale visit).  Exact lists, where a word that leaves a pair is found on
its list and marked dead, are a build switch (``V10_EXACT_HOLDERS``, ``_v10_switches.h``): on web text they
cut the merge's reads by half and cost more than they save, since finding a word on a long list misses the
cache where reading its compact record mostly does not.

**Parallel.**  The words a merge rewrites are split into blocks, which the calling thread and worker
threads (started once, waiting between merges: ``_v10_threads.h``) take in turn with the GIL out of the
way: a worker never touches a Python object.  A thread rewrites its words in place (a word is in one
block only, and no other thread reads it) and writes, for each word, an event: its count, its neighbours,
which pairs it entered (and left).  The pair table is only read while the threads run.  Then the calling
thread replays the events in word order, as v8's loop did its words: the neighbour rows, the gains, the
losses, the new slots, the new holders, the heap.  So the merges, the counts, the holders, are the same
with one thread or eight, whatever the threads do.  A merge of few words runs on the calling thread alone
(:data:`PARALLEL_WORDS`): handing it out would cost more than sharing it saves; and after a shared merge
during which the calling thread waited long for a worker, or was itself off its core (a busy machine), the
next ones stay on it for a while.

Counts are 64-bit wherever they are summed (a pair's count, the heap); a word's count is 32-bit, and a
pre-token counted more often than 2**32 - 1 times becomes several records of the same bytes (the merges
are linear in the counts, so they are the same).  A pre-token longer than 65,535 bytes is refused with a
clear error (:class:`WordTooLong`), which the rung answers by running v9's merge instead.  Ctrl-C and
SIGTERM land within a fraction of a second, also while the threads run: only the calling thread gets them
(the workers block every signal), it checks between its blocks and while it waits, and it stops the workers
with a flag they read between blocks, waits for them and joins them; the state then refuses every merge.
Every allocation is checked (``MemoryError``), every narrowing cast too, and the memory the state holds is
counted as it is allocated and freed (:meth:`MergeState.memory_bytes`).
"""

from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, INT32_MAX, UINT32_MAX
from libc.stdlib cimport malloc, realloc, free, qsort
from libc.string cimport memcmp, memcpy, memmove, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_Check
from cpython.dict cimport PyDict_Next
from cpython.exc cimport PyErr_CheckSignals
from cpython.long cimport PyLong_AsLongLong
from cpython.ref cimport PyObject

cdef extern from "_v10_switches.h":
    # A prefetch a few words ahead of the one being rewritten (_hints.h's; a no-op where unsupported).
    void V10_FETCH(const void *p) nogil
    # The build switches (_v10_switches.h says how to turn each off, and why that costs the rung nothing).
    const bint WITH_PREFETCH "V10_PREFETCH"
    const bint NARROW_IDS "V10_NARROW_IDS"
    const bint EXACT_HOLDERS "V10_EXACT_HOLDERS"
    const int TABLE_LOAD "V10_TABLE_LOAD"
    const bint FLOORED_HEAP "V10_FLOORED_HEAP"

cdef extern from "_v10_threads.h":
    const bint HAVE_THREADS "V10_THREADS"
    ctypedef void (*v10_work)(void *state, int thread, int64_t number) noexcept nogil
    ctypedef struct V10Pool:
        int workers
    int v10_pool_start(V10Pool *pool, int workers) nogil
    void v10_pool_dispatch(V10Pool *pool, v10_work work, void *state) nogil
    int v10_pool_wait(V10Pool *pool, int milliseconds) nogil
    void v10_pool_quit(V10Pool *pool) nogil
    bint v10_pool_forked(V10Pool *pool) nogil
    int64_t v10_fetch_add(int64_t *p, int64_t v) nogil
    int v10_load(const int *p) nogil
    void v10_store(int *p, int v) nogil
    int v10_exchange(int *p, int v) nogil
    int64_t v10_load64(const int64_t *p) nogil
    bint v10_cas64(int64_t *p, int64_t expected, int64_t desired) nogil
    int64_t v10_fetch_or64(int64_t *p, int64_t v) nogil
    int64_t v10_fetch_sub64(int64_t *p, int64_t v) nogil
    void v10_yield() nogil
    void v10_pause() nogil
    int64_t v10_pool_next(V10Pool *pool) nogil
    int64_t v10_now_ns() nogil
    int64_t v10_thread_cpu_ns() nogil


# --- Words: one block of records, named by where they start ------------------------------------------------
# A record is an 8-byte head and the word's token ids, 16 bits each (32 once the block is widened), the
# whole padded to 4 bytes.  A word of 10 bytes, the mean on web text, takes 28 bytes where v8's took 64.
# The head holds only what a merge reads: the count (to add to the pairs), the length (to scan), and the
# size the record was built with (to walk the block from one record to the next: ``words()``, widening).
# A merge shortens a word in place; the record keeps its size.
#
# A word is named by its record's offset in 4-byte units (a "ref"), which is what a pair lists: a merge
# goes from a listed word to its record with one addition.  Refs stay below 2**31 - 1 (a pair keeps two of
# them in 63 bits of its slot), so the records may take up to 8 GiB.

ctypedef struct WordHead:
    uint32_t count     # the pre-token's count (a larger count is split over several records)
    uint16_t length    # tokens now
    uint16_t size      # tokens at the build: the record's room

ctypedef fused token_t:   # a token id in a record: 16 bits while the vocabulary fits, then 32
    uint16_t
    uint32_t

cdef inline WordHead *record_at(char *block, uint32_t ref) noexcept nogil:
    return <WordHead *>(block + (<size_t>ref << 2))

cdef inline size_t record_units(Py_ssize_t size, bint wide) noexcept nogil:
    """4-byte units of a record of ``size`` tokens: the head (2) and the ids, rounded up."""
    return 2 + (<size_t>size if wide else (<size_t>size + 1) >> 1)


# --- Pairs: slots, their holders, and a table from (first, second) to a slot ---------------------------------
# A slot is never freed: a pair whose count falls to zero keeps it (its holders go), so the table needs no
# deletion and no tombstones, as in v8.  A slot is 24 bytes (v8: 32): the count, the two ids, and the holders
# in one 64-bit word: none (0); up to two refs in place (the low bit set: ref + 1 in bits 1-31 and in 32-63,
# 0 for none), which is three pairs in four on web text; or (the low bit clear) a pointer to a HolderArray.
#
# The holders of a pair are sorted by ref.  A pair gains words only in the merge that makes it (it holds that
# merge's new token), and they come in ref order, because the merge reads its own pair's list in that order: so
# a list is made once, of exactly its words (two or fewer stay in the slot), and never grows.  Lazy lists (the
# rung's build) keep a word that left the pair until the pair is merged, when the merge reads it and finds the
# pair gone, as v8's did; its visit stamp is not needed, since a word is listed once.  Exact lists (the switch)
# find a word that leaves the pair by a gallop from where the last one was found (the words of a merge leave
# in ref order too) and mark it dead in place, its ref's top bit set, which keeps the order; once half a list
# is dead, one pass drops the dead; a merge drops its own pair's dead first, so it never reads a word that left.

ctypedef struct PairSlot:
    int64_t count
    uint64_t holders
    int32_t first
    int32_t second

ctypedef struct HolderArray:   # followed by `capacity` refs, sorted, `size` of them in use
    uint32_t size      # refs listed, the dead included
    uint32_t dead      # refs marked dead (their top bit set): words that left the pair
    uint32_t capacity

cdef inline uint32_t *entries_of(HolderArray *array) noexcept nogil:
    return <uint32_t *>(<char *>array + sizeof(HolderArray))

cdef inline size_t array_bytes(uint32_t capacity) noexcept nogil:
    return sizeof(HolderArray) + <size_t>capacity * sizeof(uint32_t)

cdef inline bint is_inline(uint64_t holders) noexcept nogil:
    return holders & 1

cdef inline uint32_t inline_entry(uint64_t holders, int k) noexcept nogil:
    """The k-th (0 or 1) ref kept in place, plus one; 0 for none."""
    return <uint32_t>((holders >> 1) & 0x7FFFFFFF) if k == 0 else <uint32_t>(holders >> 32)

cdef inline uint64_t inline_holders(uint32_t first_plus_one, uint32_t second_plus_one) noexcept nogil:
    if first_plus_one == 0:
        first_plus_one, second_plus_one = second_plus_one, 0
    if first_plus_one == 0:
        return 0
    return 1 | (<uint64_t>first_plus_one << 1) | (<uint64_t>second_plus_one << 32)

# The table: 8-byte buckets (v8: 16), a 32-bit tag of the key beside the slot.  While every id fits in 16 bits
# the tag is the key itself, (first << 16) | second, and a match is a hit; once the block is widened it is a
# mix of the key, and a match is checked against the slot's ids (the caller reads the slot next anyway).
ctypedef struct TableEntry:
    uint32_t tag
    int32_t slot       # -1: empty

cdef inline bint over_full(size_t pairs, size_t buckets) noexcept nogil:
    """Whether ``pairs`` slots would fill more of the table than its load allows (TABLE_LOAD percent)."""
    return pairs * 100 > buckets * <size_t>TABLE_LOAD

cdef inline uint64_t pair_key(int32_t first, int32_t second) noexcept nogil:
    return (<uint64_t><uint32_t>first << 32) | <uint32_t>second

cdef inline size_t spread(uint64_t key) noexcept nogil:
    # Fibonacci hashing, as v8: the multiply mixes both ids into the high bits, which the table's mask reads.
    return <size_t>((key * <uint64_t>0x9E3779B97F4A7C15ULL) >> 17)

cdef inline uint32_t tag_of(int32_t first, int32_t second, bint wide) noexcept nogil:
    if not wide:
        return (<uint32_t>first << 16) | <uint32_t>second
    # A second, independent mix of the key, so that keys in one bucket's neighbourhood differ in their tags.
    return <uint32_t>((pair_key(first, second) * <uint64_t>0xC2B2AE3D27D4EB4FULL) >> 32)


# --- The heap: (count, slot), best first (v8's), above a floor (v6's) ------------------------------------------
# A pair is pushed once its count reaches the floor, which starts at the best byte pair's count over 2**8 and
# is quartered whenever the heap's best falls below it (then one pass over the slots pushes the pairs it
# passes).  On 100 MB of web text at vocab 32,000 the last merges' counts are a few dozen, and most of the 1.9
# million pairs never reach that: v8 pushed every one, 1.9 million entries, 31 MB of its 363.
ctypedef struct HeapEntry:
    int64_t count
    int32_t slot


# --- The neighbour rows: v8's diff grouped by neighbour, kept by the calling thread -------------------------
# Filled as the events are replayed, in word order, exactly as v8's loop filled them; ``lost_slot`` is the
# lost pair's slot once the merge's probes have found it.  The events are read twice: first for the counts
# (and how many words enter each gained pair, whose list is then made of exactly that size), then, once the
# lost pairs' slots are found, for the holders.

ctypedef struct Half:
    int64_t lost       # the count the lost pair loses: (x, a) before, (b, y) after
    uint32_t *fill     # where the next word that entered the gained pair goes in its new array (or NULL)
    int32_t stamp      # the merge that filled this half
    int32_t gained     # the gained pair's slot: (x, n) before, (n, y) after
    int32_t lost_slot  # the lost pair's slot, found when the merge's words are done
    int32_t entered    # the words that entered the gained pair: its array is made for exactly these
    uint32_t hint      # where the last word that left the lost pair was found on its list
    uint32_t last_word # a word with several occurrences enters a gained pair once: the last one counted

ctypedef struct NeighbourRow:
    Half side[2]       # [BEFORE]: the token is x, right before an occurrence; [AFTER]: y, right after one


# --- What a thread writes for each word it rewrites ----------------------------------------------------------
# One event per listed word, at the word's place in the merge's list, so the calling thread replays them in
# the list's order whichever thread wrote which.  A word with one occurrence of (a, b) -> n between x and y
# (nearly all of them) is told by the event alone: the neighbours, the count, and four flags for the holders.
# A word with several occurrences (rare) has its old and new tokens written to its thread's log, which the
# event points into.

ctypedef struct Event:
    uint32_t count
    uint32_t flags     # the EVENT_ bits; for a word with several occurrences, its thread in bits 8-15
    int32_t x          # the neighbour before, or -1; several occurrences: where the word's log starts
    int32_t y          # the neighbour after, or -1

cdef enum:
    X_LEAVES = 1       # the word no longer holds (x, a): it is taken off that pair's holders
    Y_LEAVES = 2       # nor (b, y)
    X_ENTERS = 4       # it did not hold (x, n) before: it is listed under it
    Y_ENTERS = 8       # nor (n, y)
    EVENT_STALE = 16   # the word does not hold (a, b): nothing changed (lazy lists only)
    EVENT_SEVERAL = 32 # several occurrences: the log says the rest

# A thread's own results for one merge, padded to a cache line so that two threads never write to one line.
ctypedef struct ThreadOut:
    int32_t *log           # for each word with several occurrences: old length, new length, old ids, new ids
    size_t log_size
    size_t log_capacity
    int64_t stale
    int64_t words          # words this thread read in this merge
    int64_t started_ns     # when it took its first block (the dispatch cost)
    int error              # an allocation failed: the merge stops
    char padding[12]

# Everything a merge's threads read: a plain C struct, since a worker must not touch a Python object.
ctypedef struct Job:
    char *block
    const uint32_t *words  # the refs of the words holding (a, b)
    Event *events          # one per word, written by the thread that rewrites it
    ThreadOut *outs
    int64_t size
    int64_t cursor         # the next block of words to take (shared: an atomic add)
    int64_t blocks
    int32_t block_words
    int32_t threads
    int own_first_block    # tests: thread t takes block t first, whenever it starts (so every thread takes part)
    int32_t a, b, n
    int fresh              # n is new: no word held a pair with it before this merge
    int wide               # 32-bit ids in the records
    int64_t entry          # who may still join: the job's number (high 32 bits), CLOSED, and the workers inside
    int stop               # set (atomically) to stop the threads: an interrupt, or a failed allocation
    int fail_allocation    # tests: the next allocation a thread makes fails


# --- The build's source: a dict of counts, or v9's arrays (as v8) ---------------------------------------------
ctypedef struct WordSource:
    PyObject *counts
    const unsigned char *keys
    const int64_t *ends
    const int64_t *word_counts
    Py_ssize_t size


cdef enum:
    BEFORE = 0
    AFTER = 1

cdef enum:
    SIGNAL_EVERY = 1 << 14   # words between two checks for a signal (Ctrl-C, SIGTERM) on the calling thread
    PREFETCH_AHEAD = 16      # how many words ahead of the one being rewritten a record is fetched
    SHORT_LIST = 16          # a list this short is searched for a word that leaves it
    BLOCK_WORDS = 256        # the words a thread takes at a time: small enough that a slow thread holds up little
    WAIT_MS = 10             # the calling thread checks for a signal this often while it waits for the others
    MAX_THREADS = 256        # (a thread's number is kept in 8 bits of an event)

#: The most tokens a record's 16-bit ids can name: the 65,537th widens the block.
NARROW_TOKENS = 65536
#: The longest pre-token, in bytes, that a record can hold (its 16-bit length).
MAX_WORD_BYTES = 65535
#: The fewest words a merge must rewrite to be shared with the worker threads: below it, waking them costs
#: more than sharing saves.  On the 2-core machine a worker started 40 us after the hand-out with a core
#: free (200 us with both busy); a merge of 2,048 words takes about 200 us on one thread, of which the
#: rewriting, the part that is shared, is about 60%: it pays from about 2,000 words, with a core to spare.
PARALLEL_WORDS = 4096
cdef uint32_t MAX_REF = 0x7FFFFFFE     # refs + 1 must fit in 31 bits
cdef uint32_t DEAD = 0x80000000        # the top bit of a listed ref: the word left the pair
cdef uint32_t NO_HINT = 0xFFFFFFFF
cdef int64_t JOB_CLOSED = 0x80000000   # a merge's entry: no worker may join it any more
cdef int64_t JOB_INSIDE = 0x7FFFFFFF   # a merge's entry: the workers inside it


class WordTooLong(OverflowError):
    """A pre-token longer than a record's 16-bit length can hold (the rung then runs v9's merge)."""


# --- The threads' part: rewriting words, writing events --------------------------------------------------------

cdef inline bint holds(token_t *tokens, int32_t length, int32_t first, int32_t second) noexcept nogil:
    """Whether the word holds the pair (first, second) anywhere."""
    cdef int32_t k
    for k in range(length - 1):
        if <int32_t>tokens[k] == first and <int32_t>tokens[k + 1] == second:
            return True
    return False

cdef int log_several(Job *job, ThreadOut *out, int thread, Event *event, WordHead *head, token_t *tokens,
                     int32_t length) noexcept nogil:
    """A word with several occurrences: its old ids into the thread's log, the word rewritten left to right
    without overlap (as v1 does), its new ids after the old; the event points at them.  -1: no memory."""
    cdef size_t need = out.log_size + 2 + 2 * <size_t>length, capacity
    cdef int32_t *larger
    cdef int32_t *log
    cdef int32_t j = 0, k, written = 0, a = job.a, b = job.b
    if need > out.log_capacity:
        capacity = max(need, 2 * out.log_capacity, <size_t>1024)
        larger = NULL
        if not v10_exchange(&job.fail_allocation, 0):
            larger = <int32_t *>realloc(out.log, capacity * sizeof(int32_t))
        if larger == NULL:
            return -1
        out.log = larger
        out.log_capacity = capacity
    if out.log_size > UINT32_MAX:   # the event's 32 bits name where the word starts in the log
        return -1
    log = out.log + out.log_size
    log[0] = length
    for k in range(length):
        log[2 + k] = tokens[k]
    while j < length:
        if j + 1 < length and <int32_t>tokens[j] == a and <int32_t>tokens[j + 1] == b:
            tokens[written] = <token_t>job.n
            j += 2
        else:
            tokens[written] = tokens[j]
            j += 1
        written += 1
    head.length = <uint16_t>written
    log[1] = written
    for k in range(written):
        log[2 + length + k] = tokens[k]
    event.flags = EVENT_SEVERAL | (<uint32_t>thread << 8)
    event.x = <int32_t><uint32_t>out.log_size
    out.log_size += 2 + length + written
    return 0

cdef int rewrite_words(Job *job, int thread, int64_t lo, int64_t hi, token_t *kind) noexcept nogil:
    """Rewrite the words ``lo`` to ``hi`` of the merge's list and write their events (``kind`` picks the
    records' id width, 16 or 32 bits).  The word's record is read and written by this thread alone.  -1: no
    memory for a word with several occurrences."""
    cdef ThreadOut *out = &job.outs[thread]
    cdef int64_t i
    cdef WordHead *head
    cdef token_t *tokens
    cdef Event *event
    cdef int32_t length, j, k, x, y, a = job.a, b = job.b, n = job.n
    cdef uint32_t flags
    cdef bint x_held, y_held
    for i in range(lo, hi):
        if WITH_PREFETCH and i + PREFETCH_AHEAD < job.size:
            V10_FETCH(record_at(job.block, job.words[i + PREFETCH_AHEAD]))
        head = record_at(job.block, job.words[i])
        tokens = <token_t *>(head + 1)
        length = head.length
        event = &job.events[i]
        j = 0
        while j < length - 1 and not (<int32_t>tokens[j] == a and <int32_t>tokens[j + 1] == b):
            j += 1
        if j >= length - 1:  # lazy lists only: the word lost the pair in an earlier merge
            event.flags = EVENT_STALE
            out.stale += 1
            continue
        event.count = head.count
        k = j + 2
        while k < length - 1 and not (<int32_t>tokens[k] == a and <int32_t>tokens[k + 1] == b):
            k += 1
        if k < length - 1:
            if log_several(job, out, thread, event, head, tokens, length) < 0:
                return -1
            continue
        # One occurrence (nearly every word): rewrite in place, then say what the word left and entered.
        x = tokens[j - 1] if j > 0 else -1
        y = tokens[j + 2] if j + 2 < length else -1
        x_held = y_held = False
        if not job.fresh:  # n existed before this merge: the word may already hold (x, n) or (n, y)
            x_held = x >= 0 and holds(tokens, length, x, n)
            y_held = y >= 0 and holds(tokens, length, n, y)
        tokens[j] = <token_t>n
        for k in range(j + 1, length - 1):  # a few ids: a loop beats a call to memmove
            tokens[k] = tokens[k + 1]
        length -= 1
        head.length = <uint16_t>length
        flags = 0
        if x >= 0:
            if EXACT_HOLDERS and not holds(tokens, length, x, a):
                flags |= X_LEAVES
            if not x_held:
                flags |= X_ENTERS
        if y >= 0:
            # (b, y) is the merged pair itself ("aaa", whose list goes whole), or (x, a) again ("baba":
            # it left once, above): neither is taken off twice.
            if (EXACT_HOLDERS and not (a == b and y == b) and not (x == b and y == a)
                    and not holds(tokens, length, b, y)):
                flags |= Y_LEAVES
            if not y_held and not (x == n and y == n):  # (x, n) is (n, y): entered once, above
                flags |= Y_ENTERS
        event.flags = flags
        event.x = x
        event.y = y
    return 0

cdef inline int rewrite_block(Job *job, int thread, int64_t block) noexcept nogil:
    cdef int64_t lo = block * job.block_words
    cdef int64_t hi = min(lo + job.block_words, job.size)
    cdef int result
    if job.wide:
        result = rewrite_words(job, thread, lo, hi, <uint32_t *>NULL)
    else:
        result = rewrite_words(job, thread, lo, hi, <uint16_t *>NULL)
    job.outs[thread].words += hi - lo
    return result

cdef size_t scan_records(MergeState state, size_t at, uint32_t *last, int64_t *counts, int64_t *sizes,
                         int32_t *slots, uint32_t **fill, token_t *kind) except? <size_t>-1:
    """The build's scan of SIGNAL_EVERY records from ``at`` (``MergeState._scan_byte_pairs`` says what it does);
    where the next stretch starts."""
    cdef WordHead *head
    cdef token_t *tokens
    cdef int32_t j, code
    cdef Py_ssize_t w = 0
    while at < state.block_units and w < SIGNAL_EVERY:
        head = record_at(state.block, <uint32_t>at)
        tokens = <token_t *>(head + 1)
        for j in range(head.length - 1):
            code = (<int32_t>tokens[j] << 8) | <int32_t>tokens[j + 1]
            if slots == NULL:
                counts[code] += head.count
            if last[code] != <uint32_t>at:
                last[code] = <uint32_t>at
                if slots == NULL:
                    sizes[code] += 1
                elif fill[code] != NULL:
                    fill[code][0] = <uint32_t>at
                    fill[code] += 1
                else:
                    state.add_holder(slots[code], <uint32_t>at)
        at += record_units(head.size, state.wide)
        w += 1
    return at


cdef void worker_share(void *state, int thread, int64_t number) noexcept nogil:
    """A worker's share of merge ``number``: the next untaken block, until none is left or the merge is
    stopped.  A worker that wakes late (its core busy) takes fewer blocks, and none once the calling thread
    has taken the last and closed the merge: then it leaves at once, without reading anything else of the
    job, which may already hold the next merge.  Nobody waits for a worker that has not joined.  (Tests give
    each thread its own first block, so that each takes part.)"""
    cdef Job *job = <Job *>state
    cdef ThreadOut *out
    cdef int64_t block, entry
    while True:  # join, unless the merge is closed or is another one
        entry = v10_load64(&job.entry)
        if (entry >> 32) != number or entry & JOB_CLOSED:
            return
        if v10_cas64(&job.entry, entry, entry + 1):
            break
    out = &job.outs[thread]
    out.started_ns = v10_now_ns()
    block = thread if job.own_first_block else v10_fetch_add(&job.cursor, 1)
    while block < job.blocks and not v10_load(&job.stop):
        if rewrite_block(job, thread, block) < 0:
            out.error = 1
            v10_store(&job.stop, 1)
            break
        block = v10_fetch_add(&job.cursor, 1)
    v10_fetch_sub64(&job.entry, 1)


cdef class MergeState:
    """The words, the pair counts, the exact holders and the heap, in C arrays; one merge per ``merge``
    call, its words rewritten by ``threads`` threads when it has enough of them."""

    # words
    cdef char *block
    cdef size_t block_units
    cdef Py_ssize_t num_words      # records (a pre-token counted past 2**32 - 1 times has several)
    cdef bint wide                 # 32-bit ids in the records
    # tokens (as v8)
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
    # heap
    cdef HeapEntry *heap
    cdef Py_ssize_t heap_size, heap_capacity
    cdef int64_t floor             # a pair is heaped once its count reaches the floor (v6's floored heap)
    cdef public int64_t floor_lowerings
    # per merge (the calling thread's)
    cdef int32_t stamp
    cdef int32_t newest_made
    cdef bint fresh
    cdef int32_t *touched[2]
    cdef Py_ssize_t num_touched[2]
    cdef int32_t *pending
    cdef Py_ssize_t num_pending, pending_capacity
    cdef int32_t *work_slots       # the lost pairs' slots, and their rows (places in the touched lists)
    cdef int32_t *work_rows
    cdef int32_t *lowered
    cdef Py_ssize_t num_lowered, lowered_capacity
    cdef uint64_t *keys_scratch    # a word with several occurrences: its old and new pairs, sorted
    cdef Py_ssize_t keys_capacity
    cdef uint32_t two_words[2]     # a list kept in its slot, as the merge reads it
    # the threads
    cdef V10Pool pool
    cdef readonly int threads      # how many threads a large merge is shared by (the caller included)
    cdef public Py_ssize_t parallel_words  # the fewest words a merge must have to be shared
    cdef int32_t block_words       # the words a thread takes at a time
    cdef bint own_first_block      # tests: each thread takes a block of its own first
    cdef bint never_keep_back      # tests: every merge that can be shared is, however long the last one waited
    cdef Job job
    cdef ThreadOut *outs
    cdef Event *events
    cdef Py_ssize_t events_capacity
    # the state's health
    cdef bint broken               # a merge stopped partway: refuse more
    cdef bint closed               # close() was called: refuse more
    cdef bint fail_next_table_for_tests
    cdef bint fail_next_allocation_for_tests
    cdef bint interrupt_for_tests
    # memory: every block's bytes, counted as it is allocated and freed
    cdef int64_t held, peak
    # what a run reports
    cdef public int64_t visits, stale_visits, stale_pops
    cdef public int64_t parallel_merges      # merges shared with the workers
    cdef public int64_t most_threads_ran     # the most threads that rewrote words in one merge
    cdef public int64_t dispatch_ns          # from handing a merge out to the last worker's start, summed
    cdef public int64_t wait_ns              # the calling thread waiting for the others, summed
    cdef public int64_t merges_kept_on_one_thread  # merges that could have been shared, kept back after a wait
    cdef int64_t keep_back, kept_back        # how many to keep back after the next long wait; how many left now

    def __cinit__(self, *arguments, **keywords):  # (a Python subclass, v10's Merger, passes its own along)
        self.block = NULL
        self.token_bytes = NULL
        self.token_start = NULL
        self.token_length = NULL
        self.neighbours = NULL
        self.pairs = NULL
        self.table = NULL
        self.heap = NULL
        self.touched[BEFORE] = self.touched[AFTER] = NULL
        self.pending = NULL
        self.work_slots = NULL
        self.work_rows = NULL
        self.lowered = NULL
        self.keys_scratch = NULL
        self.outs = NULL
        self.events = NULL
        memset(&self.pool, 0, sizeof(V10Pool))
        memset(&self.job, 0, sizeof(Job))

    def __dealloc__(self):
        cdef int32_t slot
        cdef int thread
        self._stop_threads()  # no thread outlives the state
        if self.pairs != NULL:
            for slot in range(self.num_pairs):
                if self.pairs[slot].holders and not is_inline(self.pairs[slot].holders):
                    free(<void *>self.pairs[slot].holders)
        if self.outs != NULL:
            for thread in range(self.threads):
                free(self.outs[thread].log)
        free(self.block); free(self.token_bytes); free(self.token_start); free(self.token_length)
        free(self.neighbours); free(self.pairs); free(self.table); free(self.heap)
        free(self.touched[BEFORE]); free(self.touched[AFTER]); free(self.pending); free(self.work_slots)
        free(self.work_rows); free(self.lowered); free(self.keys_scratch)
        free(self.outs); free(self.events)

    def __init__(self, pretoken_counts, int threads=1):
        """Phase pair_count: the words' records, each byte pair's count and holders, and the heap.

        ``pretoken_counts`` is a dict of pre-token bytes to counts, or (v9's counts) an object whose
        ``pretoken_arrays()`` gives them as three arrays, read where they are (as v8 reads them).
        ``threads``: how many threads share a large merge, the calling one included (1: all on it)."""
        cdef int32_t i
        cdef int side
        cdef WordSource source
        if not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be 1 to {MAX_THREADS}, got {threads}")
        self.threads = threads if HAVE_THREADS else 1
        self.parallel_words = PARALLEL_WORDS
        self.block_words = BLOCK_WORDS
        if isinstance(pretoken_counts, dict):
            source.counts = <PyObject *>pretoken_counts
        elif hasattr(pretoken_counts, "pretoken_arrays"):
            keys, ends, counts = pretoken_counts.pretoken_arrays()
            source_from_arrays(&source, keys, ends, counts)
        else:
            raise TypeError(f"pre-token counts must be a dict, got {type(pretoken_counts).__name__}")
        self.wide = not NARROW_IDS
        self.outs = <ThreadOut *>self.alloc(self.threads * sizeof(ThreadOut))
        memset(self.outs, 0, self.threads * sizeof(ThreadOut))
        self.token_capacity = 512
        self.token_bytes_capacity = 4096
        self.token_bytes = <char *>self.alloc(self.token_bytes_capacity)
        self.token_start = <int64_t *>self.alloc(self.token_capacity * sizeof(int64_t))
        self.token_length = <int32_t *>self.alloc(self.token_capacity * sizeof(int32_t))
        self.neighbours = <NeighbourRow *>self.alloc(self.token_capacity * sizeof(NeighbourRow))
        memset(self.neighbours, 0, self.token_capacity * sizeof(NeighbourRow))
        for side in (BEFORE, AFTER):
            self.touched[side] = <int32_t *>self.alloc(self.token_capacity * sizeof(int32_t))
        self.work_slots = <int32_t *>self.alloc(2 * self.token_capacity * sizeof(int32_t))
        self.work_rows = <int32_t *>self.alloc(2 * self.token_capacity * sizeof(int32_t))
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
        self.pending = <int32_t *>self.alloc(self.pending_capacity * sizeof(int32_t))
        self.lowered = <int32_t *>self.alloc(self.lowered_capacity * sizeof(int32_t))
        self._build_words(&source)
        self._build_pairs()
        self._build_heap()

    # -- memory: every allocation goes through these three, which keep the count ---------------------------

    cdef void *alloc(self, size_t size) except NULL:
        cdef void *pointer
        if self.fail_next_allocation_for_tests:
            self.fail_next_allocation_for_tests = False
            raise MemoryError("an allocation failed (injected by a test)")
        pointer = malloc(size if size else 1)
        if pointer == NULL:
            raise MemoryError()
        self.held += size
        if self.held > self.peak:
            self.peak = self.held
        return pointer

    cdef void *resize(self, void *pointer, size_t old_size, size_t size) except NULL:
        """realloc, keeping the old block on failure (then freed with its owner)."""
        cdef void *larger = realloc(pointer, size if size else 1)
        if larger == NULL:
            raise MemoryError()
        self.held += <int64_t>size - <int64_t>old_size
        if self.held > self.peak:
            self.peak = self.held
        return larger

    cdef inline void release(self, void *pointer, size_t size) noexcept:
        free(pointer)
        self.held -= size

    # -- the build ----------------------------------------------------------------------------------------

    cdef int _build_words(self, WordSource *source) except -1:
        """Copy each pre-token of two bytes or more into its record(s), in the order they come.  Two passes
        over the source: the first checks it and sizes the block, which is then allocated as it will be
        written, the second fills it."""
        cdef Py_ssize_t position = 0, length, j, n = 0, read = 0
        cdef size_t total = 0, at = 0
        cdef int64_t count, piece, pieces
        cdef const unsigned char *text
        cdef WordHead *head
        cdef uint16_t *narrow
        cdef uint32_t *wide
        while next_word(source, &position, &text, &length, &count):
            if length > 1:
                checked_word_length(length)
                pieces = (count + UINT32_MAX - 1) // UINT32_MAX  # a count past 32 bits: several records
                total += pieces * record_units(length, self.wide)
                n += pieces
        if total > MAX_REF:
            raise MemoryError("v10's words need more than 8 GiB of records")
        self.block = <char *>self.alloc(total << 2)
        self.block_units = total
        self.num_words = n
        position = 0
        while next_word(source, &position, &text, &length, &count):
            read += 1
            if (read & (SIGNAL_EVERY - 1)) == 0:
                self.check_signals()
            if length <= 1:
                continue
            while count > 0:
                piece = min(count, <int64_t>UINT32_MAX)
                count -= piece
                head = record_at(self.block, <uint32_t>at)
                head.count = <uint32_t>piece
                head.length = head.size = <uint16_t>length
                if self.wide:
                    wide = <uint32_t *>(head + 1)
                    for j in range(length):
                        wide[j] = text[j]
                else:
                    narrow = <uint16_t *>(head + 1)
                    for j in range(length):
                        narrow[j] = text[j]
                    if length & 1:
                        narrow[length] = 0  # the pad, written: the block holds no byte it never wrote
                at += record_units(length, self.wide)
        return 0

    cdef int check_signals(self) except -1:
        """Let a pending Ctrl-C or SIGTERM raise here (or, set by a test, a KeyboardInterrupt as Ctrl-C's)."""
        if self.interrupt_for_tests:
            self.interrupt_for_tests = False
            raise KeyboardInterrupt()
        return PyErr_CheckSignals()

    cdef int _build_pairs(self) except -1:
        """Each byte pair's count and holders, through a dense table indexed by ``256 * first + second`` (as
        v8): a first pass counts each pair and the words holding it, then each pair held by more than two words
        gets an array of exactly that many, which a second pass fills (in ref order: the lists are sorted)."""
        cdef int64_t *counts = <int64_t *>self.alloc(65536 * sizeof(int64_t))
        cdef int64_t *sizes = NULL
        cdef uint32_t *last = NULL
        cdef int32_t *slots = NULL
        cdef uint32_t **fill = NULL
        cdef int32_t code, slot
        cdef uint32_t capacity
        cdef HolderArray *array
        try:
            memset(counts, 0, 65536 * sizeof(int64_t))
            sizes = <int64_t *>self.alloc(65536 * sizeof(int64_t))
            memset(sizes, 0, 65536 * sizeof(int64_t))
            last = <uint32_t *>self.alloc(65536 * sizeof(uint32_t))
            slots = <int32_t *>self.alloc(65536 * sizeof(int32_t))
            fill = <uint32_t **>self.alloc(65536 * sizeof(uint32_t *))
            self._scan_byte_pairs(last, counts, sizes, NULL, NULL)
            self._init_table(1 << 16)
            for code in range(65536):
                slots[code] = -1
                fill[code] = NULL
                if counts[code]:
                    slot = self._new_slot(code >> 8, code & 255)
                    slots[code] = slot
                    self.pairs[slot].count = counts[code]
                    if sizes[code] > 2:
                        capacity = checked_capacity(sizes[code])
                        array = <HolderArray *>self.alloc(array_bytes(capacity))
                        array.size = array.capacity = capacity
                        array.dead = 0
                        self.pairs[slot].holders = <uint64_t>array
                        fill[code] = entries_of(array)
            self._scan_byte_pairs(last, NULL, NULL, slots, fill)
        finally:
            self.release(counts, 65536 * sizeof(int64_t))
            if sizes != NULL:
                self.release(sizes, 65536 * sizeof(int64_t))
            if last != NULL:
                self.release(last, 65536 * sizeof(uint32_t))
            if slots != NULL:
                self.release(slots, 65536 * sizeof(int32_t))
            if fill != NULL:
                self.release(fill, 65536 * sizeof(uint32_t *))
        return 0

    cdef int _scan_byte_pairs(self, uint32_t *last, int64_t *counts, int64_t *sizes, int32_t *slots,
                              uint32_t **fill) except -1:
        """One pass over every word's byte pairs: the first adds to ``counts`` and ``sizes`` (the words holding
        the pair), the second (``slots`` given) lists each word once under each pair it holds, through
        ``fill`` (where the pair's next ref goes in its array) or, for two words at most, in its slot.  In
        stretches of SIGNAL_EVERY words, with a check for a signal between two."""
        cdef size_t at = 0
        memset(last, 0xFF, 65536 * sizeof(uint32_t))
        while at < self.block_units:
            if self.wide:
                at = scan_records(self, at, last, counts, sizes, slots, fill, <uint32_t *>NULL)
            else:
                at = scan_records(self, at, last, counts, sizes, slots, fill, <uint16_t *>NULL)
            if at == <size_t>-1:
                return -1
            self.check_signals()
        return 0

    cdef inline int32_t token_in(self, WordHead *head, Py_ssize_t j) noexcept nogil:
        if self.wide:
            return <int32_t>(<uint32_t *>(head + 1))[j]
        return (<uint16_t *>(head + 1))[j]

    cdef int _build_heap(self) except -1:
        """The byte pairs within 2**8 of the best count, heaped; the floor is that count (v6's first floor)."""
        cdef int32_t slot
        cdef Py_ssize_t i, above = 0
        cdef int64_t top = 0
        for slot in range(self.num_pairs):
            top = max(top, self.pairs[slot].count)
        self.floor = max(<int64_t>1, top >> 8) if FLOORED_HEAP else 1
        for slot in range(self.num_pairs):
            above += self.pairs[slot].count >= self.floor
        self.heap_capacity = max(above * 2, 1024)
        self.heap = <HeapEntry *>self.alloc(self.heap_capacity * sizeof(HeapEntry))
        self.heap_size = 0
        for slot in range(self.num_pairs):
            if self.pairs[slot].count >= self.floor:
                self.heap[self.heap_size].count = self.pairs[slot].count
                self.heap[self.heap_size].slot = slot
                self.heap_size += 1
        i = self.heap_size // 2
        while i > 0:
            i -= 1
            self._sift_down(i)
        return 0

    # -- tokens (as v8, and the widening of the block at the 65,537th) ---------------------------------------

    def add_token(self, bytes merged):
        """The id of the token ``merged``: an existing one if a merge already made these bytes."""
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
        if new == INT32_MAX:
            raise OverflowError("v10 cannot make more than 2**31-1 tokens")
        if new >= NARROW_TOKENS and not self.wide:
            self._widen()  # before anything else changes: a MemoryError leaves the state as it was
        if new == self.token_capacity:
            capacity = doubled_capacity(self.token_capacity)
            self.token_start = <int64_t *>self.resize(self.token_start, self.token_capacity * sizeof(int64_t),
                                                      capacity * sizeof(int64_t))
            self.token_length = <int32_t *>self.resize(self.token_length, self.token_capacity * sizeof(int32_t),
                                                       capacity * sizeof(int32_t))
            self.neighbours = <NeighbourRow *>self.resize(self.neighbours,
                                                          self.token_capacity * sizeof(NeighbourRow),
                                                          capacity * sizeof(NeighbourRow))
            memset(self.neighbours + new, 0, (capacity - new) * sizeof(NeighbourRow))
            for side in (BEFORE, AFTER):
                self.touched[side] = <int32_t *>self.resize(self.touched[side],
                                                            self.token_capacity * sizeof(int32_t),
                                                            capacity * sizeof(int32_t))
            self.work_slots = <int32_t *>self.resize(self.work_slots, 2 * self.token_capacity * sizeof(int32_t),
                                                     2 * capacity * sizeof(int32_t))
            self.work_rows = <int32_t *>self.resize(self.work_rows, 2 * self.token_capacity * sizeof(int32_t),
                                                    2 * capacity * sizeof(int32_t))
            self.token_capacity = capacity
        while self.token_bytes_size + length > byte_capacity:
            byte_capacity *= 2
        if byte_capacity != self.token_bytes_capacity:
            self.token_bytes = <char *>self.resize(self.token_bytes, self.token_bytes_capacity, byte_capacity)
            self.token_bytes_capacity = byte_capacity
        memcpy(self.token_bytes + self.token_bytes_size, PyBytes_AS_STRING(merged), length)
        self.token_start[new] = self.token_bytes_size
        self.token_length[new] = checked_int32(length)
        self.token_bytes_size += length
        self.token_list.append(merged)
        self.token_ids[merged] = new
        self.num_tokens += 1
        return new

    cdef int _widen(self) except -1:
        """The 65,537th token does not fit a 16-bit id: copy every record into a new block with 32-bit ids,
        and move every ref the pairs list to its record's new place.  Once per run at most; the new block and
        the map from old refs to new ones are allocated first, so a MemoryError leaves the state as it was."""
        cdef size_t total = 0, at = 0, to = 0
        cdef Py_ssize_t w = 0, k
        cdef WordHead *head
        cdef WordHead *into
        cdef uint16_t *narrow
        cdef uint32_t *wider
        cdef uint32_t *old_refs = NULL
        cdef uint32_t *new_refs = NULL
        cdef char *block = NULL
        cdef int32_t slot
        cdef HolderArray *array
        cdef uint32_t *entries
        cdef uint32_t e0, e1
        cdef uint64_t holders
        while at < self.block_units:
            head = record_at(self.block, <uint32_t>at)
            total += record_units(head.size, True)
            at += record_units(head.size, False)
        if total > MAX_REF:
            raise MemoryError("v10's words need more than 8 GiB of records once their ids are 32-bit")
        try:
            block = <char *>self.alloc(total << 2)
            old_refs = <uint32_t *>self.alloc(max(self.num_words, 1) * sizeof(uint32_t))
            new_refs = <uint32_t *>self.alloc(max(self.num_words, 1) * sizeof(uint32_t))
        except MemoryError:
            if block != NULL:
                self.release(block, total << 2)
            if old_refs != NULL:
                self.release(old_refs, max(self.num_words, 1) * sizeof(uint32_t))
            raise
        at = 0
        while at < self.block_units:
            head = record_at(self.block, <uint32_t>at)
            into = record_at(block, <uint32_t>to)
            into[0] = head[0]
            narrow = <uint16_t *>(head + 1)
            wider = <uint32_t *>(into + 1)
            for k in range(head.size):
                wider[k] = narrow[k]
            old_refs[w] = <uint32_t>at
            new_refs[w] = <uint32_t>to
            w += 1
            at += record_units(head.size, False)
            to += record_units(head.size, True)
        for slot in range(self.num_pairs):
            holders = self.pairs[slot].holders
            if holders == 0:
                continue
            if is_inline(holders):
                e0 = inline_entry(holders, 0)
                e1 = inline_entry(holders, 1)
                if e0:
                    e0 = moved_ref(e0 - 1, old_refs, new_refs, w) + 1
                if e1:
                    e1 = moved_ref(e1 - 1, old_refs, new_refs, w) + 1
                self.pairs[slot].holders = inline_holders(e0, e1)
            else:
                array = <HolderArray *>holders
                entries = entries_of(array)
                for k in range(array.size):  # (the order is kept: the records keep theirs)
                    entries[k] = moved_ref(entries[k] & ~DEAD, old_refs, new_refs, w) | (entries[k] & DEAD)
        self.release(old_refs, max(self.num_words, 1) * sizeof(uint32_t))
        self.release(new_refs, max(self.num_words, 1) * sizeof(uint32_t))
        self.release(self.block, self.block_units << 2)
        self.block = block
        self.block_units = total
        self.wide = True
        # The table's tags: mixes of the keys from now on (an id no longer fits in 16 bits of one).
        for k in range(<Py_ssize_t>(self.table_mask + 1)):
            self.table[k].slot = -1
        for slot in range(self.num_pairs):
            self._file(slot)
        return 0

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

    # -- the pair table (v8's, with 8-byte buckets) ------------------------------------------------------

    cdef TableEntry *_empty_table(self, size_t capacity) except NULL:
        cdef size_t i
        cdef TableEntry *table
        if self.fail_next_table_for_tests:
            self.fail_next_table_for_tests = False
            raise MemoryError("a table allocation failed (injected by a test)")
        table = <TableEntry *>self.alloc(capacity * sizeof(TableEntry))
        for i in range(capacity):
            table[i].slot = -1
        return table

    cdef int _init_table(self, size_t capacity) except -1:
        self.table = self._empty_table(capacity)
        self.table_mask = capacity - 1
        return 0

    cdef int _grow_table(self, size_t pairs) except -1:
        """Double the table until ``pairs`` slots fill at most half of it and re-file every slot; the new
        table is allocated before the old one is freed (a MemoryError leaves the state as it was)."""
        cdef size_t capacity = self.table_mask + 1
        cdef int32_t slot
        cdef TableEntry *old = self.table
        while over_full(pairs, capacity):
            capacity *= 2
        self.table = self._empty_table(capacity)
        self.release(old, (self.table_mask + 1) * sizeof(TableEntry))
        self.table_mask = capacity - 1
        for slot in range(self.num_pairs):
            if WITH_PREFETCH and slot + PREFETCH_AHEAD < self.num_pairs:
                V10_FETCH(&self.table[spread(pair_key(self.pairs[slot + PREFETCH_AHEAD].first,
                                                      self.pairs[slot + PREFETCH_AHEAD].second)) & self.table_mask])
            self._file(slot)
        return 0

    cdef inline int32_t find(self, int32_t first, int32_t second) noexcept nogil:
        """The slot of (first, second), or -1 if the pair never occurred."""
        cdef uint32_t tag = tag_of(first, second, self.wide)
        cdef size_t i = spread(pair_key(first, second)) & self.table_mask
        cdef int32_t slot
        while True:
            slot = self.table[i].slot
            if slot < 0:
                return -1
            if self.table[i].tag == tag and (not self.wide or (self.pairs[slot].first == first
                                                                and self.pairs[slot].second == second)):
                return slot
            i = (i + 1) & self.table_mask

    cdef int32_t held_slot(self, int32_t first, int32_t second) except -1:
        """The slot of a pair a word holds now; a miss is a clear internal error (as v8)."""
        cdef int32_t slot = self.find(first, second)
        if slot < 0:
            self.broken = True
            raise RuntimeError(f"internal error in v10's merge: the pair ({first}, {second}) is held by a word "
                               f"but missing from the pair table")
        return slot

    cdef int32_t _new_slot(self, int32_t first, int32_t second, bint file=True) except -1:
        """A fresh slot for a pair known not to be in the table: filed now, or listed as pending (as v8)."""
        cdef int32_t slot = self.num_pairs
        cdef int32_t capacity
        if slot == self.pair_capacity:
            capacity = max(doubled_capacity(self.pair_capacity), 1024)
            self.pairs = <PairSlot *>self.resize(self.pairs, self.pair_capacity * sizeof(PairSlot),
                                                 capacity * sizeof(PairSlot))
            self.pair_capacity = capacity
        if file and over_full(slot + 1, self.table_mask + 1):
            self._grow_table(slot + 1)
        self.pairs[slot].count = 0
        self.pairs[slot].holders = 0
        self.pairs[slot].first = first
        self.pairs[slot].second = second
        self.num_pairs += 1
        if not file:
            if self.num_pending == self.pending_capacity:
                self.pending = <int32_t *>self.resize(self.pending, self.pending_capacity * sizeof(int32_t),
                                                      2 * self.pending_capacity * sizeof(int32_t))
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
        self.table[i].tag = tag_of(self.pairs[slot].first, self.pairs[slot].second, self.wide)
        self.table[i].slot = slot

    cdef int _file_pending(self) except -1:
        cdef Py_ssize_t i
        cdef int32_t ahead
        if over_full(self.num_pairs, self.table_mask + 1):
            self._grow_table(self.num_pairs)
        else:
            for i in range(self.num_pending):
                if WITH_PREFETCH and i + PREFETCH_AHEAD < self.num_pending:
                    ahead = self.pending[i + PREFETCH_AHEAD]
                    V10_FETCH(&self.table[spread(pair_key(self.pairs[ahead].first, self.pairs[ahead].second))
                                          & self.table_mask])
                self._file(self.pending[i])
        self.num_pending = 0
        return 0

    cdef inline int32_t find_or_add(self, int32_t first, int32_t second) except -1:
        cdef int32_t slot = self.find(first, second)
        if slot >= 0:
            return slot
        return self._new_slot(first, second)

    # -- holders: exact lists ---------------------------------------------------------------------------------

    cdef int add_holder(self, int32_t slot, uint32_t ref) except -1:
        """List a word that entered the pair, in its place: lists are sorted by ref, and a word enters in ref
        order but in a merge into a token made before (rare), where it may come back to a pair it left."""
        cdef PairSlot *pair = &self.pairs[slot]
        cdef uint64_t holders = pair.holders
        cdef HolderArray *array
        cdef uint32_t *entries
        cdef uint32_t e0, e1, k
        if holders == 0:
            pair.holders = inline_holders(ref + 1, 0)
            return 0
        if is_inline(holders):
            e0 = inline_entry(holders, 0)
            e1 = inline_entry(holders, 1)
            if e1 == 0:
                pair.holders = inline_holders(e0, ref + 1) if e0 <= ref else inline_holders(ref + 1, e0)
                return 0
            self._make_array(slot, 1)
            array = <HolderArray *>pair.holders
        else:
            array = <HolderArray *>holders
            if array.size == array.capacity:
                if array.dead:
                    self._compact(slot)  # (which may put the words back in the slot: then start again)
                    if is_inline(pair.holders):
                        return self.add_holder(slot, ref)
                else:
                    self._regrow(slot, doubled_capacity(<int32_t>min(array.capacity, <uint32_t>INT32_MAX)))
                array = <HolderArray *>pair.holders
        entries = entries_of(array)
        k = array.size
        while k > 0 and (entries[k - 1] & ~DEAD) > ref:  # (only out of order in a merge into an old token)
            entries[k] = entries[k - 1]
            k -= 1
        entries[k] = ref
        array.size += 1
        return 0

    cdef int _make_lists(self) except -1:
        """Make each gained pair's list for the words that enter it in this merge.  A gained pair holds the
        merge's new token, so it is new (save in a merge into a token made before): its array is made here for
        exactly its words (more than two: two stay in its slot), which then come in ref order, since the merge
        reads its own pair's list in that order.  It never grows again: a pair gains words only in the merge
        that makes it."""
        cdef Py_ssize_t i, total = self.num_touched[BEFORE] + self.num_touched[AFTER]
        cdef int32_t slot
        cdef uint64_t holders
        cdef HolderArray *array
        cdef Half *h
        for i in range(total):
            h = self._row(i)
            if h.entered == 0:
                continue
            slot = h.gained
            holders = self.pairs[slot].holders
            if holders == 0:
                if h.entered > 2:  # its words are written straight in, in order, through the row
                    array = <HolderArray *>self.alloc(array_bytes(<uint32_t>h.entered))
                    array.size = array.capacity = <uint32_t>h.entered
                    array.dead = 0
                    self.pairs[slot].holders = <uint64_t>array
                    h.fill = entries_of(array)
            elif not is_inline(holders):  # a pair made before: room for its new words
                array = <HolderArray *>holders
                if array.size + <uint32_t>h.entered > array.capacity:
                    self._regrow(slot, <int64_t>array.size + h.entered)
        return 0

    cdef inline int enter(self, Half *h, uint32_t ref) except -1:
        """List a word that entered the row's gained pair: written into its new array, or added to its slot."""
        if h.fill != NULL:
            h.fill[0] = ref
            h.fill += 1
            return 0
        return self.add_holder(h.gained, ref)

    cdef int _make_array(self, int32_t slot, uint32_t more) except -1:
        """The pair's first array: the two words kept in its slot, and room for ``more``, doubled."""
        cdef uint64_t holders = self.pairs[slot].holders
        cdef uint32_t capacity = checked_capacity(2 * (2 + <int64_t>more))
        cdef HolderArray *array = <HolderArray *>self.alloc(array_bytes(capacity))
        array.size = 2
        array.dead = 0
        array.capacity = capacity
        entries_of(array)[0] = inline_entry(holders, 0) - 1
        entries_of(array)[1] = inline_entry(holders, 1) - 1
        self.pairs[slot].holders = <uint64_t>array
        return 0

    cdef int _regrow(self, int32_t slot, int64_t capacity) except -1:
        """Give the pair's array room for ``capacity`` refs (or take the room it no longer needs)."""
        cdef HolderArray *array = <HolderArray *>self.pairs[slot].holders
        cdef uint32_t fitted = checked_capacity(capacity)
        array = <HolderArray *>self.resize(array, array_bytes(array.capacity), array_bytes(fitted))
        array.capacity = fitted
        self.pairs[slot].holders = <uint64_t>array
        return 0

    cdef int remove_holder(self, int32_t slot, uint32_t ref, uint32_t *hint) except -1:
        """Take a word that left the pair off its list.  In the slot, it is dropped; in an array, it is found
        (the list is sorted: a gallop from ``hint``, where the last word that left it was found, since the
        words of a merge leave in ref order) and marked dead in place, its top bit set, which keeps the order;
        once half the list is dead, one pass drops the dead."""
        cdef PairSlot *pair = &self.pairs[slot]
        cdef uint64_t holders = pair.holders
        cdef HolderArray *array
        cdef uint32_t *entries
        cdef uint32_t e0, e1, k
        if holders == 0:
            return self._not_listed(slot, ref)
        if is_inline(holders):
            e0 = inline_entry(holders, 0)
            e1 = inline_entry(holders, 1)
            if e0 == ref + 1:
                pair.holders = inline_holders(e1, 0)
            elif e1 == ref + 1:
                pair.holders = inline_holders(e0, 0)
            else:
                return self._not_listed(slot, ref)
            return 0
        array = <HolderArray *>holders
        entries = entries_of(array)
        k = find_place(entries, array.size, ref, hint[0])
        while k < array.size and entries[k] == (ref | DEAD):  # (a word that left, came back, leaves again)
            k += 1
        if k >= array.size or entries[k] != ref:
            return self._not_listed(slot, ref)
        entries[k] = ref | DEAD
        array.dead += 1
        hint[0] = k
        if <uint64_t>array.dead * 2 >= array.size:
            self._compact(slot)
            hint[0] = NO_HINT
        return 0

    cdef int _not_listed(self, int32_t slot, uint32_t ref) except -1:
        self.broken = True
        raise RuntimeError(f"internal error in v10's merge: a word (ref {ref}) left the pair "
                           f"({self.pairs[slot].first}, {self.pairs[slot].second}) but is not listed under it")

    cdef int _compact(self, int32_t slot) except -1:
        """Drop the dead from the pair's list, in one pass that keeps the order; the array shrinks when mostly
        empty, or goes back into the slot when two words or fewer are left."""
        cdef HolderArray *array = <HolderArray *>self.pairs[slot].holders
        cdef uint32_t *entries = entries_of(array)
        cdef uint32_t k, kept = 0
        for k in range(array.size):
            if not (entries[k] & DEAD):
                entries[kept] = entries[k]
                kept += 1
        array.size = kept
        array.dead = 0
        if kept <= 2:
            self.pairs[slot].holders = inline_holders(entries[0] + 1 if kept else 0, entries[1] + 1 if kept > 1 else 0)
            self.release(array, array_bytes(array.capacity))
        elif <uint64_t>kept * 2 < array.capacity:
            self._regrow(slot, kept)
        return 0

    cdef inline void release_holders(self, int32_t slot) noexcept:
        """A pair whose count is zero lists no word: its array goes."""
        cdef uint64_t holders = self.pairs[slot].holders
        if holders and not is_inline(holders):
            self.release(<void *>holders, array_bytes((<HolderArray *>holders).capacity))
        self.pairs[slot].holders = 0

    cdef int listed_words(self, int32_t slot, uint32_t **words, Py_ssize_t *size) except -1:
        """The words listed under the pair, each once, in ref order: its array with the dead dropped (or read
        out of the slot).  Lazy lists (a build switch) may list a word twice: then each is kept once."""
        cdef uint64_t holders = self.pairs[slot].holders
        cdef HolderArray *array
        if holders == 0:
            size[0] = 0
            words[0] = self.two_words
        elif is_inline(holders):
            self.two_words[0] = inline_entry(holders, 0) - 1
            self.two_words[1] = inline_entry(holders, 1) - 1
            size[0] = 1 + (inline_entry(holders, 1) != 0)
            words[0] = self.two_words
        else:
            array = <HolderArray *>holders
            if array.dead:
                self._compact(slot)  # (which may move the array, or put the words back in the slot)
                return self.listed_words(slot, words, size)
            words[0] = entries_of(array)
            size[0] = array.size
        if not EXACT_HOLDERS and size[0] > 1:
            self._unique(words, size)
        return 0

    cdef int _unique(self, uint32_t **words, Py_ssize_t *size) except -1:
        """Lazy lists only: each word once (two threads must never rewrite one word).  A list is sorted, so a
        word listed twice (it left the pair and came back, in a merge into a token made before) is listed
        twice in a row: the copies after the first are dropped, in place (the list goes with the merge)."""
        cdef Py_ssize_t k, kept = 1
        cdef uint32_t *listed = words[0]
        for k in range(1, size[0]):
            if listed[k] != listed[kept - 1]:
                listed[kept] = listed[k]
                kept += 1
        size[0] = kept
        return 0

    # -- the heap (v8's) --------------------------------------------------------------------------------------

    cdef inline bint better(self, HeapEntry *e, HeapEntry *f) noexcept nogil:
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
            self.heap = <HeapEntry *>self.resize(self.heap, self.heap_capacity * sizeof(HeapEntry),
                                                 2 * self.heap_capacity * sizeof(HeapEntry))
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
        """The pair to merge next, as ``(bytes, bytes)``, or ``None`` when no pair is left (v8's, above the
        floor: when the heap's best falls below it, the floor is lowered and the pairs it passes are heaped)."""
        cdef int64_t live
        cdef int32_t slot
        self._check_usable()
        while True:
            while self.heap_size > 0:
                slot = self.heap[0].slot
                live = self.pairs[slot].count
                if live == self.heap[0].count:
                    if live >= self.floor:
                        return self.token_list[self.pairs[slot].first], self.token_list[self.pairs[slot].second]
                    break  # below the floor: a pair not heaped may beat it
                if live == 0 or live > self.heap[0].count:
                    self.pop()
                    self.stale_pops += 1
                else:
                    self.heap[0].count = live
                    self._sift_down(0)
            if self.floor <= 1:
                return None
            self._lower_floor()

    def set_aside(self, pair):
        """The pair just selected is never to be merged (``max_token_length``; bpe/training/merge_loop.py): its
        live entry, the heap's top, is popped, as v8 does.  One pushed again when its count rises, or heaped
        again when the floor is lowered past its count, surfaces and is set aside again."""
        cdef PairSlot *top
        self._check_usable()
        first, second = pair
        if self.heap_size > 0:
            top = &self.pairs[self.heap[0].slot]
            if self.token_list[top.first] == first and self.token_list[top.second] == second:
                self.pop()
                return
        raise ValueError(f"set_aside({pair!r}) must follow select_best_pair() returning that pair")

    def count_of(self, pair):
        """The pair's count now (``min_frequency``, continued training): 0 for a token no merge has made here."""
        self._check_usable()
        first, second = pair
        a, b = self.token_ids.get(first), self.token_ids.get(second)
        return 0 if a is None or b is None else self.pair_count(a, b)

    cdef int _lower_floor(self) except -1:
        """Quarter the floor and heap every pair it passes: one pass over the slots."""
        cdef int64_t floor = max(<int64_t>1, self.floor >> 2), count
        cdef int32_t slot
        for slot in range(self.num_pairs):
            count = self.pairs[slot].count
            if floor <= count < self.floor:
                self.push(count, slot)
        self.floor = floor
        self.floor_lowerings += 1
        return 0

    cdef int _check_usable(self) except -1:
        if self.closed:
            raise RuntimeError("this v10 merger was closed (its threads are stopped): build a new one from the "
                               "pre-token counts")
        if self.broken:
            raise RuntimeError("this v10 merger stopped partway through a merge (interrupted, or an internal "
                               "error), so its state is incomplete: build a new one from the pre-token counts")
        return 0

    # -- the merge ----------------------------------------------------------------------------------------

    cdef inline int lower(self, int32_t slot, int64_t count) except -1:
        self.pairs[slot].count -= count
        if self.num_lowered == self.lowered_capacity:
            self.lowered = <int32_t *>self.resize(self.lowered, self.lowered_capacity * sizeof(int32_t),
                                                  2 * self.lowered_capacity * sizeof(int32_t))
            self.lowered_capacity *= 2
        self.lowered[self.num_lowered] = slot
        self.num_lowered += 1
        return 0

    cdef inline int32_t gained_slot(self, int32_t first, int32_t second) except -1:
        if self.fresh:
            return self._new_slot(first, second, False)
        return self.find_or_add(first, second)

    cdef inline Half *half(self, int side, int32_t token, int32_t n) except NULL:
        cdef Half *h = &self.neighbours[token].side[side]
        if h.stamp != self.stamp:
            h.gained = self.gained_slot(token, n) if side == BEFORE else self.gained_slot(n, token)
            h.stamp = self.stamp
            h.lost = 0
            h.lost_slot = -1
            h.entered = 0
            h.hint = NO_HINT
            h.fill = NULL
            h.last_word = UINT32_MAX
            self.touched[side][self.num_touched[side]] = token
            self.num_touched[side] += 1
        return h

    def merge(self, pair):
        """Merge ``pair`` (two tokens' bytes) into one token in every word that holds it, and update the
        counts, the holders and the heap."""
        first, second = pair
        self._check_usable()
        self._merge(self.token_ids[first], self.token_ids[second], self.add_token(first + second))

    def merge_ids(self, int32_t a, int32_t b, int32_t n):
        """:meth:`merge` by token ids, the new one from :meth:`add_token` (for tests of the state)."""
        self._merge(a, b, n)

    cdef int _merge(self, int32_t a, int32_t b, int32_t n) except -1:
        """Merge (a, b) into token n in every word that holds it and update the counts, holders and heap; on any
        error (an interrupt included) the workers are stopped and joined, and the state refuses more merges."""
        cdef int32_t merged_slot
        self._check_usable()
        if not (0 <= a < self.num_tokens and 0 <= b < self.num_tokens and 256 <= n < self.num_tokens):
            raise ValueError(f"token ids out of range: ({a}, {b}) -> {n}")
        merged_slot = self.find(a, b)
        if merged_slot < 0 or self.pairs[merged_slot].count == 0:
            return 0
        self.broken = True  # until the merge is done: an interrupt leaves the state half-updated
        try:
            self._merge_broken(a, b, n, merged_slot)
        except BaseException:
            self._stop_threads()  # the state refuses every merge from now on: no thread waits for one
            raise
        self.broken = False
        return 0

    cdef int _merge_broken(self, int32_t a, int32_t b, int32_t n, int32_t merged_slot) except -1:
        """The merge itself, while the state is marked broken (:meth:`_merge` clears the mark at the end)."""
        cdef int32_t slot
        cdef uint32_t *listed
        cdef Py_ssize_t size, i
        cdef int side
        self.stamp += 1
        self.fresh = n > self.newest_made
        if self.fresh:
            self.newest_made = n
        self.num_touched[BEFORE] = self.num_touched[AFTER] = 0
        self.num_lowered = self.num_pending = 0
        # 1. The words holding (a, b), each once; rewritten by the threads, which write an event each.
        self.listed_words(merged_slot, &listed, &size)
        self._rewrite(listed, size, a, b, n)
        # 2. The events replayed in word order for the counts: the neighbour rows, the gains.
        self._replay(listed, size, a, b, n, False)
        # 3. The rows' losses, one lowered pair per neighbour; the slots made, filed.
        self._apply_losses(a, b)
        self._file_pending()
        # 4. The events replayed again for the holders: the gained pairs' lists made, of their exact size, and
        #    (exact lists) the words that left a pair taken off it.
        self._make_lists()
        self._replay(listed, size, a, b, n, True)
        # 5. The merged pair is gone from every word; the pairs that fell to zero free their holders.
        self.pairs[merged_slot].count = 0
        self.release_holders(merged_slot)
        for i in range(self.num_lowered):
            slot = self.lowered[i]
            if self.pairs[slot].count == 0:
                self.release_holders(slot)
        # 6. Each pair that gained is pushed once, with its count now.
        for side in (BEFORE, AFTER):
            for i in range(self.num_touched[side]):
                slot = self.neighbours[self.touched[side][i]].side[side].gained
                if self.pairs[slot].count >= self.floor:  # (a pair below the floor waits for it to fall)
                    self.push(self.pairs[slot].count, slot)
        return 0

    cdef int _rewrite(self, uint32_t *listed, Py_ssize_t size, int32_t a, int32_t b, int32_t n) except -1:
        """Step 1: the words rewritten, by the calling thread alone or shared with the workers."""
        cdef Job *job = &self.job
        cdef int thread
        cdef bint shared
        cdef int64_t block, done = 0, checked = 0, start = 0, latest = 0, waited = 0, waiting, cpu = 0
        cdef Py_ssize_t capacity
        if size > self.events_capacity:
            capacity = max(size, 2 * self.events_capacity, 1024)
            self.events = <Event *>self.resize(self.events, self.events_capacity * sizeof(Event),
                                               capacity * sizeof(Event))
            self.events_capacity = capacity
        shared = self.threads > 1 and size >= self.parallel_words and size > self.block_words
        if shared and self.kept_back > 0 and not self.own_first_block:
            self.kept_back -= 1  # the last shared merges waited on a late thread: this one stays here
            self.merges_kept_on_one_thread += 1
            shared = False
        if shared and v10_pool_forked(&self.pool):
            memset(&self.pool, 0, sizeof(V10Pool))  # a forked child: its parent's workers are not its own
        if shared and self.pool.workers == 0:
            self._start_threads()
        job.block = self.block
        job.words = listed
        job.events = self.events
        job.outs = self.outs
        job.size = size
        job.block_words = self.block_words
        job.blocks = (size + self.block_words - 1) // self.block_words
        job.threads = self.threads if shared else 1
        job.own_first_block = self.own_first_block
        job.cursor = job.threads if self.own_first_block else 0  # (tests: thread t takes block t first)
        job.a, job.b, job.n = a, b, n
        job.fresh = self.fresh
        job.wide = self.wide
        v10_store(&job.stop, 0)
        for thread in range(job.threads):
            self.outs[thread].log_size = 0
            self.outs[thread].stale = self.outs[thread].words = 0
            self.outs[thread].error = 0
            self.outs[thread].started_ns = 0
        if shared:
            job.entry = v10_pool_next(&self.pool) << 32  # (published by the dispatch's lock)
            start = v10_now_ns()
            cpu = v10_thread_cpu_ns()
            v10_pool_dispatch(&self.pool, worker_share, job)
            self.parallel_merges += 1
        try:
            block = 0 if self.own_first_block or not shared else v10_fetch_add(&job.cursor, 1)
            while block < job.blocks and not v10_load(&job.stop):
                if rewrite_block(job, 0, block) < 0:
                    self.outs[0].error = 1
                    v10_store(&job.stop, 1)
                    break
                done += min(<int64_t>self.block_words, size - block * self.block_words)
                if done - checked >= SIGNAL_EVERY:
                    checked = done
                    self.check_signals()
                block = v10_fetch_add(&job.cursor, 1) if shared else block + 1
            if shared:
                self.check_signals()  # once after its share, however small, then while it waits
                waited = v10_now_ns()
                if self.own_first_block:  # (tests: every worker does its own first block)
                    while not v10_pool_wait(&self.pool, WAIT_MS):
                        self.check_signals()
                self._close_job(job, True)
                waiting = v10_now_ns() - waited
                self.wait_ns += waiting
                self._judge_the_share(waiting, waited - start, v10_thread_cpu_ns() - cpu)
        except BaseException:
            # An interrupt (or a test's): the workers stop at their next block, are waited for and joined.
            if shared:
                v10_store(&job.stop, 1)
                self._close_job(job, False)
                self._count_threads_that_ran(job)
                self._stop_threads()
            raise
        self._count_threads_that_ran(job)
        for thread in range(job.threads):
            if self.outs[thread].error:
                self._stop_threads()
                raise MemoryError("a merge's thread could not allocate its list of words with several "
                                  "occurrences of the pair")
            self.stale_visits += self.outs[thread].stale
            if self.outs[thread].started_ns > latest:
                latest = self.outs[thread].started_ns
        self.visits += size
        if shared and latest > start:
            self.dispatch_ns += latest - start
        return 0

    cdef int _close_job(self, Job *job, bint check) except -1:
        """Close the merge to workers that have not joined it (every block is taken: they would find nothing),
        then wait for those inside to end their blocks: a few microseconds, unless the scheduler took a
        worker's core, when this thread yields its own (it may be the one the worker waits for), checking for
        a signal every WAIT_MS (``check``: not once the merge is being stopped)."""
        cdef int64_t spins = 0, since = 0
        v10_fetch_or64(&job.entry, JOB_CLOSED)
        while v10_load64(&job.entry) & JOB_INSIDE:
            spins += 1
            if spins < 2000:
                v10_pause()
                continue
            v10_yield()
            if check and (spins & 63) == 0:
                if since == 0:
                    since = v10_now_ns()
                elif v10_now_ns() - since > WAIT_MS * 1000000:
                    since = v10_now_ns()
                    self.check_signals()
        return 0

    cdef void _judge_the_share(self, int64_t waiting, int64_t working, int64_t cpu) noexcept:
        """After a shared merge, whether sharing paid: not if the calling thread waited for the others more than
        half as long as it worked (a worker was stopped partway, its core taken by another process), nor if it
        was itself off its core for a quarter of the merge (a worker, or another process, took its place: on a
        busy machine two threads of this process may share one core, and then each is slower than one alone).
        Then the next merges that could be shared stay on this thread, twice as many each time it happens again
        (up to 1,024), half as many each time a shared merge pays.  The merges are the same either way; only
        the time changes."""
        if self.own_first_block or self.never_keep_back:
            return  # (tests: every merge that can be shared is)
        if waiting * 2 > working or (cpu > 0 and cpu * 4 < (working + waiting) * 3):
            self.keep_back = min(max(2 * self.keep_back, 1), 1024)
            self.kept_back = self.keep_back
        else:
            self.keep_back //= 2

    cdef void _count_threads_that_ran(self, Job *job) noexcept:
        cdef int thread, ran = 0
        for thread in range(job.threads):
            ran += self.outs[thread].words > 0
        if ran > self.most_threads_ran:
            self.most_threads_ran = ran

    cdef int _start_threads(self) except -1:
        cdef int error = v10_pool_start(&self.pool, self.threads - 1)
        if error:
            raise OSError(error, f"v10 could not start its {self.threads - 1} merge threads (no thread left, "
                                 f"ulimit -u, or no room for their stacks); threads=1 merges on this thread alone")
        return 0

    cdef void _stop_threads(self) noexcept:
        if v10_pool_forked(&self.pool):
            memset(&self.pool, 0, sizeof(V10Pool))  # a forked child: the workers are its parent's, not to join
        else:
            v10_pool_quit(&self.pool)

    cdef int _replay(self, uint32_t *listed, Py_ssize_t size, int32_t a, int32_t b, int32_t n,
                     bint holders) except -1:
        """Steps 2 and 4: each word's event, in the list's order (v8's loop, less the rewriting): for the counts
        (``holders`` false), then for the holders (true)."""
        cdef Py_ssize_t i
        cdef Event *event
        cdef Half *h
        cdef int64_t count
        cdef uint32_t flags, ref
        for i in range(size):
            event = &self.events[i]
            flags = event.flags
            if flags & EVENT_STALE:
                continue
            ref = listed[i]
            count = event.count
            if flags & EVENT_SEVERAL:
                self._replay_several(&self.outs[(flags >> 8) & 0xFF], <uint32_t>event.x, ref, count, a, b, n,
                                     holders)
                continue
            if event.x >= 0:
                h = self.half(BEFORE, event.x, n)
                if not holders:
                    h.lost += count
                    self.pairs[h.gained].count += count
                    h.entered += (flags & X_ENTERS) != 0
                else:
                    if flags & X_ENTERS:
                        self.enter(h, ref)
                    if flags & X_LEAVES and h.lost_slot >= 0 and self.pairs[h.lost_slot].count:
                        self.remove_holder(h.lost_slot, ref, &h.hint)
            if event.y >= 0:
                h = self.half(AFTER, event.y, n)
                if not holders:
                    if not (a == b and event.y == b):  # (b, y) is the merged pair itself, as in "aaa"
                        h.lost += count
                    self.pairs[h.gained].count += count
                    h.entered += (flags & Y_ENTERS) != 0
                else:
                    if flags & Y_ENTERS:
                        self.enter(h, ref)
                    if flags & Y_LEAVES and h.lost_slot >= 0 and self.pairs[h.lost_slot].count:
                        self.remove_holder(h.lost_slot, ref, &h.hint)
        return 0

    cdef int _replay_several(self, ThreadOut *out, uint32_t at, uint32_t ref, int64_t count, int32_t a,
                             int32_t b, int32_t n, bint holders) except -1:
        """A word with several occurrences (rare).  For the counts, as v8's ``_rewrite_several`` diffed it:
        every old pair lowered, every new pair raised (those holding n through the rows).  For the holders:
        the distinct pairs it had and no longer has, it leaves; those it has and had not, it enters."""
        cdef int32_t *log = out.log + at
        cdef int32_t old_length = log[0], new_length = log[1], j, first, second, slot
        cdef int32_t *old = log + 2
        cdef int32_t *new = log + 2 + old_length
        cdef uint64_t *keys
        cdef Py_ssize_t olds = 0, news = 0, p = 0, q = 0
        cdef Half *h
        cdef uint32_t hint
        if not holders:
            for j in range(old_length - 1):
                first, second = old[j], old[j + 1]
                if not (first == a and second == b):
                    self.lower(self.held_slot(first, second), count)
            for j in range(new_length - 1):
                first, second = new[j], new[j + 1]
                if second == n:  # (x, n), (n, n) included
                    self.pairs[self.half(BEFORE, first, n).gained].count += count
                elif first == n:  # (n, y)
                    self.pairs[self.half(AFTER, second, n).gained].count += count
                else:  # a pair the word had before: lowered above, restored here
                    self.pairs[self.held_slot(first, second)].count += count
        if self.fresh and not (EXACT_HOLDERS and holders):
            # n is new: the word held no pair with it, so it enters each pair holding n that it has now, once
            # (its row remembers the last word counted: two words never share a mark, nor the two passes).
            for j in range(new_length - 1):
                first, second = new[j], new[j + 1]
                if second == n or first == n:
                    h = self.half(BEFORE, first, n) if second == n else self.half(AFTER, second, n)
                    if h.last_word != 2 * ref + holders:
                        h.last_word = 2 * ref + holders
                        if holders:
                            self.enter(h, ref)
                        else:
                            h.entered += 1
            return 0
        # The holders: the old and new distinct pairs, sorted, walked side by side.
        if old_length + new_length > self.keys_capacity:
            self.keys_scratch = <uint64_t *>self.resize(self.keys_scratch, self.keys_capacity * sizeof(uint64_t),
                                                        (old_length + new_length) * sizeof(uint64_t))
            self.keys_capacity = old_length + new_length
        keys = self.keys_scratch  # the old pairs from 0, the new ones from old_length
        for j in range(old_length - 1):
            if not (old[j] == a and old[j + 1] == b):
                keys[olds] = pair_key(old[j], old[j + 1])
                olds += 1
        for j in range(new_length - 1):
            keys[old_length + j] = pair_key(new[j], new[j + 1])
        olds = sorted_unique(keys, olds)
        news = sorted_unique(keys + old_length, max(new_length - 1, 0))
        while p < olds or q < news:
            if q >= news or (p < olds and keys[p] < keys[old_length + q]):  # had, has not: left
                if EXACT_HOLDERS and holders:
                    slot = self.held_slot(<int32_t>(keys[p] >> 32), <int32_t>(keys[p] & 0xFFFFFFFF))
                    hint = NO_HINT
                    if self.pairs[slot].count:
                        self.remove_holder(slot, ref, &hint)
                p += 1
            elif p >= olds or keys[old_length + q] < keys[p]:  # has, had not: entered (a pair holding n)
                first = <int32_t>(keys[old_length + q] >> 32)
                second = <int32_t>(keys[old_length + q] & 0xFFFFFFFF)
                h = self.half(BEFORE, first, n) if second == n else self.half(AFTER, second, n)
                if holders:
                    self.enter(h, ref)
                else:
                    h.entered += 1
                q += 1
            else:
                p += 1
                q += 1
        return 0

    cdef int _apply_losses(self, int32_t a, int32_t b) except -1:
        """Lower (x, a) and (b, y) once per row filled in this merge, the buckets and slots fetched ahead (v8's),
        and keep each lost pair's slot in its row for the words that left it."""
        cdef Py_ssize_t i, k = 0, total = self.num_touched[BEFORE] + self.num_touched[AFTER]
        cdef int32_t first, second, slot
        cdef Half *h
        for i in range(total + PREFETCH_AHEAD):
            if WITH_PREFETCH and i < total:
                first, second = self._lost_pair(i, a, b)
                V10_FETCH(&self.table[spread(pair_key(first, second)) & self.table_mask])
            if i >= PREFETCH_AHEAD:
                h = self._row(i - PREFETCH_AHEAD)
                if h.lost:
                    first, second = self._lost_pair(i - PREFETCH_AHEAD, a, b)
                    slot = self.held_slot(first, second)
                    h.lost_slot = slot
                    self.work_slots[k] = slot
                    self.work_rows[k] = <int32_t>(i - PREFETCH_AHEAD)
                    V10_FETCH(&self.pairs[slot])
                    k += 1
        for i in range(k):
            slot = self.work_slots[i]
            self.pairs[slot].count -= self._row(self.work_rows[i]).lost
            if self.pairs[slot].count == 0:
                self.release_holders(slot)  # gone from every word: its list goes whole
        return 0

    cdef inline (int32_t, int32_t) _lost_pair(self, Py_ssize_t i, int32_t a, int32_t b) noexcept nogil:
        if i < self.num_touched[BEFORE]:
            return self.touched[BEFORE][i], a
        return b, self.touched[AFTER][i - self.num_touched[BEFORE]]

    cdef inline Half *_row(self, Py_ssize_t i) noexcept nogil:
        if i < self.num_touched[BEFORE]:
            return &self.neighbours[self.touched[BEFORE][i]].side[BEFORE]
        return &self.neighbours[self.touched[AFTER][i - self.num_touched[BEFORE]]].side[AFTER]

    # -- closing ----------------------------------------------------------------------------------------------

    def close(self):
        """Stop and join the worker threads; the state then refuses further merges (its words and counts can
        still be read).  A second call does nothing."""
        self._stop_threads()
        self.closed = True

    @property
    def running_threads(self):
        """Worker threads started and not yet joined (the calling thread not counted)."""
        return self.pool.workers

    # -- what the Python side reads ---------------------------------------------------------------------------

    @property
    def tokens(self):
        """Each token's bytes, by id."""
        return self.token_list

    @property
    def wide_ids(self):
        """Whether the records hold 32-bit ids (from the 65,537th token on), else 16-bit."""
        return self.wide

    @property
    def block_bytes(self):
        """The bytes of the words' records (the block): 8 a head and 2 a token (4 once widened), padded to 4."""
        return self.block_units << 2

    @property
    def word_records(self):
        """The records: one a distinct pre-token of two bytes or more (more for a count past 2**32 - 1)."""
        return self.num_words

    def pair_count(self, int32_t first, int32_t second):
        cdef int32_t slot = self.find(first, second)
        return 0 if slot < 0 else self.pairs[slot].count

    def live_pairs(self):
        """``{(first id, second id): count}`` of every pair with a count above zero (``bpe trace``)."""
        cdef int32_t slot
        return {(self.pairs[slot].first, self.pairs[slot].second): self.pairs[slot].count
                for slot in range(self.num_pairs) if self.pairs[slot].count > 0}

    cdef list _refs(self):
        cdef size_t at = 0
        refs = []
        while at < self.block_units:
            refs.append(at)
            at += record_units(record_at(self.block, <uint32_t>at).size, self.wide)
        return refs

    def words(self):
        """``[(token ids, count)]`` of every record, in build order (``bpe trace``)."""
        cdef WordHead *head
        cdef Py_ssize_t j
        result = []
        for at in self._refs():
            head = record_at(self.block, <uint32_t>at)
            result.append(([self.token_in(head, j) for j in range(head.length)], head.count))
        return result

    def holders(self, int32_t first, int32_t second):
        """The word numbers (places in :meth:`words`) listed under a pair, sorted: exactly the words that
        hold it (with lazy lists, a build switch, also words that lost it)."""
        cdef int32_t slot = self.find(first, second)
        if slot < 0:
            return []
        number = {ref: w for w, ref in enumerate(self._refs())}
        return sorted({number[ref] for ref in self._listed(slot)})

    cdef list _listed(self, int32_t slot):
        """The refs listed under a pair, the dead left out, in listed order."""
        cdef uint64_t holders = self.pairs[slot].holders
        cdef HolderArray *array
        cdef uint32_t k
        if holders == 0:
            return []
        if is_inline(holders):
            return [inline_entry(holders, k) - 1 for k in range(2) if inline_entry(holders, k)]
        array = <HolderArray *>holders
        return [entries_of(array)[k] for k in range(array.size) if not (entries_of(array)[k] & DEAD)]

    def listed_refs(self, int32_t first, int32_t second):
        """The refs (records' places) listed under a pair, in the list's order (tests of the order)."""
        cdef int32_t slot = self.find(first, second)
        return [] if slot < 0 else self._listed(slot)

    def _check_holders_for_tests(self):
        """Tests: every pair lists exactly the words that hold it, each once, and its count is the sum of
        their counts times its occurrences in each (an ``AssertionError`` naming the first pair that does
        not).  Reads every word: for small states."""
        cdef int32_t slot
        words = self.words()
        refs = self._refs()
        held, counts = {}, {}
        for ref, (tokens, count) in zip(refs, words):
            for pair in zip(tokens, tokens[1:]):
                counts[pair] = counts.get(pair, 0) + count
                held.setdefault(pair, set()).add(ref)
        for slot in range(self.num_pairs):
            pair = (self.pairs[slot].first, self.pairs[slot].second)
            listed = self._listed(slot)
            assert self.pairs[slot].count == counts.get(pair, 0), (pair, self.pairs[slot].count, counts.get(pair))
            assert listed == sorted(listed), (pair, listed)  # in ref order
            if EXACT_HOLDERS:
                assert listed == sorted(held.get(pair, ())), (pair, listed, sorted(held.get(pair, ())))
            else:
                assert set(listed) >= held.get(pair, set()), pair
        return True

    @property
    def table_buckets(self):
        return self.table_mask + 1

    @property
    def heap_entries(self):
        return self.heap_size

    @property
    def pair_slots(self):
        return self.num_pairs

    def memory_bytes(self):
        """The bytes of C memory the state holds now: every block it has allocated and not freed, each at the
        size it was allocated with (a block grown by doubling has room to spare), counted as it was allocated
        and freed; the threads' logs of words with several occurrences included."""
        cdef int thread
        cdef int64_t total = self.held
        if self.outs != NULL:
            for thread in range(self.threads):
                total += self.outs[thread].log_capacity * sizeof(int32_t)
        return total

    @property
    def peak_memory_bytes(self):
        """The most :meth:`memory_bytes` counted on the calling thread's allocations at any time (the threads'
        logs, a few bytes a word with several occurrences, not included)."""
        return self.peak

    def _memory_bytes_recounted_for_tests(self):
        """Tests: :meth:`memory_bytes` counted again from the structures' sizes, to hold the running count to."""
        cdef int32_t slot
        cdef int thread
        cdef uint64_t holders
        cdef int64_t total = 0
        total += self.block_units << 2
        total += self.token_bytes_capacity
        total += self.token_capacity * (sizeof(int64_t) + sizeof(int32_t) + sizeof(NeighbourRow)
                                        + 2 * sizeof(int32_t) + 2 * (sizeof(int32_t) + sizeof(int32_t)))
        total += self.pair_capacity * sizeof(PairSlot) + (self.table_mask + 1) * sizeof(TableEntry)
        for slot in range(self.num_pairs):
            holders = self.pairs[slot].holders
            if holders and not is_inline(holders):
                total += array_bytes((<HolderArray *>holders).capacity)
        total += self.heap_capacity * sizeof(HeapEntry)
        total += (self.pending_capacity + self.lowered_capacity) * sizeof(int32_t)
        total += self.keys_capacity * sizeof(uint64_t)
        total += self.threads * sizeof(ThreadOut) + self.events_capacity * sizeof(Event)
        for thread in range(self.threads):
            total += self.outs[thread].log_capacity * sizeof(int32_t)
        return total

    # -- test-only hooks: faults no real input can cause ------------------------------------------------------

    def _fail_next_table_allocation_for_tests(self):
        """Make the next allocation of the pair table fail as malloc would."""
        self.fail_next_table_for_tests = True

    def _fail_next_allocation_for_tests(self):
        """Make the calling thread's next new block (not a grown one) fail as malloc would."""
        self.fail_next_allocation_for_tests = True

    def _fail_next_thread_allocation_for_tests(self):
        """Make the next allocation a merge's thread makes (its log of words with several occurrences) fail as
        realloc would, in whichever thread makes it first."""
        v10_store(&self.job.fail_allocation, 1)

    def _interrupt_at_next_check_for_tests(self):
        """Make the next check for a signal raise KeyboardInterrupt, as a Ctrl-C arriving then would.  In a
        merge shared with the workers, the calling thread checks after its own share of the words at the
        latest, while the workers may still be rewriting theirs."""
        self.interrupt_for_tests = True

    def _set_parallel_words_for_tests(self, Py_ssize_t words, int32_t block_words=BLOCK_WORDS,
                                      bint own_first_block=True, bint keep_back=True):
        """Share every merge of at least ``words`` words (and more than one block) with the workers, in blocks
        of ``block_words``: tests run the threads on small inputs.  With ``own_first_block``, thread t takes
        block t first, whenever it starts, so that every thread of a merge of enough blocks takes part and the
        tests can count them; a real run lets any thread take any block (one that starts late takes fewer).
        Without ``keep_back``, every merge that can be shared is, even on a busy machine (measurements of the
        threshold)."""
        if block_words < 1:
            raise ValueError(f"a block holds at least one word, got {block_words}")
        self.parallel_words = words
        self.block_words = block_words
        self.own_first_block = own_first_block
        self.never_keep_back = not keep_back

    def _unfile_pair_for_tests(self, int32_t first, int32_t second):
        """Make a filed pair unfindable (tests of ``held_slot``), as v8's hook does."""
        cdef int32_t slot = self.find(first, second)
        cdef size_t i
        if slot < 0:
            raise KeyError((first, second))
        i = spread(pair_key(first, second)) & self.table_mask
        while self.table[i].slot != slot:
            i = (i + 1) & self.table_mask
        self.table[i].tag = ~self.table[i].tag


# --- helpers ----------------------------------------------------------------------------------------------

cdef int compare_keys(const void *p, const void *q) noexcept nogil:
    cdef uint64_t x = (<const uint64_t *>p)[0], y = (<const uint64_t *>q)[0]
    return (x > y) - (x < y)

cdef Py_ssize_t sorted_unique(uint64_t *keys, Py_ssize_t size) noexcept nogil:
    """Sort ``keys`` and keep each once; how many are left.  A word's pairs are a few: an insertion sort, in
    place, unless there are many."""
    cdef Py_ssize_t i, j, kept = 0
    cdef uint64_t key
    if size > 32:
        qsort(keys, size, sizeof(uint64_t), compare_keys)
    else:
        for i in range(1, size):
            key = keys[i]
            j = i
            while j > 0 and keys[j - 1] > key:
                keys[j] = keys[j - 1]
                j -= 1
            keys[j] = key
    for i in range(size):
        if kept == 0 or keys[kept - 1] != keys[i]:
            keys[kept] = keys[i]
            kept += 1
    return kept

cdef uint32_t moved_ref(uint32_t ref, uint32_t *old_refs, uint32_t *new_refs, Py_ssize_t size) noexcept nogil:
    """A record's new ref after widening: its old one found among the old refs, which are sorted."""
    cdef Py_ssize_t lo = 0, hi = size - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if old_refs[mid] < ref:
            lo = mid + 1
        else:
            hi = mid
    return new_refs[lo]

cpdef int32_t checked_word_length(Py_ssize_t length) except -1:
    """A pre-token's length as a record's 16-bit length, or :class:`WordTooLong` past 65,535 bytes.  Public
    for its tests."""
    if length > MAX_WORD_BYTES:
        raise WordTooLong(f"a pre-token of {length:,} bytes is longer than v10's records hold "
                          f"({MAX_WORD_BYTES:,} bytes): v9's merge takes it")
    return <int32_t>length

cpdef int32_t doubled_capacity(int32_t capacity) except -1:
    """Twice a 32-bit capacity, or a clear error past 2**31-1 (as v8)."""
    if capacity > INT32_MAX // 2:
        raise OverflowError(f"v10 cannot grow past {capacity} entries: twice that passes 2**31-1")
    return 2 * capacity

cdef inline uint32_t value_at(uint32_t *entries, uint32_t k) noexcept nogil:
    return entries[k] & ~DEAD

cdef uint32_t find_place(uint32_t *entries, uint32_t size, uint32_t ref, uint32_t hint) noexcept nogil:
    """The first place whose ref (the dead bit aside) is not below ``ref``, in a sorted list of ``size``.

    The words of one merge that leave a pair come in ref order, so after the first each is found by a gallop
    (steps of 1, 2, 4, ...) from ``hint``, the place of the last one (NO_HINT: none).  The first is found by
    interpolation: where its ref falls between the bracket's two ends, as a share of their gap (a pair's
    words are spread fairly evenly over the block), a few times, then a scan of the last few entries.  Each
    guess is a read that usually misses the cache, and a long list takes three or four, where a binary
    search would take twenty."""
    cdef uint32_t lo, hi, step, guess, low, high, value
    cdef int guesses = 0
    if size == 0:
        return 0
    if hint < size and value_at(entries, hint) < ref:
        lo = hint  # entries[lo] < ref: gallop forward
        step = 1
        while lo + step < size and value_at(entries, lo + step) < ref:
            lo += step
            step *= 2
        return bracket(entries, lo, min(lo + step, size), ref)
    low = value_at(entries, 0)
    if low >= ref:
        return 0
    high = value_at(entries, size - 1)
    if high < ref:
        return size
    lo, hi = 0, size - 1  # entries[lo] = low < ref <= high = entries[hi]
    while hi - lo > 16:
        if guesses < 6:
            guess = lo + <uint32_t>((<uint64_t>(ref - low) * (hi - lo)) // (high - low))
            guess = min(max(guess, lo + 1), hi - 1)
            guesses += 1
        else:  # the refs are not spread evenly here: halve
            guess = (lo + hi) >> 1
        value = value_at(entries, guess)
        if value < ref:
            lo, low = guess, value
        else:
            hi, high = guess, value
    return bracket(entries, lo, hi, ref)

cdef inline uint32_t bracket(uint32_t *entries, uint32_t lo, uint32_t hi, uint32_t ref) noexcept nogil:
    """The first place in (lo, hi] not below ``ref``, given entries[lo] < ref and entries[hi] >= ref (hi may be
    the list's end): a binary search."""
    cdef uint32_t middle
    lo += 1
    while lo < hi:
        middle = (lo + hi) >> 1
        if value_at(entries, middle) < ref:
            lo = middle + 1
        else:
            hi = middle
    return lo

cdef inline uint32_t checked_capacity(int64_t capacity) except? 0:
    if capacity > INT32_MAX or capacity < 1:
        raise OverflowError(f"v10 cannot list {capacity} words under one pair: past 2**31-1")
    return <uint32_t>capacity

cdef inline int32_t checked_int32(Py_ssize_t value) except? -1:
    if value > INT32_MAX:
        raise OverflowError(f"{value} does not fit in 32 bits")
    return <int32_t>value

def longest_pretoken(pretoken_counts):
    """The longest pre-token's length in bytes, read where the counts are (v9's arrays, or a dict's keys):
    the rung runs v9's merge when it passes :data:`MAX_WORD_BYTES`."""
    cdef const int64_t[::1] ends
    cdef Py_ssize_t i
    cdef int64_t longest = 0, start = 0
    if isinstance(pretoken_counts, dict):
        return max(map(len, pretoken_counts), default=0)
    ends = pretoken_counts.pretoken_arrays()[1]
    for i in range(ends.shape[0]):
        if ends[i] - start > longest:
            longest = ends[i] - start
        start = ends[i]
    return longest

cdef inline int64_t checked_count(object value) except? -1:
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
    """The pre-token at ``*position`` (then moved on), as v8 reads it."""
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
