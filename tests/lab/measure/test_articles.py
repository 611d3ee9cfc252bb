"""The articles' side of ``make reproduce`` (bpe/lab/measure/articles.py): their figures, ratios, table and plot."""

import csv
import io

import pytest

from bpe.errors import BPEError
from bpe.lab.measure.articles import (COURSEWORK_COLUMNS, THEIRS, article_figures, block_costs, coursework_csv, coursework_rows,
                              coursework_table, their_ratio)
from bpe.lab.dev.figures import lookup


def test_every_figure_group_names_its_article_part_and_table():
    figures = article_figures()
    for group in ("lili_part1", "lili_part2", "lili_part8", "koschei"):
        source = figures[group]["source"]
        assert ("Part" in source or group == "koschei") and "table" in source


def test_every_ratio_of_theirs_resolves_in_the_figures_file():
    figures = article_figures()
    for name, theirs in THEIRS.items():
        for keypath in (theirs.before, theirs.after):
            assert lookup(figures, keypath) > 0, (name, keypath)
        assert "Part" in theirs.source or "Koschei" in theirs.source
        assert theirs.stage in ("total", "merge_phase", "pretokenize", "select", "update")


def test_their_ratios_are_the_articles_figures():
    assert their_ratio("v1_v2_merge")["ratio"] == 1565 / 118  # Part 2's own 13x
    assert their_ratio("counting_tinystories")["before"] == 627  # the median of bpe_v2's 639/621/627
    omp = their_ratio("omp_update")
    assert (omp["before"], omp["after"]) == (478, 514) and omp["ratio"] < 1  # OpenMP made the update slower
    python = their_ratio("fine_python_merge")
    assert (python["before"], python["after"]) == (31883, 34401) and python["ratio"] < 1  # v3 -> v5 slower
    assert round(their_ratio("koschei_merge")["ratio"]) == 339


def test_a_missing_key_path_is_one_clear_error():
    with pytest.raises(BPEError, match="no 'lili_part2.nothing'"):
        lookup(article_figures(), "lili_part2.nothing")


def test_block_costs_leave_out_the_first_block_and_normalise():
    ends, costs = block_costs([(1000, 441.0), (2000, 688.0), (3000, 1041.0)])
    assert ends == [2 / 3, 1.0] and costs[1] > costs[0] and sum(costs) / len(costs) == pytest.approx(1.0)


def test_the_coursework_table_of_a_quick_run_says_so_first_and_last():
    step = {"before": "v1", "after": "v2", "stage": "merge_phase", "set": "s", "verdict": "2.00x faster", "low": 1.5,
            "high": 2.5, "why": "because | so", "theirs": [their_ratio("v1_v2_merge")]}
    ran = {"data": "tinystories", "limit": "300KB", "corpus_bytes": 300_104, "vocab_size": 400, "num_merges": 143}
    result = {"generated": "now", "mode": "quick", "command": "python -m bpe reproduce --quick", "steps": {"k": step},
              "sets": {"s": ran},
              "machine": {"cpu_count": 2, "platform": "Linux x86_64", "python": "3.11", "git_commit": "abc1234"}}
    lines = coursework_table(result).splitlines()
    assert "not measurements" in lines[2] and "not measurements" in lines[-1]
    assert lines[4] == ("Made by `python -m bpe reproduce --quick` on 2 CPUs, Linux x86_64, Python 3.11, commit "
                        "abc1234. Ratios only: seconds do not travel between machines.")
    assert lines[6] == ("| step | stage | data set | size | vocab | their ratio | your ratio | range over runs | "
                        "why it differs |")
    row = next(line for line in lines if line.startswith("| v1 -> v2"))
    assert row.startswith("| v1 -> v2 | merge_phase | tinystories (first 300KB) | 300.1 KB | 400 | 13.3x faster (")
    assert row.endswith("| 2.00x faster | 1.50-2.50x faster | because \\| so |")  # a bar in a cell stays in it
    assert sum("abc1234" in line for line in lines) == 1  # the commit once, above the table, not on every row


def test_the_coursework_csv_holds_the_tables_rows():
    step = {"before": "v4", "after": "v5", "stage": "select", "set": "r", "verdict": "within spread", "low": 0.9,
            "high": 1.2, "why": "no article, so none", "theirs": []}
    result = {"steps": {"k": step}, "sets": {"r": {"data": "webtext-synth-2MB", "corpus_bytes": 2_000_000,
                                                   "vocab_size": 500, "num_merges": 243}}}
    rows = list(csv.reader(io.StringIO(coursework_csv(result))))
    assert rows == [list(COURSEWORK_COLUMNS), ["v4 -> v5", "select", "webtext-synth-2MB", "2.0 MB", "500", "none",
                                               "within spread", "1.11x slower to 1.20x faster", "no article, so none"]]
    assert [tuple(row) for row in rows[1:]] == coursework_rows(result)


def test_the_cpp_ratios_are_part_8s_tables_and_koscheis():
    """The C++ ratios set beside v8, each from the figures file as the articles print them (medians of three)."""
    expected = {  # name: (before, after, where)
        "flat_maps_merge": (7856, 485, "lili Part 8, section 5 table"),
        "flat_maps_max": (7376, 83, "lili Part 8, section 5 table"),
        "flat_maps_update": (478, 401, "lili Part 8, section 5 table"),  # 1.19x: the update moves a little
        "fine_cpp_update": (478, 220, "lili Part 8, section 5 table"),
        "fine_cpp_flat_update": (401, 200, "lili Part 8, section 5 table"),
        "flat_sets_update": (200, 108, "lili Part 8, section 6 table"),
        "koschei_merge": (366.644, 1.081, "Koschei, the performance comparison table"),
    }
    for name, (before, after, source) in expected.items():
        theirs = their_ratio(name)
        assert (theirs["before"], theirs["after"], theirs["source"]) == (before, after, source), name
    assert round(their_ratio("flat_maps_update")["ratio"], 2) == 1.19
    # The fine-grained C++ program's whole merge was slower than bpe_train_updater's, though its update halved.
    cpp = article_figures()["lili_part8"]["cpp"]
    assert lookup(cpp, "median(bpe_train_updater_fine_grained.total.*)") == 8773
    assert lookup(cpp, "median(bpe_train_updater.total.*)") == 7856
    # Part 8 names no data set for its C++ tables, and the figures file does not name one for it either.
    assert "OpenWebText" not in cpp["about"].split("(")[0] and "does not name the data set" in cpp["about"]
