"""The special-token probe (bpe/lab/probe.py) tells apart each classic special-token mistake, where the shipped
corpora let them pass, and names its cause; a correct trainer passes it."""

import pytest

from bpe.lab.candidates import load_function, parse_variants
from bpe.lab.diagnose import Evidence, diagnose
from bpe.lab.probe import PROBE_VOCAB_SIZE, probe_text, probe_verdict
from bpe.training.pretokenize import count_text
from bpe.training.train import train_bpe
from conftest import FIXTURES, TINYSTORIES_SAMPLE

CANDIDATES = FIXTURES / "candidates"
EOT = ["<|endoftext|>"]


def test_the_probe_is_small_and_meets_the_special_token_mid_line():
    text = probe_text()
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


@pytest.mark.parametrize("name, step, said", [
    ("unescaped_special", 6, "special tokens read as a regular expression, unescaped: the pattern '<|endoftext|>' "
                             "matches '<' or 'endoftext' or '>'"),
    ("joins_across_special", 35, "with the special tokens cut out and the pieces joined, (b' last', b'Then') "
                                "occurs 119 times (true count 0)"),
    ("no_special_split", 1, "with the special tokens left in the text"),
    ("vocab_without_specials", PROBE_VOCAB_SIZE - 256, "1 merge(s) too many, one per special token: its vocab "
                                                       "leaves the special tokens out"),
    ("specials_counted_twice", PROBE_VOCAB_SIZE - 257, "1 merge(s) too few, one per special token: it counts the "
                                                       "special tokens twice"),
])
def test_each_special_token_mistake_is_caught_and_named(name, step, said):
    verdict = probe_verdict(parse_variants(str(CANDIDATES / f"{name}.py"))[0])
    assert verdict["verdict"] == "differs" and verdict["corpus"] == "the special-token probe", verdict
    assert verdict["step"] == step and verdict["cause"] == "special-tokens" and said in verdict["explanation"]


def test_a_correct_trainer_passes_the_probe():
    assert probe_verdict(parse_variants(str(CANDIDATES / "correct.py"))[0]) == {
        "verdict": "identical", "merges": PROBE_VOCAB_SIZE - 257, "corpus": "the special-token probe"}
