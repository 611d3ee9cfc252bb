"""Every rung gives exactly v1's merges with every pattern: GPT-4's (``cl100k``), GPT-4o's (``o200k``) and a
custom regex, on both kinds of text the project trains on (books, and web-like text with its non-ASCII, its
numbers and its documents), in this process and in the pool with the file cut into many chunks by the
pattern's own rule; and a custom regex that matches the empty string, which ``findall`` counts.

v1-v5 count other patterns with the plain counter, v6-v8 with it too (their fast split is GPT-2's alone), v7
shards those counts, v9 (and v10, which counts with v9) with its scanners (cl100k, o200k) and with ``regex`` on
its threads (a custom regex):
so what is held here is that each of those paths counts what ``regex.findall`` counts and merges as v1 does.
"""

from __future__ import annotations

from unittest import mock

import pytest

import bpe.running.cores as cores
from bpe import VARIANTS, train_bpe
from bpe.counting.plain import count_text
from bpe.data.webtext import generate
from bpe.split.chunking import find_chunk_boundaries
from bpe.split.patterns import cuts_of
from conftest import REPO_ROOT

SPECIAL = "<|endoftext|>"
#: A custom regex: words, runs of punctuation and runs of whitespace, each on its own (no leading space).
CUSTOM = r"\w+|[^\w\s]+|\s+"
PATTERNS = ["cl100k", "o200k", CUSTOM]
#: Enough merges to reach the words, the numbers and the newlines joined to punctuation.
VOCAB_SIZE = 256 + 1 + 150


@pytest.fixture(scope="module")
def texts(tmp_path_factory) -> dict[str, object]:
    """``books``: the shipped corpus's first 40 KB, cut at a line's end; ``web``: 40 KB of generated web-like
    text (its documents separated by the special token)."""
    folder = tmp_path_factory.mktemp("pattern-texts")
    books = (REPO_ROOT / "corpora" / "gutenberg-sample.txt").read_bytes()[:40_000]
    (folder / "books.txt").write_bytes(books[: books.rindex(b"\n") + 1])
    generate(folder / "web.txt", 40_000)
    return {"books": folder / "books.txt", "web": folder / "web.txt"}


def many_chunks():
    """The file cut into a chunk per few kilobytes, as a file of hundreds of megabytes is cut."""
    return mock.patch.multiple(cores, MIN_CHUNK_BYTES=1024, CHUNKS_PER_WORKER=8)


@pytest.mark.parametrize("kind", ["books", "web"])
@pytest.mark.parametrize("pattern", PATTERNS, ids=["cl100k", "o200k", "custom"])
def test_every_rung_gives_v1s_merges_with_the_pattern(texts, kind, pattern):
    path = texts[kind]
    expected = train_bpe(path, VOCAB_SIZE, [SPECIAL], variant="v1", pattern=pattern)
    assert len(expected[1]) == VOCAB_SIZE - 257  # the text has pairs enough: every merge is compared
    assert expected != train_bpe(path, VOCAB_SIZE, [SPECIAL], variant="v1")  # the pattern changes the merges
    for name in VARIANTS:
        if name == "v1":
            continue
        assert train_bpe(path, VOCAB_SIZE, [SPECIAL], variant=name, workers=1, pattern=pattern) == expected, name
        with many_chunks():
            assert train_bpe(path, VOCAB_SIZE, [SPECIAL], variant=name, workers=2, pattern=pattern) == expected, name


@pytest.mark.parametrize("specials", [[SPECIAL], []], ids=["special", "none"])
@pytest.mark.parametrize("pattern", ["gpt2", *PATTERNS], ids=["gpt2", "cl100k", "o200k", "custom"])
def test_each_patterns_chunks_count_as_the_whole(texts, pattern, specials):
    """The file cut by the pattern's rule (the pool's cuts, v9's threads', the stream's): the chunks' counts
    sum to the whole text's, cut at special tokens, or without them at what the rule allows (a custom regex:
    nowhere)."""
    data = texts["web"].read_bytes()
    bounds = find_chunk_boundaries(texts["web"], specials, 40, cuts=cuts_of(pattern))
    assert len(bounds) > 5 or (pattern == CUSTOM and not specials and bounds == [0, len(data)])
    summed = sum((count_text(data[a:b].decode("utf-8"), specials, pattern) for a, b in zip(bounds, bounds[1:])),
                 start=count_text("", specials, pattern))
    assert summed == count_text(data.decode("utf-8"), specials, pattern)


def test_a_custom_regex_that_matches_the_empty_string_is_counted_as_findall_counts_it(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text(f"ab ab, cd!! ab{SPECIAL}x  y\n\nab " * 40, encoding="utf-8")
    expected = train_bpe(path, 270, [SPECIAL], variant="v1", pattern=r"\w*")
    assert expected[1][:2] == [(b"a", b"b"), (b"c", b"d")]
    for name in VARIANTS:
        assert train_bpe(path, 270, [SPECIAL], variant=name, workers=2, pattern=r"\w*") == expected, name


def test_the_default_is_gpt2s_pattern(texts):
    path = texts["books"]
    assert train_bpe(path, 300, [SPECIAL], variant="v2") == train_bpe(path, 300, [SPECIAL], variant="v2",
                                                                      pattern="gpt2")
