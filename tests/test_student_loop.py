"""What a student meets running their own trainer: an estimate that guards it, and a run that shows it is alive."""

import io
import time

import pytest

from bpe.errors import BPEError
from bpe.lab.bench import BenchSettings, run_bench
from bpe.lab.timed_run import ticking
from conftest import FIXTURES

CANDIDATES = FIXTURES / "candidates"
EOT = ["<|endoftext|>"]


def test_a_candidate_is_estimated_from_its_own_timing(capsys):
    report = run_bench(BenchSettings(["v2", str(CANDIDATES / "correct.py"), str(CANDIDATES / "correct_merger.py")],
                                     "corpus-en", 300, 1, EOT, 1))
    out = capsys.readouterr().out
    assert "correct ~" in out and "(timed on its first 133,027 bytes)" in out  # the whole small file here
    for name in ("correct", "correct_merger"):
        predicted = report["estimates"][name]["seconds"]  # the model's prediction, not a measured time
        assert predicted > 0


def test_the_guard_refuses_a_candidate_estimated_past_the_budget():
    with pytest.raises(BPEError, match=r"bench of correct on corpus-en at vocab 300 x 1 repeat\(s\): estimated "
                                       r"correct ~.*\(timed on its first 133,027 bytes\).*pass --force"):
        run_bench(BenchSettings([str(CANDIDATES / "correct.py")], "corpus-en", 300, 1, EOT, 1, budget=1e-6))


def test_a_candidate_that_fails_on_the_prefix_is_guarded_as_v1(capsys):
    report = run_bench(BenchSettings([str(CANDIDATES / "raises.py")], "corpus-en", 300, 1, EOT, 1))
    assert "raises ~" in capsys.readouterr().out
    assert report["failed"]["raises"].startswith("raises raised ValueError")


def test_a_bench_run_shows_its_merges_on_the_terminal(capfd):
    run_bench(BenchSettings(["v2", str(CANDIDATES / "correct_merger.py")], "corpus-en", 280, 1, EOT, 1, progress=True))
    err = capfd.readouterr().err
    assert "v2 run 1/1: merging" in err and "correct_merger run 1/1: merging" in err
    assert "timing correct_merger on a prefix of the data to estimate it" in err


def test_a_function_candidate_shows_its_elapsed_time():
    stream = io.StringIO()
    with ticking(stream, "mine run 1/3: ", time.perf_counter(), interval=0.01):
        time.sleep(0.1)
    assert "mine run 1/3: running, 0 s (a train_bpe function reports no merges)" in stream.getvalue()


def test_estimate_times_a_candidate_too(capsys):
    from bpe.cli import main

    assert main(["estimate", "--data", "corpus-en", "--vocab-size", "300", "--variant",
                 f"v2,{CANDIDATES / 'correct.py'}"]) == 0
    captured = capsys.readouterr()
    rows = [line.split()[0] for line in captured.out.splitlines()[2:]]
    assert rows == ["v2", "correct"]
    assert "timing correct on a prefix of the data to estimate it" in captured.err
