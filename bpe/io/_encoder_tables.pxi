# The encoder's tables, included (textually) by the compiled encoder, ``_encoder.pyx``: the merges, (left id,
# right id) -> rank, and the cache, pre-token bytes -> ids, one per thread.  Everything here runs without the GIL
# and reports failure by its return value; the enums and limits it reads are ``_encoder.pyx``'s.

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


