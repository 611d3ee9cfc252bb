# BPE on one pre-token, included (textually) by the compiled encoder, ``_encoder.pyx``, after its tables
# (``_encoder_tables.pxi``): the merge procedure of ``Tokenizer._bpe``, on two small arrays for a short
# pre-token and with a min-heap over a linked list for a long one.

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


