"""`bpe trace` shows the worked example merge by merge, for every variant, from attributes or the hook."""

import pytest

from bpe import VARIANTS, BPEError
from bpe.cli import main
from bpe.lab.teach.trace import parse_words, trace_lines, trace_merger
from conftest import REPO_ROOT

SEED_WORDS = "low:5,lower:2,widest:3,newest:6,es:2,st:2"


def merge_block(lines, number):
    start = lines.index(f"merge {number}")
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_worked_example_trace(variant):
    lines = trace_lines(variant, parse_words(SEED_WORDS), 3, top=20)
    first = merge_block(lines, 1)
    assert first[1] == ("  pair counts (top 11 of 11): s t 11, e s 11, w e 8, o w 7, l o 7, n e 6, e w 6, "
                        "w i 3, i d 3, d e 3, e r 2")
    assert first[2] == "  chosen: s t (count 11)"
    assert first[3] == "  tie at 11 between: s t, e s; the larger byte pair wins: (b's', b't') > (b'e', b's')"
    assert "    w i d e s t x3 -> w i d e st" in first
    assert "    n e w e s t x6 -> n e w e st" in first
    assert "    s t x2 -> st" in first  # the word `st` becomes one token, so pair s t is gone entirely
    diff = next(line for line in first if "pair-count diff" in line)
    assert diff.endswith(": s t 11->0, e s 11->2, e st 0->9")
    # the counts the second merge chooses from: e st 9, e s 2 (from the word `es`), no s t left
    second = merge_block(lines, 2)
    assert second[1] == ("  pair counts (top 11 of 11): e st 9, w e 8, o w 7, l o 7, n e 6, e w 6, "
                         "w i 3, i d 3, d e 3, e s 2, e r 2")
    assert second[2] == "  chosen: e st (count 9)" and not any("tie" in line for line in second)
    assert lines[-1] == "merges: s t, e st, o w"


def test_index_or_scan_is_named():
    v1 = trace_lines("v1", parse_words(SEED_WORDS), 1)
    v2 = trace_lines("v2", parse_words(SEED_WORDS), 1)
    assert "  affected words (3 of 6, found by scanning every word: no index):" in v1
    assert "  affected words (3 of 6, from pair_to_words[s t]):" in v2
    assert any("recounted: this variant keeps no pair counts" in line for line in v1)
    assert any("(kept by the variant)" in line for line in v2)


class HookedMerger:
    """A merger whose internals are private (ints, say); it exposes its state only through trace_state()."""

    def __init__(self):
        self._words = [[1, 2, 1, 2], [2, 1]]
        self._pops = 0

    def trace_state(self):
        token = {1: b"a", 2: b"b", 3: b"ab"}
        words = [(tuple(token[t] for t in w), 1) for w in self._words]
        counts = {}
        for w, c in words:
            for pair in zip(w, w[1:]):
                counts[pair] = counts.get(pair, 0) + c
        return {"pair_counts": counts, "words": words, "stale_pops": self._pops}

    def select_best_pair(self):
        self._pops += 4
        return (b"a", b"b")

    def merge(self, pair):
        self._words = [[3, 3], [2, 1]]


def test_trace_state_hook_and_stale_pops():
    lines = trace_merger(HookedMerger(), "hooked", 1)
    assert lines[1] == "2 words: abab:1, ba:1"
    assert "  pair counts (top 2 of 2): b a 2, a b 2" in lines  # zero counts are not shown
    assert "  WRONG: the rule (highest count, then the larger byte pair) picks b a (count 2)" in lines
    assert "    a b a b x1 -> ab ab" in lines
    assert "  pair-count diff (kept by the variant): a b 2->0, ab ab 0->1, b a 2->1" in lines
    assert "  stale heap pops skipped: 4" in lines


def test_cli_trace_text_and_errors(capsys):
    assert main(["trace", "--variant", "v2", "--text", "low low lower", "--merges", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 words: low:1, Ġlow:1, Ġlower:1" in out and "merges: l o" not in out
    assert "  chosen: o w (count 3)" in out
    assert main(["trace", "--words", "low:x"]) == 2
    assert "count 'x' is not an integer" in capsys.readouterr().err
    with pytest.raises(BPEError, match="--merges must be at least 1"):
        trace_lines("v2", parse_words("ab"), 0)


def test_early_stop_is_shown():
    lines = trace_lines("v2", parse_words("ab:3"), 3)
    assert "  no pair left: training stops early" in lines and lines[-1] == "merges: a b"


def test_heap_variant_attributes_are_discovered_without_a_hook():
    """A v5-style merger: v2's structures plus a `stale_pops` counter and zero counts left in place."""
    from bpe.variants.v2_inverted_index import Merger as V2Merger

    class HeapLike(V2Merger):
        stale_pops = 0

        def select_best_pair(self):
            self.stale_pops += 2
            return super().select_best_pair()

        def merge(self, pair):
            super().merge(pair)
            self.pair_counts[pair] = 0  # a lazily deleted entry must not show as a live pair

    lines = trace_merger(HeapLike(parse_words(SEED_WORDS)), "heap-like", 2, top=3)
    assert lines.count("  stale heap pops skipped: 2") == 2
    assert "  pair counts (top 3 of 11): e st 9, w e 8, o w 7" in lines
    assert "  affected words (2 of 6, from pair_to_words[e st]):" in lines


def test_v4_shows_the_fine_grained_diff_per_word_with_overlaps():
    lines = trace_lines("v4", parse_words("aaaa:3,baaab:2,aaa:1"), 1, top=8)
    first = merge_block(lines, 1)
    # aaaa has three overlapping occurrences of `a a`; merging left to right gives aa aa, so all
    # three go and the middle boundary becomes one (aa, aa)
    assert first[first.index("    a a a a x3 -> aa aa") + 1] == "      fine-grained diff: a a -3, aa aa +1 (x3)"
    assert first[first.index("    b a a a b x2 -> b aa a b") + 1] == \
        "      fine-grained diff: a a -2, b a -1, b aa +1, aa a +1 (x2)"
    assert first[first.index("    a a a x1 -> aa a") + 1] == "      fine-grained diff: a a -2, aa a +1 (x1)"
    assert first[-1] == "  pair-count diff (kept by the variant): a a 15->0, aa a 0->3, aa aa 0->3, b a 2->0, b aa 0->2"
    # the per-word diffs are the variant's own (v5 inherits it); v2/v3 have no fine-grained update
    assert "      fine-grained diff: a a -3, aa aa +1 (x3)" in trace_lines("v5", parse_words("aaaa:3"), 1)
    assert not any("fine-grained" in line for line in trace_lines("v3", parse_words("aaaa:3"), 1))


def test_v4_adjacent_occurrences_share_a_boundary():
    lines = trace_lines("v4", parse_words("xababy:1"), 1)  # (b, a) becomes (ab, ab) once, not (ab, a) and (b, ab)
    assert "      fine-grained diff: a b -2, x a -1, x ab +1, b a -1, ab ab +1, b y -1, ab y +1 (x1)" in lines


def test_v5_trace_counts_stale_heap_pops():
    lines = trace_lines("v5", parse_words(SEED_WORDS), 4, top=3)
    # merge 1 changes `s t` (11 -> gone) and `e s` (11 -> 2): both old entries are still on the heap,
    # so selecting merge 2 first pops and skips the two stale entries at count 11
    assert merge_block(lines, 1)[4] == "  stale heap pops skipped: 0 (heap now 11 entries for 11 live pairs)"
    assert merge_block(lines, 2)[3] == "  stale heap pops skipped: 2 (heap now 11 entries for 11 live pairs)"
    assert merge_block(lines, 4)[3].startswith("  stale heap pops skipped: 1 ")
    assert lines[-1] == "merges: s t, e st, o w, l ow"
    assert not any("stale" in line for line in trace_lines("v4", parse_words(SEED_WORDS), 2))


def test_a_students_own_merger_file_is_traced(capsys):
    """As `bench --variant path.py` takes it: a Merger with its words in a dict and no pair counts is traced,
    the counts recounted from its words."""
    candidates = REPO_ROOT / "tests" / "fixtures" / "candidates"
    assert main(["trace", "--variant", str(candidates / "correct_merger.py"), "--merges", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "trace of correct_merger (naive Merger, every pair recounted each merge)"
    assert "  chosen: s t (count 11)" in lines and lines[-1] == "merges: s t, e st, o w"
    assert any("recounted: this variant keeps no pair counts" in line for line in lines)


def test_a_students_file_that_fails_or_is_no_merger_is_one_line(capsys):
    assert main(["trace", "--variant", str(REPO_ROOT / "exercises" / "start_v1.py")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and len(err.strip().splitlines()) == 1
    assert "raised NotImplementedError: select_best_pair is yours to write" in err and "start_v1.py line" in err
    assert main(["trace", "--variant", str(REPO_ROOT / "tests" / "fixtures" / "candidates" / "correct.py")]) == 2
    assert "is a whole training function" in capsys.readouterr().err
    assert main(["trace", "--variant", "nowhere.py"]) == 2
    assert "no file nowhere.py" in capsys.readouterr().err


def test_trace_pretokenize_and_encode(capsys):
    assert main(["trace", "--pretokenize", "--text", "it's<|endoftext|> 42"]) == 0
    out = capsys.readouterr().out
    assert "'<|endoftext|>'  special" in out and "' 42'" in out and "numbers" in out
    assert main(["trace", "--encode", " newest lowest", "--merges", "4", "--no-special"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "trained 4 merge(s): s t, e st, o w, l ow"
    assert lines[-1] == "    merge rank 3    l + ow  -> Ġ low est"
    with pytest.raises(SystemExit):  # one view at a time (argparse's usage line)
        main(["trace", "--pretokenize", "--encode", "x"])
    assert "not allowed with argument --pretokenize" in capsys.readouterr().err
