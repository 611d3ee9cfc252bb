"""The chunked, pooled pre-tokenizer counts exactly what the serial one counts."""

import pytest

from bpe import BPEError
from bpe.training.chunking import find_chunk_boundaries
from bpe.training.parallel import count_file_parallel
from bpe.training.pretokenize import count_file_serial
from conftest import CORPUS_EN, DEFAULT_CORPUS

SPECIAL = ["<|endoftext|>"]


@pytest.mark.parametrize("path", [CORPUS_EN, DEFAULT_CORPUS])
@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_counts_equal_serial(path, workers):
    assert count_file_parallel(path, SPECIAL, workers=workers) == count_file_serial(path, SPECIAL)


def test_boundaries_sit_at_special_tokens(write_corpus):
    doc = "some words here and there. " * 40
    path = write_corpus("<|endoftext|>".join([doc] * 50))
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, SPECIAL, 8)
    assert bounds[0] == 0 and bounds[-1] == len(data) and bounds == sorted(set(bounds))
    assert len(bounds) > 2
    for cut in bounds[1:-1]:
        assert data[cut:].startswith(b"<|endoftext|>")


def test_file_without_special_tokens_is_cut_at_safe_newlines(write_corpus):
    lines = "".join(f"line {i} has some text,\n  indented: {i * 7}!\n\n" for i in range(3000))
    path = write_corpus(lines)
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, SPECIAL, 6)
    assert len(bounds) > 2
    for cut in bounds[1:-1]:
        assert data[cut:cut + 1] == b"\n" and data[cut - 1] not in b" \t\r\n"
    assert count_file_parallel(path, SPECIAL, workers=2) == count_file_serial(path, SPECIAL)


def test_invalid_utf8_in_a_worker_names_the_file_offset(write_corpus):
    good = ("hello world<|endoftext|>" * 20000).encode()
    path = write_corpus(good + b"\xfe" + good)
    with pytest.raises(BPEError, match=f"invalid UTF-8 at byte offset {len(good)}"):
        count_file_parallel(path, SPECIAL, workers=2)
