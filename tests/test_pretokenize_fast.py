"""The fast shared pre-tokenizer (ASCII twin pattern + stand-ins) counts exactly what the plain one does."""

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import bpe.training.pretokenize as pretokenize
from bpe.training.pretokenize import (
    ASCII_TWIN_REGEX,
    GPT2_REGEX,
    STAND_INS,
    _gpt2_class,
    count_text,
    count_text_plain,
)
from conftest import CORPUS_EN, DEFAULT_CORPUS, TINYSTORIES_SAMPLE

SPECIAL = ["<|endoftext|>"]
ALL_CODE_POINTS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


def test_ascii_twin_equals_gpt2_on_every_ascii_context():
    # Every ASCII character alone, after a space, doubled and between letters/digits/spaces.
    for code in range(128):
        c = chr(code)
        for text in (c, " " + c, c + c, "a" + c + "1", c + "\n", "x " + c + "  y", "'" + c, c + "'s", "  " + c):
            assert ASCII_TWIN_REGEX.findall(text) == GPT2_REGEX.findall(text), repr(text)


def test_stand_ins_share_the_class_and_are_no_literal():
    assert {char for char, _ in STAND_INS} >= {"\u201c", "\u201d", "\u2019", "\u2014", "\u00a0"}
    for char, stand_in in STAND_INS:
        assert _gpt2_class(char) == _gpt2_class(stand_in) and stand_in.isascii() and not char.isascii()
        assert not regex.fullmatch(r"[sdmtlver' ]", stand_in)


def test_every_code_point():
    # In runs (as a text) and one by one next to letters, digits, spaces, quotes and apostrophes.
    assert count_text(ALL_CODE_POINTS, SPECIAL) == count_text_plain(ALL_CODE_POINTS, SPECIAL)
    spaced = " ".join(ALL_CODE_POINTS[i : i + 3] + "\u2019s \u201ca\u201d\u00a0x" for i in range(0, len(ALL_CODE_POINTS), 3))
    assert count_text(spaced, SPECIAL) == count_text_plain(spaced, SPECIAL)


def test_stand_in_characters_already_in_the_text():
    for text in ["a\x01b \u201cx\u201d \x02", "x\x01y \u2014 z", "don\u2019t\x0b \u00a0 \x0c", "\x01\x02 plain"]:
        assert count_text(text, SPECIAL) == count_text_plain(text, SPECIAL), repr(text)


def test_special_token_holding_a_stand_in_character():
    text = "a\u2014b<\u2014>c \u201cd\u201d<\u2014>e"
    assert count_text(text, ["<\u2014>"]) == count_text_plain(text, ["<\u2014>"])


def test_fixture_corpora():
    for path in (CORPUS_EN, TINYSTORIES_SAMPLE, DEFAULT_CORPUS):
        text = path.read_text(encoding="utf-8")
        assert count_text(text, SPECIAL) == count_text_plain(text, SPECIAL), path.name


pieces = st.one_of(
    st.text(min_size=1, max_size=8),
    st.text(alphabet="ab1 '\n\t\x01\x0b\x1c\u2019\u201c\u201d\u2014\u00a0\u2009\u00e9\u00a3sdtlv", min_size=1, max_size=12),
    st.sampled_from(["<|endoftext|>", "don\u2019t", "\u201cHe said\u201d", " \u00a0 ", "1\u20142"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=20).map("".join))
def test_generated_text(text):
    assert count_text(text, SPECIAL) == count_text_plain(text, SPECIAL)


def test_token_put_back_adds_to_the_same_token_from_a_non_ascii_piece():
    # The first document is ASCII once its quotes stand in, the second keeps its "é": the closing quote's two
    # counts come from both paths and must land on the one original token; "\n\n" is not printable
    # either, so it also goes through the put-back step and must come out unchanged.
    text = "\u201chi\u201d\n\n<|endoftext|>\u00e9 \u201chi\u201d\n\n"
    counts = count_text(text, SPECIAL)
    assert counts == count_text_plain(text, SPECIAL)
    assert counts["\u201d".encode()] == 2 and counts[b"\n\n"] == 2


def test_only_non_ascii_lines_take_the_slow_path(monkeypatch):
    # One accented word in a 400 KB piece: only its line goes to the Unicode regex, not the whole piece.
    text = "plain ascii line, number 1.\n" * 7000 + "a café au lait\n" + "more ascii text\n  \n" * 7000
    expected = count_text_plain(text, ["<|endoftext|>"])
    real = pretokenize.GPT2_REGEX
    slow = []

    class Spy:
        def findall(self, piece):
            slow.append(piece)
            return real.findall(piece)

    monkeypatch.setattr(pretokenize, "GPT2_REGEX", Spy())
    assert count_text(text, ["<|endoftext|>"]) == expected
    assert slow == ["\na café au lait"]
