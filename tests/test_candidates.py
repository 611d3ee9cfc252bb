"""Your own trainer in the bench: run beside the ladder, checked against the reference, mistakes diagnosed.

The candidates are small files in tests/fixtures/candidates/: a correct naive ``train_bpe``, a Merger
that breaks ties the wrong way, a ``train_bpe`` that does not split the special tokens, and ones
that raise, print or return the wrong shape.
"""

import json
import os

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab.bench import BenchSettings, run_bench
from bpe.lab.candidates import parse_variants
from bpe.lab.diagnose import Evidence, diagnose
from bpe.training.merge_loop import run_merges
from bpe.training.pretokenize import count_text
from bpe.training.registry import VARIANTS
from bpe.training.timer import NullTimer
from conftest import FIXTURES

CANDIDATES = FIXTURES / "candidates"
EOT = ["<|endoftext|>"]


def bench(variants, data="corpus-en", vocab_size=300, **kwargs):
    return run_bench(BenchSettings(variants, data, vocab_size, 1, EOT, 1, **kwargs))


def test_variant_entries_name_files_functions_and_ladder_steps():
    found = parse_variants([f"v2,{CANDIDATES / 'smaller_tie.py'}", str(CANDIDATES / "correct.py"),
                            f"{CANDIDATES / 'raises.py'}:count_pairs"])
    assert [(c.label, c.kind) for c in found] == [("v2", "variant"), ("smaller_tie", "merger"),
                                                  ("correct", "function"), ("count_pairs", "function")]
    assert found[1].idea == "naive Merger, ties to the smaller pair (wrong on purpose)"  # the file's IDEA
    assert found[2].spec.endswith("correct.py:train_bpe")


@pytest.mark.parametrize("entry, message", [
    ("v99", "unknown variant 'v99'; valid variants: v1, v2"),
    ("no/such/file.py", "no file no/such/file.py"),
    ("no_such_module:train", "no module 'no_such_module' to import"),
    ("NOTHING", "defines neither a Merger class nor a function train_bpe or run_train_bpe"),
    ("BROKEN", "broken.py: syntax error on line 1: "),
])
def test_bad_entries_are_one_line_errors(entry, message, tmp_path, capsys):
    (tmp_path / "nothing.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def train_bpe(:\n")
    entry = {"NOTHING": str(tmp_path / "nothing.py"), "BROKEN": str(tmp_path / "broken.py")}.get(entry, entry)
    assert main(["bench", "--variant", entry, "--data", "corpus-en"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: ") and message in err and err.count("\n") == 1


def test_smaller_pair_tie_break_is_diagnosed(tmp_path):
    report = bench(["v2", str(CANDIDATES / "smaller_tie.py")], json_out=str(tmp_path / "b.json"))
    verdict = report["verdicts"]["smaller_tie"]
    assert report["verdicts"]["v2"] == {"verdict": "identical", "merges": 43}
    assert report["reference"]["name"] == "v2" and report["reference"]["source"] == "this run"
    assert verdict["verdict"] == "differs" and verdict["cause"] == "tie"
    reference = report_merges("corpus-en", 300)
    step = verdict["step"]
    assert reference[step - 2] != reference[step - 1] and verdict["reference_pair"] == repr_pair(reference[step - 1])
    assert verdict["candidate_count"] == verdict["reference_count"] > 0
    assert verdict["candidate_pair"] < verdict["reference_pair"]
    assert json.loads((tmp_path / "b.json").read_text())["verdicts"]["smaller_tie"] == verdict
    assert report["variants"]["smaller_tie"]["median"]["stages"]["select"] > 0  # a Merger gets every stage


def test_special_tokens_not_split_is_diagnosed(capsys):
    report = bench(["v2", str(CANDIDATES / "no_special_split.py")], data="tinystories-sample", vocab_size=400)
    verdict = report["verdicts"]["no_special_split"]
    assert verdict["cause"] == "special-tokens", verdict
    assert verdict["candidate_count"] < verdict["reference_count"]  # it only wins with counts across the tokens
    out = capsys.readouterr().out
    assert "likely cause: counts that cross a special token" in out
    assert report["variants"]["no_special_split"]["median"]["stages"] is None  # a function: total only


def test_correct_function_is_identical_against_the_cached_reference(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    report = bench([str(CANDIDATES / "correct.py")])
    assert report["verdicts"] == {"correct": {"verdict": "identical", "merges": 43}}
    assert report["reference"]["source"].startswith("computed now, cached in")
    assert report["variants"]["correct"]["median"]["peak_rss"]["self"] > 0
    again = bench([str(CANDIDATES / "correct.py")])
    assert again["reference"]["source"].startswith("cached in ")
    assert again["reference"]["merges_sha256"] == report["variants"]["correct"]["median"]["merges_sha256"]


def test_module_function_form(monkeypatch):
    monkeypatch.syspath_prepend(str(CANDIDATES))
    monkeypatch.setenv("PYTHONPATH", str(CANDIDATES))
    report = bench(["v2", "correct:train_bpe"])
    assert report["verdicts"]["correct"]["verdict"] == "identical"


def test_failing_candidates_are_one_line_each_and_the_bench_goes_on(tmp_path, capsys):
    out_json = tmp_path / "bench.json"
    entries = ",".join(str(CANDIDATES / f"{name}.py") for name in ("raises", "prints", "wrong_shape"))
    assert main(["bench", "--variant", "v2", "--variant", entries, "--data", "corpus-en", "--vocab-size", "300",
                 "--repeat", "1", "--workers", "1", "--json", str(out_json)]) == 1  # a failure: exit status 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err and captured.err == ""
    assert "FAILED: raises raised ValueError: pair counts went negative (raises.py line 5)" in captured.out
    assert "FAILED: wrong_shape returned a list of length 43; expected (vocab, merges)" in captured.out
    assert "note: prints printed 2 line(s) to stdout (first: 'training on " in captured.out
    saved = json.loads(out_json.read_text())
    assert set(saved["failed"]) == {"raises", "wrong_shape"}
    assert saved["verdicts"]["prints"] == {"verdict": "identical", "merges": 43}  # its prints did not corrupt it


def test_all_identical_exits_0(capsys):
    assert main(["bench", "--variant", f"v2,{CANDIDATES / 'correct.py'}", "--data", "corpus-en",
                 "--vocab-size", "280", "--repeat", "1"]) == 0
    assert "correct     identical (23 merges)" in capsys.readouterr().out


# --- the diagnosis on its own: small counts, chosen mistakes ---------------------------------------


def repr_pair(pair):
    return f"({pair[0]!r}, {pair[1]!r})"


def report_merges(data, vocab_size):
    from bpe import train_bpe
    from bpe.data.datasets import resolve_data

    return train_bpe(resolve_data(data), vocab_size, EOT, variant="v2")[1]


def evidence_for(counts, text="", special_tokens=()):
    return Evidence(lambda: counts, lambda: text, list(special_tokens))


def test_overlapping_occurrences_are_diagnosed():
    counts = {b"aaaa": 5, b"abab": 6, b"xy": 1}
    reference = run_merges(VARIANTS["v1"].Merger(counts), 3, NullTimer())
    assert reference[0] == (b"a", b"a")  # 3 x 5 = 15 overlapping occurrences against 12 of (a, b)
    mine = [(b"a", b"b")] + reference[1:]  # counting aaaa's pairs without overlap gives (a, a) 10 only
    verdict = diagnose(mine, reference, evidence_for(counts), "mine", "v1")
    assert verdict["step"] == 1 and verdict["cause"] == "overlap", verdict
    assert verdict["reference_count"] == 15 and verdict["candidate_count"] == 12
    assert "counted without overlaps, (b'a', b'a') has 10" in verdict["explanation"]


def test_a_pair_across_a_pretoken_boundary_is_a_pretokenization_difference():
    text = "end. The end. The"
    counts = count_text(text, [])
    reference = run_merges(VARIANTS["v1"].Merger(counts), 2, NullTimer())
    verdict = diagnose([(b".", b" ")] + reference[1:], reference, evidence_for(counts, text), "mine")
    assert verdict["cause"] == "pretokenization" and verdict["candidate_count"] == 0
    assert "the GPT-2 pattern splits it as '.' | ' The'" in verdict["explanation"]


def test_own_pretokenizer_without_the_special_split_is_named():
    text = "low low<|endoftext|>lower<|endoftext|>low"
    counts = count_text(text, EOT)
    reference = run_merges(VARIANTS["v1"].Merger(counts), 4, NullTimer())
    theirs = count_text(text, [])
    mine = run_merges(VARIANTS["v1"].Merger(theirs), 4, NullTimer())
    verdict = diagnose(mine, reference, evidence_for(counts, text, EOT), "mine", candidate_counts=theirs)
    assert verdict["cause"] == "special-tokens"
    other = {**counts, b" low": 7}
    verdict = diagnose(mine, reference, evidence_for(counts, text, EOT), "mine", candidate_counts=other)
    assert verdict["cause"] == "pretokenization"
    assert "the pre-token b' low' is counted 7 times by mine's pre-tokenizer, 1 by the GPT-2 pattern" in \
        verdict["explanation"]


def test_shorter_or_longer_merge_lists():
    counts = {b"abc": 2}
    reference = run_merges(VARIANTS["v1"].Merger(counts), 5, NullTimer())
    short = diagnose(reference[:1], reference, evidence_for(counts), "mine")
    assert short["step"] == 2 and short["candidate_pair"] is None and "it stopped while pairs were left" in \
        short["explanation"]
    assert diagnose(reference, reference, evidence_for(counts)) == {"verdict": "identical", "merges": 2}


def test_merge_cost_still_rejects_a_file_without_merger():
    from bpe.lab.merge_cost import load_merger

    with pytest.raises(BPEError, match="defines no Merger class"):
        load_merger(str(CANDIDATES / "correct.py"))


def test_report_shows_own_trainers_beside_the_ladder(tmp_path):
    from bpe.lab.report import ReportSettings, run_report

    entries = [str(CANDIDATES / "smaller_tie.py"), str(CANDIDATES / "correct.py"), str(CANDIDATES / "raises.py")]
    text = run_report(BenchSettings(entries, "tinystories-sample", 300, 1, EOT, 1), ReportSettings(v1_vocab_size=280),
                      out_dir=tmp_path).read_text()
    rows = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| ") and " s | " in line]
    assert rows == [f"| {name}" for name in [*VARIANTS, "smaller_tie", "correct"]]  # the ladder runs beside them
    assert "| correct | A correct CS336 train_bpe" in text and " | - | - | - | - | " in text  # total only
    assert "- **correct**: identical (43 merges)." in text
    assert "- **smaller_tie**: differs at merge " in text and "tie broken the wrong way" in text
    assert "- **raises**: failed: raises raised ValueError: pair counts went negative (raises.py line 5)." in text
    saved = json.loads((tmp_path / "report-bench.json").read_text())
    assert saved["tables"][0]["variants"]["smaller_tie"]["kind"] == "merger"
    for png in ("report-stages.png", "report-merges.png"):
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"


def test_the_ladder_checks_run_on_a_candidate_file():
    import subprocess
    import sys

    from conftest import REPO_ROOT

    env = dict(os.environ, BPE_CANDIDATE=str(CANDIDATES / "smaller_tie.py"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_own_trainer.py",
                           "-k", "tricky"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert "4 failed" in proc.stdout, proc.stdout[-2000:]
    assert ("merge 1: smaller_tie chose (b'e', b's'), the reference (b's', b't'): likely cause: "
            "tie broken the wrong way" in proc.stdout)


def test_the_v1_starting_file_runs_and_is_reported_not_implemented(capsys):
    from conftest import REPO_ROOT

    start = REPO_ROOT / "exercises" / "start_v1.py"
    assert main(["bench", "--variant", f"v2,{start}", "--data", "corpus-en", "--vocab-size", "270",
                 "--repeat", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: start_v1 raised NotImplementedError: select_best_pair is yours to write" in out
    assert "start_v1    not checked: it failed (above)" in out


def test_lab_page_example_output_is_current(capsys):
    import re
    import shlex

    from conftest import REPO_ROOT

    page = (REPO_ROOT / "docs" / "lab.md").read_text()
    command, shown = re.search(r"```text\n\$ python -m bpe (bench --variant v6,tests/fixtures/candidates/[^\n]*)\n"
                               r"(.*?)\n```", page, re.S).groups()
    assert main(shlex.split(command)) == 1
    out = capsys.readouterr().out.splitlines()
    for block in shown.split("...\n"):
        lines = [line for line in block.splitlines() if line]
        if not lines:
            continue
        start = out.index(lines[0])
        assert out[start:start + len(lines)] == lines
    assert "tests/test_own_trainer.py" in page and "(exercises.md)" in page
    assert "(exercises.md)" in (REPO_ROOT / "docs" / "index.md").read_text()


def test_class_based_trainer_runs_like_any_candidate(monkeypatch, capsys):
    """``FILE.py:CLASS`` and ``module:CLASS``: ``CLASS().train(input_path, vocab_size, special_tokens)``."""
    monkeypatch.setenv("PYTHONPATH", str(CANDIDATES))
    monkeypatch.syspath_prepend(str(CANDIDATES))
    found = parse_variants([f"{CANDIDATES / 'class_trainer.py'}:BPE_Trainer", "class_trainer:BPE_Trainer",
                            str(CANDIDATES / "class_trainer.py")])
    assert [(c.label, c.kind) for c in found] == [("class_trainer", "function"), ("class_trainer#2", "function"),
                                                  ("class_trainer#3", "function")]
    assert found[2].spec.endswith("class_trainer.py:BPE_Trainer")  # found by its name when none is given
    report = bench(["v2", f"{CANDIDATES / 'class_trainer.py'}:BPE_Trainer", "class_trainer:BPE_Trainer"])
    assert report["verdicts"]["class_trainer"] == {"verdict": "identical", "merges": 43}
    assert report["verdicts"]["class_trainer#2"] == {"verdict": "identical", "merges": 43}
    assert "class_trainer#2  identical (43 merges)" in capsys.readouterr().out


def test_class_without_train_method_is_one_failed_line(tmp_path, capsys):
    (tmp_path / "notrain.py").write_text("class BPE_Trainer:\n    def fit(self, path, n, specials):\n        pass\n")
    report = bench(["v2", f"{tmp_path / 'notrain.py'}:BPE_Trainer"])
    assert report["failed"]["notrain"].endswith("class BPE_Trainer has no train method "
                                                "(expected train(input_path, vocab_size, special_tokens))")


def test_pool_with_a_module_level_worker_can_pickle_it():
    """A candidate file is imported under its own name in sys.modules: a plain multiprocessing.Pool works,
    forked or spawned (the spawned workers import the file again by that name)."""
    report = bench(["v2", f"{CANDIDATES / 'pool_counter.py'},{CANDIDATES / 'pool_counter_spawn.py'}"])
    assert not report["failed"], report["failed"]
    assert report["verdicts"]["pool_counter"] == {"verdict": "identical", "merges": 43}
    assert report["verdicts"]["pool_counter_spawn"] == {"verdict": "identical", "merges": 43}


def test_a_bare_counter_runs_on_a_whole_file():
    """A candidate's ``count_pretokens(path, special_tokens)`` without the rung's keyword arguments still
    runs: the whole file needs no ``end``, and a counter without ``workers`` decides its own processes."""
    report = bench(["v2", str(CANDIDATES / "bare_counter.py")])
    assert not report["failed"], report["failed"]
    assert report["verdicts"]["bare_counter"] == {"verdict": "identical", "merges": 43}
