"""The lecture's other half: the labelled pattern cuts exactly as the GPT-2 pattern does, special tokens are
split out first, and a word encoded merge by merge ends as bpe.Tokenizer encodes it."""

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, train_bpe
from bpe.counting.plain import count_text
from bpe.lab.teach.text_trace import (
    RULES,
    applied_merges,
    encoding_lines,
    labelled_pattern,
    pretokenize_lines,
    pretokenize_pieces,
)
from bpe.split.patterns import GPT2_PATTERN, GPT2_REGEX
from conftest import REPO_ROOT

EOT = "<|endoftext|>"
TEXTS = ["It's 2024, and we don't   stop.\nThe end!", "naïve café 東京 ١٢٣ \t\n\n  x", "a'll b've 're'", "  ", ""]


def test_the_pattern_has_one_label_per_alternative():
    assert "|".join(RULES.values()) == GPT2_PATTERN
    assert all(regex.compile(part) for part in RULES.values())  # each a whole alternative, none cut inside a group


@pytest.mark.parametrize("text", TEXTS)
def test_the_labelled_pattern_cuts_as_the_gpt2_pattern(text):
    assert [m.group() for m in labelled_pattern().finditer(text)] == GPT2_REGEX.findall(text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1 \n\t'.é東٣<|>sdlvre"), max_size=30))
def test_the_labelled_pattern_cuts_as_the_gpt2_pattern_on_any_text(text):
    assert [m.group() for m in labelled_pattern().finditer(text)] == GPT2_REGEX.findall(text)


def test_each_piece_is_labelled_with_the_alternative_that_matched():
    pieces = pretokenize_pieces(f"It's 42!{EOT}  \nx{EOT}", [EOT])
    assert pieces == [("It", "letters"), ("'s", "contraction"), (" 42", "numbers"), ("!", "other"), (EOT, "special"),
                      ("  ", "whitespace"), ("\n", "whitespace before text"), ("x", "letters"), (EOT, "special")]


def test_the_pieces_less_the_special_tokens_are_the_counted_pretokens():
    text = (REPO_ROOT / "tests" / "fixtures" / "tinystories_sample.txt").read_text()[:5000]
    pieces = pretokenize_pieces(text, [EOT])
    counted = {}
    for piece, label in pieces:
        if label != "special":
            counted[piece.encode()] = counted.get(piece.encode(), 0) + 1
    assert counted == dict(count_text(text, [EOT])) and ("<|endoftext|>", "special") in pieces
    assert "".join(piece for piece, _ in pieces) == text  # nothing lost, nothing added


def test_the_terminal_trace_shows_the_escaped_split_and_each_rule():
    lines = pretokenize_lines(f"a{EOT}b's", [EOT])
    assert lines[1] == r"1. cut at the special tokens ('<|endoftext|>'), escaped and longest first: <\|endoftext\|>"
    assert any(line.split()[:2] == ["'<|endoftext|>'", "special"] for line in lines)
    assert any(line.split()[:3] == ['"\'s"', "contraction", "'(?:[sdmt]|ll|ve|re)"] for line in lines)
    assert pretokenize_lines("ab", [])[1] == "1. no special tokens: the text is one piece"


def test_a_word_encoded_merge_by_merge_ends_as_the_tokenizer_encodes_it():
    corpus = REPO_ROOT / "tests" / "fixtures" / "corpus.en"
    vocab, merges = train_bpe(corpus, 400, [EOT])
    tokenizer = Tokenizer(vocab, merges, [EOT])
    for word in [" together", " the", "Tokenization", " naïve", "x"]:
        applied = applied_merges(word.encode(), merges)
        assert [rank for rank, _, _ in applied] == sorted(rank for rank, _, _ in applied)  # lowest rank first
        tokens = applied[-1][2] if applied else tuple(bytes([b]) for b in word.encode())
        assert [vocab[i] for i in tokenizer.encode(word)] == list(tokens)


def test_the_encoding_trace_lists_each_merge_applied():
    lines = encoding_lines(f"newest{EOT}", [(b"s", b"t"), (b"e", b"st")], [EOT])
    assert lines[1:] == ["  'newest' (letters): n e w e s t", "    merge rank 0    s + t  -> n e w e st",
                         "    merge rank 1    e + st  -> n e w est",
                         "  '<|endoftext|>': a special token, one id of its own"]
