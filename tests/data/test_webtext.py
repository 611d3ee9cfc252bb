"""The web-like data generator (bpe.data.webtext) and the ``webtext-synth`` data set name."""

import hashlib

import pytest

from bpe import BPEError
from bpe.cli import main
from bpe.data.datasets import data_label, resolve_data, size_label
from bpe.data.generated import SEPARATOR, Draws, file_statistics
from bpe.data.webtext import WebTextGenerator, generate
from bpe.counting.plain import count_file_serial

#: sha256 of the first 50,000 bytes' worth of documents of seed 0 (50,899 bytes).  It changes only
#: when the generator changes on purpose: then every published webtext-synth figure is stale too.
GOLDEN_50KB = "0ca4522ca5499e71cd424567827cb3acedaf4495142a5d54b7142fe872ae4043"


def test_same_seed_and_size_give_the_same_bytes(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    stats = generate(first, 50_000)
    generate(second, 50_000)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert hashlib.sha256(data).hexdigest() == GOLDEN_50KB
    assert stats == {"bytes": len(data), "documents": data.count(SEPARATOR.encode()),
                     "non_ascii_bytes": sum(b >= 0x80 for b in data)}


def test_the_generators_draws_are_the_plain_random_ones():
    # Draws only makes randrange and choices cheaper: over 300 documents (about 1 MB, every kind of them)
    # the stream is the one random.Random gives, draw for draw, and the generators' state ends the same.
    import itertools
    import random

    from bpe.data.tinystories import StoryGenerator

    for make, stream in ((WebTextGenerator, "documents"), (StoryGenerator, "stories")):
        fast, plain = make(3), make(3)
        plain.rng.__class__ = random.Random  # the same state, the base class's methods
        assert (list(itertools.islice(getattr(fast, stream)(), 300))
                == list(itertools.islice(getattr(plain, stream)(), 300)))
        assert fast.rng.getstate() == plain.rng.getstate()
    # and the arguments the generators never give go to the base class: the same draws or the same errors
    fast, plain = Draws(7), random.Random(7)
    for args in [(5,), (3, 9), (0, 10, 3), (10, 0, -2), (2**70,)]:
        assert fast.randrange(*args) == plain.randrange(*args)
    for args in [(0,), (4, 4), (3, 1)]:
        with pytest.raises((ValueError, TypeError)) as fast_error:
            fast.randrange(*args)
        with pytest.raises(type(fast_error.value)):
            plain.randrange(*args)
    for kwargs in [dict(cum_weights=[1, 2.5, 4]), dict(weights=[1, 1, 5]), dict(cum_weights=[0, 0, 3], k=4)]:
        assert fast.choices("abc", **kwargs) == plain.choices("abc", **kwargs)
    with pytest.raises(ValueError):
        fast.choices("abc", cum_weights=[1, 2])


def test_whole_documents_a_smaller_size_is_a_prefix_another_seed_differs(tmp_path):
    generate(tmp_path / "small.txt", 20_000)
    generate(tmp_path / "large.txt", 50_000)
    generate(tmp_path / "other.txt", 20_000, seed=1)
    small, large = (tmp_path / "small.txt").read_bytes(), (tmp_path / "large.txt").read_bytes()
    assert large.startswith(small) and len(small) >= 20_000 and small.endswith(SEPARATOR.encode())
    assert (tmp_path / "other.txt").read_bytes()[:1000] != small[:1000]
    assert not list(tmp_path.glob("*.tmp"))  # written under a temporary name, renamed when complete


def test_it_looks_like_web_text(tmp_path):
    path = tmp_path / "web.txt"
    generate(path, 300_000)
    text = path.read_text(encoding="utf-8")
    counts = count_file_serial(path, [SEPARATOR])
    assert len(counts) / 0.3 > 20_000  # distinct pre-tokens per MB (at 100 MB: 12,000)
    for what in ("https://", "@", "www.", "$", "%", "\u201c", "\u2014", "    return ", "_"):
        assert what in text, what
    assert any("\u4e00" <= c <= "\u9fff" for c in text)  # CJK
    assert any(ord(c) >= 0x1F300 for c in text)  # emoji
    assert any(c in "éèàüöñç" for c in text)  # accented Latin
    assert any(token.isupper() and len(token) > 3 for token in text.split())  # ALL CAPS
    stats = file_statistics(path, workers=1)
    assert stats["distinct_pretokens"] == len(counts) and 0.005 < stats["non_ascii_share"] < 0.1


def test_the_name_generates_the_file_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    path = resolve_data("webtext-synth-30KB")
    assert path == tmp_path / "webtext-synth-30KB.txt" and path.stat().st_size >= 30_000
    assert "generating" in capsys.readouterr().err
    assert resolve_data("webtext-synth-30KB") == path and capsys.readouterr().err == ""
    assert data_label("webtext-synth-30KB") == "webtext-synth-30KB"
    assert main(["data", "get", "webtext-synth", "--size", "30KB", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert str(path) in printed and "documents" in printed and "distinct pre-tokens" in printed
    assert size_label(30_000) == "30KB"


def test_size_is_only_for_generated_data(capsys):
    assert main(["data", "get", "owt", "--size", "3MB"]) == 2
    assert "--size is for generated data sets" in capsys.readouterr().err
    with pytest.raises(BPEError, match="size must be at least 1 byte"):
        resolve_data("webtext-synth-0MB")


def test_a_file_past_the_statistics_limit_is_given_without_its_statistics(tmp_path, monkeypatch, capsys):
    # The statistics are a full pass with the plain counter: on an OpenWebText-sized file, hours and the
    # memory of v5's counting; past the limit `data get` gives the file and says its statistics are skipped.
    import bpe.data.download as download

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(download, "STATISTICS_MAX_BYTES", 20_000)
    assert main(["data", "get", "webtext-synth", "--size", "30KB", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "webtext-synth-30KB.txt" in printed and "statistics are measured up to 20.0 KB only" in printed
    assert "distinct pre-tokens" not in printed and not list(tmp_path.glob("*.stats.json"))
