"""The diagnosis on its own (bpe/lab/judge/diagnose.py): small counts, chosen mistakes, each cause named.
The fixture candidates that make each usual mistake through the bench: student/test_usual_mistakes.py."""

from bpe.counting.plain import count_text
from bpe.lab.judge.diagnose import Evidence, diagnose, translate_newlines
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.registry import VARIANTS

EOT = ["<|endoftext|>"]


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


def test_the_vocab_is_checked_beside_the_merges():
    from bpe.lab.judge.candidates import vocab_problems
    from bpe.lab.judge.diagnose import merge_count_cause
    from bpe.training.train import build_vocab

    merges = [(b"a", b"b"), (b"ab", b"c")]
    good = build_vocab(["<|endoftext|>"], merges)
    assert vocab_problems(good, merges, ["<|endoftext|>"], 259) == []
    twice = {**good, 259: b"<|endoftext|>"}
    assert vocab_problems(twice, merges, ["<|endoftext|>"], 260)[0] == \
        "its vocab holds the special token '<|endoftext|>' 2 times"
    holes = {i + (i >= 100): token for i, token in good.items()}  # ids 0..99, 101..259
    assert vocab_problems(holes, merges, ["<|endoftext|>"]) == ["its vocab ids are not 0..258 (CS336's tests "
                                                                "compare ids and tokens)"]
    no_byte = {i: token for i, token in good.items() if token != b"z"}
    assert ("its vocab lacks 1 of the 256 single bytes (first: b'z')"
            in vocab_problems(no_byte, merges, ["<|endoftext|>"]))
    no_merge = {i: token for i, token in good.items() if token != b"abc"}
    assert "its vocab lacks the token of 1 merge(s) (first: (b'ab', b'c'))" in vocab_problems(no_merge, merges, [])
    assert merge_count_cause(10, 12, ["<|a|>", "<|b|>"])[0] == "special-tokens"
    assert merge_count_cause(11, 12, ["<|a|>", "<|b|>"]) == (None, "it stopped while pairs were left")


def test_translated_newlines_are_what_text_mode_reads(tmp_path):
    """Python's universal newlines, also where a \\r\\n straddles the reader's buffer."""
    text = "a\r\nb\rc\r\r\nd\n\re\r" + "x" * 8190 + "\r\n" + "y\r"
    path = tmp_path / "crlf.txt"
    path.write_bytes(text.encode())
    with open(path, encoding="utf-8") as f:
        assert translate_newlines(text) == f.read()


INDENTED_CRLF = "a\r\n   b\r\n   c\r\n" * 3  # Windows line ends, lines indented three spaces


def test_newline_translation_is_named_before_overlaps():
    """Read with \\n line ends, (' ', ' ') is the first merge; on the true counts, a pair of equal tokens chosen
    too early would blame overlapping occurrences."""
    counts, translated = count_text(INDENTED_CRLF, []), count_text(translate_newlines(INDENTED_CRLF), [])
    reference = run_merges(VARIANTS["v1"].Merger(counts), 5, NullTimer())
    mine = run_merges(VARIANTS["v1"].Merger(translated), 5, NullTimer())
    verdict = diagnose(mine, reference, evidence_for(counts, INDENTED_CRLF), "mine")
    assert verdict["step"] == 1 and verdict["cause"] == "newlines", verdict
    assert verdict["explanation"] == (
        "newline translation: the file was read in text mode, where \\r\\n and a lone \\r read as \\n; read that "
        "way, (b' ', b' ') is the most frequent pair (6 times; true count 6), and (b'\\r', b'\\n') occurs 0 times, "
        "not 7; open it in binary or with newline=''")


def test_an_own_pretokenizer_reading_in_text_mode_is_named():
    counts, translated = count_text(INDENTED_CRLF, []), count_text(translate_newlines(INDENTED_CRLF), [])
    reference = run_merges(VARIANTS["v1"].Merger(counts), 5, NullTimer())
    verdict = diagnose(reference, reference, evidence_for(counts, INDENTED_CRLF), "mine", candidate_counts=translated)
    assert verdict["cause"] == "newlines" and verdict["explanation"] == (
        "its 5 merges are reference's, but its pre-token counts are not (a larger vocab or other text would part "
        "the merges): newline translation: the file was read in text mode, where \\r\\n and a lone \\r read as "
        "\\n; mine's pre-token counts are the GPT-2 pattern's on the text read that way; open it in binary or with "
        "newline=''")
