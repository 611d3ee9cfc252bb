"""Your own trainer in the bench (bpe/lab/judge/candidates.py): run beside the ladder, checked against the reference,
mistakes diagnosed, estimated from its own timing on a prefix and guarded, shown alive while it runs.

The candidates are small files in tests/fixtures/candidates/: a correct naive ``train_bpe``, a Merger
that breaks ties the wrong way, a ``train_bpe`` that does not split the special tokens, and ones
that raise, print or return the wrong shape.
"""

import io
import json
import re

import pytest

from bpe.cli import main
from bpe.errors import BPEError
from bpe.lab.judge.candidates import parse_variants
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.lab.measure.timed_run import RunningLine
from conftest import FIXTURES, wait_for

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
    verdict = report.verdicts["smaller_tie"]
    assert report.verdicts["v2"] == {"verdict": "identical", "merges": 43}
    assert report.reference["name"] == "v2" and report.reference["source"] == "this run"
    assert verdict["verdict"] == "differs" and verdict["cause"] == "tie"
    reference = report_merges("corpus-en", 300)
    at = verdict["step"]  # the number of the merge where they part
    assert reference[at - 2] != reference[at - 1] and verdict["reference_pair"] == repr_pair(reference[at - 1])
    assert verdict["candidate_count"] == verdict["reference_count"] > 0
    assert verdict["candidate_pair"] < verdict["reference_pair"]
    # two tied pairs fit several wrong orders: the tie probe, one tie per order, names the one, before it is said
    assert verdict["tie_probe"] == {"verdict": "differs", "step": 1, "cause": "tie"}
    assert ("smaller_tie chose the smaller; on the tie probe (one tie per wrong order) it parts at merge 1, where "
            "both pairs occur 60 times and smaller_tie chose the smaller; CS336 breaks ties") in verdict["explanation"]
    assert "joined" not in verdict["explanation"]
    assert json.loads((tmp_path / "b.json").read_text())["verdicts"]["smaller_tie"] == verdict
    assert report.variants["smaller_tie"].median.stages["select"] > 0  # a Merger gets every stage


def test_special_tokens_not_split_is_diagnosed(capsys):
    report = bench(["v2", str(CANDIDATES / "no_special_split.py")], data="tinystories-sample", vocab_size=400)
    verdict = report.verdicts["no_special_split"]
    assert verdict["cause"] == "special-tokens", verdict
    assert verdict["candidate_count"] < verdict["reference_count"]  # it only wins with counts across the tokens
    out = capsys.readouterr().out
    assert "likely cause: counts that cross a special token" in out
    assert report.variants["no_special_split"].median.stages is None  # a function: total only


def test_correct_function_is_identical_against_the_cached_reference(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    report = bench([str(CANDIDATES / "correct.py")])
    assert report.verdicts == {"correct": {"verdict": "identical", "merges": 43, "probe": "identical"}}
    assert report.reference["source"].startswith("computed now, cached in")
    assert report.variants["correct"].median.peak_rss["self"] > 0
    again = bench([str(CANDIDATES / "correct.py")])
    assert again.reference["source"].startswith("cached in ")
    assert again.reference["merges_sha256"] == report.variants["correct"].median.merges_sha256


def test_module_function_form(monkeypatch):
    monkeypatch.syspath_prepend(str(CANDIDATES))
    monkeypatch.setenv("PYTHONPATH", str(CANDIDATES))
    report = bench(["v2", "correct:train_bpe"])
    assert report.verdicts["correct"]["verdict"] == "identical"


def test_failing_candidates_are_one_line_each_and_the_bench_goes_on(tmp_path, capsys):
    out_json = tmp_path / "bench.json"
    entries = ",".join(str(CANDIDATES / f"{name}.py") for name in ("raises", "prints", "wrong_shape"))
    assert main(["bench", "--variant", "v2", "--variant", entries, "--data", "corpus-en", "--vocab-size", "300",
                 "--repeat", "1", "--workers", "1", "--json", str(out_json)]) == 1  # a failure: exit status 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    # stderr, not a terminal here, holds only each run's one line (no live line)
    assert all(re.fullmatch(r"  \S+ run 1/1: [\d.]+s", line) for line in captured.err.splitlines())
    assert "FAILED: raises raised ValueError: pair counts went negative (raises.py line 5)" in captured.out
    assert "FAILED: wrong_shape returned a list of length 43; expected (vocab, merges)" in captured.out
    assert "note: prints printed 2 line(s) to stdout (first: 'training on " in captured.out
    saved = json.loads(out_json.read_text())
    assert set(saved["failed"]) == {"raises", "wrong_shape"}
    assert saved["verdicts"]["prints"] == {"verdict": "identical", "merges": 43, "probe": "identical"}  # not corrupted


def test_all_identical_exits_0(capsys):
    assert main(["bench", "--variant", f"v2,{CANDIDATES / 'correct.py'}", "--data", "corpus-en",
                 "--vocab-size", "280", "--repeat", "1"]) == 0
    assert "correct     identical (23 merges)" in capsys.readouterr().out


# --- helpers of the verdicts above (the diagnosis on its own: test_diagnose.py) ----------------------


def repr_pair(pair):
    return f"({pair[0]!r}, {pair[1]!r})"


def report_merges(data, vocab_size):
    from bpe import train_bpe
    from bpe.data.datasets import resolve_data

    return train_bpe(resolve_data(data), vocab_size, EOT, variant="v2")[1]


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
    assert report.verdicts["class_trainer"] == {"verdict": "identical", "merges": 43, "probe": "identical"}
    assert report.verdicts["class_trainer#2"] == {"verdict": "identical", "merges": 43, "probe": "identical"}
    assert "class_trainer#2  identical (43 merges)" in capsys.readouterr().out


def test_class_without_train_method_is_one_failed_line(tmp_path, capsys):
    (tmp_path / "notrain.py").write_text("class BPE_Trainer:\n    def fit(self, path, n, specials):\n        pass\n")
    report = bench(["v2", f"{tmp_path / 'notrain.py'}:BPE_Trainer"])
    assert report.failed["notrain"].endswith("class BPE_Trainer has no train method "
                                                "(expected train(input_path, vocab_size, special_tokens))")


def test_pool_with_a_module_level_worker_can_pickle_it():
    """A candidate file is imported under its own name in sys.modules: a plain multiprocessing.Pool works,
    forked or spawned (the spawned workers import the file again by that name)."""
    report = bench(["v2", f"{CANDIDATES / 'pool_counter.py'},{CANDIDATES / 'pool_counter_spawn.py'}"])
    assert not report.failed, report.failed
    assert report.verdicts["pool_counter"] == {"verdict": "identical", "merges": 43, "probe": "identical"}
    assert report.verdicts["pool_counter_spawn"] == {"verdict": "identical", "merges": 43, "probe": "identical"}


def test_a_bare_counter_runs_on_a_whole_file():
    """A candidate's ``count_pretokens(path, special_tokens)`` without the rung's keyword arguments still
    runs: the whole file needs no ``end``, and a counter without ``workers`` decides its own processes."""
    report = bench(["v2", str(CANDIDATES / "bare_counter.py")])
    assert not report.failed, report.failed
    assert report.verdicts["bare_counter"] == {"verdict": "identical", "merges": 43, "probe": "identical"}


# --- what a student meets: an estimate that guards the candidate, a run that shows it is alive -------


def test_a_candidate_is_estimated_from_its_own_timing(capsys):
    report = run_bench(BenchSettings(["v2", str(CANDIDATES / "correct.py"), str(CANDIDATES / "correct_merger.py")],
                                     "corpus-en", 300, 1, EOT, 1))
    out = capsys.readouterr().out
    assert "correct ~" in out and "(timed on its first 133,027 bytes)" in out  # the whole small file here
    for name in ("correct", "correct_merger"):
        predicted = report.estimates[name]["seconds"]  # the model's prediction, not a measured time
        assert predicted > 0


def test_the_guard_refuses_a_candidate_estimated_past_the_budget():
    with pytest.raises(BPEError, match=r"bench of correct on corpus-en at vocab 300 x 1 repeat\(s\): estimated "
                                       r"correct ~.*\(timed on its first 133,027 bytes\).*pass --force"):
        run_bench(BenchSettings([str(CANDIDATES / "correct.py")], "corpus-en", 300, 1, EOT, 1, budget=1e-6))


def test_a_candidate_that_fails_on_the_prefix_is_guarded_as_v1(capsys):
    report = run_bench(BenchSettings([str(CANDIDATES / "raises.py")], "corpus-en", 300, 1, EOT, 1))
    assert "raises ~" in capsys.readouterr().out
    assert report.failed["raises"].startswith("raises raised ValueError")


def test_a_bench_run_shows_its_merges_on_the_terminal(capfd):
    run_bench(BenchSettings(["v2", str(CANDIDATES / "correct_merger.py")], "corpus-en", 280, 1, EOT, 1, progress=True))
    err = capfd.readouterr().err
    assert "v2 run 1/1: running, 0 s (merging, 0 of 23)" in err and "correct_merger run 1/1: running" in err
    assert "timing correct_merger on a prefix of the data to estimate it" in err


def test_every_run_shows_its_elapsed_time():
    """The same live line for a function candidate (no merges to report) and for a rung or Merger."""
    stream = io.StringIO()
    with RunningLine(stream, "mine run 1/3: ", "a train_bpe function reports no merges", interval=0.01):
        wait_for(lambda: stream.getvalue().count("running, ") > 2, "the line was not rewritten by its thread")
    shown = stream.getvalue()
    assert "mine run 1/3: running, 0 s (a train_bpe function reports no merges)" in shown  # shown on entering
    assert len(re.findall(r"mine run 1/3: running, \d+ s \(a train_bpe function reports no merges\)", shown)) > 2
    assert shown.endswith("\r\033[K")
    stream = io.StringIO()
    with RunningLine(stream, "v1 run 1/3: ", interval=0.01) as line:
        line.start_bytes(200)
        line.on_bytes(100)  # shown by the thread's next rewrite, not at once
        wait_for(lambda: "(pre-tokenizing, 50%)" in stream.getvalue(), "the bytes counted were never shown")
        line.start_merges(43)
        line.on_merge()
        wait_for(lambda: "(merging, 1 of 43)" in stream.getvalue(), "the merge made was never shown")
    assert re.search(r"v1 run 1/3: running, \d+ s \(pre-tokenizing, 50%\)", stream.getvalue())


def test_estimate_times_a_candidate_too(capsys):
    from bpe.cli import main

    assert main(["estimate", "--data", "corpus-en", "--vocab-size", "300", "--variant",
                 f"v2,{CANDIDATES / 'correct.py'}"]) == 0
    captured = capsys.readouterr()
    rows = [line.split()[0] for line in captured.out.splitlines()[2:]]
    assert rows == ["v2", "correct"]
    assert "timing correct on a prefix of the data to estimate it" in captured.err
