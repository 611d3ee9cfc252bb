"""``python -m tools.reproduce``: every step of the articles, measured on the ladder (tools/reproduce.py), and
the articles' side of it: their figures, ratios, the coursework table and the merge-cost blocks."""

import csv
import json
import subprocess

import pytest

from bpe.errors import BPEError
from bpe.lab.measure import publish
from bpe.lab.measure.spread import compare, ratio_text
from bpe.running.sizes import format_size
from bpe.training.registry import VARIANTS
from conftest import REPO_ROOT
from tools.keypath import lookup
from tools.reproduce import (
    COURSEWORK_COLUMNS,
    block_costs,
    compare_steps,
    coursework_rows,
    coursework_table,
    main,
    write_coursework,
)
from tools.reproduce_steps import QUICK, STEPS, THEIRS, article_figures, their_ratio


def test_quick_mode_measures_every_step_on_both_regimes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "articles.json"
    assert main(["--quick", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert result["mode"] == "quick" and result["machine"]["git_commit"]
    # A quick run says on its first and last lines that its ratios are not measurements.
    lines = printed.strip().splitlines()
    assert "not measurements" in lines[0] and "not measurements" in lines[-1]
    # The real data sets are not in the temporary data dir: their sets are skipped, the rest all ran.
    assert set(result["sets"]) == {"cs336-speed", "tinystories", "tinystories-reduced", "tinystories-v1", "web",
                                   "web-reduced"}
    assert "skipped: tinystories is not in data/" in printed
    for name, run_set in result["sets"].items():
        for variant, summary in run_set["variants"].items():
            assert len(summary["runs"]) == 1
            assert summary["total"]["min"] <= summary["total"]["median"] <= summary["total"]["max"]
    # (a step of a rung that cannot run here, v8 without a C compiler, is skipped with its reason)
    expected = [s for s in STEPS if s.run_set in result["sets"] and s.before in VARIANTS and s.after in VARIANTS]
    assert len(result["steps"]) == len(expected)
    for step in result["steps"].values():
        assert step["ratio"] > 0 and step["low"] <= step["ratio"] <= step["high"]
        assert step["clear"] is None and step["verdict"] == ratio_text(step["ratio"]) and step["verdict"] in printed
    assert "(one run of a rung: no spread to judge its ratios by)" in printed
    # A step named for the article's vocab says the vocab this run used (600, not the article's 10,000).
    assert "v5 -> v7, total [tinystories]: v5 -> v7 at vocab 600 (the article's: 10,000): total" in printed
    # Each step prints the articles' ratio of its stage beside the ladder's, and why they differ.
    v1_v2 = result["steps"]["tinystories-v1:v1-v2:merge_phase"]
    assert [t["ratio"] for t in v1_v2["theirs"]] == [1565 / 118] and "theirs  13.3x faster" in printed
    assert all(f"why     {s['why']}" in printed for s in result["steps"].values())
    # The coursework table and the merge-cost plot go beside the JSON, from this run alone.
    table = (tmp_path / "articles.md").read_text()
    assert "not measurements" in table.splitlines()[2] and "not measurements" in table.splitlines()[-1]
    assert ("| step | stage | data set | size | vocab | their ratio | your ratio | range over runs | why it differs |"
            in table)
    assert "13.3x faster" in table and table.count(result["machine"]["git_commit"]) == 1  # once, above the table
    # Every row names the data set, size and vocab its step ran on: this quick run's, not the full plan's.
    rows = [line[2:-2].split(" | ") for line in table.splitlines() if line.startswith("| v")]
    assert len(rows) == len(result["steps"])
    quick = {run.name: run for run in QUICK}
    for row, step in zip(rows, result["steps"].values()):
        ran = result["sets"][step["set"]]
        assert row[:5] == [f"{step['before']} -> {step['after']}", step["stage"], quick[step["set"]].data,
                           format_size(ran["corpus_bytes"]), f"{quick[step['set']].vocab_size:,}"]
    assert {row[2] for row in rows} == {"corpus-en", "tinystories-synth-300KB", "tinystories-synth-100KB",
                                        "webtext-synth-300KB", "webtext-synth-100KB"}
    assert {row[4] for row in rows} == {"300", "400", "600"}
    # The why lines say the settings the step ran at, not the full run's (vocab 500 on corpus.en, 743 merges on 10 MB).
    v1_set = result["sets"]["tinystories-v1"]
    assert f"against {v1_set['num_merges']:,} over {format_size(v1_set['corpus_bytes'])}:" in v1_v2["why"]
    assert result["steps"]["cs336-speed:v1-v2:total"]["why"].startswith("corpus-en at vocab 300 (")
    web_size = format_size(result["sets"]["web-reduced"]["corpus_bytes"])  # whole documents: a little over 100 KB
    assert f"the ladder's {web_size} at 300;" in result["steps"]["web-reduced:v3-v4:update"]["why"]
    assert "743 over 10 MB" not in table and "2 MB at 500" not in table and "{" not in table
    # The same rows, as CSV, beside it.
    with open(tmp_path / "articles.csv", newline="") as f:
        assert list(csv.reader(f))[1:] == [[cell.replace("\\|", "|") for cell in row] for row in rows]
    assert "wrote " in printed and "articles.md and " in printed and "articles.csv: their ratio beside yours" in printed
    assert (tmp_path / "articles-merge-cost.png").read_bytes()[:4] == b"\x89PNG"


def test_every_step_compares_one_stage_on_both_sides():
    """Their counting stands beside the ladder's pre-tokenizing, their max() beside select, merge beside merge."""
    used = set()
    words = {"data": "d", "size": "1.0 MB", "vocab": "500", "merges": "243"}
    for step in STEPS:
        assert step.why and "{" not in (step.why + step.no_gain).format(**words)  # only the set's own settings
        assert "{" not in step.title(500) and "}" not in step.title(500)  # a name holds {at_vocab} at most
        for name in step.theirs:
            assert THEIRS[name].stage == step.stage, (step.name, name)
            used.add(name)
    assert used == set(THEIRS)  # every ratio of the articles stands beside a step


def ran_on(data: str, variants: dict) -> dict:
    """A set as a run records it: what it ran on beside its rungs' runs."""
    return {"data": data, "corpus_bytes": 2_000_000, "vocab_size": 500, "num_merges": 243, "variants": variants}


def test_a_step_below_one_or_within_the_spread_says_why():
    def run(seconds):
        return {"total": seconds, "merge_phase": seconds, "stages": {"update": seconds, "select": seconds}}

    sets = {"web": ran_on("webtext-synth-20MB", {"v6": {"runs": [run(1.0), run(1.1), run(1.2)]},
                                                 "v7": {"runs": [run(1.05), run(1.15), run(1.25)]}})}
    step = compare_steps(sets)["web:v6-v7:select+update"]
    assert step["verdict"] == "within spread" and "round trip" in step["why"]
    assert [t["ratio"] for t in step["theirs"]] == [their_ratio("omp_merge")["ratio"]]
    # Their OpenMP program's total (update + max) stands beside select + update; the merge phase has no figure
    # of theirs.
    merge_phase = compare_steps(sets)["web:v6-v7:merge_phase"]
    assert merge_phase["theirs"] == [] and "round trip" in merge_phase["why"]


def test_a_step_claims_the_articles_vocab_only_where_its_set_ran_at_it():
    """The v5 -> v7 step is named for the article's vocab (10,000 on TinyStories): its name says the vocab the
    set ran at, and calls it the article's only where it is (a quick run's set runs at 600)."""
    def run(seconds):
        return {"total": seconds, "merge_phase": seconds, "stages": {"update": seconds, "select": seconds}}

    for vocab, the_articles in ((10_000, True), (600, False)):
        ran = ran_on("tinystories-synth-50MB", {"v5": {"runs": [run(2.0)] * 3}, "v7": {"runs": [run(1.0)] * 3}})
        name = compare_steps({"tinystories": {**ran, "vocab_size": vocab}})["tinystories:v5-v7:total"]["step"]
        assert f"at vocab {vocab:,}" in name and "at the article's vocab" not in name, name
        assert (f"at vocab {vocab:,}, the article's:" in name) is the_articles, name


def test_a_gain_within_the_spread_is_not_a_ratio():
    assert compare([2.0, 2.2, 2.1], [1.0, 1.1, 1.05])["verdict"] == "2.00x faster"
    assert compare([1.0, 1.4, 1.2], [1.3, 0.9, 1.0])["verdict"] == "within spread"
    slower = compare([1.0, 1.05, 1.1], [2.0, 2.1, 2.2])
    assert slower["clear"] and slower["verdict"] == "2.00x slower"


def test_publish_is_refused_from_a_dirty_tree(monkeypatch, capsys):
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert main(["--publish"]) == 2
    assert "uncommitted changes (abc1234-dirty)" in capsys.readouterr().err
    assert main(["--publish", "--quick"]) == 2
    assert capsys.readouterr().err == ("python -m tools.reproduce: error: --publish writes the committed result: it "
                                       "takes the full plan, without --quick or --repeat\n")


def test_a_workers_count_under_one_is_refused_by_its_flag(capsys):
    """A 0 or -1 was once taken as no count at all, and the steps ran."""
    assert main(["--quick", "--workers", "-1"]) == 2
    assert capsys.readouterr().err == ("python -m tools.reproduce: error: --workers must be at least 1, got -1 (or "
                                       "omit it for the default: the CPU count, or the cores free as the run "
                                       "starts)\n")


def test_the_default_output_is_not_a_tracked_file(tmp_path, monkeypatch):
    """Without --publish the result goes where git ignores it; with it, to the committed file the pages quote."""
    written = []
    monkeypatch.setattr("tools.reproduce.run_reproduce", lambda out, **kwargs: written.append(out))
    monkeypatch.setattr(publish, "git_commit", lambda exclude=(): "abc1234")
    assert main(["--quick"]) == 0 and main(["--publish"]) == 0
    default, published = written

    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True).returncode

    assert git("check-ignore", "-q", str(default)) == 0  # ignored: a run never dirties the tree
    assert git("ls-files", "--error-unmatch", str(published)) == 0  # tracked: docs/articles.md quotes it
    quoted = published.resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    assert f"<!--fig {quoted} " in (REPO_ROOT / "docs" / "articles.md").read_text()  # the page quotes it


#: The articles' ratios between two C++ programs (Part 8's ports, Part 7's flat maps as its table times them,
#: Koschei's merges), OpenMP's aside: v7, the parallel rung, stands beside those.
COMPILED = {name for name, theirs in THEIRS.items()
            if (theirs.what.startswith("C++") and "OpenMP" not in theirs.what) or name == "koschei_merge"}


def test_the_articles_cpp_steps_stand_beside_v8():
    assert COMPILED == {"fine_cpp_update", "fine_cpp_flat_update", "flat_sets_update", "flat_maps_merge",
                        "flat_maps_max", "flat_maps_update", "koschei_merge"}
    for step in STEPS:
        compiled = set(step.theirs) & COMPILED
        if compiled:  # against v6, whose algorithm v8 compiles, or the rung of their starting program's algorithm
            assert step.after == "v8" and step.before in ("v3", "v4", "v6"), step.name
            assert all(THEIRS[name].stage == step.stage for name in compiled), step.name
        if step.after == "v8":
            assert step.name.startswith("compiled: ") and "v8" in step.name
            assert all(name in COMPILED for name in step.theirs), step.name  # no Python ratio beside v8
    # Their coarse C++ update (bpe_train_updater) is v3's; Koschei's merge without its heap is read as v4's.
    by_ratio = {name: (s.before, s.after, s.stage) for s in STEPS for name in s.theirs if name in COMPILED}
    assert by_ratio["fine_cpp_update"] == ("v3", "v8", "update")
    assert by_ratio["koschei_merge"] == ("v4", "v8", "merge_phase")
    assert by_ratio["flat_maps_merge"] == ("v6", "v8", "select+update")
    assert by_ratio["flat_maps_max"] == ("v6", "v8", "select")
    # Part 5 (a C++ merge: the merge phase) and Part 10 (Cython: the whole run) are steps with no figure of theirs,
    # said so in their why.
    untimed = {s.stage: s for s in STEPS if s.after == "v8" and not s.theirs}
    assert set(untimed) == {"merge_phase", "total"} and all("no article figure" in s.why for s in untimed.values())
    assert "Part 5" in untimed["merge_phase"].why and "Part 10" in untimed["total"].why
    assert all("Part 5" in s.why and "not among the parts quoted" in s.why
               for s in STEPS if "flat_maps_merge" in s.theirs)
    # Flat hash maps are Part 7's step, wherever their figures are printed (Part 8's table).
    assert all("Part 7" in s.name or "Parts 5 and 7" in s.name
               for s in STEPS if set(s.theirs) & {"flat_maps_merge", "flat_maps_max", "flat_maps_update"})
    assert not any("Part 8" in t.what for t in THEIRS.values()) and all(
        "Part 7" in THEIRS[name].what for name in ("flat_maps_merge", "flat_maps_max", "flat_maps_update"))


def test_a_v8_step_compares_the_same_stage_of_the_same_runs():
    def run(pretokenize, select, update, pair_count=0.0):
        return {"total": pretokenize + pair_count + select + update, "merge_phase": pair_count + select + update,
                "stages": {"pretokenize": pretokenize, "pair_count": pair_count, "select": select, "update": update}}

    sets = {"web": ran_on("webtext-synth-20MB", {"v6": {"runs": [run(2.0, 0.4, 4.0, 0.6)] * 3},
                                                 "v7": {"runs": [run(2.0, 0.4, 4.0)] * 3},
                                                 "v8": {"runs": [run(2.0, 0.1, 0.5, 0.4)] * 3}}),
            "web-reduced": ran_on("webtext-synth-2MB",
                                  {v: {"runs": [run(1.0, 0.5, 3.0)] * 3} for v in ("v2", "v4", "v5", "v6")}
                                  | {"v3": {"runs": [run(1.0, 0.5, 6.0)] * 3},
                                     "v8": {"runs": [run(1.0, 0.1, 0.3)] * 3}})}
    steps = compare_steps(sets)
    assert steps["web:v6-v8:select"]["ratio"] == pytest.approx(4.0)  # 0.4 / 0.1: select on both sides
    assert steps["web:v6-v8:update"]["ratio"] == pytest.approx(8.0)
    assert steps["web:v6-v8:merge_phase"]["ratio"] == pytest.approx(5.0 / 1.0)  # the initial pair count included
    # A C++ program's total is its update plus its max(), no initial pair count: it stands beside select + update.
    assert steps["web:v6-v8:select+update"]["ratio"] == pytest.approx(4.4 / 0.6)
    assert [t["what"] for t in steps["web:v6-v8:select+update"]["theirs"]] == [THEIRS["flat_maps_merge"].what]
    assert steps["web:v6-v8:merge_phase"]["theirs"] == []
    assert steps["web-reduced:v3-v8:update"]["ratio"] == pytest.approx(20.0)
    assert "the ladder's 2.0 MB at 500;" in steps["web-reduced:v3-v4:update"]["why"]  # the set's own settings
    assert [t["what"] for t in steps["web:v6-v8:update"]["theirs"]] == [
        THEIRS["flat_maps_update"].what, THEIRS["flat_sets_update"].what]
    assert [round(t["ratio"], 2) for t in steps["web-reduced:v3-v8:update"]["theirs"]] == [2.17, 2.0]
    # Where v8 could not run (built without a C compiler) its steps are left out, the rest stand.
    for run_set in sets.values():
        del run_set["variants"]["v8"]
    left = compare_steps(sets)
    assert left and not any(s["after"] == "v8" for s in left.values()) and "web:v6-v7:update" in left


def test_an_unbuilt_v8_leaves_its_steps_out_and_refuses_to_publish(monkeypatch):
    import tools.reproduce as reproduce

    monkeypatch.setattr(reproduce, "runnable", lambda variants: tuple(v for v in variants if v != "v8"))
    monkeypatch.setattr(reproduce, "cannot_run", lambda variant: "v8 is not built: no C compiler")
    with pytest.raises(BPEError, match="needs every rung of the plan: v8 is not built"):
        reproduce.run_reproduce(reproduce.PUBLISHED_OUT)


def test_the_page_quotes_every_v8_step_the_command_makes():
    """Every v8 step of the plan is quoted on the page: from the committed run, or, for a step added after it
    was made (select + update, where the C++ programs' totals stand), pending (``?``) until the next one."""
    from tools.figures import parse

    quoted = [fig for fig in parse(REPO_ROOT / "docs" / "articles.md") if fig.file == "docs/articles-bench.json"]
    keys = {f"{s.run_set}:{s.before}-{s.after}:{s.stage}" for s in STEPS if not s.run_set.startswith("real-")}
    steps = {fig.key.split("'")[1] for fig in quoted if fig.key.startswith("steps.")}
    assert steps <= keys and {k for k in keys if "-v8:" in k} <= steps  # every v8 step is on the page
    assert {"pretokenize", "select", "update", "merge_phase", "total"} <= {
        fig.key.split(".")[4] for fig in quoted if fig.key.startswith("sets.tinystories.variants.v8.")}
    committed = json.loads((REPO_ROOT / "docs" / "articles-bench.json").read_text())["steps"]
    waiting = {fig.key.split("'")[1] for fig in quoted if fig.pending}
    assert not waiting & set(committed)  # a step the committed run holds is quoted from it
    assert all(key.endswith(":select+update") for key in waiting)  # only the stage added after the run


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
        assert theirs.stage in ("total", "merge_phase", "pretokenize", "select", "update", "select+update")
    # A C++ merge program's total is its update plus its max() (Part 8's tables): never set beside a merge phase.
    for name in ("flat_maps_merge", "omp_merge"):
        theirs = their_ratio(name)
        assert THEIRS[name].stage == "select+update" and "update + max" in theirs["what"]
    cpp = article_figures()["lili_part8"]["cpp"]
    for program in ("bpe_train_updater", "bpe_train_updater_emhash8", "bpe_train_updater_omp_v7_32"):
        for total, update, most in zip(*(cpp[program][column] for column in ("total", "update", "max"))):
            assert 0 <= total - (update + most) <= 2, program  # the table's own columns: no initial count beside them


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
    result = {"generated": "now", "mode": "quick", "command": "python -m tools.reproduce --quick", "steps": {"k": step},
              "sets": {"s": ran},
              "machine": {"cpu_count": 2, "platform": "Linux x86_64", "python": "3.11", "git_commit": "abc1234"}}
    lines = coursework_table(result).splitlines()
    assert "not measurements" in lines[2] and "not measurements" in lines[-1]
    assert lines[4] == ("Made by `python -m tools.reproduce --quick` on 2 CPUs, Linux x86_64, Python 3.11, commit "
                        "abc1234. Ratios only: seconds do not travel between machines.")
    assert lines[6] == ("| step | stage | data set | size | vocab | their ratio | your ratio | range over runs | "
                        "why it differs |")
    row = next(line for line in lines if line.startswith("| v1 -> v2"))
    assert row.startswith("| v1 -> v2 | merge_phase | tinystories (first 300KB) | 300.1 KB | 400 | 13.3x faster (")
    assert row.endswith("| 2.00x faster | 1.50-2.50x faster | because \\| so |")  # a bar in a cell stays in it
    assert sum("abc1234" in line for line in lines) == 1  # the commit once, above the table, not on every row


def test_the_coursework_csv_holds_the_tables_rows(tmp_path):
    step = {"before": "v4", "after": "v5", "stage": "select", "set": "r", "verdict": "within spread", "low": 0.9,
            "high": 1.2, "why": "no article, so none", "theirs": []}
    result = {"steps": {"k": step}, "sets": {"r": {"data": "webtext-synth-2MB", "corpus_bytes": 2_000_000,
                                                   "vocab_size": 500, "num_merges": 243}}}
    result.update(generated="now", mode="full", command="python -m tools.reproduce",
                  machine={"cpu_count": 2, "platform": "Linux x86_64", "python": "3.11", "git_commit": "abc1234"})
    md, written = tmp_path / "articles.md", write_coursework(result, tmp_path / "articles.md")
    assert written == [md, tmp_path / "articles.csv"] and md.read_text() == coursework_table(result)
    with open(tmp_path / "articles.csv", newline="") as f:
        rows = list(csv.reader(f))
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


def test_the_articles_compiled_counting_stands_beside_v9():
    """Koschei's Rust pre-tokenizer against its Python one is the articles' only compiled counting: it stands
    beside v8 -> v9 (v9 compiles the counting and keeps v8's merge), on the pretokenize stage alone."""
    counting = [step for step in STEPS if "koschei_rust_pretokenize" in step.theirs]
    assert counting and all((s.before, s.after, s.stage) == ("v8", "v9", "pretokenize") for s in counting)
    assert THEIRS["koschei_rust_pretokenize"].stage == "pretokenize"
    assert all(step.before == "v8" for step in STEPS if step.after == "v9")

