# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled encoder: text -> token ids with the compiled scanner, the merges in C, a C cache per thread.

``bpe encode`` and the :class:`~bpe.io.tokenizer.Tokenizer`'s bulk path (``encode_packed``) use it where
it is built (:mod:`bpe.io.compiled` builds it from a tokenizer and falls back to the Python path where it
is not).  The ids are those of the Python path exactly: the same split, the same merge procedure.  Each
structure below replaces one of the Python path's:

* the **scanner** (``scan_with`` and ``find_special``, from ``bpe/split/_scanners.pxi``, which gathers
  GPT-2's, cl100k's and o200k's scanners: the very code v9 counts with) replaces the fast pre-tokenizer (``split_pretokens``: ``re`` and ``regex`` over a
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

The merge table and the cache are in ``_encoder_tables.pxi``, BPE on one pre-token in ``_encoder_bpe.pxi``,
the text's pre-tokens written as ids in ``_encoder_text.pxi``; all three are included below.  Every function
that runs without the GIL reports failure by its return value (an allocation that failed, bytes that are
not UTF-8, a byte the vocab has no token for, a stop asked for); ``Encoder.encode`` turns each into one
exception.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcmp, memcpy, memset

cdef extern from "_hints.h":
    void prefetch "BPE_PREFETCH"(const void *p) nogil

include "_scanners.pxi"

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



include "_encoder_tables.pxi"
include "_encoder_bpe.pxi"
include "_encoder_text.pxi"


cdef class Cache:
    """One thread's cache of pre-token -> ids, BPE's scratch, and its stop flag.  A cache is used by one
    call at a time (``Encoder.encode`` refuses a busy one); keep one per thread.  It holds one encoder's ids:
    the first ``Encoder`` that uses it is its own, and another is refused (its ids would come from the
    other's merges)."""

    cdef CacheState state
    cdef bint busy
    cdef object encoder                       # the Encoder whose ids it holds, set at its first use

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
    (bytes an id takes in the output: every id must fit); ``pattern`` the scanner's number, with its tables
    and ``folds`` (``bpe.split.patterns.SCANNERS``, ``bpe.split.pattern_classes``: ``scanner_tables``,
    ``contraction_folds``)."""

    cdef Classes classes
    cdef bytes stage1, stage2                 # kept alive: classes points into them
    cdef Folds folds                          # the contractions' letters in any case (cl100k, o200k)
    cdef readonly int pattern                 # which scanner (_scanners.pxi): GPT-2's unless told
    cdef Merges merges
    cdef Specials specials
    cdef list special_bytes                   # kept alive: specials.tokens points into them
    cdef readonly int width

    def __cinit__(self, bytes stage1, bytes stage2, byte_ids, pairs, merged, specials, int width, int pattern=0,
                  folds=()):
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
        set_up_pattern(&self.classes, &self.folds, pattern, folds)
        self.pattern = pattern
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

    def pieces(self, const uint8_t[::1] data):
        """The pre-tokens of ``data`` (UTF-8 text) as ``encode`` cuts it, as ``bytes``, the special tokens
        left out.  Raises ``ValueError`` where the text is not UTF-8, ``MemoryError``."""
        cdef Py_ssize_t n = data.shape[0], i = 0, end, found = 0, bad = -1
        cdef size_t k
        cdef int result = DONE
        cdef int stop = 0
        cdef Spans spans
        if n == 0:
            return []
        memset(&spans, 0, sizeof(Spans))
        spans.base = &data[0]
        try:
            with nogil:
                while result == DONE:
                    if self.specials.count:
                        end = find_special(&data[0], i, n, self.specials.tokens, self.specials.lengths,
                                           self.specials.count, self.specials.starts, self.specials.one_start, &found)
                    else:
                        end = n
                    if end > i:
                        result = scan_with(self.pattern, &self.classes, &self.folds, &data[i], end - i, collect_one,
                                           &spans, &stop, &bad)
                        if result == BAD_UTF8:
                            bad += i
                    if end >= n:
                        break
                    i = end + found
            if result == BAD_UTF8:
                raise ValueError(f"invalid UTF-8 at byte {bad}")
            if result == NO_MEMORY:
                raise MemoryError()
            if result != DONE:
                raise AssertionError(f"the split failed with code {result}")
            text = bytes(data)
            return [text[spans.items[2 * k]:spans.items[2 * k] + spans.items[2 * k + 1]] for k in range(spans.size)]
        finally:
            free(spans.items)

    def encode(self, Cache cache not None, const uint8_t[::1] data, uint8_t[::1] out):
        """Encode ``data`` (UTF-8 text) into ``out``, ``width`` bytes an id, with ``cache`` (one thread's).

        ``out`` must hold ``width`` bytes for each byte of ``data`` (a text never has more ids than bytes).
        Returns the number of ids written, or ``-1 - offset`` where the byte at ``offset`` is not UTF-8 (the
        caller decides what to say); ``out`` then holds no defined ids: some of the pre-tokens before the bad
        byte were written, not all (up to ``AHEAD`` of them wait in flight, and the piece being scanned is
        not split), and their number is not returned.  Raises ``KeyError`` for a byte the vocab has no
        token for (as ``Tokenizer._bpe``), ``KeyboardInterrupt`` after ``cache.stop()``, ``MemoryError``,
        ``ValueError`` for a pre-token of 2 GiB or more, for an ``out`` too small or overlapping ``data``,
        and for a cache another encoder has used, and ``RuntimeError`` for a cache in use by another call."""
        cdef Py_ssize_t n = data.shape[0], bad = -1
        cdef int result
        cdef Sink sink
        if out.shape[0] // self.width < n:
            raise ValueError(f"the output holds {out.shape[0] // self.width} ids; {n} bytes of text may need {n}")
        if cache.busy:
            raise RuntimeError("this cache is in use by another call: keep one cache per thread")
        if cache.encoder is not None and cache.encoder is not self:
            raise ValueError("this cache holds another encoder's ids (from its merges): keep a cache per encoder")
        if n == 0:
            return 0
        if <const uint8_t *>&out[0] < &data[0] + n and &data[0] < <const uint8_t *>&out[0] + out.shape[0]:
            raise ValueError("the output overlaps the text: give the ids a buffer of their own")
        cache.encoder = self
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
                result = encode_text(self.pattern, &self.classes, &self.folds, &self.specials, &data[0], n, &sink,
                                     &bad)
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
