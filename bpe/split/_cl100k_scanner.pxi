# GPT-4's pattern (tiktoken's cl100k) as a scanner, and the pieces o200k's scanner shares with it.
#
# Included (textually) by ``_scanners.pxi``, after ``_gpt2_scanner.pxi``, whose UTF-8 decoding (``decode``,
# ``class_at``), ``Classes``, results, stop flag and ``Emit`` it uses: the same contract as GPT-2's scanner.
# Everything runs without the GIL and reads only the bytes it is given; every character is decoded, so
# checked, before a pre-token holds it, in order, so the first byte reported as not UTF-8 is the first
# there is.

from libc.stdint cimport uint8_t, uint32_t

# --- The classes, as bit flags ----------------------------------------------------------------------------
# bpe/split/pattern_classes.py makes the tables from the regex module itself (CLASSES; the same numbers).  Flags,
# not GPT-2's one class per character, because o200k's two letter classes overlap: a modifier letter (Lm),
# an other letter (Lo, as CJK) and a combining mark (M) are both "upper" and "lower", and a mark is neither
# a letter nor a number.  cl100k's tables set the first three only.

cdef enum:
    IS_LETTER = 1      # \p{L}
    IS_NUMBER = 2      # \p{N}
    IS_SPACE = 4       # \s
    IS_UPPER = 8       # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    IS_LOWER = 16      # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
    NOT_OTHER = IS_LETTER | IS_NUMBER | IS_SPACE   # "other" ([^\s\p{L}\p{N}]): none of these

cdef enum:
    LF = 0x0A
    CR = 0x0D
    SPACE_BYTE = 0x20
    APOSTROPHE = 0x27
    SLASH = 0x2F
    MAX_FOLDS = 8      # non-ASCII characters that match a contraction's letter (regex has one: U+017F)


# --- The contractions, in any case --------------------------------------------------------------------------
# ``(?i:...)`` matches a letter in either case, and regex also takes U+017F (long s) for an ``s``: ``'ſ`` is
# a contraction to it.  Which character matches which letter is read off regex too
# (pattern_classes.contraction_folds), into this table: nothing here knows a case.

ctypedef struct Folds:
    uint8_t ascii[128]              # the contraction letter (lower case) an ASCII character matches, or 0
    int count
    uint32_t code_point[MAX_FOLDS]  # and the non-ASCII characters that match one
    uint8_t letter[MAX_FOLDS]


cdef inline int letter_at(const Folds *f, const uint8_t *p, Py_ssize_t i, Py_ssize_t n, int *width) noexcept nogil:
    """The contraction letter (lower case) the character at ``p[i]`` matches in any case, its width in
    ``*width``; 0 where it matches none, where ``i`` is the end, or where the bytes are not UTF-8 (the scan
    reports those when it reaches them)."""
    cdef uint32_t cp
    cdef int k, w
    if i >= n:
        return 0
    if p[i] < 0x80:
        width[0] = 1
        return f.ascii[p[i]]
    w = decode(p + i, n - i, &cp)
    if w == 0:
        return 0
    for k in range(f.count):
        if f.code_point[k] == cp:
            width[0] = w
            return f.letter[k]
    return 0


cdef inline Py_ssize_t contraction_end(const Folds *f, const uint8_t *p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Where the contraction at ``p[i]`` (an apostrophe) ends: ``'s 't 'm 'd`` or ``'ll 've 're``, each
    letter in any case; ``i`` where none starts there.  The alternatives share no first letter, so their
    order in the pattern decides nothing."""
    cdef int first, second, w1 = 0, w2 = 0
    first = letter_at(f, p, i + 1, n, &w1)
    if first == c's' or first == c't' or first == c'm' or first == c'd':
        return i + 1 + w1
    if first == c'l' or first == c'v' or first == c'r':
        second = letter_at(f, p, i + 1 + w1, n, &w2)
        if ((first == c'l' and second == c'l') or (first == c'v' and second == c'e')
                or (first == c'r' and second == c'e')):
            return i + 1 + w1 + w2
    return i


# --- Runs -------------------------------------------------------------------------------------------------
# A run is greedy and nothing in its alternative can make it give a character back (except o200k's
# upper-then-lower, which has its own function), so each is one loop to the first character that does not
# belong.  Ends are offsets; ``-1 - j`` says the byte at ``j`` is not UTF-8 (an end is never negative).

cdef inline Py_ssize_t run_with(const Classes *c, const uint8_t *p, Py_ssize_t i, Py_ssize_t n, int mask,
                                int want) noexcept nogil:
    """Where the run from ``p[i]`` of characters whose ``flags & mask`` is ``want`` ends: ``\\p{L}+`` is
    ``(IS_LETTER, IS_LETTER)``, ``[^\\s\\p{L}\\p{N}]+`` is ``(NOT_OTHER, 0)``.  ASCII stays in the first branch."""
    cdef int width, found
    while i < n:
        if p[i] < 0x80:
            if (c.ascii[p[i]] & mask) != want:
                return i
            i += 1
            continue
        found = class_at(c, p + i, n - i, &width)
        if found < 0:
            return -1 - i
        if (found & mask) != want:
            return i
        i += width
    return i


cdef inline Py_ssize_t numbers_end(const Classes *c, const uint8_t *p, Py_ssize_t i, Py_ssize_t n,
                                   int width) noexcept nogil:
    """``\\p{N}{1,3}``: where up to three numbers from ``p[i]`` (one, ``width`` bytes wide, known) end.  A
    longer run is cut in threes from its start: ``12345`` is ``123``, ``45``."""
    cdef Py_ssize_t j = i + width
    cdef int digits = 1, found, next_width
    while digits < 3 and j < n:
        found = class_at(c, p + j, n - j, &next_width)
        if found < 0:
            return -1 - j
        if not (found & IS_NUMBER):
            break
        j += next_width
        digits += 1
    return j


cdef inline Py_ssize_t other_end(const Classes *c, const uint8_t *p, Py_ssize_t i, Py_ssize_t n, int flags,
                                 int width, bint slash) noexcept nogil:
    """`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*`` (o200k: ``[\\r\\n/]*``, ``slash``) at ``p[i]``, whose flags and width are
    known: where it ends, or 0 where it does not match.  The optional space is taken only when an "other"
    character follows it (else the whole alternative fails: nothing after the space could match)."""
    cdef Py_ssize_t j = i
    cdef int next_flags, next_width
    if p[i] == SPACE_BYTE and i + 1 < n:
        next_flags = class_at(c, p + i + 1, n - i - 1, &next_width)
        if next_flags < 0:
            return -1 - (i + 1)
        if (next_flags & NOT_OTHER) == 0:
            j, flags, width = i + 1, next_flags, next_width
    if (flags & NOT_OTHER) != 0:
        return 0
    j = run_with(c, p, j + width, n, NOT_OTHER, 0)
    if j < 0:
        return j
    while j < n and (p[j] == CR or p[j] == LF or (slash and p[j] == SLASH)):  # ASCII: read, not decoded
        j += 1
    return j


cdef inline Py_ssize_t space_end(const Classes *c, const uint8_t *p, Py_ssize_t i, Py_ssize_t n,
                                 bint whole_at_end) noexcept nogil:
    """The whitespace alternatives at ``p[i]`` (whitespace), in one pass over its run:

    * ``\\s++$`` (cl100k only, ``whole_at_end``): a run that reaches the end of the text is taken whole;
    * ``\\s*[\\r\\n]`` (cl100k), ``\\s*[\\r\\n]+`` (o200k): a run holding a newline ends after its last
      ``\\r`` or ``\\n``: ``\\s*`` takes the whole run, then gives back one character at a time until a
      newline can follow, so ``"\\n\\n  x"`` gives ``"\\n\\n"`` and ``"  "`` is left to the next pre-token;
    * ``\\s+(?!\\S)``: before a non-space, the run but its last character (GPT-2's scanner explains why),
      and the whole run at the end of the text;
    * ``\\s``, ``\\s+``: a run of one before a non-space, alone.

    (A space or tab before a letter never gets here: the letter alternatives take it first.)"""
    cdef Py_ssize_t j = i, last = i, newline = -1
    cdef int width, found
    while j < n:
        if p[j] < 0x80:
            if not (c.ascii[p[j]] & IS_SPACE):
                break
            if p[j] == CR or p[j] == LF:
                newline = j
            last = j
            j += 1
            continue
        found = class_at(c, p + j, n - j, &width)
        if found < 0:
            return -1 - j
        if not (found & IS_SPACE):
            break
        last = j
        j += width
    if whole_at_end and j == n:
        return n
    if newline >= 0:
        return newline + 1
    if j < n and last > i:
        return last
    return j


# --- cl100k, alternative by alternative, in the order the pattern tries them ---------------------------------
#
#   '(?i:[sdmt]|ll|ve|re)                ->  an apostrophe and a contraction's letters, in any case
#   [^\r\n\p{L}\p{N}]?+\p{L}++           ->  letters, with the one character before them when it is not a
#                                            letter, number, \r or \n: " word", "(word", "\tword", "'x"
#   \p{N}{1,3}+                          ->  one to three numbers: "2024" is "202", "4"
#    ?[^\s\p{L}\p{N}]++[\r\n]*+          ->  an optional space, a run of "other", then every \r and \n after
#                                            it: "!\n" is one pre-token, and so is " ...\r\n"
#   \s++$ | \s*[\r\n] | \s+(?!\S) | \s   ->  whitespace (space_end)
#
# Why one pass suffices, as for GPT-2.  Letters, numbers and whitespace are disjoint, and "other" is none
# of them, so at most one of the second, third and fourth alternatives can match at a character (with
# the second given the first chance at a non-letter that precedes a letter); each takes its greedy run,
# which nothing after it can make shorter; and a character none of the first four takes is whitespace.
# The possessive forms (?+, ++, *+) change nothing here: where they forbid giving back, giving back
# could not have helped.
#
# A piece ends at the text's end or at a special token, as ``regex.split`` then ``findall`` sees it; that
# end is the ``$`` of ``\s++$``.

cdef int cl100k_scan_piece(const Classes *c, const Folds *folds, const uint8_t *p, Py_ssize_t n, Emit emit,
                           void *sink, int *stop, Py_ssize_t *bad) noexcept nogil:
    """Hand every cl100k pre-token of ``p[:n]``, in order, to ``emit(sink, ...)``: DONE, or why not, as
    ``scan_piece`` (GPT-2's) says it."""
    cdef Py_ssize_t i = 0, j, check = CHECK_EVERY
    cdef int flags, width, next_flags, next_width, result
    cdef uint8_t b
    while i < n:
        if i >= check:
            if V9_LOAD(stop):
                return STOPPED
            check = i + CHECK_EVERY
        b = p[i]
        j = 0  # no alternative has matched (a pre-token is never empty, so its end is never 0)
        # '(?i:[sdmt]|ll|ve|re)
        if b == APOSTROPHE:
            j = contraction_end(folds, p, i, n)
            if j == i:
                j = 0
        if j == 0:
            flags = class_at(c, p + i, n - i, &width)
            if flags < 0:
                bad[0] = i
                return BAD_UTF8
            if flags & IS_LETTER:
                # \p{L}++, with no character before it
                j = run_with(c, p, i + width, n, IS_LETTER, IS_LETTER)
            elif not (flags & IS_NUMBER) and b != CR and b != LF and i + width < n:
                # [^\r\n\p{L}\p{N}]?+\p{L}++: this character may lead the letters after it
                next_flags = class_at(c, p + i + width, n - i - width, &next_width)
                if next_flags < 0:
                    bad[0] = i + width
                    return BAD_UTF8
                if next_flags & IS_LETTER:
                    j = run_with(c, p, i + width + next_width, n, IS_LETTER, IS_LETTER)
            if j == 0 and flags & IS_NUMBER:
                # \p{N}{1,3}+
                j = numbers_end(c, p, i, n, width)
            if j == 0:
                #  ?[^\s\p{L}\p{N}]++[\r\n]*+
                j = other_end(c, p, i, n, flags, width, False)
            if j == 0:
                # \s++$, \s*[\r\n], \s+(?!\S), \s
                j = space_end(c, p, i, n, True)
        if j < 0:
            bad[0] = -1 - j
            return BAD_UTF8
        result = emit(sink, p + i, j - i)
        if result != DONE:
            return result
        i = j
    return DONE
