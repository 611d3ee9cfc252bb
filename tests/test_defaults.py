"""The shared defaults (bpe/defaults.py) live in one place: every data set's vocab is one of them."""

from bpe import defaults
from bpe.data.datasets import DATASETS, default_vocab_size


def test_defaults_live_in_one_place():
    assert default_vocab_size(None) == defaults.VOCAB_SIZE == 10_000
    assert default_vocab_size("tinystories") == 10_000 and default_vocab_size("owt") == 32_000
    assert all(d.vocab_size in (defaults.VOCAB_SIZE, defaults.WEB_VOCAB_SIZE) for d in DATASETS.values())
