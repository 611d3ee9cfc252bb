"""The per-kind ratio command: deterministic samples, equal counts checked, a JSON the docs can quote, clear errors."""

import json

import pytest

import bpe.lab.pretokenize_ratio as ratio
from bpe.training.pretokenize import count_file_serial, count_text

SMALL_KINDS = "books,accented,cyrillic,cjk"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(ratio, "WIKIPEDIA_CANDIDATES", ())
    return tmp_path / "data"


def test_writes_every_kind_it_can_and_skips_wikipedia_without_a_file(data_dir, tmp_path, capsys):
    out = tmp_path / "ratio.json"
    assert ratio.main(["--size", "30KB", "--repeat", "1", "--kinds", SMALL_KINDS + ",wikipedia", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert list(result["kinds"]) == SMALL_KINDS.split(",")
    for kind, figures in result["kinds"].items():
        assert figures["bytes"] >= 30_000 and figures["plain_s"] > 0 and figures["fast_s"] > 0
        assert figures["ratio"] > 0 and figures["path"].endswith(f"pretokenize-{kind}-30KB.txt")
    assert result["kinds"]["books"]["non_ascii_chars_pct"] < 5 < result["kinds"]["cyrillic"]["non_ascii_chars_pct"]
    assert result["kinds"]["cjk"]["non_ascii_chars_pct"] > 50
    assert "wikipedia: skipped" in capsys.readouterr().out


def test_samples_are_deterministic_and_counted_exactly(data_dir):
    for kind in ("accented", "cyrillic", "cjk"):
        source = ratio.sample_sources(None)[kind]
        first = ratio.make_sample(kind, source, 20_000).read_bytes()
        ratio.make_sample(kind, source, 20_000).unlink()
        path = ratio.make_sample(kind, source, 20_000)
        assert path.read_bytes() == first
        text = first.decode("utf-8")
        expected = count_text(text, ["<|endoftext|>"])
        assert count_file_serial(path, ["<|endoftext|>"]) == expected
        assert ratio.count_fast(path) == ratio.count_plain(path) == expected  # what the command times


def test_a_wikipedia_file_is_used_when_given(data_dir, tmp_path):
    wiki = tmp_path / "wiki.txt"
    wiki.write_text(" = Title = \n The café 's history , 1990 – 2000 .\n", encoding="utf-8")
    out = tmp_path / "ratio.json"
    assert ratio.main(["--size", "5KB", "--repeat", "1", "--kinds", "wikipedia", "--wikipedia", str(wiki), "--json", str(out)]) == 0
    assert list(json.loads(out.read_text())["kinds"]) == ["wikipedia"]


@pytest.mark.parametrize("args, message", [
    (["--kinds", "books,klingon"], "unknown kind(s) klingon"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--wikipedia", "/no/such/file"], "--wikipedia: no such file"),
    (["--size", "lots"], "size"),
])
def test_bad_arguments_are_one_clear_line(data_dir, capsys, args, message):
    assert ratio.main(args + ["--json", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and message in err and err.count("\n") == 1
