"""Our ids are tiktoken's for each named pattern: ranks we trained with the pattern, loaded into a
``tiktoken.Encoding`` with that pattern, encode text to the same ids as the ``Tokenizer`` (both paths), on
every kind of text, except where tiktoken's engine and ``regex`` class a code point differently (their
Unicode versions differ).  That set is computed (:func:`bpe.split.pattern_classes.tiktoken_disagreements`),
left out of the text here, and its size for the installed versions is the one docs/patterns.md states.
"""

from __future__ import annotations

import base64
import re

import pytest
import regex
import tiktoken
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, train_bpe
from bpe.data.webtext import generate
from bpe.io.compiled import UNAVAILABLE
from bpe.io.formats import tiktoken_ranks
from bpe.split.pattern_classes import tiktoken_disagreements
from bpe.split.patterns import PATTERNS
from conftest import FIXTURES, REPO_ROOT
from tools import text_kinds

EOT = "<|endoftext|>"
NAMED = list(PATTERNS)
#: The versions the sizes below were computed with, and the sizes (docs/patterns.md, "Unicode").
VERSIONS = {"tiktoken": "0.14.0", "regex": "2026.12.2"}
SIZES = {"gpt2": 17_480, "cl100k": 17_480, "o200k": 17_560}
FILES = ["address.txt", "german.txt", "special_token_double_newlines_non_whitespace.txt",
         "special_token_trailing_newlines.txt", "tinystories_sample.txt"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Books and web-like text, 60 KB, for ranks that hold words, numbers and punctuation with newlines."""
    folder = tmp_path_factory.mktemp("tiktoken-ids")
    generate(folder / "web.txt", 30_000)
    books = (REPO_ROOT / "corpora" / "gutenberg-sample.txt").read_bytes()[:30_000]
    path = folder / "both.txt"
    path.write_bytes((folder / "web.txt").read_bytes() + books[: books.rindex(b"\n") + 1])
    return path


@pytest.fixture(scope="module", params=NAMED)
def trained(request, corpus):
    """``(pattern name, our Tokenizer, tiktoken's Encoding)`` of ranks trained with the pattern."""
    name = request.param
    vocab, merges = train_bpe(corpus, 1200, [EOT], pattern=name)
    ranks = {base64.b64decode(token): int(rank)
             for token, rank in map(str.split, tiktoken_ranks(vocab, [EOT]).splitlines())}
    encoding = tiktoken.Encoding(f"bpe-lab-{name}", pat_str=PATTERNS[name], mergeable_ranks=ranks,
                                 special_tokens={EOT: 256})
    return name, Tokenizer(vocab, merges, [EOT], pattern=name), encoding


def without_disagreements(text: str, name: str) -> str:
    differ = tiktoken_disagreements(name)
    return "".join(c for c in text if ord(c) not in differ)


def both_paths(tokenizer: Tokenizer, text: str) -> list[int]:
    """The Tokenizer's ids, checked to be the same on the compiled path and the Python one."""
    ids = tokenizer.encode(text)
    assert tokenizer.encode_packed_python(text) == tokenizer.encode_packed(text)
    return ids


def test_the_tokenizer_keeps_its_pattern_and_its_compiled_path(trained):
    name, tokenizer, _ = trained
    assert tokenizer.pattern_name == name
    assert (tokenizer.compiled_encoder() is not None) == (UNAVAILABLE is None)
    assert b" the" in set(tokenizer.vocab.values())


@pytest.mark.parametrize("file", FILES)
def test_the_ids_are_tiktokens_on_the_fixtures(trained, file):
    name, tokenizer, encoding = trained
    text = without_disagreements((FIXTURES / file).read_text(encoding="utf-8"), name)
    assert both_paths(tokenizer, text) == encoding.encode(text, allowed_special={EOT})


@pytest.mark.parametrize("kind", sorted(text_kinds.SOURCES))
def test_the_ids_are_tiktokens_on_every_kind_of_text(trained, kind):
    """Web text, other scripts, mixed, emoji, combining marks, digits, whitespace (tools.text_kinds)."""
    name, tokenizer, encoding = trained
    documents, text = text_kinds.SOURCES[kind](), ""
    while len(text) < 20_000:
        text += next(documents)
    text = without_disagreements(text, name)
    assert both_paths(tokenizer, text) == encoding.encode(text, allowed_special={EOT})


TRICKY = ["HelloWorld", "DON'T", "don'T", "'S", "'\u017f", "12345678", " 1 12 123 1234", "!\n\n", "x  \n\n  y",
          "\r\n\r\n\t", "a/b//c\n/", "\u01c5ungla", "\u02b0A", "A\u0301", "\u4e2d\u6587", "\U0001f642\u200d\U0001f4bb",
          "\u0663\u0664\u0665\u0666", " \u00a0\u3000", EOT, "<|endoftext", "\x00\x1c", "  end  "]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(st.text(max_size=30), st.sampled_from(TRICKY)), max_size=20))
@example(parts=["HelloWorld 12345!\n\n  x'S", EOT, "\u01c5ungla  \n"])
def test_the_ids_are_tiktokens_on_any_text_without_those_code_points(trained, parts):
    name, tokenizer, encoding = trained
    text = without_disagreements("".join(parts), name)
    assert both_paths(tokenizer, text) == encoding.encode(text, allowed_special={EOT})


# --- The code points the two engines class differently ------------------------------------------------------

def test_the_disagreements_are_classes_each_engine_holds_differently():
    """Each is a code point one of the pattern's classes holds for one engine and not the other: here the
    first of them, a letter to ``regex``, is not one to tiktoken (a pattern of that class alone, run by
    tiktoken, drops it)."""
    first = min(tiktoken_disagreements("gpt2"))
    assert regex.fullmatch(r"\p{L}|\p{N}|\s", chr(first))
    ranks = {bytes([b]): b for b in range(256)}
    letters = tiktoken.Encoding("letters", pat_str=r"\p{L}+|\p{N}+|\s+", mergeable_ranks=ranks, special_tokens={})
    assert letters.decode(letters.encode_ordinary(f"a{chr(first)}b")) == "ab"
    assert tiktoken_disagreements("gpt2") <= tiktoken_disagreements("o200k")
    assert tiktoken_disagreements(r"\w+") == tiktoken_disagreements("o200k")  # a custom regex: every class


@pytest.mark.parametrize("name", NAMED)
def test_the_number_of_disagreements_is_the_one_the_docs_state(name):
    installed = {"tiktoken": tiktoken.__version__, "regex": regex.__version__}
    if installed != VERSIONS:
        pytest.skip(f"the size is stated for {VERSIONS}, installed: {installed}")
    assert len(tiktoken_disagreements(name)) == SIZES[name]
    page = (REPO_ROOT / "docs" / "patterns.md").read_text(encoding="utf-8")
    stated = re.search(r"tiktoken ([\d.]+) and regex ([\d.]+)", page)
    assert stated is not None and stated.groups() == (VERSIONS["tiktoken"], VERSIONS["regex"])
    assert f"{SIZES[name]:,}" in page


def test_a_stream_is_cut_where_the_pattern_allows(trained, monkeypatch):
    """``encode_iterable`` cuts its buffer by the pattern's rule (for cl100k and o200k not at a newline after
    punctuation, which their pre-tokens hold): the ids are those of the whole text."""
    import bpe.io.tokenizer as tokenizer_module

    name, tokenizer, encoding = trained
    monkeypatch.setattr(tokenizer_module, "STREAM_BUFFER_CHARS", 64)
    lines = [f"Line {i}: HelloWorld!\n\n  x/y 12345 don'T\r\n" for i in range(200)]
    text = "".join(lines)
    assert list(tokenizer.encode_iterable(lines)) == tokenizer.encode(text) == encoding.encode(text)
