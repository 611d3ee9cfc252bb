# The GPT-2 pattern as a scanner: included (textually) by v9's counter, ``_v9_count.pyx``, and by the
# compiled encoder, so that counting and encoding cut the text by one and the same code.
#
# Everything here runs without the GIL and reads only the bytes it is given: every read of a multi-byte
# character is checked against the piece's end first.  A pre-token found goes to an ``Emit`` function
# with its sink; what the caller does with it (count it, encode it) is the caller's.

from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libc.string cimport memcmp, memchr

# Results of the functions that run without the GIL (an Emit may return its own, below -4).
cdef enum:
    DONE = 0
    BAD_UTF8 = -1      # the byte at *bad is where the text stops being UTF-8
    NO_MEMORY = -2
    STOPPED = -3       # the stop flag was raised
    TOO_LONG = -4      # a pre-token of 2**31 bytes or more: v8's merge keeps lengths in 32 bits

cdef enum:
    CHECK_EVERY = 1 << 16        # bytes scanned between two looks at the stop flag
    MAX_TOKEN = 0x7FFFFFFF

cdef extern from *:
    """
    /* The stop flag is written by the thread that handles Ctrl-C and read by the scanning threads: a
       relaxed atomic, so that no compiler keeps it in a register across the loop. */
    #if defined(__GNUC__) || defined(__clang__)
    #define BPE_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define BPE_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #else
    #define BPE_LOAD(p) (*(volatile int *)(p))
    #define BPE_STORE(p, v) (*(volatile int *)(p) = (v))
    #endif
    """
    int V9_LOAD "BPE_LOAD"(int *p) nogil
    void V9_STORE "BPE_STORE"(int *p, int v) nogil


# --- The classes: the pattern's \p{L}, \p{N} and \s, as regex defines them ----------------------------
# bpe/split/gpt2_classes.py makes the two-stage table from the regex module itself; ASCII gets a
# table of its own, read before anything is decoded.  The apostrophe and the plain space are "other"
# and "space" here like any character: the scanner looks for them by value where the pattern names them.

cdef enum:
    OTHER = 0
    LETTER = 1
    NUMBER = 2
    SPACE = 3

ctypedef struct Classes:
    const uint16_t *stage1
    const uint8_t *stage2
    uint8_t ascii[128]


cdef inline int decode(const uint8_t *p, Py_ssize_t left, uint32_t *cp) noexcept nogil:
    """The UTF-8 character at ``p`` (``left`` bytes are there): its length, its code point in ``*cp``;
    0 where the bytes are not UTF-8 as Python's strict decoder defines it (no overlong form, no
    surrogate, nothing past U+10FFFF, no sequence cut short).  ``p[0]`` is known to be 0x80 or more."""
    cdef uint8_t b0 = p[0], b1, b2, b3
    if b0 < 0xC2:                      # a continuation byte, or the overlong C0, C1
        return 0
    if b0 < 0xE0:
        if left < 2 or (p[1] & 0xC0) != 0x80:
            return 0
        cp[0] = ((b0 & 0x1F) << 6) | (p[1] & 0x3F)
        return 2
    if b0 < 0xF0:
        if left < 3:
            return 0
        b1, b2 = p[1], p[2]
        if (b1 & 0xC0) != 0x80 or (b2 & 0xC0) != 0x80:
            return 0
        if (b0 == 0xE0 and b1 < 0xA0) or (b0 == 0xED and b1 >= 0xA0):  # overlong; a surrogate
            return 0
        cp[0] = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
        return 3
    if b0 < 0xF5:
        if left < 4:
            return 0
        b1, b2, b3 = p[1], p[2], p[3]
        if (b1 & 0xC0) != 0x80 or (b2 & 0xC0) != 0x80 or (b3 & 0xC0) != 0x80:
            return 0
        if (b0 == 0xF0 and b1 < 0x90) or (b0 == 0xF4 and b1 >= 0x90):  # overlong; past U+10FFFF
            return 0
        cp[0] = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
        return 4
    return 0


cdef inline int class_at(const Classes *c, const uint8_t *p, Py_ssize_t left, int *width) noexcept nogil:
    """The class of the character at ``p`` and its width in ``*width``; -1 where it is not UTF-8."""
    cdef uint32_t cp
    cdef int n
    if p[0] < 0x80:
        width[0] = 1
        return c.ascii[p[0]]
    n = decode(p, left, &cp)
    if n == 0:
        return -1
    width[0] = n
    return c.stage2[(<size_t>c.stage1[cp >> 8] << 8) | (cp & 0xFF)]


cdef inline Py_ssize_t run_of(const Classes *c, const uint8_t *p, Py_ssize_t i, Py_ssize_t n, int cls,
                              Py_ssize_t *last) noexcept nogil:
    """Where the run of characters of class ``cls`` starting at ``i`` ends (``\\p{L}+``, ``\\p{N}+``,
    ``[^\\s\\p{L}\\p{N}]+``, ``\\s+``); ``*last`` is where its last character starts.  ``-1 - j``
    where the byte at ``j`` is not UTF-8.  ASCII stays in the tight first loop."""
    cdef int width, found
    while i < n:
        if p[i] < 0x80:
            if c.ascii[p[i]] != cls:
                return i
            last[0] = i
            i += 1
            continue
        found = class_at(c, p + i, n - i, &width)
        if found < 0:
            return -1 - i
        if found != cls:
            return i
        last[0] = i
        i += width
    return i


# --- The scanner: GPT-2's six alternatives, in the order the pattern tries them -------------------------
#
#   '(?:[sdmt]|ll|ve|re)  ->  an apostrophe and one of the six endings: a pre-token of 2 or 3 bytes
#    ?\p{L}+              ->  an optional plain space, then a run of letters
#    ?\p{N}+              ->  an optional plain space, then a run of numbers
#    ?[^\s\p{L}\p{N}]+    ->  an optional plain space, then a run of "other" (the apostrophe among them)
#   \s+(?!\S)             ->  a run of whitespace, but not its last character when a non-space follows
#   \s+                   ->  what is left: a single whitespace character before a non-space
#
# Why one pass suffices.  At a pre-token's start the pattern tries the alternatives in order, and the
# first that matches wins.  The contraction needs an apostrophe; each of the next three needs its class
# (after an optional U+0020); the classes are disjoint, so at most one of them can match, and its run is
# greedy with nothing after it in the alternative: the longest run, no backtracking.  Only a
# whitespace character fails all four, except a plain space followed by a letter, number or other
# character, which the optional space takes.
#
# Why "the run but its last character".  ``\s+`` first takes the whole run of whitespace.  If the text
# ends there, ``(?!\S)`` holds.  If a non-space follows, ``(?!\S)`` fails, and the engine gives back one
# character: now a whitespace character follows, and it holds, provided one character is left in the
# run.  So a run of two or more before a non-space leaves its last character to the next pre-token (a
# plain space there joins the word: " x"; any other is the sixth alternative alone), and a run of one
# is matched by the sixth alternative, ``\s+``, whole.
#
# The special tokens were split out before: a piece ends at the text's end or at a special token, and
# the pattern sees that end as the end of the text, as ``regex.split`` then ``findall`` does.

ctypedef int (*Emit)(void *sink, const uint8_t *pretoken, Py_ssize_t length) noexcept nogil


cdef int scan_piece(const Classes *c, const uint8_t *p, Py_ssize_t n, Emit emit, void *sink, int *stop,
                    Py_ssize_t *bad) noexcept nogil:
    """Hand every pre-token of ``p[:n]``, in order, to ``emit(sink, ...)`` (v9 counts them, encoding looks
    them up); DONE, or why not: BAD_UTF8 (``*bad``: where), STOPPED, or what ``emit`` returned."""
    cdef Py_ssize_t i = 0, start, j, last = 0, check = CHECK_EVERY
    cdef int cls, width, next_cls, next_width, result
    cdef uint8_t b, d
    while i < n:
        if i >= check:
            if V9_LOAD(stop):
                return STOPPED
            check = i + CHECK_EVERY
        start = i
        b = p[i]
        # '(?:[sdmt]|ll|ve|re)
        if b == 0x27 and i + 1 < n:
            d = p[i + 1]
            if d == 0x73 or d == 0x64 or d == 0x6D or d == 0x74:  # s d m t
                j = i + 2
                result = emit(sink, p + start, j - start)
                if result != DONE:
                    return result
                i = j
                continue
            if i + 2 < n and ((d == 0x6C and p[i + 2] == 0x6C) or (d == 0x76 and p[i + 2] == 0x65)
                              or (d == 0x72 and p[i + 2] == 0x65)):  # ll ve re
                j = i + 3
                result = emit(sink, p + start, j - start)
                if result != DONE:
                    return result
                i = j
                continue
        cls = class_at(c, p + i, n - i, &width)
        if cls < 0:
            bad[0] = i
            return BAD_UTF8
        if cls == SPACE and b == 0x20 and i + 1 < n:
            # ' ?' then \p{L}+, \p{N}+ or [^\s\p{L}\p{N}]+: the space starts the pre-token of the next class
            next_cls = class_at(c, p + i + 1, n - i - 1, &next_width)
            if next_cls < 0:
                bad[0] = i + 1
                return BAD_UTF8
            if next_cls != SPACE:
                cls = next_cls
                i += 1
                width = next_width
        if cls != SPACE:
            # \p{L}+, \p{N}+, [^\s\p{L}\p{N}]+ (after the optional space): the longest run
            j = run_of(c, p, i + width, n, cls, &last)
        else:
            # \s+(?!\S), then \s+
            last = i
            j = run_of(c, p, i + width, n, SPACE, &last)
            if j >= 0 and j < n and last > start:  # a non-space follows: its last character stays
                j = last
        if j < 0:
            bad[0] = -1 - j
            return BAD_UTF8
        result = emit(sink, p + start, j - start)
        if result != DONE:
            return result
        i = j
    return DONE


# --- The special tokens: split out before the scanner sees a piece ---------------------------------------
# As the plain counter's regex does: at each position the longest token that starts there (the tokens
# are kept longest first), the leftmost position first, and the search goes on after the token.
# Matching bytes is matching characters: a token's UTF-8 starts with a lead byte and ends a character.

cdef Py_ssize_t find_special(const uint8_t *p, Py_ssize_t i, Py_ssize_t n, const uint8_t **tokens,
                             const Py_ssize_t *lengths, int count, const uint8_t *starts, int one_start,
                             Py_ssize_t *found_length) noexcept nogil:
    """The first position at or after ``i`` where a special token starts (its length in
    ``*found_length``), or ``n``.  With one first byte for every token (``<`` for ``<|endoftext|>``)
    the candidates are found by ``memchr``; else by the table of first bytes."""
    cdef const uint8_t *hit
    cdef int k
    while i < n:
        if one_start >= 0:
            hit = <const uint8_t *>memchr(p + i, one_start, <size_t>(n - i))
            if hit == NULL:
                return n
            i = hit - p
        elif not starts[p[i]]:
            i += 1
            continue
        for k in range(count):
            if lengths[k] <= n - i and memcmp(p + i, tokens[k], <size_t>lengths[k]) == 0:
                found_length[0] = lengths[k]
                return i
        i += 1
    return n
