"""The first exercise (exercises/start_v1.py): it asks for the methods it leaves, and runs in the bench,
reported as not implemented."""

from bpe.cli import main
from conftest import REPO_ROOT


def test_exercise_1_asks_for_the_methods_it_leaves():
    text = (REPO_ROOT / "exercises" / "start_v1.py").read_text()
    assert text.count("raise NotImplementedError") == 2 and "Write the two methods left" in text


def test_the_v1_starting_file_runs_and_is_reported_not_implemented(capsys):
    from conftest import REPO_ROOT

    start = REPO_ROOT / "exercises" / "start_v1.py"
    assert main(["bench", "--variant", f"v2,{start}", "--data", "corpus-en", "--vocab-size", "270",
                 "--repeat", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: start_v1 raised NotImplementedError: select_best_pair is yours to write" in out
    assert "start_v1    not checked: it failed (above)" in out
