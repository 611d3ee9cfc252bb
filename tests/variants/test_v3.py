"""v3 (variants/v3_parallel_pretokenize.py): the pool on a file without special tokens and on one without a
safe cut, and a failing worker giving one clear BPEError (v5, pooled too, alike)."""

import multiprocessing
import os

import pytest

from bpe import BPEError, train_bpe


def test_v3_file_without_special_tokens(write_corpus):
    # ~300 KB, no special token anywhere: cut at safe newlines into several chunks.
    text = "".join(f"Line {i}: the quick brown fox, number {i * 37}!\n  and   more\n\n" for i in range(5000))
    path = write_corpus(text)
    expected = train_bpe(path, 400, ["<|endoftext|>"], variant="v2")
    assert train_bpe(path, 400, ["<|endoftext|>"], variant="v3", workers=2) == expected
    assert train_bpe(path, 400, [], variant="v3", workers=2) == train_bpe(path, 400, [], variant="v2")


def test_v3_file_with_no_safe_cut_is_one_chunk(write_corpus):
    path = write_corpus("ab cd  " * 30000)  # 210 KB on one line: no special token, no newline
    expected = train_bpe(path, 300, [], variant="v2")
    assert train_bpe(path, 300, [], variant="v3", workers=2) == expected


@pytest.mark.parametrize("variant", ["v3", "v5"])
def test_failing_worker_is_one_clear_error(write_corpus, variant):
    good = ("hello world, again<|endoftext|>" * 10000).encode()
    path = write_corpus(good + b"\xc3\x28" + good)  # an invalid 2-byte sequence in the middle
    with pytest.raises(BPEError, match=rf"invalid UTF-8 at byte offset {len(good)} \(byte 0xc3\)"):
        train_bpe(path, 300, ["<|endoftext|>"], variant=variant, workers=2)
    # No worker may outlive the call.  The executor's own thread may be reaping a worker at the same
    # moment as our join (then join returns before the exit status is recorded), so ask the OS.
    for child in multiprocessing.active_children():
        child.join(timeout=10)
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)
