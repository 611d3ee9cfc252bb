"""bpe-lab: byte-level BPE training (CS336 Assignment 1) as a ladder of optimizations.

>>> from bpe import train_bpe, VARIANTS
>>> list(VARIANTS)[:2]
['v1', 'v2']
"""

from bpe.errors import BPEError
from bpe.registry import VARIANTS, best_variant
from bpe.timer import NullTimer, StageTimer
from bpe.train import train_bpe

__all__ = ["BPEError", "NullTimer", "StageTimer", "VARIANTS", "best_variant", "train_bpe"]
