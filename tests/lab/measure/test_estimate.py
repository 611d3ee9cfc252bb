"""The cost model (bpe/lab/measure/estimate.py): its predictions order the ladder and grow with the data, and
`bpe estimate` prints every variant, its table and JSON holding the model's estimates; on any file and
settings (generated: hypothesis, ``make fuzz`` for more) it gives figures or one clear error, never a
traceback, as do ``train`` and ``bench``, which check it first.  Its calibration against measured runs:
test_calibrate.py."""

from __future__ import annotations

import io
import json
import math
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import VARIANTS, BPEError
from bpe.cli import main
from bpe.commands.estimate import Ranged, estimate_record, run_estimate
from bpe.data.datasets import resolve_data
from bpe.lab.measure.estimate import (
    BASE_MEMORY,
    SHARD_BYTES_PER_L,
    CorpusShape,
    corpus_shape,
    estimate_file,
    estimate_run,
)

EOT = ["<|endoftext|>"]


def predicted_cost(variant: str, shape: CorpusShape) -> float:
    """The cost model's prediction for a fixed, made-up corpus shape: arithmetic, no clock is read."""
    return estimate_run(variant, shape, 9_743, 2).seconds


def test_estimate_orders_the_ladder_and_grows_with_the_data():
    small, large = CorpusShape(2_000_000, 200_000), CorpusShape(2_000_000_000, 5_000_000)
    for shape in (small, large):
        cost = {v: predicted_cost(v, shape) for v in ("v1", "v2", "v5", "v6")}
        assert cost["v1"] > cost["v2"] > cost["v5"] > cost["v6"]
    # 25 times the distinct words' length: the scan's live pairs and the rewrites grow about as much
    assert predicted_cost("v2", large) > 10 * predicted_cost("v2", small)
    assert estimate_run("v2", large, 9_743, 2).peak_bytes > estimate_run("v6", large, 9_743, 2).peak_bytes


def test_estimate_command_prints_every_variant(capsys):
    assert main(["estimate", "--data", "corpus-en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cost estimate: corpus-en (133,027 bytes), vocab 10,000, special ['<|endoftext|>']")
    assert [line.split()[0] for line in out.splitlines()[2:]] == list(VARIANTS)


def test_the_table_and_the_json_hold_the_models_estimates(tmp_path):
    out = io.StringIO()
    estimates = run_estimate("tinystories-sample", "v1,v6", 300, EOT, workers=1, json_out=str(tmp_path / "e.json"),
                             out=out)
    assert estimates == estimate_file(resolve_data("tinystories-sample"), ["v1", "v6"], 300, EOT, workers=1)
    rows = out.getvalue().splitlines()
    assert rows[0].startswith("cost estimate: tinystories-sample") and rows[1].split() == ["variant", "time", "peak",
                                                                                            "memory"]
    assert [row.split()[0] for row in rows[2:4]] == ["v1", "v6"] and rows[4] == f"wrote {tmp_path / 'e.json'}"
    saved = json.loads((tmp_path / "e.json").read_text())
    # the model's output, written whole (a file shorter than the sample: nothing extrapolated, no range)
    assert saved["variants"] == {e.variant: estimate_record(Ranged(e, e)) for e in estimates}


def test_a_file_of_special_tokens_only_is_estimated_and_trained_without_a_traceback(write_corpus, capsys):
    # At least 4 KB, so the estimate measures how the pre-tokens grow, and finds none at all.
    path = write_corpus("<|endoftext|>" * 400)
    assert corpus_shape(path, EOT).distinct_length == 0  # no pre-token outside the special tokens
    assert [e.variant for e in estimate_file(path, list(VARIANTS), 300, EOT, 2, None)] == list(VARIANTS)
    for argv in (["estimate"], ["train", "--vocab-size", "300"], ["bench", "--vocab-size", "300", "--repeat", "1"]):
        assert main([*argv, "--data", str(path)]) == 0, argv
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "stopped early: 0 of 43 merges" in out


# --- no traceback on any input: the estimate on generated corpora and settings ----------------------

FUZZ_SCALE = int(os.environ.get("BPE_FUZZ_SCALE", "1"))
SPECIAL_SETS = [EOT, [], ["<|endoftext|>", "<|a|>"], ["aa"], ["\x00"]]
# Shapes the cost model may not expect: one long word, one byte repeated, whitespace only, special tokens
# only, invalid UTF-8, and text about the size where the estimate starts measuring growth (4 KB).
shapes = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64).map(lambda s: s.encode("utf-8", errors="surrogatepass")),
    st.tuples(st.sampled_from([b"a", b"\x00", b" ", b"\n", b"ab", b"<|endoftext|>", b"\xff", b"word ", "é".encode()]),
              st.integers(1, 6_000)).map(lambda piece: piece[0] * piece[1]),
)
fuzz_corpora = st.lists(shapes, max_size=6).map(b"".join)
sizes = st.one_of(st.none(), st.sampled_from(["0", "1", "1KB", "3.5MB", "2GB", "1EB"]))


@settings(max_examples=150 * FUZZ_SCALE, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=fuzz_corpora, specials=st.sampled_from(SPECIAL_SETS), vocab_size=st.integers(-5, 100_000),
       workers=st.one_of(st.none(), st.integers(-1, 64)), limit=sizes, size=sizes)
def test_the_estimate_of_any_file_is_figures_or_one_clear_error(tmp_path_factory, data, specials, vocab_size, workers,
                                                                limit, size):
    path = tmp_path_factory.mktemp("fuzz") / "corpus.txt"
    path.write_bytes(data)
    out = io.StringIO()
    try:
        estimates = run_estimate(str(path), "v1,v2,v5,v6,v7", vocab_size, specials, workers, limit, size, out=out)
    except BPEError as error:
        assert "\n" not in str(error) and str(error), error
        return
    assert vocab_size >= 256 + len(specials)  # a vocab too small for the bytes and specials is refused
    assert [e.variant for e in estimates] == ["v1", "v2", "v5", "v6", "v7"]
    for e in estimates:  # the cost model's figures (arithmetic on the text's shape; nothing here is timed)
        assert math.isfinite(e.seconds) and e.seconds > 0 and math.isfinite(e.peak_bytes) and e.peak_bytes > 0, e
    rows = out.getvalue().splitlines()[2:]
    assert [row.split()[0] for row in rows[:len(estimates)]] == [e.variant for e in estimates]
    rough = [e.basis for e in estimates if e.basis]  # long words: the rungs not measured on them say so
    notes = [row for row in rows[len(estimates):] if not row.startswith("ranges: ")]  # --size: a range, said once
    assert notes == list(dict.fromkeys(rough)) and all(b.startswith("rough: ") for b in rough)


@pytest.mark.parametrize("name, data", [
    ("empty", b""), ("one-byte", b"a"), ("specials-only", b"<|endoftext|>" * 50), ("one-huge-word", b"ab" * 150_000),
    ("one-byte-repeated", b"\x00" * 50_000), ("whitespace-only", b" \n" * 5_000), ("binary", bytes(range(256)) * 40),
])
def test_train_and_bench_check_the_estimate_of_odd_files_without_a_traceback(write_corpus, capsys, name, data):
    """``train`` and ``bench`` estimate before they run: an odd file trains, or fails with one line (invalid
    UTF-8), never with a traceback from the estimate."""
    path = write_corpus(data)
    for argv in (["train", "--vocab-size", "270", "--variant", "v6", "--workers", "2"],
                 ["bench", "--vocab-size", "270", "--variant", "v6", "--repeat", "1", "--workers", "2"],
                 ["train", "--vocab-size", "200"]):
        code = main([*argv, "--data", str(path)])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, (argv, err)
        if argv[-1] == "200":
            assert code == 2 and err.count("\n") == 1 and "--vocab-size 200 is too small" in err
        elif name == "binary":
            assert code == 2 and err.count("\n") == 1 and "looks like a binary file, not text" in err, err
        else:
            assert code == 0, (argv, err)


def test_long_words_cost_more_merging_and_the_rungs_not_measured_on_them_say_rough(write_corpus):
    """A text without whitespace is a few long words: every merge rewrites most of them, so the same
    bytes cost far more than usual text.  v6 and v7 were measured on such text; v1-v5 only on usual text.
    The seconds compared are the cost model's output for the two shapes, not a timing of this machine."""
    rng = random.Random(0)
    letters = "".join(rng.choices("etaoinshrdlucmfwyp", k=300_000))
    words = write_corpus(" ".join(letters[i:i + 6] for i in range(0, len(letters), 6)))
    long_words = write_corpus("<|endoftext|>".join(letters[i:i + 3_000] for i in range(0, len(letters), 3_000)))
    usual, long = (estimate_file(path, list(VARIANTS), 2_000, EOT, 1) for path in (words, long_words))
    assert corpus_shape(long_words, EOT).word_length == pytest.approx(3_000, rel=0.01)
    by_variant = dict(zip(VARIANTS, zip(usual, long)))
    # the model's slowdown on the long words (a run measured about 19x in CPU time)
    assert by_variant["v6"][1].seconds > 5 * by_variant["v6"][0].seconds
    for variant, (short, longer) in by_variant.items():
        assert short.basis == ""
        if variant in ("v6", "v7"):
            assert longer.basis == ""
        else:
            assert longer.basis.startswith("rough: this text's words are long (about 3,000 bytes"), variant
            assert "(rough: " in longer.describe()  # as train and bench print it in their header


def test_v7s_memory_counts_its_shard_processes():
    few_words = CorpusShape(2_000_000, 800_000, 90_000)
    many_words = CorpusShape(20_000_000, 5_600_000, 600_000)
    assert estimate_run("v7", few_words, 9_743, 2).peak_bytes == estimate_run("v6", few_words, 9_743, 2).peak_bytes
    # 600,000 words: shard_policy gives 2 workers one shard process, which holds 1 / 1.6 of the words
    assert estimate_run("v7", many_words, 9_743, 2).peak_bytes == pytest.approx(
        estimate_run("v6", many_words, 9_743, 2).peak_bytes + BASE_MEMORY + SHARD_BYTES_PER_L * 5_600_000 / 1.6)
    assert estimate_run("v7", many_words, 9_743, 1).peak_bytes == estimate_run("v6", many_words, 9_743, 1).peak_bytes


# --- OpenWebText offline: one answer, a range, and what fits a budget --------------------------------

def test_a_data_set_not_downloaded_is_estimated_at_its_size_from_its_stand_in(tmp_path, monkeypatch):
    # owt is not here: its stand-in's first 2 MB (generated once), extrapolated to 11.9 GB, said as such,
    # each figure a range (how fast the distinct pre-tokens grow cannot be known from the sample)
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    out = io.StringIO()
    high = run_estimate("owt", "v6,v8", 32_000, EOT, workers=2, json_out=str(tmp_path / "owt.json"), out=out)
    rows = out.getvalue().splitlines()
    assert rows[0].startswith("cost estimate: owt (not downloaded: 11.9 GB shaped like its stand-in webtext-synth")
    assert (tmp_path / "webtext-synth-2MB.txt").exists()
    saved = json.loads((tmp_path / "owt.json").read_text())["variants"]
    for e in high:
        record = saved[e.variant]
        assert record["seconds"] == e.seconds and record["peak_bytes"] == e.peak_bytes  # the high end
        assert record["seconds_low"] < record["seconds"] and record["peak_bytes_low"] < record["peak_bytes"]
        assert "-" in record["time"] and "-" in record["memory"]  # printed as ranges ...
        assert f"{record['time']:>16}{record['memory']:>22}" in out.getvalue()  # ... in the table too
    # the same as asking about 11.9 GB of text like any size of the stand-in (a prefix of one stream)
    again = io.StringIO()
    run_estimate(str(tmp_path / "webtext-synth-2MB.txt"), "v6,v8", 32_000, EOT, workers=2, size="11.9GB", out=again)
    assert again.getvalue().splitlines()[2:] == rows[2:-1]


def test_a_memory_budget_says_which_rung_fits_and_with_how_many_workers(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))

    def ask(memory: str, workers: int = 2) -> tuple[dict, str]:
        out = io.StringIO()
        run_estimate("owt", "v2,v6,v8", 32_000, EOT, workers=workers, memory=memory, json_out=str(tmp_path / "m.json"),
                     out=out)
        return json.loads((tmp_path / "m.json").read_text()), out.getvalue()

    # a terabyte: all fit, the pooled rungs with both workers, and the fastest of them is named
    saved, text = ask("1TB")
    assert saved["memory_budget"]["fits"] == {"v2": {"verdict": "fits", "workers": None, "says": "fits"},
                                              "v6": {"verdict": "fits", "workers": 2, "says": "fits with 2 workers"},
                                              "v8": {"verdict": "fits", "workers": 2, "says": "fits with 2 workers"}}
    assert "in 1000.0 GB: v2 fits; v6 fits with 2 workers; v8 fits with 2 workers" in text
    assert "the fastest that fits: v8 with 2 workers" in text
    # just v8's high end with one worker: it fits with one, and is timed as one worker takes
    one = ask("1TB", workers=1)[0]["variants"]["v8"]
    saved, text = ask(f"{one['peak_bytes'] + 1:.0f}B")
    assert saved["memory_budget"]["fits"]["v8"] == {"verdict": "fits", "workers": 1, "says": "fits with 1 worker"}
    assert f"the fastest that fits: v8 with 1 worker (~{one['time']})" in text
    # a budget between v8's two ends with one worker: not sure to fit with any count, so it may fit
    budget = (one["peak_bytes_low"] + one["peak_bytes"]) / 2
    saved, text = ask(f"{budget:.0f}B")
    verdict = saved["memory_budget"]["fits"]["v8"]
    assert verdict["verdict"] == "may fit" and verdict["workers"] in (1, 2)
    assert f"v8 may fit with {verdict['workers']} worker" in text
    # far too little: nothing fits, and the way on is said
    saved, text = ask("100MB")
    assert {f["verdict"] for f in saved["memory_budget"]["fits"].values()} == {"no"}
    assert "nothing surely fits in 100.0 MB: try --limit 1GB of the data" in text


def assert_estimated(variant: str, corpus_bytes: int, special_tokens, merges: int, workers: int, memory: int,
                     seconds: float, distinct: int | None = None) -> None:
    """A measured run of ``corpus_bytes`` of webtext-synth against the estimate from its first 2 MB (every size
    of the generator starts with the same 2 MB): the memory of every process together (the training
    process's peak, and each worker's) below the high end and near the low end (the stand-in's own
    growth), the time within the model's factor of 2, and the distinct pre-tokens, where given, in the range."""
    from bpe.lab.measure.estimate import shape_range

    low, high = shape_range(resolve_data("webtext-synth-2MB"), special_tokens, assume_bytes=corpus_bytes)
    if distinct is not None:
        assert low.distinct_words <= distinct <= high.distinct_words, (low.distinct_words, distinct,
                                                                       high.distinct_words)
    lo, hi = (estimate_run(variant, shape, merges, workers) for shape in (low, high))
    assert 0.75 * lo.peak_bytes <= memory <= hi.peak_bytes, (variant, lo.peak_bytes, memory, hi.peak_bytes)
    assert lo.seconds / 2 <= seconds <= hi.seconds * 2, (variant, lo.seconds, seconds, hi.seconds)


def test_the_range_holds_the_measured_gigabyte(tmp_path, monkeypatch):
    # 1 GB of webtext-synth trained by v6 and v8 with 2 workers (docs/v8-web-1GB.json, a bench result)
    from tools.figures import REPO_ROOT

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert_bench_estimated(REPO_ROOT / "docs" / "v8-web-1GB.json", ("v6", "v8"))


def assert_bench_estimated(path, variants) -> None:
    """Each of ``variants``' first run in a committed bench of webtext-synth, against its estimate."""
    measured = json.loads(path.read_text())
    s = measured["settings"]
    for variant in variants:
        run = measured["variants"][variant]["runs"][0]
        memory = run["peak_rss"]["self"] + s["workers"] * run["peak_rss"]["children"]
        assert_estimated(variant, s["corpus_bytes"], s["special_tokens"], s["num_merges"], s["workers"], memory,
                         run["total"])


def test_the_range_holds_the_openwebtext_sized_run(tmp_path, monkeypatch):
    # 11.9 GB of webtext-synth, OpenWebText's size, trained by v8 with 2 workers (docs/v8-web-11.9GB.json,
    # the train.json of `bpe train --out`): its distinct pre-tokens are in the estimate's range too
    from tools.figures import REPO_ROOT

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    measured = json.loads((REPO_ROOT / "docs" / "v8-web-11.9GB.json").read_text())
    s, corpus, timings = measured["settings"], measured["corpus"], measured["timings"]
    memory = timings["peak_rss"]["self"] + s["workers"] * timings["peak_rss"]["children"]
    assert_estimated(s["variant"], corpus["bytes_used"], s["special_tokens"], measured["result"]["merges"],
                     s["workers"], memory, timings["total"], distinct=corpus["distinct_pretokens"])


def test_the_range_holds_v9s_measured_runs(tmp_path, monkeypatch):
    # v9 (and v8 beside it) on 1 GB of webtext-synth, and v9 alone on 11.9 GB with its process tree sampled
    # (docs/v9-web-1GB.json, a bench; docs/v9-web-11.9GB.json, the train.json of `bpe train --out` with the
    # samples): v9's model, its counting and its memory by phase, holds them, and the distinct pre-tokens too
    from tools.figures import REPO_ROOT

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert_bench_estimated(REPO_ROOT / "docs" / "v9-web-1GB.json", ("v8", "v9"))
    owt = json.loads((REPO_ROOT / "docs" / "v9-web-11.9GB.json").read_text())
    assert_estimated("v9", owt["corpus"]["bytes_used"], owt["settings"]["special_tokens"], owt["result"]["merges"],
                     owt["settings"]["workers"], owt["memory"]["peak_tree_rss"], owt["timings"]["total"],
                     distinct=owt["corpus"]["distinct_pretokens"])


def test_a_corpus_is_estimated_on_a_small_sample_and_its_text_counted(tmp_path, monkeypatch):
    """A corpus's sample is the start of its joined text (each document followed by the separator), cut near
    SAMPLE_BYTES at a line's end, however large the corpus; its bytes of text are its plain files' size, or, for JSON
    lines, its documents' as counted once read (up to the limit: the documents that train_bpe counts)."""
    import bpe.lab.measure.estimate as estimate_module
    from bpe.corpus.batches import documents_text
    from bpe.corpus.corpus import open_corpus
    from bpe.lab.measure.estimate import corpus_sample

    monkeypatch.setattr(estimate_module, "SAMPLE_BYTES", 2_000)
    documents = [f"document {i}: caf\u00e9 and tea\nline two of {i}\n" * (i % 7 + 1) for i in range(200)]
    lines = tmp_path / "c.jsonl"
    lines.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(4):
        (folder / f"{i}.txt").write_text("".join(documents[i::4]), encoding="utf-8")
    for data, text_bytes in ((lines, sum(len(d.encode("utf-8")) for d in documents)),
                             (folder, sum(p.stat().st_size for p in folder.iterdir()))):
        corpus = open_corpus(data)
        sample = corpus_sample(corpus, EOT, tmp_path)
        joined = "".join(documents_text(corpus, EOT)).encode("utf-8")
        assert sample.bytes == sample.path.stat().st_size and 1_000 < sample.bytes <= 2_000
        assert joined.startswith(sample.path.read_bytes()) and sample.path.read_bytes().endswith(b"\n")
        assert sample.text_bytes == text_bytes
    limited = corpus_sample(open_corpus(lines), EOT, tmp_path, limit=5_000)
    assert limited.text_bytes == sum(len(d.encode("utf-8")) for d in documents[:next(
        n for n in range(1, len(documents) + 1) if sum(len(d.encode("utf-8")) for d in documents[:n]) >= 5_000)])
    assert corpus_sample(open_corpus(folder), EOT, tmp_path, limit=5_000).text_bytes == 5_000
