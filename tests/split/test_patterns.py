"""``bpe/split/patterns.py`` and ``bpe/split/pattern_classes.py``: the named patterns are tiktoken's
strings, the class tables are what ``regex`` says of every code point, the contractions' letters are
regex's in any case, ``resolve_pattern`` answers a name, a string or a custom regex and refuses a bad one in
one line (naming ``pattern``, or ``--pattern``), and each pattern's rule for cutting a file allows exactly
the cuts it should.
"""

from __future__ import annotations

from array import array
from unittest import mock

import pytest
import regex

from bpe.counting.plain import count_text
from bpe.errors import BPEError
from bpe.split import pattern_classes, patterns
from bpe.split.chunking import CutFinder, find_chunk_boundaries
from bpe.split.patterns import GPT2_PATTERN

EVERY = [chr(c) for c in range(pattern_classes.CODE_POINTS) if not 0xD800 <= c < 0xE000]


def tiktokens_patterns() -> dict[str, str]:
    """cl100k's and o200k's ``pat_str`` as the installed tiktoken gives them (its ranks, which it would
    download, are not loaded)."""
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: {}):
        return {"cl100k": openai_public.cl100k_base()["pat_str"], "o200k": openai_public.o200k_base()["pat_str"]}


def test_the_named_patterns_are_tiktokens_and_the_handouts():
    assert {name: patterns.PATTERNS[name] for name in ("cl100k", "o200k")} == tiktokens_patterns()
    assert patterns.PATTERNS["gpt2"] == GPT2_PATTERN
    assert set(patterns.PATTERNS) == set(patterns.SCANNERS) == set(patterns.CUTS)


# --- resolve_pattern ------------------------------------------------------------------------------------------

def test_a_name_or_the_very_string_gives_the_named_pattern():
    for name, text in patterns.PATTERNS.items():
        assert patterns.resolve_pattern(name) == (name, text)
        assert patterns.resolve_pattern(text) == (name, text)


@pytest.mark.parametrize("custom", [r"\w+|\s+", r"(?i)[a-z]+|.", r"\p{L}+|\p{N}|[^\p{L}\p{N}]+", "x"])
def test_any_other_string_is_a_custom_regex(custom):
    assert patterns.resolve_pattern(custom) == ("custom", custom)
    assert patterns.compiled_pattern(custom).pattern == custom


@pytest.mark.parametrize("bad", ["(a", "[z-a]", r"\p{NoSuchClass}", "a{2,1}", "*a"])
def test_an_invalid_regex_is_one_line_naming_regexs_message(bad):
    try:
        regex.compile(bad)
    except regex.error as exc:
        message = str(exc)
    else:
        pytest.skip(f"this regex accepts {bad!r}")
    with pytest.raises(BPEError) as error:
        patterns.resolve_pattern(bad)
    assert "\n" not in str(error.value)
    assert str(error.value) == f"pattern {bad!r} is not a regex: {' '.join(message.split())}"
    assert error.value.flagged == f"--pattern {bad!r} is not a regex: {' '.join(message.split())}"


def test_capturing_groups_and_non_strings_are_refused_in_one_line():
    with pytest.raises(BPEError, match=r"has 1 capturing group\(s\).*\(\?:\.\.\.\)$"):
        patterns.resolve_pattern(r"(\w+)|\s")
    with pytest.raises(BPEError, match="not bytes"):
        patterns.resolve_pattern(b"gpt2")


def test_the_plain_counter_of_any_pattern_is_findall_over_the_pieces():
    text = "HelloWorld don't<|e|>DON'T 12345"
    assert count_text(text, ["<|e|>"], "o200k") == {
        b"Hello": 1, b"World": 1, b" don't": 1, b"DON'T": 1, b" ": 1, b"123": 1, b"45": 1}
    letters = text.replace("<|e|>", " ")
    assert count_text(text, ["<|e|>"], r"\w") == {c.encode(): letters.count(c) for c in letters if c.isalnum()}


# --- The tables ----------------------------------------------------------------------------------------------

def table_values(name: str, text: str) -> bytes:
    """Each character's flags through both stages of the pattern's table."""
    stage1, stage2 = pattern_classes.scanner_tables(name)
    rows = array("H", stage1)
    return bytes(stage2[rows[ord(c) >> 8] * pattern_classes.BLOCK + (ord(c) & 255)] for c in text)


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_the_flags_of_every_code_point_are_regexs(name):
    expected = bytearray(len(EVERY))
    for flag, cls in pattern_classes.CLASSES[name].items():
        match = regex.compile(cls).match
        for i, char in enumerate(EVERY):
            if match(char):
                expected[i] |= flag
    assert table_values(name, "".join(EVERY)) == bytes(expected)


def test_o200ks_classes_overlap_where_the_scanner_expects():
    # a, A, Dz (title case), a modifier letter, CJK (other letter), marks (Mn, Mc, Me), a digit, a space, "!"
    assert pattern_classes.flags_of("o200k", "aA\u01c5\u02b0\u4e2d\u0301\u0903\u20dd1 !") == [
        "LETTER|LOWER", "LETTER|UPPER", "LETTER|UPPER", "LETTER|UPPER|LOWER", "LETTER|UPPER|LOWER", "UPPER|LOWER",
        "UPPER|LOWER", "UPPER|LOWER", "NUMBER", "SPACE", "OTHER"]
    assert pattern_classes.flags_of("cl100k", "aA\u0301\u2160\u3000\x1c") == [
        "LETTER", "LETTER", "OTHER", "NUMBER", "SPACE", "OTHER"]


def test_the_tables_are_regexs_unicode_not_pythons():
    # U+1C89, CYRILLIC CAPITAL LETTER TJE, came with Unicode 16: a letter to regex, not to Python 3.11's str
    if "\u1c89".isalpha():
        pytest.skip("this Python knows Unicode 16")
    assert pattern_classes.flags_of("o200k", "\u1c89") == ["LETTER|UPPER"]


def test_the_contraction_letters_in_any_case_are_regexs():
    found = {(ord(m.group()), letter) for letter in pattern_classes.CONTRACTION_LETTERS
             for m in regex.finditer(f"(?i:{letter})", "".join(EVERY))}
    assert set(pattern_classes.contraction_folds()) == {(cp, ord(letter)) for cp, letter in found}
    assert (0x17F, ord("s")) in pattern_classes.contraction_folds()  # long s: 'ſ is a contraction to regex
    assert regex.fullmatch(patterns.CL100K_PATTERN, "'\u017f") and regex.fullmatch(patterns.CL100K_PATTERN, "'LL")


# --- Where each pattern lets a file be cut ------------------------------------------------------------------

TEXT = b"ab!\ncd  (ef\tgh<|e|>ij\x0bk,l"


def cuts_of(path, rule: str, special_tokens=("<|e|>",)) -> set[int]:
    with open(path, "rb") as f:
        finder = CutFinder(f, len(TEXT), list(special_tokens), cuts=rule)
        return {finder.first_cut(offset) for offset in range(1, len(TEXT))} - {None}


def test_each_rule_cuts_where_its_patterns_allow(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(TEXT)
    special = TEXT.index(b"<|e|>")
    # before a space or tab after a non-space (not the newline: "!\n" is one pre-token; not "(": "(ef" is one)
    assert cuts_of(path, "spaces", ()) == {TEXT.index(b"  "), TEXT.index(b"\t"), TEXT.index(b"\x0b")}
    assert cuts_of(path, "spaces") == {special, TEXT.index(b"\x0b")}  # a special token is the cut preferred
    assert cuts_of(path, "special") == {special}
    assert cuts_of(path, "special", ()) == set()
    gpt2 = cuts_of(path, "gpt2", ())
    assert TEXT.index(b"\n") in gpt2 and TEXT.index(b",") in gpt2  # GPT-2 may cut at a newline, a change of class
    assert find_chunk_boundaries(path, [], 4, cuts="special") == [0, len(TEXT)]
    with pytest.raises(ValueError, match="no rule"):
        cuts_of(path, "lines")
