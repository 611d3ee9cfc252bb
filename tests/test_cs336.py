"""The CS336 adapters, called the way the assignment's test_train_bpe.py and test_tokenizer.py call them."""

from __future__ import annotations

import json

from bpe.cs336 import get_tokenizer, run_train_bpe
from bpe.io.byte_unicode import unicode_to_byte
from conftest import CORPUS_EN, FIXTURES, TINYSTORIES_SAMPLE, cs336_merges, cs336_vocab

EOT = "<|endoftext|>"


def test_run_train_bpe_matches_the_cs336_merges():
    vocab, merges = run_train_bpe(input_path=CORPUS_EN, vocab_size=500, special_tokens=[EOT])
    assert merges == cs336_merges()
    expected = cs336_vocab()
    assert set(vocab.keys()) == set(expected.keys())
    assert set(vocab.values()) == set(expected.values())


def test_run_train_bpe_never_merges_across_special_tokens():
    vocab, _ = run_train_bpe(input_path=str(TINYSTORIES_SAMPLE), vocab_size=300, special_tokens=[EOT])
    assert all(b"<|" not in token for token in vocab.values() if token != EOT.encode())


def _gpt2_tokenizer(special_tokens):
    """As the assignment's get_tokenizer_from_vocab_merges_path: GPT-2 files -> bytes -> get_tokenizer."""
    to_byte = unicode_to_byte()
    raw_vocab = json.loads((FIXTURES / "gpt2_vocab.json").read_text(encoding="utf-8"))
    vocab = {index: bytes(to_byte[c] for c in token) for token, index in raw_vocab.items()}
    merges = []
    for line in (FIXTURES / "gpt2_merges.txt").read_text(encoding="utf-8").splitlines():
        parts = line.rstrip().split(" ")
        if len(parts) == 2:
            merges.append(tuple(bytes(to_byte[c] for c in part) for part in parts))
    for token in special_tokens or []:
        if token.encode() not in set(vocab.values()):
            vocab[len(vocab)] = token.encode()
    return get_tokenizer(vocab, merges, special_tokens)


def test_get_tokenizer_round_trips_and_streams():
    tokenizer = _gpt2_tokenizer([EOT])
    text = TINYSTORIES_SAMPLE.read_text(encoding="utf-8")
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    with open(TINYSTORIES_SAMPLE, encoding="utf-8") as f:
        assert list(tokenizer.encode_iterable(f)) == ids
    assert tokenizer.encode("Hello, how are you?") == [15496, 11, 703, 389, 345, 30]  # GPT-2's ids
    assert tokenizer.encode(f"a{EOT}b")[1] == 50256
