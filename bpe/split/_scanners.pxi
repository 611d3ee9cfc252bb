# The named patterns' scanners, for v9's counter (``_v9_count.pyx``) and the compiled encoder
# (``bpe/io/_encoder.pyx``), which include this file: GPT-2's, cl100k's and o200k's, each a function with the
# same contract (``scan_piece``'s), chosen by a number when the counter or encoder is made.

from libc.string cimport memset

include "_gpt2_scanner.pxi"
include "_cl100k_scanner.pxi"
include "_o200k_scanner.pxi"

# The numbers bpe/split/patterns.py gives the named patterns (SCANNERS).
cdef enum:
    PATTERN_GPT2 = 0
    PATTERN_CL100K = 1
    PATTERN_O200K = 2


cdef inline int scan_with(int pattern, const Classes *c, const Folds *folds, const uint8_t *p, Py_ssize_t n,
                          Emit emit, void *sink, int *stop, Py_ssize_t *bad) noexcept nogil:
    """``p[:n]`` (a piece between special tokens) scanned by the pattern's scanner.  One test per piece, not
    per character: each scanner is a direct call, which the C compiler inlines where it is the only one, as
    GPT-2's was before there were three, so GPT-2's loop is compiled as it was."""
    if pattern == PATTERN_GPT2:
        return scan_piece(c, p, n, emit, sink, stop, bad)
    if pattern == PATTERN_CL100K:
        return cl100k_scan_piece(c, folds, p, n, emit, sink, stop, bad)
    return o200k_scan_piece(c, folds, p, n, emit, sink, stop, bad)


cdef int set_up_pattern(const Classes *c, Folds *f, int pattern, folds) except -1:
    """Check that the tables set up in ``c`` are the pattern's (GPT-2's classes are an enum, the others'
    bit flags, and o200k's have the upper and lower flags cl100k's lack), and fill ``f`` with ``folds``: the
    ``(code point, letter)`` pairs of ``bpe.split.pattern_classes.contraction_folds`` (unused by GPT-2's
    scanner, whose contractions are lower case only)."""
    cdef int k = 0
    if pattern != PATTERN_GPT2 and pattern != PATTERN_CL100K and pattern != PATTERN_O200K:
        raise ValueError(f"no scanner numbered {pattern}")
    if ((pattern == PATTERN_GPT2 and c.ascii[SPACE_BYTE] != SPACE)
            or (pattern != PATTERN_GPT2 and c.ascii[SPACE_BYTE] != IS_SPACE)
            or (pattern == PATTERN_O200K and not (c.ascii[c'a'] & IS_LOWER))):
        raise ValueError(f"the class tables are not those of scanner {pattern}")
    memset(f, 0, sizeof(Folds))
    for code_point, letter in folds:
        if not 0 <= letter < 128 or not 0 <= code_point <= 0x10FFFF:
            raise ValueError(f"a contraction letter is an ASCII byte and a code point at most U+10FFFF, "
                             f"not {letter!r}, {code_point!r}")
        if code_point < 128:
            f.ascii[code_point] = <uint8_t>letter
            continue
        if k == MAX_FOLDS:
            raise ValueError(f"more than {MAX_FOLDS} non-ASCII characters match a contraction's letter")
        f.code_point[k] = <uint32_t>code_point
        f.letter[k] = <uint8_t>letter
        k += 1
    f.count = k
    return 0
