"""Which variants count pre-tokens through the process pool, for the tests that need one.

A variant uses the pool when its ``count_pretokens`` is :func:`bpe.parallel.count_file_parallel`
(v3 onward).  Until such a variant exists in a checkout, :func:`pool_variants` can register a
stand-in (the last variant's merge algorithm with the pooled pre-tokenizer) so the pool is still
exercised end to end; as soon as a real one exists the stand-in is never built.
"""

from __future__ import annotations

from types import SimpleNamespace

from bpe.parallel import count_file_parallel
from bpe.registry import VARIANTS, best_variant

STANDIN = "pool-standin"


def real_pool_variants() -> list[str]:
    return [name for name, module in VARIANTS.items()
            if module.count_pretokens is count_file_parallel and name != STANDIN]


def standin_module() -> SimpleNamespace:
    return SimpleNamespace(
        IDEA="test stand-in: pooled pre-tokenizer + the last variant's Merger",
        count_pretokens=count_file_parallel,
        Merger=VARIANTS[best_variant()].Merger,
    )


def pool_variants(register=None) -> list[str]:
    """Names of the pooled variants; with none, ``register(name, module)`` adds the stand-in."""
    names = real_pool_variants()
    if names or register is None:
        return names
    register(STANDIN, standin_module())
    return [STANDIN]


def cli_command(python: str, args: list[str]) -> list[str]:
    """argv running ``python -m bpe ARGS``; with no real pooled variant, the stand-in is registered first."""
    if real_pool_variants():
        return [python, "-m", "bpe", *args]
    code = (
        "import sys, pool_variant; from bpe.registry import VARIANTS; "
        "pool_variant.pool_variants(VARIANTS.__setitem__); from bpe.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    return [python, "-c", code, *args]
