"""tools/pattern_table.py: each pattern's counting speed by the plain and the compiled counter, and the tokens per
byte of a held-out tenth with a vocab trained on the rest; the cut at a document's start or a blank line."""

import pytest

from bpe.errors import BPEError
from bpe.io.tokenizer import Tokenizer
from bpe.training.train import train_bpe
from conftest import FIXTURES
from tools import pattern_table

EOT = "<|endoftext|>"


def test_the_cut_is_a_documents_start_or_a_blank_line(tmp_path):
    documents = tmp_path / "docs.txt"
    documents.write_bytes(b"one two\n\nthree" + EOT.encode() + b"four five" + EOT.encode() + b"six")
    data = documents.read_bytes()
    assert pattern_table.split_at(documents, 0.5) == data.index(EOT.encode(), len(data) // 2)
    books = tmp_path / "books.txt"
    books.write_bytes(b"a line\n\nanother one\n\nthe last")
    assert pattern_table.split_at(books, 0.5) == books.read_bytes().rindex(b"\n\n")
    flat = tmp_path / "flat.txt"
    flat.write_bytes(b"no blank line anywhere")
    with pytest.raises(BPEError, match="no document start or blank line after 90% of it"):
        pattern_table.split_at(flat, 0.9)


def test_tokens_per_byte_are_the_held_out_texts_ids_over_its_bytes(tmp_path):
    path = FIXTURES / "tinystories_sample.txt"
    figures = pattern_table.tokens_per_byte(path, 300, 1)
    assert set(figures["patterns"]) == {"gpt2", "cl100k", "o200k", "custom"}
    data = path.read_bytes()
    cut = figures["trained_bytes"]
    assert figures["held_out_bytes"] == len(data) - cut > 0 and cut >= 0.9 * len(data)
    # o200k's figure made again by hand: a vocab trained on the first part, the rest encoded by it
    trained = tmp_path / "trained.txt"
    trained.write_bytes(data[:cut])
    vocab, merges = train_bpe(trained, 300, [EOT], pattern="o200k")
    ids = Tokenizer(vocab, merges, [EOT], pattern="o200k").encode(data[cut:].decode(), allowed_special="all")
    assert figures["patterns"]["o200k"] == {"tokens": len(ids), "tokens_per_byte": len(ids) / (len(data) - cut)}


def test_the_counting_speed_has_each_way_for_each_pattern(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text((FIXTURES / "corpus.en").read_text(encoding="utf-8")[:20_000], encoding="utf-8")
    speed = pattern_table.counting_speed(path, 1, 2)
    assert set(speed) == {"gpt2", "cl100k", "o200k", "custom"}
    for figure in speed.values():
        assert set(figure["mb_per_s"]) == {"plain", "compiled_1", "compiled_2"}
        assert all(rate > 0 for rate in figure["mb_per_s"].values())
        assert figure["compiled_over_plain"] == figure["mb_per_s"]["compiled_2"] / figure["mb_per_s"]["plain"]
