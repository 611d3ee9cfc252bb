"""`python -m tools.merge_cost` (tools/merge_cost.py): candidates compared on the same counts, merges checked
equal, clear errors."""

import io
import shutil

import pytest

from bpe import BPEError
from conftest import CORPUS_EN, FIXTURES, REPO_ROOT
from tools.merge_cost import load_merger, main, run_merge_cost

SPECIAL = ["<|endoftext|>"]
CANDIDATES = FIXTURES / "candidates"


def test_variants_and_a_candidate_file_agree(tmp_path):
    candidate = tmp_path / "my_v6.py"
    shutil.copy(REPO_ROOT / "variants" / "v6_tuned.py", candidate)
    out = io.StringIO()
    results = run_merge_cost(["v5", "v6", str(candidate)], str(CORPUS_EN), 400, SPECIAL, repeat=2, workers=1,
                             out=out)
    assert {r["merges_made"] for r in results.values()} == {400 - 257}
    assert len({r["merges_sha256"] for r in results.values()}) == 1
    assert all(len(r["runs"]) == 2 and r["merges"]["min"] <= r["merges"]["median"] for r in results.values())
    table = out.getvalue()
    assert "143 merges" in table and str(candidate) in table


def test_a_candidate_with_other_merges_is_an_error(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from bpe.variants.v2_inverted_index import Merger as Right\n"
        "class Merger(Right):\n"
        "    def select_best_pair(self):  # the smallest pair instead of the largest\n"
        "        return min(self.pair_counts, key=lambda p: (-self.pair_counts[p], p), default=None)\n"
    )
    with pytest.raises(BPEError, match="the candidates' merges differ: v2=.*wrong.py="):
        run_merge_cost(["v2", str(wrong)], str(CORPUS_EN), 300, SPECIAL, repeat=1, workers=1, out=io.StringIO())


def test_bad_candidates_are_named(tmp_path, capsys):
    assert main(["v99", "--data", str(CORPUS_EN)]) == 2
    assert "no variant or file named 'v99'" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(BPEError, match="defines no Merger class"):
        load_merger(str(empty))


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")
def test_instructions_are_counted():
    results = run_merge_cost(["v6"], str(CORPUS_EN), 300, SPECIAL, repeat=1, workers=1, count_instructions=True,
                             out=io.StringIO())
    assert results["v6"]["instructions"] > 10**7


def test_merge_cost_on_a_text_file_is_one_line(capsys):
    assert main([str(REPO_ROOT / "README.md")]) == 2
    err = capsys.readouterr().err
    assert "README.md is not a Python file; a candidate is a variant name" in err and "Traceback" not in err


def test_merge_cost_still_rejects_a_file_without_merger():
    from tools.merge_cost import load_merger

    with pytest.raises(BPEError, match="defines no Merger class"):
        load_merger(str(CANDIDATES / "correct.py"))
