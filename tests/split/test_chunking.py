"""The chunker: every cut is safe (the pieces count exactly what the whole counts), files without special
tokens are still cut (CRLF, CJK, trailing spaces, one long line), planning stays linear on runs of a
self-overlapping special token, the streaming serial counter gives the same counts, and --limit ends at a
document boundary (``find_limit_end``).
"""

from __future__ import annotations

import builtins
import os
from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
import regex

import bpe.running.cores as cores
import bpe.split.chunking as chunking
from bpe import VARIANTS, BPEError, train_bpe
from bpe.counting.fast import count_file_serial_fast
from bpe.counting.parallel import count_chunk, count_file_parallel, count_file_parallel_fast
from bpe.counting.plain import count_file_serial, count_text
from bpe.split.chunking import WHITESPACE, find_chunk_boundaries, find_limit_end, iter_chunks
from conftest import CORPUS_EN, DEFAULT_CORPUS

EOT = "<|endoftext|>"


def whole(path: Path, specials, errors="strict") -> Counter:
    return count_text(path.read_bytes().decode("utf-8", errors=errors), specials)


def chunked(path: Path, specials, bounds, errors="strict") -> Counter:
    total = Counter()
    for start, end in zip(bounds[:-1], bounds[1:]):
        total.update(count_chunk(str(path), start, end, specials, errors))
    return total


def test_whitespace_list_is_gpt2s():
    assert set(WHITESPACE) == set(regex.findall(r"\s", "".join(map(chr, range(0x110000)))))


@pytest.mark.parametrize("name, line", [
    ("crlf", "a line of text, number {i}.\r\n"),
    ("cjk", "日本語の文です{i}。\n"),
    ("trailing space", "words then a space {i} \n"),
    ("one long line", "word{i} and more, "),
    ("tabs and unicode spaces", "x{i}\u3000y\u00a0z\t"),
    ("no whitespace at all", "word{i},"),
])
def test_files_without_special_tokens_are_cut(write_corpus, name, line):
    path = write_corpus("".join(line.format(i=i) for i in range(6000)))
    bounds = find_chunk_boundaries(path, [EOT], 8)
    assert len(bounds) == 9, bounds  # before the rule was widened: one chunk, counted in one process
    data = path.read_bytes()
    for cut in bounds[1:-1]:
        if name == "no whitespace at all":
            kinds = {"letter" if c.isalpha() else "digit" if c.isdigit() else "other"
                     for c in data[cut - 1:cut + 1].decode()}
            assert len(kinds) == 2, cut  # two ASCII characters of different classes
        else:
            assert data[cut:cut + 1] in b" \t\r\n" and data[cut - 1:cut] not in (b" ", b"\t", b"\r", b"\n"), cut
    assert chunked(path, [EOT], bounds) == whole(path, [EOT])
    assert count_file_parallel(path, [EOT], workers=2) == whole(path, [EOT])


def test_unicode_space_before_a_newline_is_not_a_cut(write_corpus):
    # "\u3000\n" is one whitespace run: cutting between them would split it.
    path = write_corpus("x\u3000\n" * 3 + "end")
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 1):
        bounds = find_chunk_boundaries(path, [], 20)
    data = path.read_bytes()
    assert all(not data[:cut].endswith("\u3000".encode()) for cut in bounds[1:-1])
    assert chunked(path, [], bounds) == whole(path, [])


class CountingReads:
    """Counts the bytes the chunker reads (a proxy for its work that does not depend on the clock)."""

    def __init__(self):
        self.bytes = 0
        self.real_open = builtins.open

    def open(self, *args, **kwargs):
        f = self.real_open(*args, **kwargs)
        real_read = f.read

        def read(n=-1):
            data = real_read(n)
            self.bytes += len(data)
            return data

        f.read = read
        return f


@pytest.mark.parametrize("special, content", [("aa", b"x " + b"a" * 1_000_000 + b" y"),
                                              ("\n\n", b"x" + b"\n" * 1_000_000 + b"y")])
def test_planning_is_linear_on_a_run_of_a_self_overlapping_special_token(write_corpus, special, content):
    path = write_corpus(content)
    reads = CountingReads()
    with mock.patch.object(chunking, "open", reads.open, create=True):
        bounds = find_chunk_boundaries(path, [special], 64)
        end = find_limit_end(path, len(content) // 3, [special])
    # each byte read about once (plus a little context per block), not once per occurrence
    assert reads.bytes < 3 * len(content), reads.bytes
    assert end >= len(content) // 3
    assert chunked(path, [special], bounds) == whole(path, [special])


def test_special_token_made_by_replaced_bytes_is_never_cut(write_corpus):
    # "x\n\ufffd" only exists once \xff has been decoded as U+FFFD; a cut at the newline would split it.
    specials = ["x\n\ufffd"]
    path = write_corpus(b"x\n\xffabc x\n\xff " * 3000)
    for errors in ("replace", "strict"):
        if errors == "strict":
            with pytest.raises(BPEError, match="invalid UTF-8 at byte offset 2"):
                count_file_parallel(path, specials, workers=2)
            continue
        expected = whole(path, specials, errors)
        assert b"x" not in expected  # every "x" belongs to a special token
        bounds = find_chunk_boundaries(path, specials, 8, errors=errors)
        assert len(bounds) > 3
        assert chunked(path, specials, bounds, errors) == expected
        assert count_file_parallel(path, specials, workers=2, errors=errors) == expected
        with mock.patch.object(chunking, "STREAM_CHUNK_BYTES", 1000):
            assert count_file_serial(path, specials, errors=errors) == expected
    for name in VARIANTS:
        assert train_bpe(path, 300, specials, variant=name, errors="replace") == \
            train_bpe(path, 300, specials, variant="v1", errors="replace"), name


@pytest.mark.parametrize("chunk_bytes", [1, 7, 100, 10_000])
def test_iter_chunks_covers_the_file_in_order(write_corpus, chunk_bytes):
    path = write_corpus(CORPUS_EN.read_bytes()[:min(30_000, 1000 * chunk_bytes)])
    ranges = list(iter_chunks(path, [EOT], chunk_bytes=chunk_bytes))
    assert ranges[0][0] == 0 and ranges[-1][1] == path.stat().st_size
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))
    assert len(ranges) > min(10, path.stat().st_size // chunk_bytes // 2)
    assert chunked(path, [EOT], [0] + [stop for _, stop in ranges]) == whole(path, [EOT])


@pytest.mark.parametrize("count_file", [count_file_serial, count_file_serial_fast])
def test_serial_counter_streams_in_chunks(write_corpus, count_file):
    path = write_corpus(("some text, then more.\n" + EOT) * 20_000)  # 700 KB
    seen = []
    reads = CountingReads()
    with mock.patch.object(chunking, "STREAM_CHUNK_BYTES", 64 * 1024), \
            mock.patch("bpe.corpus.text_file.open", reads.open, create=True):
        counts = count_file(path, [EOT], on_bytes=seen.append)
    assert counts == whole(path, [EOT])
    assert len(seen) > 8 and sum(seen) == path.stat().st_size
    assert max(seen) < 100 * 1024  # it never held more than about one chunk of the file
    assert reads.bytes == path.stat().st_size


@pytest.mark.parametrize("count_file", [count_file_parallel, count_file_parallel_fast])
def test_on_bytes_in_the_pool(write_corpus, count_file):
    path = write_corpus(("some text, then more.\n" + EOT) * 20_000)
    seen = []
    assert count_file(path, [EOT], workers=2, on_bytes=seen.append) == whole(path, [EOT])
    assert len(seen) > 2 and sum(seen) == path.stat().st_size


STABLE_PROC_FILE = Path("/proc/filesystems")  # like /proc/cpuinfo, but the same bytes on every read


@pytest.mark.skipif(not STABLE_PROC_FILE.exists() or os.path.getsize(STABLE_PROC_FILE) != 0,
                    reason="needs a file whose size reads 0 but has content")
def test_file_whose_size_reads_zero_is_read_as_a_stream():
    path = STABLE_PROC_FILE
    expected = count_text(path.read_bytes().decode("utf-8"), [EOT])
    assert expected
    for count_file in (count_file_serial, count_file_serial_fast, count_file_parallel, count_file_parallel_fast):
        assert count_file(path, [EOT], workers=2) == expected, count_file.__name__
    merges = train_bpe(path, 270, [EOT], variant="v1")[1]
    assert len(merges) == 270 - 257
    for name in VARIANTS:
        assert train_bpe(path, 270, [EOT], variant=name, workers=2)[1] == merges, name
    with pytest.raises(BPEError, match="reports a size of 0 but has content"):
        find_limit_end(path, 100, [EOT])


def test_cut_is_at_the_next_special_token_start():
    data = DEFAULT_CORPUS.read_bytes()
    for limit in (1, 50_000, 123_457, 1_000_000):
        end = find_limit_end(DEFAULT_CORPUS, limit, [EOT])
        assert end >= limit and data[end:].startswith(EOT.encode())
        assert EOT.encode() not in data[limit:end]  # the first one at or after the limit


def test_without_special_tokens_the_cut_is_a_safe_newline(write_corpus):
    path = write_corpus("alpha beta\n  gamma\ndelta epsilon\nzeta")
    data = path.read_bytes()
    end = find_limit_end(path, 12, [])
    assert data[end - 1 : end + 1] == b"a\n" and end == data.index(b"\ndelta")


def test_cut_inside_a_special_token_goes_forward_to_the_next_safe_cut(write_corpus):
    path = write_corpus("aaaa<|x|><|y|>bbbb<|y|>cc")
    # byte 9 is the start of "<|y|>", but "<|x|><|y|>" is one (longer) special token starting at 4: the
    # end is the next "<|y|>", never before the limit (a cut is never moved back)
    assert find_limit_end(path, 6, ["<|y|>", "<|x|><|y|>"]) == 18
    # a limit in a run of a self-overlapping special token ends after the run, at or after the limit
    path = write_corpus("b " + "a" * 1001 + " c d")
    for limit in (3, 500, 1002):
        assert find_limit_end(path, limit, ["aa"]) == 1003


def test_limit_past_the_end_is_the_whole_file(write_corpus):
    path = write_corpus("tiny<|endoftext|>file")
    assert find_limit_end(path, 10**9, [EOT]) == path.stat().st_size


def test_chunk_cut_inside_a_longer_special_token_after_multibyte_text(tmp_path):
    # Regression: the cut was moved out of "<|x|><|y|>" using offsets of a window decoded from the
    # middle of a 2-byte character, landing 2 bytes into the special token.
    from bpe.counting.parallel import count_chunk
    from bpe.split.chunking import find_chunk_boundaries

    specials = ["<|x|><|y|>", "<|y|>"]
    path = tmp_path / "c.txt"
    for prefix in range(12):
        data = ("é" * prefix + "ab<|x|><|y|>" + "cd" * 11).encode()
        path.write_bytes(data)
        for num_chunks in range(2, 8):
            bounds = find_chunk_boundaries(path, specials, num_chunks)
            counts = Counter()
            for start, end in zip(bounds, bounds[1:]):
                counts.update(count_chunk(str(path), start, end, specials, "strict"))
            assert counts == count_file_serial(path, specials), (prefix, num_chunks, bounds)
