# A text encoded, included (textually) by the compiled encoder, ``_encoder.pyx``, after its tables and BPE: the
# scanner's pre-tokens, each looked up in the cache or encoded, the ids written in order into the caller's buffer;
# and the split alone, the pre-tokens as the scanner cuts them (``Encoder.pieces``).

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


cdef int encode_text(int pattern, const Classes *classes, const Folds *folds, const Specials *sp, const uint8_t *p,
                     Py_ssize_t n, Sink *s, Py_ssize_t *bad) noexcept nogil:
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
            result = scan_with(pattern, classes, folds, p + i, end - i, encode_one, s, stop, bad)
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


# --- The split alone: where the scanner cuts, for the tests and the lab -----------------------------------------
# The pre-tokens of a text as this encoder's scanner hands them out, special tokens left out: what
# ``regex.findall`` over the pieces between special tokens gives, held to it by the tests, since the ids
# alone would not show every wrong cut (a text of characters no merge covers encodes to its bytes however
# it is cut).

ctypedef struct Spans:
    const uint8_t *base
    Py_ssize_t *items        # (offset, length) of each pre-token, in order
    size_t size, capacity    # pre-tokens held, and room for


cdef int collect_one(void *sink, const uint8_t *pretoken, Py_ssize_t length) noexcept nogil:
    """The scanner's ``Emit`` for the split: the pre-token's offset and length, appended (NO_MEMORY when
    the array cannot grow)."""
    cdef Spans *spans = <Spans *>sink
    cdef void *grown
    if spans.size == spans.capacity:
        grown = room(spans.items, &spans.capacity, spans.size, 1, 2 * sizeof(Py_ssize_t))
        if grown == NULL:
            return NO_MEMORY
        spans.items = <Py_ssize_t *>grown
    spans.items[2 * spans.size] = pretoken - spans.base
    spans.items[2 * spans.size + 1] = length
    spans.size += 1
    return DONE
