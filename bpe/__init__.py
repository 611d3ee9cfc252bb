"""bpe-lab: byte-level BPE training (CS336 Assignment 1) as a ladder of optimizations.

This package holds the public API (below), the command line (``cli``, ``python -m bpe``) and the one
error type (``errors``), and three folders: ``training/`` (what ``train_bpe`` runs), ``lab/`` (bench,
report, profiler, tracer) and ``io/`` (data sets, the tokenizer and its file formats).  The merge
algorithms, one per step of the ladder, are the top-level package ``variants``.

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
