"""The ablation (tools/ablation/): every "v6 without X" row makes v1's merges, and the command writes them all.

Each row swaps one of v6's techniques for its plain alternative; it may be slower, never different.  So does
each "v8 without X" row, v8's merge built again with one switch of variants/_v8_tricks.h off (``slow``: the
builds).
"""

import gc
import json
import re
from importlib import import_module
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tools.ablation as ablation
from bpe import VARIANTS, BPEError, train_bpe
from bpe.counting.plain import count_file_serial
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.variants import v1_naive, v8_compiled
from conftest import CORPUS_EN, FIXTURES, OVERLAPS, REPEATS, TIES, cs336_merges
from tools.ablation import main
from tools.ablation import v8 as v8_rows

#: The rows that are files here (v5 and v6 are rungs, tested on their own).
WITHOUT = [row for row in ablation.ROWS if row not in ("v5", "v6")]


def row(name):
    return import_module(f"tools.ablation.{name}")


def merges_of(module, pretoken_counts, num_merges):
    return run_merges(module.Merger(pretoken_counts), num_merges, NullTimer())


def test_every_row_file_is_a_row():
    files = {path.stem for path in Path(ablation.__file__).parent.glob("*.py")}
    assert files - {"__init__", "__main__"} == set(WITHOUT) | set(ablation.CANDIDATES)
    assert ablation.BASE in ablation.ROWS and "v5" in ablation.ROWS


@pytest.mark.parametrize("name", WITHOUT)
def test_row_gives_the_cs336_merges(name):
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=row(name))
    assert merges == cs336_merges()


@pytest.mark.parametrize("name", WITHOUT)
@pytest.mark.parametrize("corpus", [OVERLAPS, REPEATS, TIES], ids=["overlaps", "repeats", "ties"])
def test_row_equals_v1_on_hard_cases(name, corpus):
    assert merges_of(row(name), corpus, 60) == merges_of(v1_naive, corpus, 60)


words = st.dictionaries(st.binary(min_size=1, max_size=8).map(lambda w: bytes(97 + x % 3 for x in w)),
                        st.integers(min_value=1, max_value=9), max_size=8)


@settings(max_examples=100, deadline=None)
@given(words, st.integers(min_value=0, max_value=40))
def test_rows_equal_v1_on_generated_words(counts, num_merges):
    expected = merges_of(v1_naive, counts, num_merges)
    for name in WITHOUT:
        assert merges_of(row(name), counts, num_merges) == expected, name


def test_the_exact_index_is_exact_after_every_merge():
    merger = row("no_lazy_index").Merger(count_file_serial(CORPUS_EN, ["<|endoftext|>"]))
    for step in range(120):
        merger.merge(merger.select_best_pair())
        if step % 20 == 0:
            holders: dict[str, set] = {}
            for word_id, word in enumerate(merger.words):
                for pair in map("".join, zip(word, word[1:])):
                    holders.setdefault(pair, set()).add(word_id)
            assert {pair: ids for pair, ids in merger.pair_to_words.items() if ids} == holders


def test_no_floor_heap_holds_every_pair():
    counts = {b"low": 500, b"lower": 2, b"xy": 1}
    v6, unfloored = VARIANTS["v6"].Merger(counts), row("no_floor").Merger(counts)
    assert "xy" not in {entry[2] for entry in v6.queue.heap}  # below v6's floor: it waits in a bucket
    assert unfloored.queue.floor_bits == 0
    assert {entry[2] for entry in unfloored.queue.heap} == set(unfloored.pair_counts)
    v6.close(), unfloored.close()


def test_no_gc_tuning_freezes_nothing():
    frozen = gc.get_freeze_count()
    merger = row("no_gc_tuning").Merger({b"low": 5, b"lower": 2})
    assert gc.get_freeze_count() == frozen and gc.isenabled()
    merger.close()


def test_the_command_writes_every_row_with_the_merges_checked(tmp_path):
    out = tmp_path / "ablation.json"
    assert main(["--data", str(CORPUS_EN), "--vocab-size", "300", "--repeat", "1", "--workers", "1",
                 "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert list(result["rows"]) == list(ablation.ROWS) and all(result["rows"].values())
    regime = result["regimes"]["corpus"]
    assert regime["vocab_size"] == 300 and regime["num_merges"] == 43
    assert list(regime["rows"]) == list(ablation.ROWS)
    for name, entry in regime["rows"].items():
        assert entry["identical"] and entry["merges_sha256"] == [regime["merges_sha256"]], name
        assert len(entry["runs"]) == 1 and entry["total"]["median"] > 0
        # each run's seconds, stages and memory; no merge-by-merge curve (most of a large file, read by no page)
        assert set(entry["runs"][0]) == {"total", "merge_phase", "stages", "peak_rss"}, name
    assert regime["rows"]["v6"]["vs_v6"]["total"]["ratio"] == 1.0
    assert "--data " + str(CORPUS_EN) in result["command"]


def test_a_row_with_other_merges_fails_and_writes_nothing(tmp_path, monkeypatch):
    wrong = FIXTURES / "candidates" / "smaller_tie.py"  # ties to the smaller pair
    monkeypatch.setattr(ablation, "ROWS", ("v6", "smaller_tie"))
    monkeypatch.setattr(ablation, "row_spec", lambda name: str(wrong) if name == "smaller_tie" else name)
    out = tmp_path / "ablation.json"
    with pytest.raises(BPEError, match="smaller_tie made merges other than v6's"):
        ablation.run_ablation([str(CORPUS_EN)], [300], repeat=1, workers=1, json_out=str(out))
    assert not out.exists()


def test_data_and_vocab_sizes_pair_up():
    assert ablation.pair_regimes(None, None) == list(ablation.REGIMES)
    with pytest.raises(BPEError, match="2 --data and 3 --vocab-size"):
        ablation.pair_regimes(["a", "b"], ["300", "400", "500"])
    with pytest.raises(BPEError, match="--vocab-size without --data"):
        ablation.pair_regimes(None, ["300"])


def test_a_missing_data_set_fails_before_any_run(tmp_path):
    with pytest.raises(BPEError, match="no data set or file named"):
        ablation.run_ablation([str(CORPUS_EN), str(tmp_path / "missing.txt")], [300], repeat=1,
                              json_out=str(tmp_path / "out.json"))
    assert not (tmp_path / "out.json").exists()


# --- v8's ablation: v8's merge built again with one trick off ------------------------------------------

needs_v8 = pytest.mark.skipif(v8_compiled.UNAVAILABLE is not None, reason=str(v8_compiled.UNAVAILABLE))


def v8_row(name):
    return import_module(f"tools.ablation.v8.{name}")


def test_every_v8_row_file_is_a_row_and_each_switch_is_real():
    files = {path.stem for path in Path(v8_rows.__file__).parent.glob("*.py")}
    assert files - {"__init__"} == set(v8_rows.TRICKS) | set(v8_rows.CANDIDATES)
    assert v8_rows.ROWS == ("v8", *v8_rows.TRICKS)
    header = (v8_rows.REPO_ROOT / "variants" / "_v8_tricks.h").read_text(encoding="utf-8")
    merge = (v8_rows.REPO_ROOT / "variants" / "_v8_merge.pyx").read_text(encoding="utf-8")
    # every switch the header defines has a row, and every row's switch is one the merge reads
    assert set(re.findall(r"^#ifndef (V8_\w+)$", header, re.M)) == set(v8_rows.TRICKS.values())
    for macro in v8_rows.TRICKS.values():
        assert f"#define {macro} 1" in header and (f'"{macro}"' in merge or f"({macro})" in header), macro


def test_an_unknown_rung_is_one_line():
    with pytest.raises(BPEError, match=r"no ablation of 'v7': --rung is one of v6, v8"):
        ablation.run_ablation([str(CORPUS_EN)], [300], repeat=1, rung="v7")


@pytest.mark.slow  # a build of v8's merge per row the first time (about 30 s on 2 cores), then seconds
@needs_v8
@pytest.mark.parametrize("name", list(v8_rows.TRICKS))
def test_v8_row_gives_v1s_merges(name):
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=v8_row(name))
    assert merges == cs336_merges()
    for corpus in (OVERLAPS, REPEATS, TIES):
        assert merges_of(v8_row(name), corpus, 60) == merges_of(v1_naive, corpus, 60)


@pytest.mark.slow
@needs_v8
@settings(max_examples=60, deadline=None)
@given(words, st.integers(min_value=0, max_value=40))
def test_v8_rows_equal_v1_on_generated_words(counts, num_merges):
    expected = merges_of(v1_naive, counts, num_merges)
    for name in v8_rows.TRICKS:
        assert merges_of(v8_row(name), counts, num_merges) == expected, name


@pytest.mark.slow
@needs_v8
def test_the_v8_command_writes_every_row_compared_on_the_merge_phase(tmp_path):
    out = tmp_path / "ablation.json"
    assert main(["--rung", "v8", "--data", str(CORPUS_EN), "--vocab-size", "300", "--repeat", "1",
                 "--workers", "1", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert (result["rung"], result["base"], result["compared_on"]) == ("v8", "v8", "merge_phase")
    assert list(result["rows"]) == list(v8_rows.ROWS) and "--rung v8" in result["command"]
    regime = result["regimes"]["corpus"]
    for name, entry in regime["rows"].items():
        assert entry["identical"] and entry["merges_sha256"] == [regime["merges_sha256"]], name
        assert set(entry["vs_v8"]) == {"total", "merge_phase"}
    assert regime["rows"]["v8"]["vs_v8"]["merge_phase"]["ratio"] == 1.0


@pytest.mark.parametrize("candidate, rung, counter", [
    ("tools.ablation.v3_one_counting_worker", "v3", "count_file_parallel"),
    ("tools.ablation.v8.one_counting_worker", "v8", "count_file_parallel_fast"),
])
def test_a_one_worker_candidate_counts_as_its_rung_with_one_worker(monkeypatch, candidate, rung, counter):
    """The candidates the bench runs beside v3 and v8 (docs/v3.md): the rung's counts and merges, its
    counter given one worker whatever the run asks for."""
    module = import_module(candidate)
    rung_module = VARIANTS[rung]
    assert module.Merger is rung_module.Merger
    counts = module.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2)
    assert dict(counts.items()) == dict(rung_module.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2).items())
    asked = []
    real = getattr(module, counter)
    monkeypatch.setattr(module, counter, lambda *a, **k: asked.append(k["workers"]) or real(*a, **k))
    module.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2)
    assert asked == [1]
    assert train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=module, workers=2)[1] == cs336_merges()


# --- v10's ablation: v10's merge built again with one switch set, and one merge thread -------------------

needs_v10 = pytest.mark.skipif(VARIANTS.module("v10").UNAVAILABLE is not None,
                               reason=str(VARIANTS.module("v10").UNAVAILABLE))


def v10_row(name):
    return import_module(f"tools.ablation.v10.{name}")


def test_every_v10_row_file_is_a_row_and_each_switch_is_real():
    from tools.ablation import v10 as v10_rows

    files = {path.stem for path in Path(v10_rows.__file__).parent.glob("*.py")}
    assert files - {"__init__"} == set(v10_rows.SWITCHES) | {"one_merge_thread"} | set(v10_rows.CANDIDATES)
    assert v10_rows.ROWS == ("v9", "v10", *v10_rows.SWITCHES, "one_merge_thread")
    header = (v10_rows.REPO_ROOT / "variants" / "_v10_switches.h").read_text(encoding="utf-8")
    merge = (v10_rows.REPO_ROOT / "variants" / "_v10_merge.pyx").read_text(encoding="utf-8")
    for macro, value in v10_rows.SWITCHES.values():  # a switch the header defines, set away from its default
        default = re.search(rf"^#define {macro} (\d+)$", header, re.M)
        assert default and default.group(1) != value and f'"{macro}"' in merge, macro


@needs_v10
def test_the_one_merge_thread_row_merges_on_one_thread():
    row = v10_row("one_merge_thread")
    counts = row.count_pretokens(CORPUS_EN, ["<|endoftext|>"], workers=2)
    merger = row.Merger(counts)
    try:
        assert merger.summary()["merge_threads"] == 1
    finally:
        merger.close()
    assert train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=row, workers=2)[1] == cs336_merges()


@pytest.mark.slow  # a build of v10's merge per row the first time (about a minute on 2 cores), then seconds
@needs_v10
@pytest.mark.parametrize("name", ["wide_ids", "exact_holders", "no_floored_heap", "no_prefetch"])
def test_v10_row_gives_v1s_merges(name):
    _, merges = train_bpe(CORPUS_EN, 500, ["<|endoftext|>"], variant=v10_row(name))
    assert merges == cs336_merges()
    for corpus in (OVERLAPS, REPEATS, TIES):
        assert merges_of(v10_row(name), corpus, 60) == merges_of(v1_naive, corpus, 60)
