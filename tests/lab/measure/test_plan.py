"""bpe/lab/measure/plan.py: the settings every measuring command checks once, and candidates run in turns."""

import io

import pytest

from bpe import BPEError
from bpe.lab.measure.plan import check_repeat, in_turns, measure, plan
from bpe.split.chunking import find_limit_end
from conftest import CORPUS_EN

EOT = ["<|endoftext|>"]


def test_a_plan_holds_the_checked_settings_and_the_limit_s_end():
    whole = plan(CORPUS_EN, 300, EOT, 2)
    size = CORPUS_EN.stat().st_size
    assert (whole.file_bytes, whole.limit, whole.end, whole.corpus_bytes) == (size, None, None, size)
    assert (whole.vocab_size, whole.merges, whole.workers, whole.special_tokens) == (300, 43, 2, EOT)
    cut = plan(CORPUS_EN, 300, EOT, limit="50KB")
    assert cut.limit == 50_000 and cut.end == find_limit_end(CORPUS_EN, 50_000, EOT) > 50_000  # a document's end
    assert plan(CORPUS_EN, 300, EOT, limit="50KB", rough_end=True).end == 50_000  # an estimate's: the limit
    assert plan(CORPUS_EN, 300, EOT, limit="10MB", rough_end=True).end == size  # at most the file


@pytest.mark.parametrize("args, message", [
    ((300, ["<|endoftext|>", "<|endoftext|>"], None), "special token listed more than once"),
    ((100, EOT, None), "vocab_size 100 is too small"),
    ((300, EOT, 0), "workers must be at least 1"),
])
def test_bad_settings_are_refused_as_training_refuses_them(args, message):
    with pytest.raises(BPEError, match=message):
        plan(CORPUS_EN, *args)


def test_a_path_that_is_not_a_file_is_refused(tmp_path):
    with pytest.raises(BPEError):
        plan(tmp_path, 300, EOT)
    with pytest.raises(BPEError, match="--repeat must be at least 1, got 0"):
        check_repeat(0)


def test_candidates_take_turns_and_a_failed_one_drops_out():
    calls = []

    def run_one(name, i):
        calls.append((name, i))
        return None if (name, i) == ("b", 1) else {"run": i}

    assert in_turns(["a", "b", "c"], 3, run_one) == {"a": [{"run": 0}, {"run": 1}, {"run": 2}],
                                                     "c": [{"run": 0}, {"run": 1}, {"run": 2}]}
    assert calls == [("a", 0), ("b", 0), ("c", 0), ("a", 1), ("b", 1), ("c", 1), ("a", 2), ("c", 2)]


def test_measure_gives_a_function_the_plan_s_bytes_and_drops_or_raises_on_its_failure(tmp_path):
    # A train_bpe function takes a whole file, not a limit: it is given exactly the plan's bytes.
    mine = tmp_path / "sizer.py"
    mine.write_text("import os\n\ndef train_bpe(input_path, vocab_size, special_tokens):\n"
                    "    raise ValueError(f'saw {os.path.getsize(input_path)} bytes')\n")
    p = plan(CORPUS_EN, 300, EOT, 1, limit="50KB")
    failed, log = {}, io.StringIO()
    assert measure("t", p, [str(mine)], 2, log, failed=failed) == {}  # dropped, with its line, after one run
    assert list(failed) == ["sizer"] and f"saw {p.end} bytes" in failed["sizer"]
    assert log.getvalue().count("FAILED: ") == 1
    with pytest.raises(BPEError, match=rf"^\[t\] .*saw {p.end} bytes"):
        measure("t", p, [str(mine)], 1, io.StringIO(), "corpus-en")
