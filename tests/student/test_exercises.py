"""The exercises' starting files: exercise 1 (exercises/start_v1.py) asks for the methods it leaves and runs in
the bench, reported as not implemented; exercise 0's checker (exercises/check_pretokenize.py) names each
case that fails, and the usual mistakes (special tokens unescaped, replaced by a space)."""

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


def run_pretokenize_checker(candidate, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_pretokenize", REPO_ROOT / "exercises" / "check_pretokenize.py")
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    status = checker.main([str(candidate)])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def test_the_pretokenize_starting_file_asks_for_its_two_functions(capsys):
    status, out = run_pretokenize_checker(REPO_ROOT / "exercises" / "start_pretokenize.py", capsys)
    assert status == 1 and out.splitlines()[-1] == "0 of 11 cases pass"
    assert "it raised NotImplementedError: split_on_special_tokens is yours to write" in out
    assert "it raised NotImplementedError: pretokenize is yours to write" in out


def test_the_pretokenize_checker_passes_a_right_answer_and_names_the_usual_mistakes(capsys):
    candidates = REPO_ROOT / "tests" / "fixtures" / "candidates"
    status, out = run_pretokenize_checker(candidates / "pretokenize_correct.py", capsys)
    assert status == 0 and out.splitlines()[-1] == "11 of 11 cases pass"
    status, out = run_pretokenize_checker(candidates / "pretokenize_unescaped.py", capsys)
    assert status == 1 and "FAIL   3 a special token is text, not a pattern: escape it" in out
    assert "gave     ['a|b', 'c', 'd', '|', '|', 'e']" in out and "escape each token (regex.escape)" in out
    assert "FAIL  11 training on these pre-tokens merges nothing across a special token" in out
    status, out = run_pretokenize_checker(candidates / "pretokenize_spaced.py", capsys)
    assert status == 1 and "FAIL   9 nothing joins across a special token" in out
    assert "gave     ['end', '.', ' The', ' end', ' ', ' again']" in out and "adds a space to the next word" in out


def test_the_pretokenize_checker_refuses_a_file_without_the_functions(capsys, tmp_path):
    (tmp_path / "empty.py").write_text("x = 1\n")
    status, out = run_pretokenize_checker(tmp_path / "empty.py", capsys)
    assert status == 2 and "must define split_on_special_tokens and pretokenize" in out
