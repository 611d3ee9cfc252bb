"""The probes (bpe/lab/judge/probe.py) tell apart each special-token mistake and each wrong tie order, where the
shipped corpora let them pass, and a file read in text mode, and name the cause; a correct trainer and every rung
pass them."""

import re

import pytest

from bpe.counting.plain import count_text
from bpe.lab.judge.candidates import load_function, parse_variants
from bpe.lab.judge.diagnose import Evidence, diagnose, translate_newlines
from bpe.lab.judge.probe import (
    NEWLINE_PROBE,
    PROBES,
    SPECIAL_TOKEN_PROBE,
    TIE_PROBE,
    TIE_WORDS,
    newline_text,
    probe_verdict,
    probes_verdict,
    special_token_text,
    tie_text,
)
from bpe.lab.measure.timed_run import run_once
from bpe.training.registry import VARIANTS
from bpe.training.train import train_bpe
from conftest import CORPUS_EN, FIXTURES, TINYSTORIES_SAMPLE, cs336_merges

CANDIDATES = FIXTURES / "candidates"
EOT = ["<|endoftext|>"]
SPECIAL_VOCAB = SPECIAL_TOKEN_PROBE.vocab_size


def test_the_probe_is_small_and_meets_the_special_token_mid_line():
    text = special_token_text()
    assert len(text.encode()) < 12_000 and text.count(EOT[0]) == 119 and "at last<|endoftext|>Then" in text
    assert "<|endoftext|>\n" not in text and text.count("<") > 3 * text.count(EOT[0])


def test_the_shipped_corpora_let_an_unescaped_special_token_pass():
    """Why the probe exists: on the CS336 TinyStories fixture the unescaped split learns the right merges."""
    fn = load_function(f"{CANDIDATES / 'unescaped_special.py'}:train_bpe")
    _, merges = fn(str(TINYSTORIES_SAMPLE), 400, list(EOT))
    _, reference = train_bpe(TINYSTORIES_SAMPLE, 400, EOT, variant="v2")
    text = TINYSTORIES_SAMPLE.read_text(encoding="utf-8")
    evidence = Evidence(lambda: count_text(text, EOT), lambda: text, EOT)
    assert diagnose(merges, reference, evidence)["verdict"] == "identical"


@pytest.mark.parametrize("name, merge, said", [
    ("unescaped_special", 6, "special tokens read as a regular expression, unescaped: the pattern '<|endoftext|>' "
                             "matches '<' or 'endoftext' or '>'"),
    ("joins_across_special", 35, "with the special tokens cut out and the pieces joined, (b' last', b'Then') "
                                "occurs 119 times (true count 0)"),
    ("no_special_split", 1, "with the special tokens left in the text"),
    ("vocab_without_specials", SPECIAL_VOCAB - 256, "1 merge(s) too many, one per special token: its vocab "
                                                    "leaves the special tokens out"),
    ("specials_counted_twice", SPECIAL_VOCAB - 257, "1 merge(s) too few, one per special token: it counts the "
                                                    "special tokens twice"),
])
def test_each_special_token_mistake_is_caught_and_named(name, merge, said):
    verdict = probe_verdict(parse_variants(str(CANDIDATES / f"{name}.py"))[0], SPECIAL_TOKEN_PROBE, run_once)
    assert verdict["verdict"] == "differs" and verdict["corpus"] == "the special-token probe", verdict
    assert verdict["step"] == merge and verdict["cause"] == "special-tokens" and said in verdict["explanation"]


def probe_merges(probe, variant, folder):
    return train_bpe(probe.write(folder), probe.vocab_size, list(probe.special_tokens), variant=variant, workers=1)[1]


def test_the_tie_probe_is_small_and_its_ties_are_the_reference_merges(tmp_path):
    """Each word a pre-token of its own (so every pair is inside a word); v1, the reference, breaks each tie by
    bytes, and the words allow no merge past the vocab."""
    text = tie_text()
    assert len(text.encode()) < 2_000
    assert count_text(text, EOT) == {word.encode(): n for word, n in TIE_WORDS} | {b"\n": text.count("\n")}
    assert probe_merges(TIE_PROBE, "v1", tmp_path) == [
        (b"e", b"f"), (b"c", b"d"), (b"a", b"b"), (b"g", b"h"), (b"gh", b"i"), (b"g", b"z"), (b"j", b"k"),
        (b"m", b"n"), (b"jk", b"l"), (b"\xc3", b"\xa9"), (b"\xc3\xa9", b"o"), (b"\xc3", b"\xb6"),
        (b"\xc3", b"\xbc"), (b"u", b"v"), (b"\xc3", b"\xb3"), (b"\xc3", b"\xad"), (b"\xc3", b"\xa1")]
    assert TIE_PROBE.vocab_size - 257 == 17


@pytest.mark.parametrize("probe", [TIE_PROBE, NEWLINE_PROBE], ids=lambda probe: probe.slug)
@pytest.mark.parametrize("variant", [name for name in VARIANTS if name != "v1"])
def test_every_rung_passes_the_tie_and_newline_probes(variant, probe, tmp_path):
    assert probe_merges(probe, variant, tmp_path) == probe_merges(probe, "v1", tmp_path)


def test_the_shipped_corpora_let_a_trainer_comparing_decoded_text_pass():
    """Why the tie probe exists: on corpus-en (the CS336 assignment's corpus) text order and byte order agree
    on every tie."""
    fn = load_function(f"{CANDIDATES / 'wrong_ties.py'}:decoded_text")
    assert fn(str(CORPUS_EN), 500, list(EOT))[1] == cs336_merges()


@pytest.mark.parametrize("spec, merge, said", [
    ("smaller_tie.py", 1, "both pairs occur 60 times and smaller_tie chose the smaller; CS336 breaks ties"),
    ("wrong_ties.py:first_seen", 1, "chose neither the larger nor the smallest of the 3 tied pairs; it is the pair "
                                    "met first in the words"),
    ("wrong_ties.py:joined", 5, "it is the larger with each pair's two tokens joined (b'gz' against b'ghi')"),
    ("wrong_ties.py:token_ids", 8, "it is the larger by token ids ((262, 108) against (109, 110))"),
    ("wrong_ties.py:decoded_text", 11, "byte order and text order disagree here: decoded as text (errors='replace'), "
                                       "a token holding part of a character reads '\ufffd' (U+FFFD)"),
    ("wrong_ties.py:decoded_ignoring_errors", 13, "byte order and text order disagree here: decoded as text "
                                                  "(errors='ignore')"),
    ("wrong_ties.py:gpt2_characters", 15, "it is the larger as GPT-2's printable characters (('Ã', 'Ń') against "
                                          "('Ã', '³')"),
])
def test_each_wrong_tie_order_is_caught_and_named(spec, merge, said):
    """Each order parts at its own tie (the ties before it agree with bytes under it) and is named there."""
    verdict = probe_verdict(parse_variants(str(CANDIDATES / spec))[0], TIE_PROBE, run_once)
    assert verdict["verdict"] == "differs" and verdict["corpus"] == "the tie probe", verdict
    assert verdict["step"] == merge and verdict["cause"] == "tie" and said in verdict["explanation"], verdict


def test_the_newline_probe_ends_its_lines_with_crlf_and_holds_lone_carriage_returns(tmp_path):
    """The reference merges (\\r, \\n) third, and a lone \\r's pair (\\r, '  ') 22nd: a trainer that reads either
    as \\n parts from it within the probe's 43 merges."""
    text = newline_text()
    assert len(text.encode()) < 4_000 and text.count("\r\n") == 160 and len(re.findall("\r(?!\n)", text)) == 40
    merges = probe_merges(NEWLINE_PROBE, "v1", tmp_path)
    assert merges[2] == (b"\r", b"\n") and merges.index((b"\r", b"  ")) == 21
    assert len(merges) == NEWLINE_PROBE.vocab_size - 257 == 43


def test_a_trainer_reading_in_text_mode_learns_the_translated_texts_merges(tmp_path):
    """What the diagnosis recounts: the text-mode fixture's merges are v1's on the text with \\r\\n and \\r read as
    \\n, and the shipped corpora, which hold no \\r, let it pass."""
    fn = load_function(f"{CANDIDATES / 'text_mode.py'}:train_bpe")
    translated = tmp_path / "translated.txt"
    translated.write_bytes(translate_newlines(newline_text()).encode())
    mine = fn(str(NEWLINE_PROBE.write(tmp_path)), NEWLINE_PROBE.vocab_size, list(EOT))[1]
    assert mine == train_bpe(translated, NEWLINE_PROBE.vocab_size, EOT, variant="v1")[1]
    assert fn(str(CORPUS_EN), 500, list(EOT))[1] == cs336_merges()


def test_reading_in_text_mode_is_caught_and_named():
    verdict = probe_verdict(parse_variants(str(CANDIDATES / "text_mode.py"))[0], NEWLINE_PROBE, run_once)
    assert verdict == {
        "verdict": "differs", "step": 3, "merges": 43, "reference_merges": 43, "corpus": "the newline probe",
        "candidate_pair": "(b'\\n', b'  ')", "reference_pair": "(b'\\r', b'\\n')", "candidate_count": 80,
        "reference_count": 120, "cause": "newlines",
        "explanation": ("newline translation: the file was read in text mode, where \\r\\n and a lone \\r read as "
                        "\\n; read that way, (b'\\n', b'  ') is the most frequent pair (120 times; true count 80), "
                        "and (b'\\r', b'\\n') occurs 0 times, not 120; open it in binary or with newline=''")}


def test_a_correct_trainer_passes_the_probes():
    correct = parse_variants(str(CANDIDATES / "correct.py"))[0]
    assert probe_verdict(correct, SPECIAL_TOKEN_PROBE, run_once) == {
        "verdict": "identical", "merges": SPECIAL_VOCAB - 257, "corpus": "the special-token probe"}
    assert PROBES[-1] == NEWLINE_PROBE
    assert probes_verdict(correct, run_once) == {"verdict": "identical", "merges": NEWLINE_PROBE.vocab_size - 257,
                                       "corpus": "the newline probe"}


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_a_correct_merger_passes_the_probes_split_by_another_pattern(pattern):
    """The probes and their reference split by the bench's pattern: a Merger of your own, counted by the lab,
    is judged on that split."""
    merger = parse_variants(str(CANDIDATES / "correct_merger.py"))[0]
    assert probes_verdict(merger, run_once, pattern) == {
        "verdict": "identical", "merges": NEWLINE_PROBE.vocab_size - 257, "corpus": "the newline probe"}
