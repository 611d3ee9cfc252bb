"""bpe-lab: byte-level BPE training (CS336 Assignment 1) as a ladder of optimizations.

This package holds the public API (below), the command line (``cli``, ``python -m bpe``, each command a
module of ``commands/``) and the one error type (``errors``), and its folders, by what they hold:
``split/`` (how a text becomes pre-tokens), ``counting/`` (pre-tokens counted), ``corpus/`` (a corpus as it
comes), ``running/`` (processes, threads, cores, timer, progress), ``training/`` (``train_bpe`` and what
drives a rung), ``io/`` (the tokenizer, its encoders and its files), ``data/`` (data sets: names,
downloads, generators) and ``lab/`` (bench, report, estimate, trace, walkthrough, judge).  The merge
algorithms, one per rung of the ladder, are ``bpe.variants``: the folder ``variants/`` at the top of the
repository, which ``pyproject.toml`` installs under this package.  docs/layout.md maps every module.

>>> from bpe import train_bpe, VARIANTS
>>> list(VARIANTS)[:2]
['v1', 'v2']

The names below are imported on first use, so ``python -m bpe`` can check its dependencies
(:mod:`bpe.dependencies`) and say in one line what is missing before anything needs them.
"""

import importlib

from bpe.errors import BPEError

_LAZY = {
    "VARIANTS": "bpe.training.registry", "best_variant": "bpe.training.registry",
    "load_tokenizer": "bpe.io.outputs", "save_tokenizer": "bpe.io.outputs",
    "NullTimer": "bpe.running.timer", "StageTimer": "bpe.running.timer",
    "Observer": "bpe.training.observer",
    "Tokenizer": "bpe.io.tokenizer", "train_bpe": "bpe.training.train",
    "train_bpe_from_iterator": "bpe.training.train",
}

__all__ = ["BPEError", "NullTimer", "Observer", "StageTimer", "Tokenizer", "VARIANTS", "best_variant",
           "load_tokenizer", "save_tokenizer", "train_bpe", "train_bpe_from_iterator"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bpe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
