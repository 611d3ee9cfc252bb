"""Every variant gives exactly v1's merges, and every chunked or faster counter (the plain and the fast
pre-tokenizer, serial and pooled) exactly the plain counts, on generated corpora (hypothesis).

Per CI run (``make test``): 500 corpora through every variant in this process (``workers=1``: no
pool start-up cost), 500 through the chunked counters with chunks forced down to a few bytes so cuts
land everywhere, and a smaller batch through the real process pool.  ``make fuzz`` multiplies every
count by ``BPE_FUZZ_SCALE`` (default there: 20).
"""

import os
from collections import Counter
from contextlib import ExitStack
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpe.running.cores as cores
import bpe.split.chunking as chunking
from bpe import VARIANTS, train_bpe
from bpe.counting.fast import count_file_serial_fast, count_text_fast
from bpe.counting.parallel import count_chunk, count_file_parallel, count_file_parallel_fast
from bpe.counting.plain import count_file_serial, count_text
from bpe.split.chunking import find_chunk_boundaries

SCALE = int(os.environ.get("BPE_FUZZ_SCALE", "1"))
SPECIAL = "<|endoftext|>"
# Overlapping (<|a|> inside <|a|><|b|>), self-overlapping (aa), containing a safe-looking newline
# (x\n) and non-ASCII special tokens: each can tempt a chunk cut into the middle of a token.
SPECIAL_SETS = [[SPECIAL], [], [SPECIAL, "<|a|>", "<|a|><|b|>"], ["aa"], ["x\n", "é<"], ["x\n\ufffd", "\ufffd"]]
# Small alphabets make repeated pairs (aaaa), ties and overlaps common; the rest covers unicode,
# emoji, NUL, CR/LF, digits and punctuation.
pieces = st.one_of(
    st.text(alphabet="ab ", min_size=1, max_size=12),
    st.text(alphabet="aé😀\x00\r\n\t 1.'s", min_size=1, max_size=8),
    st.sampled_from([SPECIAL, "<|a|>", "<|b|>", "x\n", "é<", " ", "\n\n", "aaaa", "abab", "don't", "naïve", "日本語",
                     "x"]),
    st.text(min_size=1, max_size=6),
)
corpora = st.lists(pieces, min_size=0, max_size=30).map("".join)
# Mostly text, sometimes with raw (possibly invalid UTF-8) bytes mixed in, for errors="replace".
raw_corpora = st.lists(
    st.one_of(pieces.map(lambda s: s.encode("utf-8", errors="surrogatepass")), st.binary(min_size=1, max_size=4)),
    min_size=0, max_size=30,
).map(b"".join)

RELAXED = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def write(directory, data: bytes):
    path = directory / "corpus.txt"
    path.write_bytes(data)
    return path


@settings(max_examples=500 * SCALE, **RELAXED)
@given(text=corpora, specials=st.sampled_from(SPECIAL_SETS), extra_merges=st.integers(min_value=0, max_value=60))
def test_all_variants_match_v1(tmp_path_factory, text, specials, extra_merges):
    path = write(tmp_path_factory.mktemp("eq"), text.encode("utf-8", errors="surrogatepass"))
    vocab_size = 256 + len(specials) + extra_merges
    expected = train_bpe(path, vocab_size, specials, variant="v1")
    for name in VARIANTS:
        if name != "v1":
            assert train_bpe(path, vocab_size, specials, variant=name, workers=1) == expected, name


def tiny_chunks(chunks_per_worker: int, scan_block: int):
    """Patch the chunk planner so a file of a few bytes is cut into up to ``chunks_per_worker`` pieces."""
    patches = ExitStack()
    patches.enter_context(mock.patch.multiple(cores, MIN_CHUNK_BYTES=1, CHUNKS_PER_WORKER=chunks_per_worker))
    patches.enter_context(mock.patch.multiple(chunking, SCAN_BLOCK_BYTES=scan_block,
                                              STREAM_CHUNK_BYTES=max(1, scan_block // 2)))
    return patches


@settings(max_examples=500 * SCALE, **RELAXED)
@given(data=raw_corpora, specials=st.sampled_from(SPECIAL_SETS), chunks=st.integers(2, 40),
       scan_block=st.integers(1, 16))
def test_chunked_counts_match_serial(tmp_path_factory, data, specials, chunks, scan_block):
    path = write(tmp_path_factory.mktemp("chunks"), data)
    expected = count_text(data.decode("utf-8", errors="replace"), specials)
    with tiny_chunks(chunks, scan_block):
        bounds = find_chunk_boundaries(path, specials, chunks, errors="replace")
        for counter in (count_text, count_text_fast):
            counted = Counter()
            for start, end in zip(bounds[:-1], bounds[1:]):
                counted.update(count_chunk(str(path), start, end, specials, "replace", counter))
            assert counted == expected, (counter.__name__, bounds)
        for count_file in (count_file_serial, count_file_serial_fast):  # streamed in tiny chunks
            assert count_file(path, specials, errors="replace") == expected, count_file.__name__


@settings(max_examples=30 * SCALE, **RELAXED)
@given(text=corpora, specials=st.sampled_from(SPECIAL_SETS), extra_merges=st.integers(min_value=0, max_value=40))
def test_pool_matches_v1(tmp_path_factory, pool_variant_names, text, specials, extra_merges):
    path = write(tmp_path_factory.mktemp("pool"), text.encode("utf-8", errors="surrogatepass"))
    vocab_size = 256 + len(specials) + extra_merges
    with tiny_chunks(8, 4):
        expected_counts = count_file_serial(path, specials)  # the plain definition
        assert count_file_parallel(path, specials, workers=2) == expected_counts
        assert count_file_parallel_fast(path, specials, workers=2) == expected_counts
        expected = train_bpe(path, vocab_size, specials, variant="v1")
        for name in pool_variant_names:
            assert train_bpe(path, vocab_size, specials, variant=name, workers=2) == expected, name
