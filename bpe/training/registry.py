"""The registry: variant name -> variant module, found by listing ``variants/vN_<idea>.py``.

A variant module (a *rung*) defines ``IDEA``, ``POOLED``, ``count_pretokens`` and ``Merger``: the
contract is :mod:`bpe.training.rung`, checked on every rung by ``tests/ladder/test_rung_contract.py``.

The folder is ``variants/`` at the top of the repository, installed as the package ``bpe.variants``
(``pyproject.toml`` maps it there, in an editable install and in a wheel alike), so a variant is
named ``bpe.variants.vN_<idea>`` wherever the project runs.

Adding a step of the ladder is adding a file; nothing here changes.  The names are found by listing
the folder, and a module is imported only when it is first looked up: the variants import ``bpe``,
so importing them all while ``bpe`` itself is being imported would be a cycle.

>>> list(VARIANTS)[:2], VARIANTS["v1"].__name__
(['v1', 'v2'], 'bpe.variants.v1_naive')
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping
from types import ModuleType

from bpe import variants
from bpe.errors import BPEError

_VARIANT_FILE = re.compile(r"^(v\d+)_\w+$")


class _LazyVariants(Mapping):
    """name -> module, in ladder order (v1, v2, ...); each module imported on first lookup."""

    def __init__(self) -> None:
        self._files: dict[str, str] | None = None

    def _names(self) -> dict[str, str]:
        if self._files is None:
            found = {}
            for info in pkgutil.iter_modules(variants.__path__):
                match = _VARIANT_FILE.match(info.name)
                if match:
                    found[match.group(1)] = f"{variants.__name__}.{info.name}"
            self._files = dict(sorted(found.items(), key=lambda item: int(item[0][1:])))
        return self._files

    def __getitem__(self, name: str) -> ModuleType:
        return importlib.import_module(self._names()[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._names()))

    def __repr__(self) -> str:
        return f"VARIANTS({', '.join(self._names())})"


#: name -> module, in ladder order (v1, v2, ...).
VARIANTS: Mapping[str, ModuleType] = _LazyVariants()


#: The default variant (``train``, ``bench``, ``train_bpe``) when none is named: the fastest one
#: *measured* on both regimes, which need not be the last rung.  v7 is v6 itself, in one process, below
#: two shards' worth of distinct pre-tokens and with one worker; above, it shards the words, and gathers
#: them back to finish as v6 when a busy core or small merges make the round trips stall.  The figures,
#: idle and with one core busy: docs/v7.md, "Idle and with one core busy".  None: the last rung.
DEFAULT_VARIANT: str | None = "v7"


def best_variant() -> str:
    """The default variant: :data:`DEFAULT_VARIANT`, or the last step of the ladder."""
    return DEFAULT_VARIANT if DEFAULT_VARIANT in VARIANTS else next(reversed(VARIANTS))


def get_variant(name: str | None) -> ModuleType:
    if name is None:
        name = best_variant()
    if name not in VARIANTS:
        raise BPEError(f"unknown variant {name!r}; valid variants: {', '.join(VARIANTS)}")
    return VARIANTS[name]
