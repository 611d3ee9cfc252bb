"""`bpe walkthrough`'s data: the merges are train_bpe's, each rung's counted work is what the ladder claims,
the counting leaves the rungs untouched, and bad input is one line."""

import json

import pytest

from bpe import BPEError, train_bpe
from bpe.cli import main
from bpe.counting.plain import count_file_serial
from bpe.io.byte_unicode import decode_token, encode_token
from bpe.lab.teach.walkthrough import (
    WalkthroughSettings,
    count_work,
    load_bench,
    page_data,
    parse_rungs,
    render_page,
    run_walkthrough,
)
from bpe.lab.teach.walkthrough.counting import METRICS, counted_merger
from bpe.training.registry import VARIANTS
from conftest import REPO_ROOT

SPECIAL = ["<|endoftext|>"]
VOCAB = 300


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("walk") / "small.txt"
    path.write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:20_000])
    return path


@pytest.fixture(scope="module")
def data(corpus):
    settings = WalkthroughSettings(str(corpus), VOCAB, SPECIAL, "unused.html")
    return page_data(settings, count_file_serial(corpus, SPECIAL))


def totals(data, rung):
    """Each metric of ``rung`` summed over the merges."""
    return {name: sum(row[m] for row in data["work"][rung]) for m, name in enumerate(data["metrics"][rung])}


def column(data, rung, name):
    return [row[data["metrics"][rung].index(name)] for row in data["work"][rung]]


def test_the_merges_are_train_bpes_and_every_rung_is_counted_for_each(data, corpus):
    _, merges = train_bpe(corpus, VOCAB, SPECIAL)
    assert data["merges"] == [[encode_token(a), encode_token(b)] for a, b in merges]
    assert len(data["records"]) == len(merges) == VOCAB - 257
    assert data["rungs"] == list(METRICS)
    for rung in data["rungs"]:
        assert len(data["work"][rung]) == len(merges), rung
        assert all(len(row) == len(METRICS[rung]) for row in data["work"][rung])


def test_each_rungs_work_is_what_the_ladder_claims(data):
    v1, v2, v4, v5, v6 = (totals(data, r) for r in ("v1", "v2", "v4", "v5", "v6"))
    # v1 rewrites every word at every merge; v2 visits only the words its index lists (docs/v2.md)
    words = data["start"]["n_words"]
    assert column(data, "v1", "words rewritten") == [words] * len(data["merges"])
    assert all(a >= b for a, b in zip(column(data, "v1", "words rewritten"), column(data, "v2", "words visited")))
    assert v1["words rewritten"] > 10 * v2["words visited"]
    assert v1["pairs recounted"] > v2["pair counts written"]
    # the words v2 visits are exactly the words holding the pair, as the page lists them
    assert column(data, "v2", "words visited") == [record["n_words"] for record in data["records"]]
    # v3 changes counting only: its merger is v2's, so its work is v2's
    assert VARIANTS["v3"].Merger is VARIANTS["v2"].Merger and data["work"]["v3"] == data["work"]["v2"]
    # v4 changes only the pairs next to merged positions (docs/v4.md): fewer count writes, every merge
    assert all(a <= b for a, b in zip(column(data, "v4", "pair counts written"),
                                      column(data, "v2", "pair counts written")))
    assert v4["pair counts written"] < v2["pair counts written"] and v4["words visited"] == v2["words visited"]
    # v5 pops a heap instead of scanning every pair (docs/v5.md); v4 scans as v2 does
    assert v4["pairs scanned"] == v2["pairs scanned"] > 10 * (v5["heap pushes"] + v5["stale pops"])
    assert v5["pair counts written"] == v4["pair counts written"]
    # v6: the floor keeps most pairs out of the heap; the lazy index visits a stale word now and then,
    # and apart from those visits exactly the words v5 visits; the neighbour groups write fewer counts
    assert v6["heap pushes"] < v5["heap pushes"]
    assert [a - b for a, b in zip(column(data, "v6", "words visited"), column(data, "v6", "stale visits"))] \
        == column(data, "v5", "words visited")
    assert v6["pair counts written"] < v5["pair counts written"]


def test_the_counters_equal_the_rungs_own(corpus):
    counts = count_file_serial(corpus, SPECIAL)
    merger, tally = counted_merger("v5", counts)
    for _ in range(40):
        merger.merge(merger.select_best_pair())
    assert tally["stale pops"] == merger.stale_pops  # v5 counts its stale pops itself


def test_the_rungs_are_left_as_they_were(corpus):
    """The counting lives in subclasses made for the walkthrough: the rung modules and classes are untouched,
    so a normal training run never meets a counter."""
    import heapq

    v1, v5, v6 = VARIANTS["v1"], VARIANTS["v5"], VARIANTS["v6"]
    before = {name: dict(vars(VARIANTS[name].Merger)) for name in METRICS}
    globals_before = (v1.merge_word, v5.heapq, v6.heappush, dict(vars(v6.FlooredHeap)))
    for rung in METRICS:
        merger, tally = counted_merger(rung, {b"low": 5, b"lower": 2})
        merger.merge(merger.select_best_pair())
        assert type(merger).__mro__[1] is VARIANTS[rung].Merger and sum(tally.values()) > 0
    assert {name: dict(vars(VARIANTS[name].Merger)) for name in METRICS} == before
    assert (v1.merge_word, v5.heapq, v6.heappush, dict(vars(v6.FlooredHeap))) == globals_before
    assert v5.heapq is heapq and type(VARIANTS["v2"].Merger({b"ab": 1}).pair_counts) is dict


def test_a_rung_over_its_budget_is_counted_for_the_merges_it_made(corpus):
    counts = count_file_serial(corpus, SPECIAL)
    merges = [tuple(bytes(p) for p in pair) for pair in train_bpe(corpus, 270, SPECIAL)[1]]
    ticks = iter(range(100))
    work = count_work("v1", counts, merges, budget=3, clock=lambda: next(ticks))
    assert len(work["per_merge"]) == 4  # the clock passes the deadline (0 + 3) after the 4th merge


def test_a_merge_records_the_tie_words_and_changes(data):
    first = data["records"][0]
    assert first["count"] == max(c for _, _, c in data["start"]["pairs"])
    merged = "".join(data["merges"][0])
    for before, after, count in first["words"]:
        assert merged in after and "".join(before) == "".join(after) and count > 0
    pair_change = first["changed"][0]
    assert pair_change[:2] == data["merges"][0] and pair_change[2:] == [first["count"], 0]
    ties = [(merge, record) for merge, record in zip(data["merges"], data["records"]) if record["tie"]]
    assert ties, "the fixture has ties"
    for merge, record in ties:  # the chosen pair first, then the others, larger byte pairs first
        as_bytes = [tuple(decode_token(t) for t in pair) for pair in record["tie"]["pairs"]]
        assert (record["tie"]["n"] >= 2 and record["tie"]["pairs"][0] == merge
                and as_bytes == sorted(as_bytes, reverse=True))


def test_the_page_is_self_contained(data):
    page = render_page(data)
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    assert "<link rel=\"stylesheet\"" not in page and "src=" not in page
    start = page.index('id="walkthrough-data">') + len('id="walkthrough-data">')
    assert json.loads(page[start:page.index("</script>", start)]) == json.loads(json.dumps(data))


def test_the_bench_beside_the_summary(tmp_path):
    bench = load_bench(REPO_ROOT / "docs" / "report-bench.json", 10_000)
    assert (bench["vocab_size"] == 10_000
            and set(bench["stages"]["v6"]) == {"pretokenize", "pair_count", "select", "update"})
    assert load_bench(REPO_ROOT / "docs" / "report-bench.json", 280)["vocab_size"] == 300  # the nearest table
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(BPEError, match="holds no bench table"):
        load_bench(tmp_path / "bad.json", 300)
    with pytest.raises(BPEError, match="cannot read it"):
        load_bench(tmp_path / "none.json", 300)


def test_bad_input_is_one_line(corpus, tmp_path, capsys):
    with pytest.raises(BPEError, match="not 'v7'"):
        parse_rungs("v1,v7")
    with pytest.raises(BPEError, match="not 'mine.py'"):
        parse_rungs("mine.py")
    assert parse_rungs("all") == list(METRICS)
    assert main(["walkthrough", "--data", str(corpus), "--vocab-size", "270", "--out", str(tmp_path / "p.txt")]) == 2
    assert "name it PAGE.html" in capsys.readouterr().err
    assert main(["walkthrough", "--data", str(corpus), "--vocab-size", "270", "--budget", "0",
                 "--out", str(tmp_path / "p.html")]) == 2
    assert "--budget must be more than 0" in capsys.readouterr().err and not (tmp_path / "p.html").exists()


def test_the_command_writes_the_page(corpus, tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["walkthrough", "--data", str(corpus), "--vocab-size", "270", "--variant", "v2,v6",
                 "--out", str(out)]) == 0
    assert "v2: 13 of 13 merges counted" in capsys.readouterr().out
    assert out.read_text().count('id="walkthrough-data"') == 1
    written = run_walkthrough(WalkthroughSettings(str(corpus), 270, [], str(out), ["v4"]))
    assert written["special_tokens"] == [] and written["rungs"] == ["v4"]


def test_the_default_page_is_the_class_page_and_says_how_long_first(tmp_path, capsys):
    from bpe.lab.measure.estimate import format_duration
    from bpe.lab.teach.walkthrough import CLASS_DATA, CLASS_VOCAB, planned_seconds

    out = tmp_path / "page.html"
    assert main(["walkthrough", "--variant", "v2", "--out", str(out)]) == 0
    settings = WalkthroughSettings(CLASS_DATA, CLASS_VOCAB, SPECIAL, str(out), ["v2"])
    corpus_en = REPO_ROOT / "tests" / "fixtures" / "corpus.en"
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (f"walkthrough of {corpus_en} at vocab 400: v2; about "
                          f"{format_duration(planned_seconds(settings, corpus_en))} (estimated from the cost model)")
    assert printed[1].startswith("  v2: 143 of 143 merges counted in ")


def test_the_announced_time_counts_each_merger_once_and_at_most_the_budget(corpus):
    from bpe.lab.teach.walkthrough import planned_seconds

    def planned(rungs, budget=60.0) -> float:
        return planned_seconds(WalkthroughSettings(str(corpus), 10_000, SPECIAL, "p.html", rungs, budget=budget),
                               corpus)

    assert planned(["v2", "v3"]) == planned(["v2"]) > planned(["v6"])  # v3 runs v2's merger: counted once
    assert planned(["v1"]) > 1.0 and planned(["v1"], budget=1.0) == pytest.approx(planned(["v1"], budget=0.5) + 0.5)


def test_a_training_run_never_loads_the_counting():
    """What keeps normal runs as fast as before: a training run on every rung imports nothing of the lab,
    so no counting twin can reach it."""
    import subprocess
    import sys

    code = ("import sys; from bpe import train_bpe; "
            "[train_bpe(sys.argv[1], 262, ['<|endoftext|>'], variant=v) for v in ('v1', 'v2', 'v4', 'v5', 'v6')]; "
            "print(sorted(m for m in sys.modules if m.startswith('bpe.lab')))")
    corpus = REPO_ROOT / "tests" / "fixtures" / "corpus.en"
    out = subprocess.run([sys.executable, "-c", code, str(corpus)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
