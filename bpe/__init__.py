"""bpe-lab: byte-level BPE training (CS336 Assignment 1) as a ladder of optimizations.

>>> from bpe import train_bpe, VARIANTS
>>> list(VARIANTS)[:2]
['v1', 'v2']
"""

from bpe.errors import BPEError
from bpe.registry import VARIANTS, best_variant
from bpe.outputs import load_tokenizer
from bpe.timer import NullTimer, StageTimer
from bpe.tokenizer import Tokenizer
from bpe.train import train_bpe

__all__ = ["BPEError", "NullTimer", "StageTimer", "Tokenizer", "VARIANTS", "best_variant", "load_tokenizer",
           "train_bpe"]
