"""cl100k's and o200k's compiled scanners, and a custom regex on v9's threads, count exactly what
``Counter(regex.findall(pattern, piece))`` counts; the compiled encoder cuts text exactly as ``findall`` does.

Held on generated text (hypothesis) from every Unicode category with the characters each pattern decides
on added (every whitespace character, ``\\r\\n`` runs, case changes inside words, title-case letters,
modifier letters, combining marks after letters and alone, digit runs of every length, contractions in
every case, apostrophes elsewhere, special tokens); on every code point, in a context of each kind at once
(the split), and on one code point of each class of each block of 256 in each context alone (the counts);
and on files cut into many chunks on 1 to 3 threads.  ``BPE_FUZZ_SCALE`` multiplies the generated examples.
"""

from __future__ import annotations

import itertools
import os
import threading
from array import array

import pytest
import regex
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe.counting.plain import count_text
from bpe.errors import BPEError
from bpe.running.pool import pools_started
from bpe.split import pattern_classes, patterns
from bpe.variants import v9_counting_compiled as v9
from conftest import FIXTURES

pytestmark = pytest.mark.skipif(v9.UNAVAILABLE is not None, reason=str(v9.UNAVAILABLE))
EOT = "<|endoftext|>"
NAMED = ["cl100k", "o200k"]
SCALE = int(os.environ.get("BPE_FUZZ_SCALE", "1"))
RELAXED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


def counted(text: str, pattern: str, special_tokens=(EOT,)) -> dict[bytes, int]:
    return dict(v9.count_bytes(text.encode("utf-8"), list(special_tokens), pattern=pattern))


def assert_exact(text: str, pattern: str, special_tokens=(EOT,)) -> None:
    assert counted(text, pattern, special_tokens) == dict(count_text(text, special_tokens, pattern))


# --- What the text is made of -----------------------------------------------------------------------------

#: Every character regex's \s matches (Unicode White_Space, as regex has it).
WHITESPACE = "".join(m.group() for m in regex.finditer(r"\s", "".join(map(chr, range(0x3001)))))
#: The characters each alternative turns on: title case (Lt), modifier letters (Lm), other letters (Lo),
#: combining marks (Mn, Mc, Me), long s and the Kelvin sign (case folds), numbers of every kind (Nd, Nl,
#: No), apostrophes, slashes, and characters Python and regex class differently.
TRICKY = ("aAzZ\u00c0\u00e9\u00df\u01c5\u01c8\u1f88\u02b0\u02c6\u30fc\u4e2d\u3042\u05d0\u0301\u0903\u20dd\u0345"
          "\u017f\u212a01\u0663\u0967\u2160\u00b2\u00bd'\u2019/\\!.,-(\x1c\x85\ufffd\U0001f600\u200d\u0378"
          "\ue000\u1c89")
CONTRACTIONS = ["".join(case) for word in ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")
                for case in itertools.product(*({c, c.upper()} for c in word))] + ["'\u017f", "'\u017fx", "''s"]
WORDS = ["HelloWorld", "\u00c0bcDEF", "iPhone", "McDonald's", "XMLHttpRequest", "DON'T", "don'T", "\u01c5ungla",
         "a\u01c5b", "\u02b0a", "A\u02b0", "a\u02b0B", "a\u0301", "\u0301", "A\u0301", "\u0301A", "!\u0301", "!!\u0301",
         " \u0301a", "\u4e2dA", "A\u4e2d", "\u00e9t\u00e9", "x's", "X'S", "it's'll", "rock'n'roll"]
pieces = st.one_of(
    st.text(min_size=1, max_size=8),  # every category hypothesis knows, surrogates aside
    st.text(alphabet=TRICKY + " \n", min_size=1, max_size=12),
    st.text(alphabet=WHITESPACE + "x!1", min_size=1, max_size=10),
    st.text(alphabet=" \r\n\t", min_size=1, max_size=6),
    st.text(alphabet="0123456789\u0663", min_size=1, max_size=10),
    st.sampled_from(CONTRACTIONS + WORDS + [EOT, "<|endoftext", "|>", "\r\n", "!\n/", " .\r\n", "a\n\n  b"]),
)
texts = st.lists(pieces, max_size=24).map("".join)


# --- The named patterns: the counter -----------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMED)
@settings(max_examples=300 * SCALE, **RELAXED)
@given(text=texts)
@example(text="HelloWorld \u00c0bcDEF \u01c5ungla \u02b0A \u0301A !\u0301 !!\u0301 'S'Ll'RE 'ſ")
@example(text="12345678 1 12 123 1234 \u0663\u0664\u0665\u0666")
@example(text="x  \n\n  y \r\n\r\n\t z!\n/ \u3000\u2028 end  \n  ")
@example(text="don't DON'T it'S we'VE i'M they'LL he'D x'  ' 's")
def test_generated_text_counts_as_regex(name, text):
    assert_exact(text, name)


@pytest.mark.parametrize("name", NAMED)
@settings(max_examples=100 * SCALE, **RELAXED)
@given(text=st.lists(pieces, max_size=12).map("".join),
       special_tokens=st.sampled_from([["<|a|>", "<|a|><|b|>"], ["aa"], ["\u00e9t\u00e9", " "], ["'s"], ["\n"]]))
def test_generated_text_with_overlapping_and_non_ascii_special_tokens(name, text, special_tokens):
    assert_exact(text, name, special_tokens)


#: The contexts that decide a character's class: letters of each case around it (o200k splits on case),
#: numbers, a space or other character before it, an apostrophe (a contraction's letter in any case), a
#: newline after it (cl100k and o200k keep newlines after punctuation), two of it before spaces.
CONTEXTS = ["a{c}a", "A{c}A", "aA{c}", "{c}Ab", "1{c}23", "x {c}y", "!{c}\n/", "'{c}", "'l{c}", "{c}{c}  x"]
#: Most of them at once, for every code point.
EVERY_CONTEXT = "a{c}A{c}1{c} {c}'{c}!\n"
CODE_POINTS = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def one_of_each_class_in_each_block(name: str) -> list[str]:
    """For each block of 256 code points, the first code point of each set of flags the block has."""
    stage1, stage2 = pattern_classes.scanner_tables(name)
    rows = array("H", stage1)
    chosen = []
    for block, row in enumerate(rows):
        firsts: dict[int, int] = {}
        for low in range(256):
            firsts.setdefault(stage2[row * 256 + low], block * 256 + low)
        chosen.extend(chr(c) for c in firsts.values() if not 0xD800 <= c < 0xE000)
    return chosen


@pytest.mark.parametrize("name", NAMED)
def test_every_code_point_in_context_is_cut_as_findall_cuts_it(name):
    # The split as a list (the encoder's, the same scanner as the counter's), not as counts: most of these
    # pre-tokens are distinct, and two dicts of millions of them would take most of a minute to build.
    from bpe.io.compiled import compiled_encoder
    from bpe.io.tokenizer import Tokenizer

    encoder = compiled_encoder(Tokenizer({i: bytes([i]) for i in range(256)}, []), name).encoder
    text = " ".join(EVERY_CONTEXT.format(c=c) for c in CODE_POINTS)
    assert encoder.pieces(text.encode()) == [token.encode() for token in patterns.compiled_pattern(name).findall(text)]


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("context", CONTEXTS)
def test_each_class_of_each_block_in_each_context(name, context):
    assert_exact(" ".join(context.format(c=c) for c in one_of_each_class_in_each_block(name)), name, ())


def test_the_same_scanners_at_every_position_of_a_line():
    line = ("He said: \u201cdon't\u201d \u2014 IT'S 42\u00a0km, caf\u00e9s\u3000\u4e2d\u6587 \U0001f600!\r\n"
            "HelloWorld \u00c0bcDEF\t\u01c5a 12345 /path/to\n\n  ")
    for name in NAMED:
        for i in range(len(line) + 1):
            assert_exact(line[:i] + "\u2019s 'S " + line[i:], name)


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("data", [b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"ab\xc3", b"\x80x", b"'\xc5",
                                  b"'l\xc5", b" \xff", b"A\xcc", b"1\xe2\x82", b"!\xf0\x9f\x98", b"\n\xe0\x80\x80"])
def test_each_kind_of_bad_sequence_is_found_where_python_finds_it(name, data):
    text = b"ok " + data + b" ok"
    with pytest.raises(UnicodeDecodeError) as plain:
        text.decode("utf-8")
    counter = v9.Counter(1, [], *pattern_classes.scanner_tables(name), pattern=patterns.SCANNERS[name],
                         folds=pattern_classes.contraction_folds())
    assert counter.count(0, text) == plain.value.start  # the scanner's first bad byte is Python's
    with pytest.raises(BPEError, match=f"invalid UTF-8 at byte offset {plain.value.start} "):
        v9.count_bytes(text, pattern=name)


# --- The named patterns: the encoder cuts as findall does --------------------------------------------------

@pytest.fixture(scope="module")
def gpt2_tokenizer():
    from bpe.io.tokenizer import Tokenizer

    return Tokenizer.from_files(FIXTURES / "gpt2_vocab.json", FIXTURES / "gpt2_merges.txt", [EOT])


@pytest.fixture(scope="module")
def encoders(gpt2_tokenizer):
    """GPT-2's merges in a compiled encoder that cuts by each named pattern."""
    from bpe.io.compiled import compiled_encoder

    return {name: compiled_encoder(gpt2_tokenizer, name) for name in NAMED}


def findall_pieces(text: str, pattern: str, special_tokens=(EOT,)) -> list[bytes]:
    compiled = patterns.compiled_pattern(pattern)
    split = regex.compile("|".join(map(regex.escape, sorted(special_tokens, key=len, reverse=True))))
    return [token.encode() for piece in split.split(text) for token in compiled.findall(piece)]


def python_ids(tokenizer, text: str, pattern: str) -> bytes:
    """The ids the Python path's procedure gives with ``pattern``'s split: each special token's id, each
    findall pre-token through ``Tokenizer._bpe``."""
    compiled = patterns.compiled_pattern(pattern)
    out = []
    for part in tokenizer._special_split.split(text):
        if part in tokenizer._special_packed:
            out.append(tokenizer._special_packed[part])
        else:
            out.extend(tokenizer._bpe(token.encode()) for token in compiled.findall(part))
    return b"".join(out)


@pytest.mark.parametrize("name", NAMED)
@settings(max_examples=300 * SCALE, **RELAXED)
@given(text=texts)
@example(text="HelloWorld \u00c0bcDEF 'S'Ll x  \n\n  y!\n/ 12345")
def test_the_encoders_pieces_and_ids_are_findalls(gpt2_tokenizer, encoders, name, text):
    encoder = encoders[name]
    assert encoder.encoder.pattern == patterns.SCANNERS[name]
    assert encoder.encoder.pieces(text.encode()) == findall_pieces(text, name)
    assert bytes(encoder.encode_text_bytes(text.encode())) == python_ids(gpt2_tokenizer, text, name)


def test_the_encoder_refuses_tables_not_its_patterns_and_a_custom_pattern_has_none(gpt2_tokenizer):
    from bpe.io.compiled import Encoder, compiled_encoder

    assert compiled_encoder(gpt2_tokenizer, r"\w+|\W") is None
    with pytest.raises(ValueError, match="not those of scanner 2"):
        Encoder(*pattern_classes.scanner_tables("cl100k"), [None] * 256, [], [], [], 2, pattern=2)
    with pytest.raises(ValueError, match="no scanner numbered 7"):
        Encoder(*pattern_classes.scanner_tables("cl100k"), [None] * 256, [], [], [], 2, pattern=7)


# --- Files: the pattern's cuts, on threads --------------------------------------------------------------------

@pytest.fixture
def many_chunks(monkeypatch):
    """Cut every file into up to 64 chunks, whatever its size: the cuts land everywhere a rule allows."""
    monkeypatch.setattr(v9, "plan_chunk_count", lambda size, workers: max(1, min(64, size // 8)))


#: About 200 KB: enough that three threads each get chunks of their own (bpe.running.cores.workers_for).
FILE_TEXT = ("one two!\n\n(three)\r\n four   five\u00a0six's\tDON'T<|endoftext|>x  \n  HelloWorld\u00c0bc 12345\n" * 20
             + "<|endoftext|>" * 3 + "caf\u00e9 \u4e2d\u6587  \n\n 42 !\n/a\u0301 'S " * 30) * 80


@pytest.mark.parametrize("name", [*NAMED, r"\p{L}+|\p{N}|[^\p{L}\p{N}\s]+|\s+", r"(?i)[a-z]+|\s|."])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_file_in_many_chunks_on_threads(write_corpus, many_chunks, monkeypatch, name, workers):
    seen = set()
    if name not in patterns.PATTERNS:  # a custom pattern: which threads counted it
        count, everyone = v9._count_with_regex, threading.Barrier(workers, timeout=60)

        def recording(counter, thread, *args):
            if (thread, threading.current_thread().name) not in seen:  # each thread waits for all the others
                seen.add((thread, threading.current_thread().name))
                everyone.wait()
            return count(counter, thread, *args)

        monkeypatch.setattr(v9, "_count_with_regex", recording)
    path = write_corpus(FILE_TEXT)
    with pools_started() as sizes:
        got = v9.count_pretokens(path, [EOT], workers=workers, pattern=name)
    expected = count_text(FILE_TEXT, [EOT], name)
    assert dict(got) == dict(expected) and got.total() == sum(expected.values())
    assert sizes == [workers]
    if name not in patterns.PATTERNS:
        assert len(seen) == workers and {thread for thread, _ in seen} == set(range(workers))


@pytest.mark.parametrize("name", [*NAMED, r"\w+|\W"])
def test_texts_and_bad_bytes_with_each_pattern(write_corpus, name):
    docs = ["HelloWorld don't<|endoftext|>x", "  \n\n 12345 !\n/", "\u00c0bcDEF"] * 3
    got = v9.count_texts(docs, [EOT], workers=2, pattern=name)
    assert dict(got) == dict(count_text("<|endoftext|>".join(docs), [EOT], name))
    path = write_corpus(b"fine text here " * 40 + b"bad \xe2\x82 byte")
    with pytest.raises(BPEError, match="invalid UTF-8 at byte offset 604"):
        v9.count_pretokens(path, [EOT], workers=2, pattern=name)
    replaced = v9.count_pretokens(path, [EOT], workers=2, pattern=name, errors="replace")
    text = path.read_bytes().decode("utf-8", "replace")
    assert dict(replaced) == dict(count_text(text, [EOT], name))


# --- A custom regex: regex's own matches, on threads ----------------------------------------------------------

CUSTOM = [r"\w+|\s+|.", r"\p{L}+|\p{N}{1,2}|\s|[^\w\s]+", r"(?i)[aeiou]+|[^aeiou]", r"a*", r"(?=a)|b", r"x|",
          r"\b", r"(?<=a)\w|\d+", r"\G\w", r"(?r)\w+|\W", r"(?V1)[[a-z]--[aeiou]]+|.", r"'s|\S+", r"(?:ab)+?|.",
          patterns.CL100K_PATTERN.replace("\\s++$|", "")]


@settings(max_examples=200 * SCALE, **RELAXED)
@given(text=texts, pattern=st.sampled_from(CUSTOM))
@example(text="aab baa<|endoftext|>a", pattern="a*")
@example(text="", pattern="x|")
def test_a_custom_regex_counts_as_findall(text, pattern):
    assert counted(text, pattern) == dict(count_text(text, [EOT], pattern))


def test_a_custom_regex_in_batches_is_findall_across_their_edges(monkeypatch):
    monkeypatch.setattr(v9, "BATCH", 3)
    v9._repeated_of.cache_clear()
    try:
        text = "the cat's hat, a bat: 12 34 567 " * 50 + "aa b"
        for pattern in (r"\w+|\s+|.", r"(?<=a)\w|\w+|\W", r"a*"):
            assert counted(text, pattern) == dict(count_text(text, [EOT], pattern))
    finally:
        v9._repeated_of.cache_clear()


def test_empty_matches_are_counted_as_findall_counts_them_and_merge_as_v1_merges():
    from bpe.variants import v1_naive

    counts = v9.count_bytes(b"aab aab ab<|endoftext|>", [EOT], pattern="a*")
    assert dict(counts) == {b"": 7, b"aa": 2, b"a": 1} and counts.has_empty
    assert not v9.count_bytes(b"aab", pattern=r"\w+").has_empty
    reference, merger = v1_naive.Merger(dict(counts)), v9.Merger(counts)
    for _ in range(3):
        pair = reference.select_best_pair()
        assert merger.select_best_pair() == pair
        if pair is None:
            break
        reference.merge(pair)
        merger.merge(pair)


def test_an_invalid_regex_is_one_line_before_anything_is_read(tmp_path):
    for call in (lambda: v9.count_pretokens(tmp_path / "missing.txt", [], pattern="(a"),
                 lambda: v9.count_bytes(b"x", pattern="[b-a]"), lambda: v9.count_texts(["x"], [], pattern="(?<name")):
        with pytest.raises(BPEError, match="is not a regex") as error:
            call()
        assert "\n" not in str(error.value)


def test_add_tokens_counts_str_and_bytes_and_refuses_anything_else():
    counter = v9.Counter(2, [], *pattern_classes.scanner_tables("gpt2"))
    counter.add_tokens(1, ["caf\u00e9", b"caf\xc3\xa9", "a" * 40, "", "x"])
    counter.add_tokens(0, ["a" * 40] * 3)
    assert counter.totals() == ([1, 4], 8)
    with pytest.raises(TypeError, match="str or bytes, not int"):
        counter.add_tokens(0, ["ok", 3])
    with pytest.raises(UnicodeEncodeError):
        counter.add_tokens(0, ["\ud800"])
    with pytest.raises(IndexError):
        counter.add_tokens(2, ["x"])
    counter.stop()
    with pytest.raises(KeyboardInterrupt):
        counter.add_tokens(0, ["x"])
    counter.release()


def totals_and_counts(counter) -> tuple[int, dict[bytes, int]]:
    _, total = counter.totals()
    return total, dict(v9._arrays(counter, counter_threads(counter)))


def counter_threads(counter) -> int:
    return len(counter.totals()[0])


def test_add_spans_walks_characters_to_utf8_bytes_across_calls():
    text = "caf\u00e9 \u4e2d\u6587 x\U0001f600y ok"
    counter = v9.Counter(1, [], *pattern_classes.scanner_tables("gpt2"))
    # characters [0, 4) "caf\u00e9" (5 bytes), [4, 7) " \u4e2d\u6587" (7), [7, 11) " x\U0001f600y" (7), [11, 14) " ok"
    assert counter.add_spans(0, text, 0, [4, 7]) == (2, 7, 12)
    assert counter.add_spans(0, text, 7, [11, 14], 7, 12) == (2, 14, 22)  # on from where the last call ended
    assert counter.add_spans(0, text, 11, [11, 12]) == (0, 11, 19)  # an empty one first: nothing added
    assert counter.add_spans(0, text, 0, [4, 4, 7]) == (1, 4, 5)  # stops at the empty one
    total, counts = totals_and_counts(counter)
    assert total == 5 and counts == {"caf\u00e9".encode(): 2, " \u4e2d\u6587".encode(): 1,
                                     " x\U0001f600y".encode(): 1, b" ok": 1}
    ascii_counter = v9.Counter(1, [], *pattern_classes.scanner_tables("gpt2"))
    assert ascii_counter.add_spans(0, "ab cd", 1, [2, 5]) == (2, 5, 5)
    # past the text, going back, a start before the known point, a start past the text, a byte past the UTF-8
    for bad in ((0, "ab", 0, [3]), (0, "ab", 1, [0]), (0, "ab", 1, [2], 2, 2), (0, "ab", 3, [3]),
                (0, "ab", 0, [1], 0, 9)):
        with pytest.raises(ValueError):
            ascii_counter.add_spans(*bad)
    with pytest.raises(IndexError):
        ascii_counter.add_spans(1, "ab", 0, [1])


def test_a_counter_refuses_tables_that_are_not_its_patterns():
    with pytest.raises(ValueError, match="not those of scanner 1"):
        v9.Counter(1, [], *pattern_classes.scanner_tables("gpt2"), pattern=1)
    with pytest.raises(ValueError, match="not those of scanner 0"):
        v9.Counter(1, [], *pattern_classes.scanner_tables("o200k"))
    with pytest.raises(ValueError, match="an ASCII byte"):
        v9.Counter(1, [], *pattern_classes.scanner_tables("o200k"), pattern=2, folds=[(0x17F, 300)])
    with pytest.raises(ValueError, match="more than 8"):
        v9.Counter(1, [], *pattern_classes.scanner_tables("o200k"), pattern=2,
                   folds=[(0x100 + k, 115) for k in range(9)])


def test_the_batches_are_used_where_they_stand_for_findall():
    assert v9._repeated(regex.compile(r"\w+|\s+")) is not None
    assert v9._repeated(regex.compile(patterns.CL100K_PATTERN)) is not None
    for pattern in (r"\G\w", r"(?r)\w+", r"(?p)a|ab", r"(?b)(?:abc){e<=1}", r"(?e)(?:abc){e<=1}", r"a(?R)?b"):
        assert v9._repeated(regex.compile(pattern)) is None, pattern
