"""bpe-lab: byte-level BPE training (CS336 Assignment 1) as a ladder of optimizations.

>>> from bpe import train_bpe, VARIANTS
>>> list(VARIANTS)[:2]
['v1', 'v2']
"""

from bpe.errors import BPEError
from bpe.training.registry import VARIANTS, best_variant
from bpe.io.outputs import load_tokenizer
from bpe.training.timer import NullTimer, StageTimer
from bpe.io.tokenizer import Tokenizer
from bpe.training.train import train_bpe

__all__ = ["BPEError", "NullTimer", "StageTimer", "Tokenizer", "VARIANTS", "best_variant", "load_tokenizer",
           "train_bpe"]
