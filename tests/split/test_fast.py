"""The fast pre-tokenizer (ASCII twin pattern + islands, v6 and v7) cuts and counts exactly what the plain one does."""

import itertools
import random
from unittest import mock

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bpe.counting.fast as fast_counter
import bpe.split.fast as pretokenize_fast
from bpe.counting.fast import count_file_serial_fast, count_text_fast
from bpe.counting.parallel import count_file_parallel_fast
from bpe.counting.plain import count_file_serial, count_text
from bpe.split.fast import (
    ASCII_TWIN_BYTES_REGEX,
    ASCII_TWIN_REGEX,
    UNICODE_REGEX,
    ascii_parts_and_islands,
    cut_islands,
    split_pretokens,
)
from bpe.split.patterns import GPT2_REGEX
from conftest import CORPUS_EN, DEFAULT_CORPUS, TINYSTORIES_SAMPLE
from tools import text_kinds

SPECIAL = ["<|endoftext|>"]
ALL_CODE_POINTS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
#: The ways a text can be cut: as chosen; every block cut into islands (in blocks of a few characters
#: or whole); no block cut (the Unicode pattern on each block whole); every block judged by the tally,
#: giving up at once or after a few islands.
CUTTING = [{"MAX_NON_ASCII_SHARE": pretokenize_fast.MAX_NON_ASCII_SHARE},
           {"MAX_NON_ASCII_SHARE": 1.0, "BLOCK_CHARS": 5},
           {"MAX_NON_ASCII_SHARE": 1.0, "BLOCK_CHARS": 10**9},
           {"MAX_NON_ASCII_SHARE": 0.0, "DENSE_SHARE": 0.0, "BLOCK_CHARS": 7},
           {"MAX_NON_ASCII_SHARE": 0.0, "DENSE_SHARE": 1.0, "ISLAND_PROBE": 1, "MIN_GAP": 10**9},
           {"MAX_NON_ASCII_SHARE": 0.0, "DENSE_SHARE": 1.0, "ISLAND_PROBE": 3, "MIN_GAP": 5, "BLOCK_CHARS": 11}]


def assert_exact(text, special_tokens=SPECIAL):
    """Counts, the in-order split and the island cut agree with the plain GPT-2 pattern, however cut."""
    expected, pre_tokens = count_text(text, special_tokens), GPT2_REGEX.findall(text)
    for cutting in CUTTING:
        with mock.patch.multiple(pretokenize_fast, **cutting):
            assert count_text_fast(text, special_tokens) == expected, (cutting, text[:200])
            assert split_pretokens(text) == pre_tokens, (cutting, text[:200])


def test_ascii_twin_equals_gpt2_on_every_ascii_context():
    # Every ASCII character alone, after a space, doubled and between letters/digits/spaces.
    for code in range(128):
        c = chr(code)
        for text in (c, " " + c, c + c, "a" + c + "1", c + "\n", "x " + c + "  y", "'" + c, c + "'s", "  " + c):
            assert ASCII_TWIN_REGEX.findall(text) == GPT2_REGEX.findall(text), repr(text)
            assert ASCII_TWIN_BYTES_REGEX.findall(text.encode()) == [t.encode() for t in GPT2_REGEX.findall(text)]


def test_reordered_unicode_pattern_equals_gpt2_on_every_code_point_in_every_context():
    # Letters first, then contraction, other, numbers: the same pre-tokens as GPT-2's order.
    assert UNICODE_REGEX.findall(ALL_CODE_POINTS) == GPT2_REGEX.findall(ALL_CODE_POINTS)
    for c in ALL_CODE_POINTS[::41] + "'sdmtlvre \u00a0\u3000":
        for text in (c, " " + c, c + c, "a" + c + "1", "'" + c, c + "'s", " '" + c, "x '" + c + "ll", "  " + c,
                     c + " \n", "1" + c + "a"):
            assert UNICODE_REGEX.findall(text) == GPT2_REGEX.findall(text), repr(text)


def test_whitespace_set_is_the_patterns_whitespace():
    # The islands' exact cuts need GPT-2's \s exactly: every code point checked against `regex`.
    spaces = set(regex.findall(r"\s", ALL_CODE_POINTS))
    assert pretokenize_fast._WHITESPACE_SET == spaces
    assert {"\x1c", "\x1d", "\x1e", "\x1f"}.isdisjoint(spaces)  # str.isspace and re's \s take these


def test_every_code_point():
    # In runs (as a text) and one by one next to letters, digits, spaces, quotes and apostrophes; the
    # spaced text also cut into islands everywhere (the share test off), in blocks of a few thousand characters.
    assert count_text_fast(ALL_CODE_POINTS, SPECIAL) == count_text(ALL_CODE_POINTS, SPECIAL)
    spaced = " ".join(ALL_CODE_POINTS[i : i + 3] + "\u2019s \u201ca\u201d\u00a0x"
                      for i in range(0, len(ALL_CODE_POINTS), 3))
    expected = count_text(spaced, SPECIAL)
    assert count_text_fast(spaced, SPECIAL) == expected
    with mock.patch.multiple(pretokenize_fast, MAX_NON_ASCII_SHARE=1.0, BLOCK_CHARS=4000):
        assert count_text_fast(spaced[:300_000], SPECIAL) == count_text(spaced[:300_000], SPECIAL)


def test_former_stand_in_marks_and_control_characters():
    for text in ["a\x01b \u201cx\u201d \x02", "x\x01y \u2014 z", "don\u2019t\x0b \u00a0 \x0c", "\x01\x02 plain"]:
        assert_exact(text)


def test_special_token_holding_non_ascii():
    text = "a\u2014b<\u2014>c \u201cd\u201d<\u2014>e caf\u00e9 <\u2014> x"
    assert count_text_fast(text, ["<\u2014>"]) == count_text(text, ["<\u2014>"])
    assert (count_text_fast(text, ["<\u2014>", "<|endoftext|>", "b<"])
            == count_text(text, ["<\u2014>", "<|endoftext|>", "b<"]))


def test_fixture_corpora():
    for path in (CORPUS_EN, TINYSTORIES_SAMPLE, DEFAULT_CORPUS):
        text = path.read_text(encoding="utf-8")
        assert count_text_fast(text, SPECIAL) == count_text(text, SPECIAL), path.name


# Characters chosen for the cuts: ASCII of every class, contraction letters, non-ASCII whitespace (\u00a0,
# \u3000, \u2009, \x85, \u2028), letters from several scripts (Latin, Cyrillic, Greek, Hebrew, Arabic),
# CJK, emoji (astral, skin tones, ZWJ), combining marks, digits from other scripts (Arabic-Indic,
# fullwidth), direction marks, and the characters the twin treats as other but `re` would call space (\x1c).
TRICKY = ("ab1 '\n\t\r\x0b\x0c\x1c.,-!sdmtlvre" "\u00a0\u3000\u2009\x85\u2028\u00e9\u00df\u0436\u03bb\u05d0"
          "\u4e2d\u6587\u3002\uff0c\U0001f600\U0001f44d\u0301\u0308\u0663\u2019\u201c\u2014\u00ab"
          "\u0627\u0644\u060c\u061f\u200f\u200e\u200d\U0001f3fd\uff15\u05b8\u0651")


def _words(alphabet, lengths=(1, 9)):
    return st.lists(st.text(alphabet=alphabet, min_size=lengths[0], max_size=lengths[1]),
                    min_size=1, max_size=6).map(" ".join)


# Pieces of each kind of text the counter must get right: mixed scripts, right-to-left words with
# their marks and digits, emoji sequences, combining marks, digit runs and whitespace runs.
pieces = st.one_of(
    st.text(min_size=1, max_size=8),
    st.text(alphabet=TRICKY, min_size=1, max_size=12),
    st.sampled_from(["<|endoftext|>", "don\u2019t", "\u201cHe said\u201d", " \u00a0 ", "1\u20142", "we're", "I'll",
                     "e\u0301t\u00e9", "abc123def", "\u4e2d\u6587 text", "\U0001f600\U0001f600 ok", "  \u3000 x",
                     "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7!",
                     "\u05e9\u05b8\u05dc\u05d5\u05b9\u05dd", "\u0627\u0644\u0633\u0644\u0627\u0645 \u0661\u0662\u0663",
                     "\u200fabc\u200e", "x\u0301\u0323y", "\r\n\r\n\t "]),
    _words("\u0627\u0644\u0628\u0633\u0645\u200f\u0660\u0661 1.,\u060c"),  # right to left, with marks and digits
    _words("\u05d0\u05d1\u05d2\u05b8\u05bc'\"-"),
    _words("aeiou\u0300\u0301\u0308\u0323\u0327nt"),  # combining marks, stacked
    _words("\U0001f600\U0001f44d\U0001f3fd\u200d\u2764\ufe0f\U0001f1eb\U0001f1f7ab"),  # emoji sequences
    _words("0123456789.,:-$%\u0663\uff15\u00bd", (1, 12)),  # digits of every kind
    st.text(alphabet=" \t\n\r\x0b\x0c\x85\u00a0\u2009\u3000\u2028xy'", min_size=1, max_size=16),  # whitespace runs
)


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=20).map("".join))
@example("x \u00a0 y")
@example("\u00e9  \u00a0x y")
@example("a\u00a0 b")
def test_generated_text(text):
    assert_exact(text)


def _lines():
    """ASCII lines of every kind the cuts meet: runs of spaces, tabs, CR, VT, digits by letters, contractions."""
    return ["the cat's 12 dogs", "  two  spaces  ", "tab\tand\rcr\x0bvt", "x1y22z333", "I'm we've they'd 'll",
            "...!!?? -- ''", "ends with space ", " starts", "a", ""]


@pytest.mark.parametrize("insert", ["\u00e9", "\u00a0", "\u3000", "\u4e2d", "\U0001f600", "\u0301", "\u2019",
                                    "\u00e9\u00e9 \u00e9", "\x85"])
def test_non_ascii_at_every_position_of_a_line(insert):
    for line in _lines():
        texts = [line[:i] + insert + line[i:] for i in range(len(line) + 1)]
        for text in texts:
            assert split_pretokens(text) == GPT2_REGEX.findall(text), repr(text)
        joined = "\n".join(texts)
        assert count_text_fast(joined, SPECIAL) == count_text(joined, SPECIAL)


def _sample(rng, alphabet, words):
    return " ".join("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 9))) for _ in range(words))


def test_scripts_and_mixtures():
    rng = random.Random(5)
    latin, accented = "abcdefghijklmnopqrstuvwxyz", "abcdeéèàüöäñçßłžčıøåœ"
    cjk, cyrillic = [chr(0x4E00 + i) for i in range(200)] + list("。，、「」"), [chr(c) for c in range(0x430, 0x450)]
    emoji = ["\U0001f600", "\u2764\ufe0f", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7"]
    texts = {
        "accented": _sample(rng, accented, 3000),
        "cjk": ("".join(rng.choice(cjk) for _ in range(20000)) + " ok 42 "
                + "".join(rng.choice(cjk) for _ in range(500))),
        "cyrillic": _sample(rng, cyrillic, 3000),
        "mixed": " ".join(rng.choice([_sample(rng, latin, 5), _sample(rng, cyrillic, 2), rng.choice(emoji),
                                       "".join(rng.choice(cjk) for _ in range(6)), "e\u0301", "\u00a0", "3\u00bd"])
                          for _ in range(3000)),
        "sparse": "\n".join(_sample(rng, latin, 40) + rng.choice(["", " caf\u00e9", "\u2014", " \U0001f600"])
                            for _ in range(300)),
    }
    for name, text in texts.items():
        assert_exact(text)
        assert_exact(text.replace(" ", "<|endoftext|>", 50))


@pytest.mark.parametrize("kind", sorted(set(text_kinds.SOURCES) - {"ascii"}))  # ascii: webtext, all ASCII
def test_every_kind_of_text(kind):
    # The lab's kinds (tools.text_kinds): web text, other scripts, mixed, emoji, combining, digits, whitespace.
    assert_exact("".join(itertools.islice(text_kinds.SOURCES[kind](), 4))[:30_000])


@pytest.mark.parametrize("share", [0.0, 0.01, 0.2, 1.0])
@pytest.mark.parametrize("block", [3, 64, 8192])
def test_any_share_and_block_size_gives_the_same_counts(share, block):
    # Whether a block is cut or taken whole, and however small the blocks, the counts and pre-tokens are the same.
    rng = random.Random(int(share * 100) + block)
    text = "<|endoftext|>".join(_sample(rng, "ab\u00e9\u0436 1'\n", 200) + " plain words" * rng.randrange(30)
                                for _ in range(20))
    with mock.patch.multiple(pretokenize_fast, MAX_NON_ASCII_SHARE=share, DENSE_SHARE=max(share, 0.05),
                             BLOCK_CHARS=block):
        assert count_text_fast(text, SPECIAL) == count_text(text, SPECIAL)
        assert split_pretokens(text) == GPT2_REGEX.findall(text)


def test_blocks_are_cut_at_exact_cuts(monkeypatch):
    monkeypatch.setattr(pretokenize_fast, "BLOCK_CHARS", 10)
    rng = random.Random(11)
    for _ in range(200):
        text = "".join(rng.choice(TRICKY) for _ in range(rng.randrange(1, 80)))
        blocks = list(pretokenize_fast._blocks(text))
        assert "".join(blocks) == text and all(blocks)
        assert list(itertools.chain.from_iterable(map(GPT2_REGEX.findall, blocks))) == GPT2_REGEX.findall(text)
        assert all(len(b) >= 10 for b in blocks[:-1])  # a block ends at the first cut after its size


def test_next_cut_is_an_exact_cut():
    rng = random.Random(11)
    for _ in range(300):
        text = "".join(rng.choice(TRICKY) for _ in range(rng.randrange(1, 80)))
        cut = pretokenize_fast._next_cut(text, rng.randrange(len(text) + 1))
        assert GPT2_REGEX.findall(text[:cut]) + GPT2_REGEX.findall(text[cut:]) == GPT2_REGEX.findall(text), (text, cut)


def test_the_share_test_counts_a_short_block_whole_and_samples_a_long_one():
    share = pretokenize_fast._non_ascii_share
    assert share("x" * 99 + "\u00e9") == 0.01 and share("x" * 49 + "\u00e9") == 0.02  # every character counted
    assert share("") == 0 and share("plain ascii") == 0
    rng = random.Random(3)
    for wanted, low, high in ((0.003, 0, 0.01), (0.05, 0.02, 0.1)):
        text = "".join("\u00e9" if rng.random() < wanted else "x" for _ in range(100_000))
        assert low <= share(text) <= high, wanted
    assert share(("x" * 19 + "\u00e9") * 5000) == pytest.approx(0.05, abs=0.01)  # a column every 20 characters, seen


def test_between_the_shares_cutting_goes_on_while_it_pays(monkeypatch):
    calls = []  # where the error handler was called: it looks for each island's end once
    real = pretokenize_fast._next_cut
    monkeypatch.setattr(pretokenize_fast, "_next_cut", lambda text, i: calls.append(i) or real(text, i))
    # 3 % non-ASCII: accents every few words, islands too close to pay, judged by the tally and given up
    accents = "<|endoftext|>".join(" ".join(["le caf\u00e9 est ici et puis encore"] * 40) for _ in range(30))
    assert count_text_fast(accents, SPECIAL) == count_text(accents, SPECIAL)
    assert pretokenize_fast.ISLAND_PROBE - 1 <= len(calls) <= pretokenize_fast.ISLAND_PROBE + 1  # then no call
    # 3 % non-ASCII as one run of CJK per page: one island a page, far apart, all cut
    calls.clear()
    pages = "<|endoftext|>".join("plain words " * 80 + "\u4e2d" * 30 for _ in range(30))
    assert count_text_fast(pages, SPECIAL) == count_text(pages, SPECIAL) and len(calls) == 30


def test_dense_blocks_take_the_unicode_pattern_whole_without_cutting(monkeypatch):
    cut = []
    monkeypatch.setattr(pretokenize_fast, "cut_islands", lambda block: cut.append(block) or cut_islands(block))
    monkeypatch.setattr(pretokenize_fast, "BLOCK_CHARS", 400)
    russian = " ".join(["\u043c\u043e\u0440\u0435 \u0438 \u043d\u0435\u0431\u043e"] * 100)
    sparse = ("a plain line of text with one caf\u00e9 in it, and then many more of the same plain words, " * 2
              + "and so on. " * 20)
    parts = ascii_parts_and_islands(russian + " " + sparse)
    assert not cut[0].isascii() and all("\u043c" not in block for block in cut)  # the sparse blocks only
    assert parts[1].startswith("\u043c\u043e\u0440\u0435") and len(parts[1]) >= 400  # Russian: one island per block
    assert " caf\u00e9" in parts  # sparse text: the word around the accent alone


@pytest.mark.parametrize("cutting", CUTTING)
def test_parts_alternate_and_join_exactly(cutting):
    rng = random.Random(7)
    with mock.patch.multiple(pretokenize_fast, **cutting):
        for _ in range(300):
            text = "".join(rng.choice(TRICKY) for _ in range(rng.randrange(1, 60)))
            for parts in (ascii_parts_and_islands(text), cut_islands(text)):
                assert "".join(parts) == text and len(parts) % 2 == 1
                assert all(part.isascii() for part in parts[0::2])
                expected = GPT2_REGEX.findall(text)
                assert list(itertools.chain.from_iterable(map(GPT2_REGEX.findall, parts))) == expected
                # the parts of one kind joined cut the same as apart
                for kind in (parts[0::2], parts[1::2]):
                    assert GPT2_REGEX.findall("".join(kind)) == list(
                        itertools.chain.from_iterable(map(GPT2_REGEX.findall, kind)))


def test_file_counts_across_chunks(tmp_path, monkeypatch):
    # Small stream chunks, so islands, chunk cuts and the str-keyed island counts meet across chunks.
    monkeypatch.setattr("bpe.split.chunking.STREAM_CHUNK_BYTES", 4096)
    rng = random.Random(9)
    text = "<|endoftext|>".join(_sample(rng, "abc\u00e9\u4e2d \u00a0'", 300) for _ in range(30))
    path = tmp_path / "mixed.txt"
    path.write_text(text, encoding="utf-8")
    expected = count_text(text, SPECIAL)
    assert count_file_serial_fast(path, SPECIAL) == expected
    assert count_file_serial(path, SPECIAL) == expected  # the plain streaming counter, across the same cuts
    with mock.patch.multiple("bpe.running.cores", MIN_CHUNK_BYTES=4096, CHUNKS_PER_WORKER=4):
        for workers in (1, 2):  # one worker: count_file_serial_fast; two: count_text_fast in the pool
            assert count_file_parallel_fast(path, SPECIAL, workers=workers) == expected, workers


def test_a_pre_token_from_both_paths_lands_on_one_key():
    # "\n\n" ends an island in the first document and an ASCII part in the second: the island's count
    # (str, encoded at the end) and the twin's (bytes) must be summed on the one key.
    text = "\u201chi\u201d\n\n<|endoftext|>ok hi\n\n"
    counts = count_text_fast(text, SPECIAL)
    assert counts == count_text(text, SPECIAL)
    assert counts[b"\n\n"] == 2


def test_only_the_island_takes_the_slow_path(monkeypatch):
    # One accented word in a 400 KB piece: only that word goes to the Unicode regex, not its line or piece.
    text = "plain ascii line, number 1.\n" * 7000 + "a café au lait\n" + "more ascii text\n  \n" * 7000
    expected = count_text(text, ["<|endoftext|>"])
    real = pretokenize_fast.UNICODE_REGEX
    slow = []

    class Spy:
        def findall(self, piece):
            slow.append(piece)
            return real.findall(piece)

    monkeypatch.setattr(fast_counter, "UNICODE_REGEX", Spy())  # where the fast counter looks it up
    assert count_text_fast(text, ["<|endoftext|>"]) == expected
    assert slow == [" café"]
