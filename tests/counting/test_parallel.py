"""The chunked, pooled pre-tokenizers (plain, v3-v5; fast, v6-v7) count exactly what the plain serial one
counts (also on a --limit subset); the parallel reduce leaves disjoint shards; a worker killed at any stage
is one clear error."""

import os
from unittest import mock

import pytest

import bpe.running.cores as cores
from bpe import BPEError
from bpe.counting.fast import count_text_fast
from bpe.counting.parallel import PART_KEY, count_file_parallel, count_file_parallel_fast, count_into_parts, partition
from bpe.counting.plain import count_file_serial, count_text
from bpe.running.cores import plan_chunk_count
from bpe.running.pool import WorkerPool
from bpe.running.workers import KILL_MID_ANSWER_ENV, worker_state
from bpe.split.chunking import find_chunk_boundaries, find_limit_end
from conftest import CORPUS_EN, DEFAULT_CORPUS, live_processes

SPECIAL = ["<|endoftext|>"]
POOLED_COUNTERS = [count_file_parallel, count_file_parallel_fast]
EOT = "<|endoftext|>"


@pytest.mark.parametrize("count_file", POOLED_COUNTERS)
@pytest.mark.parametrize("path", [CORPUS_EN, DEFAULT_CORPUS])
@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_counts_equal_serial(path, workers, count_file):
    assert count_file(path, SPECIAL, workers=workers) == count_file_serial(path, SPECIAL)


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


@pytest.mark.parametrize("count_file", POOLED_COUNTERS)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_partitioned_reduce_equals_serial_with_tiny_chunks(workers, count_file):
    # chunks of a few KB: every worker counts many chunks and holds many pre-tokens of every part
    with mock.patch.multiple(cores, MIN_CHUNK_BYTES=2048, CHUNKS_PER_WORKER=20):
        assert count_file(CORPUS_EN, SPECIAL, workers=workers) == count_file_serial(CORPUS_EN, SPECIAL)


def part_in_worker():
    return dict(worker_state()[PART_KEY])


@pytest.mark.parametrize("counter", [count_text, count_text_fast])
def test_count_into_parts_leaves_disjoint_parts_in_the_workers(counter):
    expected = count_file_serial(CORPUS_EN, SPECIAL)
    seen = []
    with mock.patch.object(cores, "MIN_CHUNK_BYTES", 4096), WorkerPool(3, source=str(CORPUS_EN)) as pool:
        sizes = count_into_parts(pool, CORPUS_EN, SPECIAL, on_bytes=seen.append, counter=counter)
        shards = pool.broadcast(part_in_worker)
    assert sum(seen) == CORPUS_EN.stat().st_size
    assert sizes == [len(shard) for shard in shards] and all(sizes)
    for p, shard in enumerate(shards):
        assert all(partition(token, 3) == p for token in shard)
    joined = {}
    for shard in shards:
        joined.update(shard)
    assert sum(sizes) == len(joined) and joined == expected


@pytest.mark.parametrize("stage", ["count", "split", "reduce", "join"])
def test_worker_killed_half_way_through_an_answer(write_corpus, monkeypatch, stage):
    # tasks go out in this order: the chunks, then one split, one reduce, one join per worker
    path = write_corpus(("some words, and a number 42.\n" + SPECIAL[0]) * 20_000)
    chunks = len(find_chunk_boundaries(path, SPECIAL, plan_chunk_count(path.stat().st_size, 2))) - 1
    task = {"count": 1, "split": chunks, "reduce": chunks + 3, "join": chunks + 4}[stage]
    monkeypatch.setenv(KILL_MID_ANSWER_ENV, str(task))
    with pytest.raises(BPEError, match=r"^a pre-tokenization worker died \(killed by SIGKILL\) while counting "):
        count_file_parallel(path, SPECIAL, workers=2)
    assert live_processes(parent=os.getpid()) == []


@pytest.mark.parametrize("limit", [10_000, 300_000])
def test_serial_and_parallel_count_exactly_the_subset(limit):
    end = find_limit_end(DEFAULT_CORPUS, limit, [EOT])
    expected = count_text(DEFAULT_CORPUS.read_bytes()[:end].decode("utf-8"), [EOT])
    assert count_file_serial(DEFAULT_CORPUS, [EOT], end=end) == expected
    assert count_file_parallel(DEFAULT_CORPUS, [EOT], workers=2, end=end) == expected
