"""bpe/lab/measure/plan.py: the settings every measuring command checks once, and candidates run in turns."""

import io

import pytest

from bpe import BPEError
from bpe.corpus.batches import documents_text
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


def test_a_corpus_is_planned_for_the_runs_to_read_in_place(tmp_path):
    """A folder of text files: the runs are given the folder (``source``); a train_bpe function, which takes one
    file, alone gets the documents up to the limit written once as one text file, said on the log.  A command
    that reads one file refuses a corpus in one line."""
    folder = tmp_path / "docs"
    folder.mkdir()
    text = CORPUS_EN.read_text(encoding="utf-8")
    (folder / "a.txt").write_text(text[:40_000], encoding="utf-8")
    (folder / "b.txt").write_text(text[40_000:], encoding="utf-8")
    p = plan(folder, 300, EOT, 1, limit="10KB", corpus=True)
    assert (p.path, p.source, p.stop, p.limit, p.end) == (None, str(folder), 10_000, 10_000, None)
    assert p.reads.label == "2 files" and p.corpus_bytes == 10_000 == p.text_bytes
    assert plan(folder, 300, EOT, corpus=True).corpus_bytes == CORPUS_EN.stat().st_size
    mine = tmp_path / "sizer.py"
    mine.write_text("import os\n\ndef train_bpe(input_path, vocab_size, special_tokens):\n"
                    "    raise ValueError(f'saw {os.path.getsize(input_path)} bytes')\n")
    limited = "".join(documents_text(p.reads, EOT, limit=p.limit)).encode("utf-8")
    assert len(limited) == (folder / "a.txt").stat().st_size + len(EOT[0])  # the first file's one piece, ended
    failed, log = {}, io.StringIO()
    assert measure("t", p, [str(mine)], 1, log, failed=failed) == {}
    assert f"saw {len(limited)} bytes" in failed["sizer"]
    assert log.getvalue().startswith("a train_bpe function reads one file: the corpus written once as one text file "
                                     f"for it ({len(limited):,} bytes)\n")
    with pytest.raises(BPEError, match=rf"^{folder} is not one plain text file \(2 files \("):
        plan(folder, 300, EOT)
