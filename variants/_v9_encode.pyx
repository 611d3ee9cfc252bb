# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled encoder: text -> token ids with v9's scanner, the merges in C, a C cache per thread.

``bpe encode`` and the :class:`~bpe.io.tokenizer.Tokenizer`'s bulk path (``encode_packed``) use it where
it is built (:mod:`bpe.io.compiled` builds it from a tokenizer and falls back to the Python path where it
is not).  The ids are those of the Python path exactly: the same split, the same merge procedure.  Each
structure below replaces one of the Python path's:

* the **scanner** (``scan_piece`` and ``find_special``, from ``_gpt2_scanner.pxi``, the very code v9
  counts with) replaces the fast pre-tokenizer (``split_pretokens``: ``re`` and ``regex`` over a
  ``str``) and the special-token ``regex.split``: the bytes are never decoded, no pre-token is ever a
  Python string;
* the **merge table** (``Merges``) replaces ``Tokenizer._pair_rank``, a dict of id pairs: open
  addressing keyed by the two ids in one 64-bit word, the rank in the slot, and the pair and merged id
  of each rank in three arrays;
* **BPE on a miss** (``bpe``) replaces ``Tokenizer._bpe``'s lists, with the same procedure: on two small
  arrays for a pre-token of up to 32 bytes (``bpe_short``), on a linked list with a min-heap of (rank,
  position) for a longer one, so a long pre-token (a line of 10,000 ``=``) costs ``n log n``, not the
  list's ``n`` per merge;
* the **cache** (``CacheState``) replaces the ``dict`` from pre-token to packed ids: open addressing on
  a hash of the bytes, a short key and a one-token value kept in the slot, longer ones in two arenas;
  one per thread, so the threads share nothing while they encode, and, like the dict, emptied when it
  is full, so its memory is bounded whatever the text;
* the **output** is the caller's buffer of 16- or 32-bit ids, written in order as the scanner hands
  out the pre-tokens: no list of ids, no ``bytes.join``.

Every function below that runs without the GIL reports failure by its return value (an allocation that
failed, bytes that are not UTF-8, a byte the vocab has no token for, a stop asked for); ``Encoder.encode``
turns each into one exception.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset

cdef extern from "_hints.h":
    void prefetch "BPE_PREFETCH"(const void *p) nogil

include "_gpt2_scanner.pxi"

# The encoder's own results, below the scanner's (an Emit may return its own below -4).
cdef enum:
    MISSING_BYTE = -5        # a byte of the text has no token in the vocab (*missing: which)
    OUT_FULL = -6            # the output buffer cannot hold the ids (the caller sized it wrong)
    BROKEN = -7              # an invariant did not hold (a heap past its bound, a special token lost): cannot happen

cdef enum:
    INLINE = 16              # keys this long or shorter live in their cache slot
    CACHED_LENGTH = 256      # longer pre-tokens are encoded each time: rare, mostly unique, and long
    SCRATCH_KEEP = 1 << 16   # scratch grown past this many bytes for one pre-token is let go after it
    STOP_EVERY = 1 << 12     # merges of one pre-token between two looks at the stop flag
    SHORT = 32               # pre-tokens up to this long are merged on arrays, longer ones with a heap
    AHEAD = 8                # pre-tokens whose cache slots are fetched before the first is looked up

#: Pre-tokens a cache holds before it is emptied, as ``bpe.io.tokenizer.CACHE_SIZE`` for the dict.
CACHE_ENTRIES = 1 << 18
#: Bytes of long keys, and ids of pre-tokens of several tokens, a cache holds before it is emptied: with
#: CACHE_ENTRIES they bound a cache's memory at about 16 MB of slots and 16 MB of each arena.
cdef size_t KEY_ARENA_LIMIT = 1 << 24
cdef size_t ID_ARENA_LIMIT = 1 << 22

cdef uint32_t NO_RANK = 0xFFFFFFFF


# --- The merges: (left id, right id) -> rank ---------------------------------------------------------------
# The Python path's ``_pair_rank`` maps an id pair to its rank, and ``_rank_merged`` a rank to the id
# made; ids need not follow ranks (GPT-2's vocab numbers its tokens its own way), so both are kept.  Only
# pairs whose three tokens are in the vocab are here (``_build_id_merges`` drops the rest), and each
# pair once, so a rank names one pair: BPE checks a heap entry against ``left[rank]`` and ``right[rank]``.
# A slot is 16 bytes: the pair as one word (compared at once) and the rank plus one (0: empty).  The
# table is at most half full; Fibonacci hashing spreads the pairs of neighbouring ids over it.

ctypedef struct MergeSlot:
    uint64_t pair
    uint32_t rank1
    uint32_t unused

ctypedef struct Merges:
    MergeSlot *slots
    size_t mask
    int shift                # 64 - log2(slots): the top bits of the product pick the slot
    uint32_t count
    uint32_t *left
    uint32_t *right
    uint32_t *merged
    int64_t byte_id[256]     # the id of each single byte, -1 where the vocab has none


cdef inline size_t pair_slot(const Merges *m, uint64_t pair) noexcept nogil:
    return <size_t>((pair * 0x9E3779B97F4A7C15ULL) >> m.shift)


cdef inline uint32_t rank_of(const Merges *m, uint32_t a, uint32_t b) noexcept nogil:
    """The rank of the merge of ``a`` then ``b``, or NO_RANK."""
    cdef uint64_t pair = (<uint64_t>a << 32) | b
    cdef size_t i = pair_slot(m, pair)
    cdef const MergeSlot *s
    while True:
        s = &m.slots[i]
        if s.rank1 == 0:
            return NO_RANK
        if s.pair == pair:
            return s.rank1 - 1
        i = (i + 1) & m.mask


# --- The cache: pre-token bytes -> ids ------------------------------------------------------------------
# Most pre-tokens of any text repeat (14 MB of books: 3.3 million pre-tokens, 65,000 distinct), so BPE
# runs once per distinct pre-token and every other occurrence is a probe and a copy.  A slot is 32 bytes:
# the hash (compared before any key byte), the length (0: empty; no pre-token is empty), how many ids,
# and either the one id itself (most words are one token) or where the ids start in the id arena; the key
# itself when it has 16 bytes or fewer, else its offset in the key arena.  Arenas hold offsets, not
# pointers, so they may move as they grow.  The table is at most half full; it grows by doubling up to
# twice ``entries`` slots, and when ``entries`` pre-tokens (or an arena's limit) are reached it is emptied
# and fills again, which keeps the memory bounded as the Python path's ``CACHE_SIZE`` does.

ctypedef struct Entry:
    uint32_t hash
    uint32_t length
    uint32_t count
    uint32_t value           # the id (count 1), or the offset of the ids in the id arena
    uint8_t key[INLINE]      # the key, or (longer than INLINE) its offset in the key arena, 8 bytes

ctypedef struct CacheState:
    Entry *slots
    size_t mask
    size_t used
    size_t entries           # the most pre-tokens held before it is emptied
    size_t max_slots         # the table grows up to this many slots
    uint8_t *keys            # the key arena
    size_t keys_used, keys_capacity
    uint32_t *ids            # the id arena
    size_t ids_used, ids_capacity
    # BPE's scratch, for one pre-token of up to scratch_capacity bytes
    uint32_t *work           # the ids of the nodes (a node per byte at first)
    int32_t *next_node       # the next live node, n at the end; -1: merged into the node before it
    int32_t *prev_node       # the previous live node, -1 at the start
    uint64_t *heap           # (rank << 32 | node): the candidate merges, lowest rank then leftmost first
    uint64_t *taken          # the entries of one rank, popped before any is merged
    size_t scratch_capacity
    int stop                 # raised by Cache.stop() from another thread


cdef inline uint32_t hash_key(const uint8_t *p, size_t n) noexcept nogil:
    """A 32-bit hash of the bytes: a multiply and a rotate per 8 bytes, then a final mix (splitmix64's)
    so that the low bits, which pick the slot, depend on every byte."""
    cdef uint64_t h = 0x243F6A8885A308D3ULL + n, w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL
        h = (h << 23) | (h >> 41)
        p += 8
        n -= 8
    if n:
        w = 0
        memcpy(&w, p, n)
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL
    h ^= h >> 30
    h *= 0xBF58476D1CE4E5B9ULL
    h ^= h >> 27
    h *= 0x94D049BB133111EBULL
    h ^= h >> 31
    return <uint32_t>h


cdef inline const uint8_t *key_of(const CacheState *c, const Entry *e) noexcept nogil:
    cdef uint64_t offset
    if e.length <= INLINE:
        return e.key
    memcpy(&offset, e.key, sizeof(offset))
    return c.keys + offset


cdef inline Entry *find(CacheState *c, const uint8_t *key, uint32_t length, uint32_t h) noexcept nogil:
    """The slot holding ``key``, or the empty slot where it would go (its ``length`` is then 0)."""
    cdef size_t i = h & c.mask
    cdef Entry *e
    while True:
        e = &c.slots[i]
        if e.length == 0:
            return e
        if e.hash == h and e.length == length and memcmp(key_of(c, e), key, length) == 0:
            return e
        i = (i + 1) & c.mask


cdef int cache_init(CacheState *c, size_t entries) noexcept nogil:
    """An empty cache for up to ``entries`` pre-tokens: NO_MEMORY when its first slots cannot be had."""
    cdef size_t slots = 1 << 12
    memset(c, 0, sizeof(CacheState))
    c.entries = entries
    c.max_slots = 16
    while c.max_slots < 2 * entries:
        c.max_slots *= 2
    if slots > c.max_slots:
        slots = c.max_slots
    c.slots = <Entry *>calloc(slots, sizeof(Entry))
    if c.slots == NULL:
        return NO_MEMORY
    c.mask = slots - 1
    return DONE


cdef void free_scratch(CacheState *c) noexcept nogil:
    free(c.work)
    free(c.next_node)
    free(c.prev_node)
    free(c.heap)
    free(c.taken)
    c.work = NULL
    c.next_node = c.prev_node = NULL
    c.heap = c.taken = NULL
    c.scratch_capacity = 0


cdef void cache_free(CacheState *c) noexcept nogil:
    free(c.slots)
    free(c.keys)
    free(c.ids)
    free_scratch(c)
    c.slots = NULL
    c.keys = NULL
    c.ids = NULL
    c.mask = c.used = 0
    c.keys_used = c.keys_capacity = c.ids_used = c.ids_capacity = 0


cdef void cache_empty(CacheState *c) noexcept nogil:
    """Every pre-token forgotten; the slots and arenas are kept for the next ones."""
    memset(c.slots, 0, (c.mask + 1) * sizeof(Entry))
    c.used = 0
    c.keys_used = 0
    c.ids_used = 0


cdef int cache_grow(CacheState *c) noexcept nogil:
    """Twice the slots, every entry moved by its kept hash.  The new array is had before the old one is
    let go, so a cache that cannot grow is still whole."""
    cdef size_t capacity = (c.mask + 1) * 2, i, j
    cdef Entry *slots = <Entry *>calloc(capacity, sizeof(Entry))
    if slots == NULL:
        return NO_MEMORY
    for i in range(c.mask + 1):
        if c.slots[i].length != 0:
            j = c.slots[i].hash & (capacity - 1)
            while slots[j].length != 0:
                j = (j + 1) & (capacity - 1)
            slots[j] = c.slots[i]
    free(c.slots)
    c.slots = slots
    c.mask = capacity - 1
    return DONE


cdef void *room(void *arena, size_t *capacity, size_t used, size_t more, size_t item) noexcept nogil:
    """The arena, grown (doubling) to hold ``more`` items of ``item`` bytes after ``used``; NULL when it
    cannot be had (the arena is then unchanged)."""
    cdef size_t wanted = capacity[0] if capacity[0] else 1024
    cdef void *grown
    if used + more <= capacity[0]:
        return arena
    while wanted < used + more:
        wanted *= 2
    if wanted > (<size_t>-1) // item:
        return NULL
    grown = realloc(arena, wanted * item)
    if grown != NULL:
        capacity[0] = wanted
    return grown


cdef int remember(CacheState *c, Entry *e, const uint8_t *key, uint32_t length, uint32_t h,
                  const uint32_t *ids, size_t count) noexcept nogil:
    """Keep ``key`` -> ``ids`` in the empty slot ``e`` that ``find`` gave (the cache may be emptied or
    grown first, and the slot found again)."""
    cdef uint64_t offset
    cdef bint long_key = length > INLINE
    cdef void *grown
    if (c.used + 1 > c.entries or (long_key and c.keys_used + length > KEY_ARENA_LIMIT)
            or (count > 1 and c.ids_used + count > ID_ARENA_LIMIT)):
        cache_empty(c)
        e = find(c, key, length, h)
    elif (c.used + 1) * 2 > c.mask + 1 and c.mask + 1 < c.max_slots:
        if cache_grow(c) != DONE:
            return NO_MEMORY
        e = find(c, key, length, h)
    if long_key:
        grown = room(c.keys, &c.keys_capacity, c.keys_used, length, 1)
        if grown == NULL:
            return NO_MEMORY
        c.keys = <uint8_t *>grown
        memcpy(c.keys + c.keys_used, key, length)
        offset = c.keys_used
        memcpy(e.key, &offset, sizeof(offset))
        c.keys_used += length
    else:
        memcpy(e.key, key, length)
    if count == 1:
        e.value = ids[0]
    else:
        grown = room(c.ids, &c.ids_capacity, c.ids_used, count, sizeof(uint32_t))
        if grown == NULL:
            if long_key:
                c.keys_used -= length
            return NO_MEMORY
        c.ids = <uint32_t *>grown
        memcpy(c.ids + c.ids_used, ids, count * sizeof(uint32_t))
        e.value = <uint32_t>c.ids_used    # below ID_ARENA_LIMIT, so it fits
        c.ids_used += count
    e.hash = h
    e.count = <uint32_t>count              # at most CACHED_LENGTH
    e.length = length                      # last: a slot with a length is a full one
    c.used += 1
    return DONE


# --- BPE on one pre-token -----------------------------------------------------------------------------------
# What ``Tokenizer._bpe`` does, step for step: take the lowest rank among the pre-token's adjacent pairs,
# merge every occurrence of that pair left to right, and again, until no adjacent pair is a merge.
#
# A pre-token of up to SHORT bytes (nearly every distinct one) runs ``_bpe``'s own loop on two arrays on
# the stack (``bpe_short``).  Measured on 4 MB of web-like text with GPT-2's merges, 150,000 distinct
# pre-tokens: the heap below for every pre-token took 0.19 s, the arrays for the short ones 0.12 s.  The
# time left is mostly the merge table's lookups, two after each merge, whose slots are fetched together.
#
# A longer pre-token starts as one node per byte, in a doubly linked list (a merge unlinks the right node, no
# memmove), and every adjacent pair that is a merge goes into a min-heap as (rank << 32 | left node):
# the lowest rank first and, among its entries, the leftmost first.  A merge does not remove the entries
# of the pairs it destroyed (a heap cannot, cheaply); an entry is checked when it is popped, and it still
# holds when its node is alive and the pair there now is its rank's pair (ids are canonical, one per byte
# string, and a token only grows, so a pair that changed cannot come back).  A merge pushes the two pairs
# it makes.  Those never have the rank being merged (that pair's right token is shorter than the token
# just made), so all the entries of the lowest rank are popped first, then merged in node order: that is
# "every occurrence, left to right" (in ``aaaa`` the entry at node 1 finds its node gone, the one at node
# 2 still holds).  The new pairs' entries wait in the heap until the lowest rank is done, whatever their
# rank, as the Python path re-reads the lowest rank only then.  Each merge pops its own entry and pushes
# two, so the heap never holds more than n - 1 + merges < 2n entries.

cdef inline int heap_push(uint64_t *heap, size_t *size, size_t capacity, uint64_t value) noexcept nogil:
    """DONE, or BROKEN where the heap is full (the bound above says it cannot be)."""
    cdef size_t i = size[0], parent
    if i >= capacity:
        return BROKEN
    size[0] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= value:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = value
    return DONE


cdef inline uint64_t heap_pop(uint64_t *heap, size_t *size) noexcept nogil:
    cdef uint64_t top = heap[0], last
    cdef size_t n = size[0] - 1, i = 0, child
    size[0] = n
    if n == 0:
        return top
    last = heap[n]
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last
    return top


cdef int ensure_scratch(CacheState *c, size_t n) noexcept nogil:
    """Scratch for a pre-token of ``n`` bytes (``n`` is below 2**31, so the node numbers fit in 32 bits)."""
    cdef size_t capacity
    if n <= c.scratch_capacity:
        return DONE
    capacity = c.scratch_capacity * 2 if c.scratch_capacity else 64
    if capacity < n:
        capacity = n
    if capacity > <size_t>MAX_TOKEN:
        capacity = n
    if capacity > (<size_t>-1) // (2 * sizeof(uint64_t)):  # 2n heap entries must not overflow a size
        return NO_MEMORY
    free_scratch(c)
    c.work = <uint32_t *>malloc(capacity * sizeof(uint32_t))
    c.next_node = <int32_t *>malloc(capacity * sizeof(int32_t))
    c.prev_node = <int32_t *>malloc(capacity * sizeof(int32_t))
    c.heap = <uint64_t *>malloc(2 * capacity * sizeof(uint64_t))
    c.taken = <uint64_t *>malloc(2 * capacity * sizeof(uint64_t))
    if c.work == NULL or c.next_node == NULL or c.prev_node == NULL or c.heap == NULL or c.taken == NULL:
        free_scratch(c)
        return NO_MEMORY
    c.scratch_capacity = capacity
    return DONE


cdef int byte_ids(const Merges *m, const uint8_t *p, int32_t n, uint32_t *work, int *missing) noexcept nogil:
    """``work[:n]``: the id of each byte of ``p[:n]``, its first merge candidates' slots fetched ahead (their
    misses overlap); DONE, or MISSING_BYTE (``*missing``: the first byte with no token)."""
    cdef int32_t k
    cdef int64_t b
    for k in range(n):
        b = m.byte_id[p[k]]
        if b < 0:
            missing[0] = p[k]
            return MISSING_BYTE
        work[k] = <uint32_t>b              # checked to fit when the encoder was built
    for k in range(n - 1):
        prefetch(&m.slots[pair_slot(m, (<uint64_t>work[k] << 32) | work[k + 1])])
    return DONE


cdef int bpe_short(const Merges *m, uint32_t *work, const uint8_t *p, int n, size_t *count,
                   int *missing) noexcept nogil:
    """``bpe`` for a pre-token of 2 to SHORT bytes, by the Python path's own procedure on two small arrays:
    the ids, and the rank of each adjacent pair; find the lowest rank, merge there, re-rank the two
    neighbours, go on to its next occurrence to the right; again.  Most distinct pre-tokens are a few
    bytes long, and for them a scan and a shift of a few words cost less than the heap's pushes and pops."""
    cdef uint32_t ranks[SHORT]
    cdef int k, i, size = n
    cdef uint32_t best, merged
    if byte_ids(m, p, n, work, missing) != DONE:
        return MISSING_BYTE
    for k in range(n - 1):
        ranks[k] = rank_of(m, work[k], work[k + 1])
    while size > 1:
        best, i = NO_RANK, -1
        for k in range(size - 1):          # the lowest rank, its leftmost pair
            if ranks[k] < best:
                best, i = ranks[k], k
        if i < 0:
            break
        merged = m.merged[best]
        while True:                        # every occurrence, left to right
            work[i] = merged
            for k in range(i + 1, size - 1):
                work[k] = work[k + 1]
            for k in range(i, size - 2):
                ranks[k] = ranks[k + 1]
            size -= 1
            if i > 0:
                prefetch(&m.slots[pair_slot(m, (<uint64_t>work[i - 1] << 32) | merged)])
            if i + 1 < size:
                prefetch(&m.slots[pair_slot(m, (<uint64_t>merged << 32) | work[i + 1])])
                ranks[i] = rank_of(m, merged, work[i + 1])   # has the new token: never ``best``
            if i > 0:
                ranks[i - 1] = rank_of(m, work[i - 1], merged)
            k = i + 1
            while k < size - 1 and ranks[k] != best:
                k += 1
            if k >= size - 1:
                break
            i = k
    count[0] = <size_t>size
    return DONE


cdef int bpe(const Merges *m, CacheState *c, const uint8_t *p, Py_ssize_t length, size_t *count,
             int *missing) noexcept nogil:
    """The ids of the pre-token ``p[:length]`` (1 to MAX_TOKEN bytes) into ``c.work[:*count]``: DONE,
    MISSING_BYTE (``*missing``: the first byte with no token), NO_MEMORY or STOPPED."""
    cdef int32_t n = <int32_t>length       # the caller checked length <= MAX_TOKEN
    cdef int32_t k, node, right, before, after
    cdef size_t size = 0, taken, t, merges = 0, out, capacity = 2 * <size_t>n
    cdef uint32_t rank, r, left_id, right_id, merged
    cdef uint32_t *work
    cdef int32_t *next_node
    cdef int32_t *prev_node
    if ensure_scratch(c, <size_t>n) != DONE:
        return NO_MEMORY
    if 1 < n <= SHORT:
        return bpe_short(m, c.work, p, n, count, missing)
    work, next_node, prev_node = c.work, c.next_node, c.prev_node
    if byte_ids(m, p, n, work, missing) != DONE:
        return MISSING_BYTE
    for k in range(n):
        next_node[k] = k + 1
        prev_node[k] = k - 1
    for k in range(n - 1):
        r = rank_of(m, work[k], work[k + 1])
        if r != NO_RANK and heap_push(c.heap, &size, capacity, (<uint64_t>r << 32) | <uint32_t>k) != DONE:
            return BROKEN
    while size:
        rank = <uint32_t>(c.heap[0] >> 32)
        taken = 0
        while size and <uint32_t>(c.heap[0] >> 32) == rank:
            c.taken[taken] = heap_pop(c.heap, &size)
            taken += 1
        left_id, right_id, merged = m.left[rank], m.right[rank], m.merged[rank]
        for t in range(taken):
            node = <int32_t><uint32_t>c.taken[t]   # the low 32 bits: the node, below 2**31
            right = next_node[node]
            if right < 0 or right >= n or work[node] != left_id or work[right] != right_id:
                continue                   # gone, or no longer this pair
            work[node] = merged
            after = next_node[right]
            next_node[node] = after
            if after < n:
                prev_node[after] = node
            next_node[right] = -1
            before = prev_node[node]
            if before >= 0:  # both new pairs' slots fetched before either is read
                prefetch(&m.slots[pair_slot(m, (<uint64_t>work[before] << 32) | merged)])
            if after < n:
                prefetch(&m.slots[pair_slot(m, (<uint64_t>merged << 32) | work[after])])
            if before >= 0:
                r = rank_of(m, work[before], merged)
                if r != NO_RANK and heap_push(c.heap, &size, capacity, (<uint64_t>r << 32) | <uint32_t>before) != DONE:
                    return BROKEN
            if after < n:
                r = rank_of(m, merged, work[after])
                if r != NO_RANK and heap_push(c.heap, &size, capacity, (<uint64_t>r << 32) | <uint32_t>node) != DONE:
                    return BROKEN
            merges += 1
            if merges % STOP_EVERY == 0 and V9_LOAD(&c.stop):
                return STOPPED
    out = 0                                # the live nodes, in order, to the front
    k = 0
    while k < n:
        work[out] = work[k]
        out += 1
        k = next_node[k]
    count[0] = out
    return DONE


# --- Encoding a text: the scanner's pre-tokens, each looked up or encoded, ids written in order ------------

ctypedef struct Specials:
    const uint8_t **tokens   # longest first, as find_special wants them
    Py_ssize_t *lengths
    uint32_t *ids
    uint8_t starts[256]
    int one_start
    int count

ctypedef struct Waiting:
    const uint8_t *pretoken
    Py_ssize_t length
    uint32_t hash            # its hash, when it is short enough to be cached

ctypedef struct Sink:
    const Merges *merges
    CacheState *cache
    uint8_t *out
    Py_ssize_t written       # ids written so far
    Py_ssize_t capacity      # ids the output holds
    int width                # 2 or 4 bytes an id
    int missing
    Waiting ring[AHEAD]      # pre-tokens found, not yet looked up (see "A few pre-tokens in flight")
    int ring_next            # where the next one goes, and the oldest one waits when the ring is full
    int ring_size


cdef inline int write_ids(Sink *s, const uint32_t *ids, size_t count) noexcept nogil:
    """``ids`` appended to the output, each as ``width`` bytes (memcpy: the buffer need not be aligned)."""
    cdef size_t k
    cdef uint16_t narrow
    if <Py_ssize_t>count > s.capacity - s.written:
        return OUT_FULL
    if s.width == 4:
        memcpy(s.out + s.written * 4, ids, count * 4)
    else:
        for k in range(count):
            narrow = <uint16_t>ids[k]      # every id fits: checked when the encoder was built with width 2
            memcpy(s.out + (s.written + <Py_ssize_t>k) * 2, &narrow, 2)
    s.written += count
    return DONE


cdef int resolve(Sink *s, const uint8_t *pretoken, Py_ssize_t length, uint32_t h) noexcept nogil:
    """One pre-token's ids written: from the cache, or by BPE (then cached, when it is short enough)."""
    cdef CacheState *c = s.cache
    cdef Entry *e = NULL
    cdef size_t count = 0
    cdef int result
    if length <= CACHED_LENGTH:
        e = find(c, pretoken, <uint32_t>length, h)
        if e.length != 0:
            if e.count == 1:
                return write_ids(s, &e.value, 1)
            return write_ids(s, c.ids + e.value, e.count)
    result = bpe(s.merges, c, pretoken, length, &count, &s.missing)
    if result != DONE:
        return result
    if e != NULL:
        result = remember(c, e, pretoken, <uint32_t>length, h, c.work, count)
        if result != DONE:
            return result
    result = write_ids(s, c.work, count)
    if c.scratch_capacity > SCRATCH_KEEP:  # one very long pre-token: its scratch is not kept
        free_scratch(c)
    return result


# --- A few pre-tokens in flight ------------------------------------------------------------------------------
# A cache of a few hundred thousand pre-tokens is megabytes: the slot of a word met once in a while is a
# miss to memory, and measured on 4 MB of varied text, a quarter of the time was spent waiting on them.
# So, as v9's counter does, a pre-token's slot is fetched as soon as the scanner finds it and the pre-token
# is looked up AHEAD pre-tokens later, when its line has arrived, with up to AHEAD fetches on their way at
# once.  The pre-tokens wait in a ring, oldest first, so the ids still come out in the text's order; the
# ring is emptied before a special token's id is written and at the end of the text.

cdef int encode_one(void *sink, const uint8_t *pretoken, Py_ssize_t length) noexcept nogil:
    """The scanner's ``Emit`` for encoding: the pre-token's slot fetched, the oldest waiting one resolved."""
    cdef Sink *s = <Sink *>sink
    cdef Waiting *oldest
    cdef uint32_t h = 0
    cdef int result = DONE
    if length > MAX_TOKEN:
        return TOO_LONG
    if length <= CACHED_LENGTH:
        h = hash_key(pretoken, <size_t>length)
        prefetch(&s.cache.slots[h & s.cache.mask])
    oldest = &s.ring[s.ring_next]
    if s.ring_size == AHEAD:
        result = resolve(s, oldest.pretoken, oldest.length, oldest.hash)
    else:
        s.ring_size += 1
    oldest.pretoken, oldest.length, oldest.hash = pretoken, length, h
    s.ring_next = (s.ring_next + 1) % AHEAD
    return result


cdef int flush(Sink *s) noexcept nogil:
    """Resolve every waiting pre-token, oldest first."""
    cdef int k, result
    cdef Waiting *w
    for k in range(s.ring_size):
        w = &s.ring[(s.ring_next - s.ring_size + k + AHEAD) % AHEAD]
        result = resolve(s, w.pretoken, w.length, w.hash)
        if result != DONE:
            return result
    s.ring_size = s.ring_next = 0
    return DONE


cdef int encode_text(const Classes *classes, const Specials *sp, const uint8_t *p, Py_ssize_t n, Sink *s,
                     Py_ssize_t *bad) noexcept nogil:
    """Every id of ``p[:n]`` into the sink: the special tokens split out (their ids), each piece between
    them scanned.  DONE or why not; BAD_UTF8 with ``*bad`` the offset in ``p``."""
    cdef Py_ssize_t i = 0, end, found = 0, checked = 0
    cdef int result, k
    cdef int *stop = &s.cache.stop
    if V9_LOAD(stop):
        return STOPPED
    while True:
        if sp.count:
            end = find_special(p, i, n, sp.tokens, sp.lengths, sp.count, sp.starts, sp.one_start, &found)
        else:
            end = n
        if end > i:
            result = scan_piece(classes, p + i, end - i, encode_one, s, stop, bad)
            if result != DONE:
                if result == BAD_UTF8:
                    bad[0] += i
                return result
        result = flush(s)
        if result != DONE or end >= n:
            return result
        for k in range(sp.count):  # which token: at most one of each length matches here
            if sp.lengths[k] == found and memcmp(p + end, sp.tokens[k], <size_t>found) == 0:
                break
        else:
            return BROKEN
        result = write_ids(s, &sp.ids[k], 1)
        if result != DONE:
            return result
        i = end + found
        if i - checked >= CHECK_EVERY:  # scan_piece looks only within a piece: short documents look here
            if V9_LOAD(stop):
                return STOPPED
            checked = i


cdef class Cache:
    """One thread's cache of pre-token -> ids, BPE's scratch, and its stop flag.  A cache is used by one
    call at a time (``Encoder.encode`` refuses a busy one); keep one per thread."""

    cdef CacheState state
    cdef bint busy

    def __cinit__(self, Py_ssize_t entries=CACHE_ENTRIES):
        if entries < 1 or entries > 1 << 30:
            raise ValueError(f"a cache holds 1 to 2**30 pre-tokens, not {entries}")
        if cache_init(&self.state, <size_t>entries) != DONE:
            raise MemoryError()
        self.busy = False

    def __dealloc__(self):
        cache_free(&self.state)

    def stop(self):
        """Make the ``encode`` running on this cache return (a KeyboardInterrupt), within ``CHECK_EVERY``
        bytes, and every later one at once, until ``resume()``: Ctrl-C, or a failure in another thread."""
        V9_STORE(&self.state.stop, 1)

    def resume(self):
        """Let ``encode`` run again after a ``stop()``."""
        V9_STORE(&self.state.stop, 0)

    def __len__(self):
        """The distinct pre-tokens it holds."""
        return self.state.used


cdef class Encoder:
    """The merges, the byte ids, the special tokens and the character classes, read-only once built, so
    that any number of threads encode with it at once, each with its own :class:`Cache`.

    Built by :mod:`bpe.io.compiled` from a tokenizer: ``pairs[rank]`` is the id pair merged at that rank
    and ``merged[rank]`` the id it makes (``Tokenizer._pair_rank`` and ``_rank_merged``), ``byte_ids[b]``
    the id of byte ``b`` (None: none), ``specials`` the special tokens' ``(bytes, id)``, ``width`` 2 or 4
    (bytes an id takes in the output: every id must fit)."""

    cdef Classes classes
    cdef bytes stage1, stage2                 # kept alive: classes points into them
    cdef Merges merges
    cdef Specials specials
    cdef list special_bytes                   # kept alive: specials.tokens points into them
    cdef readonly int width

    def __cinit__(self, bytes stage1, bytes stage2, byte_ids, pairs, merged, specials, int width):
        cdef Py_ssize_t i, count, capacity
        cdef uint64_t pair, limit
        cdef size_t slot
        cdef int bits, starts
        cdef bytes token
        memset(&self.merges, 0, sizeof(Merges))
        memset(&self.specials, 0, sizeof(Specials))
        if width != 2 and width != 4:
            raise ValueError(f"an id takes 2 or 4 bytes, not {width}")
        self.width = width
        limit = 0xFFFF if width == 2 else 0xFFFFFFFF
        # the classes, as v9's Counter sets them up
        if len(stage1) != 2 * (0x110000 >> 8) or len(stage2) % 256 != 0:
            raise ValueError("the class tables have the wrong size")
        self.stage1, self.stage2 = stage1, stage2
        self.classes.stage1 = <const uint16_t *><const char *>self.stage1
        self.classes.stage2 = <const uint8_t *><const char *>self.stage2
        for i in range(0x110000 >> 8):
            if self.classes.stage1[i] * 256 >= len(stage2):
                raise ValueError("the class tables disagree")
        for i in range(128):
            self.classes.ascii[i] = self.classes.stage2[(<size_t>self.classes.stage1[0] << 8) | i]
        # the bytes
        if len(byte_ids) != 256:
            raise ValueError("byte_ids must name an id (or None) for each of the 256 bytes")
        for i in range(256):
            self.merges.byte_id[i] = -1 if byte_ids[i] is None else _checked_id(byte_ids[i], limit)
        # the merges, by rank
        count = len(pairs)
        if len(merged) != count:
            raise ValueError(f"{count} pairs but {len(merged)} merged ids")
        if count >= 0xFFFFFFFE:
            raise ValueError("too many merges for 32-bit ranks")
        self.merges.count = <uint32_t>count
        capacity, bits = 16, 4
        while capacity < 2 * count:
            capacity *= 2
            bits += 1
        self.merges.slots = <MergeSlot *>calloc(capacity, sizeof(MergeSlot))
        self.merges.left = <uint32_t *>malloc((count + 1) * sizeof(uint32_t))
        self.merges.right = <uint32_t *>malloc((count + 1) * sizeof(uint32_t))
        self.merges.merged = <uint32_t *>malloc((count + 1) * sizeof(uint32_t))
        if (self.merges.slots == NULL or self.merges.left == NULL or self.merges.right == NULL
                or self.merges.merged == NULL):
            raise MemoryError()
        self.merges.mask = capacity - 1
        self.merges.shift = 64 - bits
        for i in range(count):
            left, right = pairs[i]
            self.merges.left[i] = <uint32_t>_checked_id(left, limit)
            self.merges.right[i] = <uint32_t>_checked_id(right, limit)
            self.merges.merged[i] = <uint32_t>_checked_id(merged[i], limit)
            pair = (<uint64_t>self.merges.left[i] << 32) | self.merges.right[i]
            slot = pair_slot(&self.merges, pair)
            while self.merges.slots[slot].rank1 != 0:
                if self.merges.slots[slot].pair == pair:
                    raise ValueError(f"the pair ({left}, {right}) is given twice (ranks "
                                     f"{self.merges.slots[slot].rank1 - 1} and {i})")
                slot = (slot + 1) & self.merges.mask
            self.merges.slots[slot].pair = pair
            self.merges.slots[slot].rank1 = <uint32_t>(i + 1)
        # the special tokens, longest first
        self.special_bytes = sorted(specials, key=lambda item: len(item[0]), reverse=True)
        count = len(self.special_bytes)
        if count > 1 << 20:
            raise ValueError("too many special tokens")
        if count:
            self.specials.tokens = <const uint8_t **>malloc(count * sizeof(uint8_t *))
            self.specials.lengths = <Py_ssize_t *>malloc(count * sizeof(Py_ssize_t))
            self.specials.ids = <uint32_t *>malloc(count * sizeof(uint32_t))
            if self.specials.tokens == NULL or self.specials.lengths == NULL or self.specials.ids == NULL:
                raise MemoryError()
        for i in range(count):
            token, token_id = self.special_bytes[i]   # token: typed bytes, so anything else is a TypeError
            if len(token) == 0:
                raise ValueError("special tokens must not be empty")
            self.specials.tokens[i] = <const uint8_t *><const char *>token
            self.specials.lengths[i] = len(token)
            self.specials.ids[i] = <uint32_t>_checked_id(token_id, limit)
            self.specials.starts[self.specials.tokens[i][0]] = 1
        self.specials.count = <int>count
        starts = 0
        for i in range(256):
            starts += self.specials.starts[i]
        self.specials.one_start = self.specials.tokens[0][0] if starts == 1 else -1

    def __dealloc__(self):
        free(self.merges.slots)
        free(self.merges.left)
        free(self.merges.right)
        free(self.merges.merged)
        free(self.specials.tokens)
        free(self.specials.lengths)
        free(self.specials.ids)

    def encode(self, Cache cache not None, const uint8_t[::1] data, uint8_t[::1] out):
        """Encode ``data`` (UTF-8 text) into ``out``, ``width`` bytes an id, with ``cache`` (one thread's).

        ``out`` must hold ``width`` bytes for each byte of ``data`` (a text never has more ids than bytes).
        Returns the number of ids written, or ``-1 - offset`` where the byte at ``offset`` is not UTF-8 (the
        ids before it are written; the caller decides what to say).  Raises ``KeyError`` for a byte the
        vocab has no token for (as ``Tokenizer._bpe``), ``KeyboardInterrupt`` after ``cache.stop()``,
        ``MemoryError``, and ``ValueError`` for a pre-token of 2 GiB or more."""
        cdef Py_ssize_t n = data.shape[0], bad = -1
        cdef int result
        cdef Sink sink
        if out.shape[0] // self.width < n:
            raise ValueError(f"the output holds {out.shape[0] // self.width} ids; {n} bytes of text may need {n}")
        if cache.busy:
            raise RuntimeError("this cache is in use by another call: keep one cache per thread")
        if n == 0:
            return 0
        sink.merges = &self.merges
        sink.cache = &cache.state
        sink.out = &out[0]
        sink.written = 0
        sink.capacity = out.shape[0] // self.width
        sink.width = self.width
        sink.missing = -1
        sink.ring_next = sink.ring_size = 0
        cache.busy = True
        try:
            with nogil:
                result = encode_text(&self.classes, &self.specials, &data[0], n, &sink, &bad)
        finally:
            cache.busy = False
        if result == DONE:
            return sink.written
        if result == BAD_UTF8:
            return -1 - bad
        if result == NO_MEMORY:
            raise MemoryError()
        if result == STOPPED:
            raise KeyboardInterrupt()
        if result == MISSING_BYTE:
            raise KeyError(f"byte 0x{sink.missing:02x} has no token in the vocab")
        if result == TOO_LONG:
            raise ValueError("a pre-token of 2 GiB or more: the compiled encoder numbers its bytes in 32 bits")
        raise AssertionError(f"the compiled encoder failed with code {result}")


cdef int64_t _checked_id(object value, uint64_t limit) except -1:
    """``value`` as an id, which must be an int from 0 to ``limit``: the narrowing casts rely on it."""
    if not isinstance(value, int) or value < 0 or value > limit:
        raise ValueError(f"token id {value!r} does not fit in {'16' if limit == 0xFFFF else '32'} bits")
    return <int64_t>value
