"""The per-kind ratio command: equal counts checked, each kind's figures with their spread in a JSON the docs
can quote, clear errors."""

import json

import pytest

import tools.pretokenize_ratio as ratio
from bpe.counting.plain import count_file_serial, count_text
from tools import text_kinds

SMALL_KINDS = "books,accented,cyrillic,rtl,cjk,mixed,emoji,combining,digits,whitespace"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(ratio, "WIKIPEDIA_CANDIDATES", ())
    return tmp_path / "data"


def test_writes_every_kind_it_can_with_the_spread_and_skips_wikipedia_without_a_file(data_dir, tmp_path, capsys):
    out = tmp_path / "ratio.json"
    assert ratio.main(["--size", "20KB", "--repeat", "2", "--kinds", SMALL_KINDS + ",wikipedia",
                       "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert list(result["kinds"]) == SMALL_KINDS.split(",")
    for kind, figures in result["kinds"].items():
        assert figures["bytes"] >= 20_000 and figures["path"].endswith(f"pretokenize-{kind}-20KB.txt")
        assert len(figures["plain_runs_s"]) == len(figures["fast_runs_s"]) == 2
        assert figures["plain_s"] == min(figures["plain_runs_s"]) and figures["fast_s"] == min(figures["fast_runs_s"])
        assert figures["ratio"] == pytest.approx(figures["fast_s"] / figures["plain_s"], rel=1e-2)
        pairs = figures["pair_ratios"]
        assert 0 < pairs["min"] <= pairs["median"] <= pairs["max"]
    kinds = result["kinds"]
    assert kinds["books"]["non_ascii_chars_pct"] < 5 < kinds["cyrillic"]["non_ascii_chars_pct"]
    assert kinds["cjk"]["non_ascii_chars_pct"] > 50 and kinds["rtl"]["non_ascii_chars_pct"] > 50
    assert kinds["digits"]["non_ascii_chars_pct"] == 0 and 0 < kinds["emoji"]["non_ascii_chars_pct"] < 5
    printed = capsys.readouterr().out
    assert "wikipedia: skipped" in printed and "pairs " in printed and printed.count("ratio ") == len(kinds)


def test_what_the_command_times_counts_exactly(data_dir):
    for kind in ("accented", "rtl", "mixed", "emoji", "whitespace"):
        path = text_kinds.make_sample(kind, text_kinds.SOURCES[kind], 20_000)
        # not read_text: it turns \r into \n
        expected = count_text(path.read_bytes().decode("utf-8"), ["<|endoftext|>"])
        assert count_file_serial(path, ["<|endoftext|>"]) == expected
        assert ratio.count_fast(path) == ratio.count_plain(path) == expected


def test_a_wikipedia_file_is_used_when_given(data_dir, tmp_path):
    wiki = tmp_path / "wiki.txt"
    wiki.write_text(" = Title = \n The café 's history , 1990 – 2000 .\n", encoding="utf-8")
    out = tmp_path / "ratio.json"
    assert ratio.main(["--size", "5KB", "--repeat", "1", "--kinds", "wikipedia", "--wikipedia", str(wiki),
                       "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["kinds"]["wikipedia"]
    assert figures["bytes"] >= 5_000 and len(figures["plain_runs_s"]) == 1


@pytest.mark.parametrize("args, message", [
    (["--kinds", "books,klingon"], "unknown kind(s) klingon"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--wikipedia", "/no/such/file"], "--wikipedia: no such file"),
    (["--size", "lots"], "size"),
])
def test_bad_arguments_are_one_clear_line(data_dir, capsys, args, message):
    assert ratio.main(args + ["--json", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m tools.pretokenize_ratio: error: ") and message in err and err.count("\n") == 1
