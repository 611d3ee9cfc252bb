"""train_bpe semantics (bpe/training/train.py): special tokens, vocab layout, early stop, bytes taken exactly,
--limit's subset on every variant, the path checked once, clear errors."""

import pytest

from bpe import VARIANTS, BPEError, train_bpe
from bpe.training.chunking import find_limit_end
from conftest import DEFAULT_CORPUS

ALL_VARIANTS = list(VARIANTS)
EOT = "<|endoftext|>"


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_special_tokens_never_merged(write_corpus, variant):
    specials = ["<|endoftext|>", "<|sep|>", "<pad>"]
    text = ("<|endoftext|>the cat<|sep|><|sep|>the hat<pad><|endoftext|>" * 20) + "the end<|sep|>"
    path = write_corpus(text)
    vocab, merges = train_bpe(path, 300, specials, variant=variant)
    for token in specials:
        assert list(vocab.values()).count(token.encode()) == 1
    # "<", "|" and ">" occur only inside special tokens, so no merge may contain them
    assert merges and not any(set(a + b) & set(b"<|>") for a, b in merges)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_special_token_text_does_not_leak_into_counts(write_corpus, variant):
    # With the special split out, only "ab" pairs exist; "<", "|" never get merged.
    path = write_corpus("<|x|>ab<|x|>ab<|x|>")
    vocab, merges = train_bpe(path, 300, ["<|x|>"], variant=variant)
    assert merges == [(b"a", b"b")]
    assert vocab[256] == b"<|x|>" and vocab[257] == b"ab"


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_overlapping_special_tokens_longest_wins(write_corpus, variant):
    path = write_corpus("xy<|a|><|b|>xy<|a|>zz")
    _, merges = train_bpe(path, 300, ["<|a|>", "<|a|><|b|>"], variant=variant)
    merged = {a + b for a, b in merges}
    assert merged == {b"xy", b"zz"}


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_early_stop_returns_fewer_merges(write_corpus, variant):
    path = write_corpus("abcabc")
    vocab, merges = train_bpe(path, 1000, [], variant=variant)
    # ab and bc tie at 2: the larger pair (b, c) wins; then (a, bc), then the two halves.
    assert merges == [(b"b", b"c"), (b"a", b"bc"), (b"abc", b"abc")]
    assert len(vocab) == 256 + len(merges)


def test_bytes_taken_exactly(write_corpus):
    # CRLF stays CRLF: "\r\n" is one whitespace pre-token and can be merged.
    path = write_corpus(b"a\r\nb\r\nc\r\n")
    _, merges = train_bpe(path, 257, [], variant="v1")
    assert merges == [(b"\r", b"\n")]


@pytest.mark.parametrize("bad", [255, 0, -5])
def test_vocab_too_small_is_a_clear_error(write_corpus, bad):
    path = write_corpus("hello")
    with pytest.raises(BPEError, match=r"vocab_size .* too small: it must be at least 257"):
        train_bpe(path, bad, ["<|endoftext|>"])


def test_errors_name_the_problem(write_corpus, tmp_path):
    path = write_corpus("hello")
    with pytest.raises(BPEError, match="input file not found"):
        train_bpe(tmp_path / "missing.txt", 300, [])
    with pytest.raises(BPEError, match="is a directory"):
        train_bpe(tmp_path, 300, [])
    with pytest.raises(BPEError, match="unknown variant 'v99'; valid variants: v1, v2"):
        train_bpe(path, 300, [], variant="v99")
    with pytest.raises(BPEError, match="must not be empty"):
        train_bpe(path, 300, [""])
    with pytest.raises(BPEError, match="listed more than once"):
        train_bpe(path, 300, ["<s>", "<s>"])


def test_invalid_utf8_names_the_offset(write_corpus):
    path = write_corpus(b"hello \xff world")
    with pytest.raises(BPEError, match="invalid UTF-8 at byte offset 6"):
        train_bpe(path, 300, [], variant="v1")
    _, merges = train_bpe(path, 300, [], variant="v1", errors="replace")
    assert merges  # decoded with U+FFFD and trained


def test_empty_file_gives_no_merges(write_corpus):
    vocab, merges = train_bpe(write_corpus(b""), 300, ["<|endoftext|>"])
    assert merges == [] and len(vocab) == 257


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize("workers, limit", [(1, None), (2, None), (2, "20KB")])
def test_the_path_is_checked_once(monkeypatch, variant, workers, limit):
    # train_bpe checks the path where it comes in and passes its end down; no layer below checks again.
    import bpe.training.parallel
    import bpe.training.pretokenize
    import bpe.training.shards
    import bpe.training.train
    from conftest import DEFAULT_CORPUS

    checked = []
    real = bpe.training.pretokenize.check_input_file

    def counting(path):
        checked.append(path)
        return real(path)

    for module in (bpe.training.train, bpe.training.parallel, bpe.training.pretokenize, bpe.training.shards):
        monkeypatch.setattr(module, "check_input_file", counting)
    _, merges = train_bpe(DEFAULT_CORPUS, 300, ["<|endoftext|>"], variant=variant, workers=workers, limit=limit)
    assert merges and len(checked) == 1


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_trains_on_the_same_subset(write_corpus, variant):
    end = find_limit_end(DEFAULT_CORPUS, 60_000, [EOT])
    subset = write_corpus(DEFAULT_CORPUS.read_bytes()[:end])
    stats = {}
    assert train_bpe(DEFAULT_CORPUS, 400, [EOT], variant=variant, limit="60KB", stats=stats) == \
        train_bpe(subset, 400, [EOT], variant="v2")
    assert stats["bytes_used"] == end and stats["file_bytes"] == DEFAULT_CORPUS.stat().st_size
