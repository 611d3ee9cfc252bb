# GPT-4o's pattern (tiktoken's o200k) as a scanner.
#
# Included (textually) by ``_scanners.pxi`` after ``_cl100k_scanner.pxi``, whose flags, contractions and
# runs it uses (and, through it, GPT-2's decoding).  The same contract: no GIL, every character decoded
# before a pre-token holds it, in order.
#
# --- o200k, alternative by alternative, in the order the pattern tries them ----------------------------------
# With U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] ("upper"), W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] ("lower"), P the optional
# leading character [^\r\n\p{L}\p{N}] and C the optional contraction (?i:'s|'t|'re|'ve|'m|'ll|'d):
#
#   P? U* W+ C?                 ->  a word, split where lower case turns to upper: "HelloWorld" is "Hello",
#                                   "World"; "ÀbcDEF" is "Àbc", "DEF" (by the next alternative)
#   P? U+ W* C?                 ->  a word of upper case only, or ending in it: "DEF", "DON'T"
#   \p{N}{1,3}                  ->  one to three numbers
#    ?[^\s\p{L}\p{N}]+[\r\n/]*  ->  an optional space, a run of "other", then every \r, \n and / after it
#   \s*[\r\n]+ | \s+(?!\S) | \s+   ->  whitespace (space_end); unlike cl100k, a run that ends the text
#                                      still ends at its last newline
#
# Where backtracking matters.  U and W overlap (Lm, Lo and M are both), and P overlaps them too (a
# combining mark is neither a letter nor a number, so it may lead a word), so the first two alternatives
# are not one greedy run each.  The engine tries, in this order, and the first that matches wins:
#
#   1. P taken, then U* W+ after it;  2. P not taken, U* W+ here;
#   3. P taken, then U+ W* after it;  4. P not taken, U+ W* here.
#
# And within U* W+, U* first takes its whole run, then gives back one character at a time until W+ can
# start: W+ starts right after the run if a lower character is there (the run is followed by a \p{Ll}),
# else at the run's last character that is lower too (an Lm, Lo or M), which it then holds alone, as the
# next one is not lower (upper_lower_end).  So "\u0301A" (a mark, then A) is the mark alone by the
# second try, and A is left to the next pre-token; "!\u0301" is one pre-token by the first.  C comes last
# and is optional, so it never makes the word give anything back.
#
# The alternatives after the first two need no backtracking, as in cl100k: numbers, "other" and
# whitespace are disjoint.  A combining mark is "other" to the fourth alternative, so it may continue a
# run of punctuation ("!!\u0301"), but one never starts there: the first two alternatives always take it.


cdef inline Py_ssize_t upper_lower_end(const Classes *c, const uint8_t *p, Py_ssize_t s, Py_ssize_t n) noexcept nogil:
    """``U* W+`` from ``p[s]``, with the regex's backtracking: where it ends, 0 where it cannot match, ``-1 - j``
    where the byte at ``j`` is not UTF-8."""
    cdef Py_ssize_t j = s, both_end = 0
    cdef int flags = 0, width = 0
    while j < n:
        flags = class_at(c, p + j, n - j, &width)
        if flags < 0:
            return -1 - j
        if not (flags & IS_UPPER):
            break
        if flags & IS_LOWER:
            both_end = j + width   # the end of the run's last character that W+ could start at
        j += width
    if j < n and flags & IS_LOWER:
        # U* whole, and W+ from the character after it (a lower one, not upper: a \p{Ll})
        return run_with(c, p, j + width, n, IS_LOWER, IS_LOWER)
    return both_end  # U* given back to the run's last lower character, which W+ holds alone; 0: none


cdef inline Py_ssize_t upper_then_lower_end(const Classes *c, const uint8_t *p, Py_ssize_t s,
                                            Py_ssize_t n) noexcept nogil:
    """``U+ W*`` from ``p[s]``: where it ends, 0 where no upper character is there, ``-1 - j`` for bytes
    that are not UTF-8.  Both runs greedy: nothing after them can fail."""
    cdef Py_ssize_t j = run_with(c, p, s, n, IS_UPPER, IS_UPPER)
    if j <= s:
        return j if j < 0 else 0
    return run_with(c, p, j, n, IS_LOWER, IS_LOWER)


cdef int o200k_scan_piece(const Classes *c, const Folds *folds, const uint8_t *p, Py_ssize_t n, Emit emit,
                          void *sink, int *stop, Py_ssize_t *bad) noexcept nogil:
    """Hand every o200k pre-token of ``p[:n]``, in order, to ``emit(sink, ...)``: DONE, or why not, as
    ``scan_piece`` (GPT-2's) says it."""
    cdef Py_ssize_t i = 0, j, check = CHECK_EVERY
    cdef int flags, width, result
    cdef bint lead
    cdef uint8_t b
    while i < n:
        if i >= check:
            if V9_LOAD(stop):
                return STOPPED
            check = i + CHECK_EVERY
        b = p[i]
        flags = class_at(c, p + i, n - i, &width)
        if flags < 0:
            bad[0] = i
            return BAD_UTF8
        # The words: the four tries of the two first alternatives (see above), then the contraction.
        lead = not (flags & (IS_LETTER | IS_NUMBER)) and b != CR and b != LF and i + width < n  # P can be taken
        j = 0
        if lead:
            j = upper_lower_end(c, p, i + width, n)
        if j == 0 and flags & (IS_UPPER | IS_LOWER):
            j = upper_lower_end(c, p, i, n)
        if j == 0 and lead:
            j = upper_then_lower_end(c, p, i + width, n)
        if j == 0 and flags & IS_UPPER:
            j = upper_then_lower_end(c, p, i, n)
        if j > 0 and j < n and p[j] == APOSTROPHE:
            j = contraction_end(folds, p, j, n)
        if j == 0 and flags & IS_NUMBER:
            # \p{N}{1,3}
            j = numbers_end(c, p, i, n, width)
        if j == 0:
            #  ?[^\s\p{L}\p{N}]+[\r\n/]*
            j = other_end(c, p, i, n, flags, width, True)
        if j == 0:
            # \s*[\r\n]+, \s+(?!\S), \s+
            j = space_end(c, p, i, n, False)
        if j < 0:
            bad[0] = -1 - j
            return BAD_UTF8
        result = emit(sink, p + i, j - i)
        if result != DONE:
            return result
        i = j
    return DONE
