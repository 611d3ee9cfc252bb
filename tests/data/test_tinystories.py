"""The TinyStories-like generator (bpe.data.tinystories) and the ``tinystories-synth`` data set name."""

import hashlib
from pathlib import Path

from bpe.cli import main
from bpe.data.datasets import default_vocab_size, resolve_data
from bpe.data.tinystories import SEPARATOR, generate
from bpe.counting.plain import count_file_serial

FIXTURE = Path(__file__).parents[1] / "fixtures" / "tinystories_sample.txt"

#: sha256 of the first 50,000 bytes' worth of stories of seed 0.  It changes only when the generator
#: changes on purpose: then every published tinystories-synth figure is stale too.
GOLDEN_50KB = "7aa8a9b2adf9c839db12a96869513618b0d5b6fea9ac8b5e0eea3d090f7d08cf"


def test_same_seed_and_size_give_the_same_bytes_and_a_prefix(tmp_path):
    generate(tmp_path / "a.txt", 50_000)
    generate(tmp_path / "b.txt", 50_000)
    generate(tmp_path / "small.txt", 20_000)
    generate(tmp_path / "other.txt", 20_000, seed=1)
    data = (tmp_path / "a.txt").read_bytes()
    assert data == (tmp_path / "b.txt").read_bytes()
    assert hashlib.sha256(data).hexdigest() == GOLDEN_50KB
    small = (tmp_path / "small.txt").read_bytes()
    assert data.startswith(small) and small.endswith(b"\n" + SEPARATOR.encode() + b"\n")
    assert (tmp_path / "other.txt").read_bytes()[:1000] != small[:1000]
    assert not list(tmp_path.glob("*.tmp"))


def _shape(path: Path, tmp: Path, prefix: int | None = None) -> dict:
    """Mean story bytes, bytes per pre-token and distinct pre-tokens of a file (or its first bytes)."""
    data = path.read_bytes()[:prefix]
    stories = [s for s in data.split(SEPARATOR.encode()) if s.strip()]
    cut = tmp / (path.name + ".cut")
    cut.write_bytes(data)
    counts = count_file_serial(cut, [SEPARATOR])
    return {"story": sum(map(len, stories)) / len(stories), "per_token": len(data) / sum(counts.values()),
            "distinct": len(counts)}


def test_statistics_close_to_the_real_tinystories_sample(tmp_path):
    # Calibration targets: the real TinyStories text in tests/fixtures (3.8 KB, five stories).
    real = _shape(FIXTURE, tmp_path)
    path = tmp_path / "ts.txt"
    generate(path, 1_000_000)
    synth = _shape(path, tmp_path)
    assert 0.75 < synth["story"] / real["story"] < 1.25              # ~700 bytes a story
    assert 0.85 < synth["per_token"] / real["per_token"] < 1.15      # ~4.2 bytes a pre-token
    early = _shape(path, tmp_path, prefix=FIXTURE.stat().st_size)
    assert 0.7 < early["distinct"] / real["distinct"] < 1.3          # the same new-word rate at 3.8 KB
    # The low-diversity regime (docs/data.md): far fewer distinct pre-tokens per MB than web text
    # (webtext-synth: 12,000 per MB at 100 MB, over 20,000 at 1 MB), and still growing.
    assert 1_000 < synth["distinct"] < 2_000
    text = path.read_text(encoding="utf-8")
    for what in ("Once upon a time", " said", "\u201c", '"', " named ", "."):
        assert what in text, what


def test_the_name_generates_the_file_and_prints_statistics(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert default_vocab_size("tinystories-synth-30KB") == 10_000
    assert main(["data", "get", "tinystories-synth", "--size", "30KB", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "tinystories-synth-30KB.txt" in out and "distinct pre-tokens" in out and "bytes each" in out
    assert resolve_data("tinystories-synth-30KB") == tmp_path / "tinystories-synth-30KB.txt"
