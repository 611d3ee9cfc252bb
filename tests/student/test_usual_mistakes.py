"""Each usual mistake, as a fixture candidate, gets a diagnosis that names its cause (bench and test_own_trainer).

The candidates are in tests/fixtures/candidates/: pair counts not weighted by the pre-token counts,
merges scanned from the right, a pre-tokenizer that cuts the text at fixed offsets (mid-word),
whose merges can still match the reference's at a small vocab, and a file read in text mode.
"""

import os
import re
import subprocess
import sys

from test_own_trainer import failure, text_evidence, train

from bpe.cli import main
from bpe.counting.plain import count_text
from bpe.lab.judge.candidates import parse_variants
from bpe.lab.judge.correctness import all_correct
from bpe.lab.judge.diagnose import Evidence, diagnose
from bpe.lab.measure.bench import BenchSettings, run_bench
from conftest import CORPUS_EN, FIXTURES, OVERLAPS, REPO_ROOT, TINYSTORIES_SAMPLE

CANDIDATES = FIXTURES / "candidates"
EOT = ["<|endoftext|>"]


def test_bench_names_each_cause(capsys):
    entries = ",".join(str(CANDIDATES / f"{name}.py") for name in ("unweighted_pairs", "fixed_offset_chunks"))
    report = run_bench(BenchSettings(["v2", entries], "corpus-en", 300, 1, EOT, 1))
    out = capsys.readouterr().out
    unweighted = report.verdicts["unweighted_pairs"]
    assert unweighted["step"] == 1 and unweighted["cause"] == "word-counts", unweighted
    assert "after a merge" not in unweighted["explanation"] and "drifted" not in unweighted["explanation"]
    assert "not weighted by the pre-token counts" in out

    # Its merges at vocab 300 are the reference's; its pre-token counts are not, and that is named first.
    chunks = report.verdicts["fixed_offset_chunks"]
    assert chunks["merges"] == 43 and chunks["step"] is None
    assert chunks["verdict"] == "differs" and chunks["cause"] == "pretokenization", chunks
    sys.path.insert(0, str(CANDIDATES))
    try:
        from fixed_offset_chunks import count_pretokens as cut_counts
    finally:
        sys.path.remove(str(CANDIDATES))
    mine, theirs = cut_counts(str(CORPUS_EN), EOT), count_text(CORPUS_EN.read_text(encoding="utf-8"), EOT)
    first = next(t for t in theirs if mine.get(t, 0) != theirs[t])
    assert f"the pre-token {first!r} is counted {mine.get(first, 0):,} times" in chunks["explanation"]
    assert f"{theirs[first]:,} by the GPT-2 pattern" in chunks["explanation"]
    assert "fixed_offset_chunks  DIFFERS in its pre-token counts" in out
    assert not all_correct(report)  # exit status 1


def test_own_trainer_passes_the_candidates_counts():
    """A chunker that cuts mid-word: the pre-tokenization, not a tie (the counts reach the diagnosis)."""
    candidate, = parse_variants(str(CANDIDATES / "fixed_offset_chunks.py"))
    _, merges, counts = train(candidate, CORPUS_EN, 500)
    _, reference, _ = train(parse_variants("v2")[0], CORPUS_EN, 500)
    message = failure(merges, reference, text_evidence(CORPUS_EN), candidate.label, counts)
    assert message is not None and "a pre-tokenization difference: the pre-token" in message
    assert "tie" not in message


def test_merging_from_the_right_is_an_overlap_on_counts_alone():
    candidate, = parse_variants(str(CANDIDATES / "right_to_left.py"))
    from bpe.lab.judge.candidates import load_algorithm
    from bpe.running.timer import NullTimer
    from bpe.training.merge_loop import run_merges
    from bpe.training.registry import VARIANTS

    merges = run_merges(load_algorithm(candidate.kind, candidate.spec).Merger(OVERLAPS), 100, NullTimer())
    reference = run_merges(VARIANTS["v1"].Merger(OVERLAPS), 100, NullTimer())
    verdict = diagnose(merges, reference, Evidence(lambda: OVERLAPS, lambda: "", []), candidate.label)
    assert verdict["cause"] == "overlap" and "merged from the right" in verdict["explanation"], verdict
    assert verdict["candidate_pair"] == "(b'a', b'aa')"


def test_own_trainer_run_names_overlaps():
    """What a student runs: BPE_CANDIDATE=... pytest tests/student/test_own_trainer.py -k overlaps."""
    env = dict(os.environ, BPE_CANDIDATE=str(CANDIDATES / "right_to_left.py"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/student/test_own_trainer.py", "-k", "overlaps"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout[-2000:]
    assert "likely cause: overlapping occurrences merged from the right" in run.stdout
    assert "pre-tokenization difference" not in run.stdout


def test_the_ladder_checks_run_on_a_candidate_file():
    import subprocess
    import sys

    from conftest import REPO_ROOT

    env = dict(os.environ, BPE_CANDIDATE=str(CANDIDATES / "smaller_tie.py"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/student/test_own_trainer.py", "-k", "tricky"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert "4 failed" in proc.stdout, proc.stdout[-2000:]
    assert ("merge 1: smaller_tie chose (b'e', b's'), the reference (b's', b't'): likely cause: "
            "tie broken the wrong way" in proc.stdout)


def test_the_bench_judges_the_whole_output(capsys):
    """The vocab and the probes count in the verdict, beside the merges of the data."""
    entries = ",".join([*(str(CANDIDATES / f"{name}.py") for name in ("vocab_without_specials", "unescaped_special")),
                        f"{CANDIDATES / 'wrong_ties.py'}:decoded_text"])
    report = run_bench(BenchSettings(["v2", entries], "corpus-en", 300, 1, EOT, 1))
    out = capsys.readouterr().out
    missing = report.verdicts["vocab_without_specials"]
    assert missing["cause"] == "special-tokens" and "corpus" not in missing  # on the data itself
    assert missing["vocab"][0] == "its vocab lacks the special token '<|endoftext|>'"
    assert "vocab_without_specials  DIFFERS after the reference's 43 merges: " in out
    assert "merged past the vocab size" not in out
    assert " of 43:" not in out  # never a merge past the last: "merge 44 of 43"
    unescaped = report.verdicts["unescaped_special"]  # right on corpus-en: the probe finds it
    assert unescaped["corpus"] == "the special-token probe" and unescaped["cause"] == "special-tokens"
    assert re.search(r"unescaped_special +DIFFERS on the special-token probe at merge 6 of 53", out)
    assert "likely cause: special tokens read as a regular expression, unescaped" in out
    decoded = report.verdicts["decoded_text"]  # right on corpus-en and on the special-token probe
    assert decoded["corpus"] == "the tie probe" and decoded["cause"] == "tie", decoded
    assert re.search(r"decoded_text +DIFFERS on the tie probe at merge 11 of 17: decoded_text chose "
                     r"\(b'\\xc3', b'\\xb6'\) \(true count 30\)", out)
    assert "likely cause: tie broken the wrong way" in out and "byte order and text order disagree here" in out
    assert not all_correct(report)


def test_own_trainer_run_names_an_unescaped_special_token_and_a_text_order_tie():
    """What a student runs: BPE_CANDIDATE=... pytest tests/student/test_own_trainer.py -k probe; a function's
    ties are checked too (on the tie probe), not only a Merger's."""
    entries = f"{CANDIDATES / 'unescaped_special.py'},{CANDIDATES / 'wrong_ties.py'}:decoded_text"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/student/test_own_trainer.py", "-k", "probe"],
                         cwd=REPO_ROOT, env=dict(os.environ, BPE_CANDIDATE=entries),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "2 failed, 4 passed" in run.stdout, run.stdout[-2000:]
    assert "likely cause: special tokens read as a regular expression, unescaped" in run.stdout
    assert ("merge 11: decoded_text chose (b'\\xc3', b'\\xb6'), the reference (b'\\xc3\\xa9', b'o'): likely cause: "
            "tie broken the wrong way" in run.stdout and "byte order and text order disagree here" in run.stdout)


TEXT_MODE_CAUSE = ("likely cause: newline translation: the file was read in text mode, where \\r\\n and a lone \\r "
                   "read as \\n; read that way, {mine} is the most frequent pair ({recount} times; true count "
                   "{true}), and (b'\\r', b'\\n') occurs 0 times, not {theirs}; open it in binary or with newline=''")


def test_the_bench_names_a_file_read_in_text_mode(tmp_path, capsys):
    """``bpe bench --variant text_mode.py``: right on corpus-en, which holds no \\r, and caught on the newline
    probe; on the TinyStories fixture with Windows line ends, caught on the data itself."""
    text_mode = CANDIDATES / "text_mode.py"
    assert main(["bench", "--variant", f"v2,{text_mode}", "--data", "corpus-en", "--vocab-size", "300",
                 "--repeat", "1", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert ("  text_mode   DIFFERS on the newline probe at merge 3 of 43: text_mode chose (b'\\n', b'  ') (true "
            "count 80), v2 chose (b'\\r', b'\\n') (true count 120)\n") in out
    assert TEXT_MODE_CAUSE.format(mine="(b'\\n', b'  ')", recount=120, true=80, theirs=120) in out

    crlf = tmp_path / "tinystories-crlf.txt"
    crlf.write_bytes(TINYSTORIES_SAMPLE.read_bytes().replace(b"\n", b"\r\n"))
    assert main(["bench", "--variant", f"v2,{text_mode}", "--data", str(crlf), "--vocab-size", "400",
                 "--repeat", "1", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert ("  text_mode   DIFFERS at merge 108 of 143: text_mode chose (b'u', b't') (true count 6), v2 chose "
            "(b'\\r', b'\\n') (true count 7)\n") in out
    assert TEXT_MODE_CAUSE.format(mine="(b'u', b't')", recount=6, true=6, theirs=7) in out


def test_own_trainer_run_names_a_file_read_in_text_mode():
    """What a student runs: BPE_CANDIDATE=... pytest tests/student/test_own_trainer.py; only the newline probe
    fails."""
    env = dict(os.environ, BPE_CANDIDATE=str(CANDIDATES / "text_mode.py"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/student/test_own_trainer.py", "-k", "probe"],
                         cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "1 failed, 2 passed" in run.stdout, run.stdout[-2000:]
    assert "test_probe[text_mode-newline-probe]" in run.stdout
    assert ("merge 3: text_mode chose (b'\\n', b'  '), the reference (b'\\r', b'\\n'): "
            + TEXT_MODE_CAUSE.format(mine="(b'\\n', b'  ')", recount=120, true=80, theirs=120)) in run.stdout
