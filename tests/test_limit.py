"""--limit: a subset cut at a document boundary, exactly the same bytes for serial and parallel counting."""

from __future__ import annotations

import json

import pytest

from bpe import VARIANTS, BPEError, train_bpe
from bpe.lab.bench import BenchSettings, run_bench
from bpe.cli import main
from bpe.training.sizes import parse_size
from bpe.training.chunking import find_limit_end
from bpe.training.observer import Observer
from bpe.training.parallel import count_file_parallel
from bpe.training.pretokenize import count_file_serial, count_text
from conftest import DEFAULT_CORPUS

EOT = "<|endoftext|>"


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


@pytest.mark.parametrize("limit", [10_000, 300_000])
def test_serial_and_parallel_count_exactly_the_subset(limit):
    end = find_limit_end(DEFAULT_CORPUS, limit, [EOT])
    expected = count_text(DEFAULT_CORPUS.read_bytes()[:end].decode("utf-8"), [EOT])
    assert count_file_serial(DEFAULT_CORPUS, [EOT], end=end) == expected
    assert count_file_parallel(DEFAULT_CORPUS, [EOT], workers=2, end=end) == expected


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_trains_on_the_same_subset(write_corpus, variant):
    end = find_limit_end(DEFAULT_CORPUS, 60_000, [EOT])
    subset = write_corpus(DEFAULT_CORPUS.read_bytes()[:end])
    observer = Observer()
    assert train_bpe(DEFAULT_CORPUS, 400, [EOT], variant=variant, limit="60KB", observer=observer) == \
        train_bpe(subset, 400, [EOT], variant="v2")
    assert observer.corpus.bytes_used == end and observer.corpus.file_bytes == DEFAULT_CORPUS.stat().st_size


def test_parse_size_errors():
    assert parse_size("2.5kb") == 2500 and parse_size("1MiB") == 2**20
    for bad in ("fifty", "50 parsecs", "0", "-1MB"):
        with pytest.raises(BPEError, match="size"):
            parse_size(bad)


def test_bench_records_the_limit(tmp_path, capsys):
    out = tmp_path / "bench.json"
    report = run_bench(BenchSettings("v2", "gutenberg-sample", 300, 1, [EOT], None, json_out=str(out), limit="100KB"))
    settings = json.loads(out.read_text())["settings"]
    end = find_limit_end(DEFAULT_CORPUS, 100_000, [EOT])
    assert settings["limit"] == 100_000 and settings["corpus_bytes"] == end
    assert settings["file_bytes"] == DEFAULT_CORPUS.stat().st_size
    assert f"({end:,} bytes of {DEFAULT_CORPUS.stat().st_size:,}, --limit 100,000)" in capsys.readouterr().out
    assert report["variants"]["v2"]["median"]["merges"] == 300 - 257


def test_cli_limit_bad_size(capsys):
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--limit", "lots"]) == 2
    assert "cannot read size 'lots'" in capsys.readouterr().err


def test_absurd_limit_is_one_clear_error(capsys):
    huge = "1" + "0" * 400  # float() makes it inf, and int(inf) an OverflowError
    with pytest.raises(BPEError, match=r"^size 10000000000000000000\.\.\. \(401 characters\) is too large: at most "):
        parse_size(huge)
    with pytest.raises(BPEError, match="is too large"):
        train_bpe(DEFAULT_CORPUS, 300, [EOT], variant="v1", limit=huge)
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--limit", huge]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: size 1000") and err.count("\n") == 1
    assert parse_size(str(10**18)) == 10**18


def test_data_list_shows_every_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    (tmp_path / "TinyStoriesV2-GPT4-valid.txt").write_bytes(b"x" * 2500)
    assert main(["data", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(rows) == ["gutenberg-sample", "corpus-en", "tinystories-sample", "gutenberg-books", "tinystories",
                          "tinystories-valid", "owt", "owt-valid",
                          "webtext-synth", "tinystories-synth"]
    assert rows["tinystories-valid"][1:5] == ["yes", "2.5", "KB", str(tmp_path / "TinyStoriesV2-GPT4-valid.txt")]
    assert rows["owt"][1:4] == ["no", "-", str(tmp_path / "owt_train.txt")]
    assert rows["corpus-en"][1] == "yes"


def test_bench_on_a_missing_data_set_names_the_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["bench", "--data", "tinystories"]) == 2
    assert "fetch it with: make data DATA=tinystories   (or: python -m bpe data get tinystories)" in \
        capsys.readouterr().err
