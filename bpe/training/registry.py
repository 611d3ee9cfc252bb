"""The registry: variant name -> variant module, found by listing ``variants/vN_<idea>.py``.

A variant module (a *rung*) defines ``IDEA``, ``count_pretokens`` and ``Merger``: the
contract is :mod:`bpe.training.rung`, checked on every rung by ``tests/ladder/test_rung_contract.py``.

The folder is ``variants/`` at the top of the repository, installed as the package ``bpe.variants``
(``pyproject.toml`` maps it there, in an editable install and in a wheel alike), so a variant is
named ``bpe.variants.vN_<idea>`` wherever the project runs.

Adding a rung to the ladder is adding a file; nothing here changes.  The names are found by listing
the folder, and a module is imported only when it is first looked up or listed: the variants import
``bpe``, so importing them all while ``bpe`` itself is being imported would be a cycle.

A rung that cannot run here says why in its ``UNAVAILABLE`` (v8, when it was installed without a C
compiler): it is left out of :data:`VARIANTS`, so the ladder's loops and tests run on what works, and
naming it gets that reason as the one-line error (:func:`get_variant`).

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
    """name -> module of every rung that can run here, in ladder order (v1, v2, ...); each module
    imported on first lookup."""

    def __init__(self) -> None:
        self._files: dict[str, str] | None = None
        self._runnable: list[str] | None = None

    def _names(self) -> dict[str, str]:
        if self._files is None:
            found = {}
            for info in pkgutil.iter_modules(variants.__path__):
                match = _VARIANT_FILE.match(info.name)
                if match:
                    found[match.group(1)] = f"{variants.__name__}.{info.name}"
            self._files = dict(sorted(found.items(), key=lambda item: int(item[0][1:])))
        return self._files

    def module(self, name: str) -> ModuleType:
        """The rung's module whether or not it can run here (``KeyError``: no such rung)."""
        return importlib.import_module(self._names()[name])

    def _runnable_names(self) -> list[str]:
        if self._runnable is None:
            self._runnable = [name for name in self._names() if unavailable(self.module(name)) is None]
        return self._runnable

    def __getitem__(self, name: str) -> ModuleType:
        module = self.module(name)
        if unavailable(module) is not None:
            raise KeyError(name)
        return module

    def __iter__(self) -> Iterator[str]:
        return iter(self._runnable_names())

    def __len__(self) -> int:
        return len(self._runnable_names())

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._runnable_names())

    def __repr__(self) -> str:
        return f"VARIANTS({', '.join(self._names())})"


#: name -> module, in ladder order (v1, v2, ...).
VARIANTS: Mapping[str, ModuleType] = _LazyVariants()


#: The default variants (``train``, ``bench``, ``train_bpe``) when none is named, in order of preference:
#: the fastest *measured* on both regimes that can run here.  v10 (v9's compiled counting, its merge compact
#: and on threads) when it was built (docs/v10.md); else v9 (counting and merge compiled), should v10's merge
#: alone have failed to build; else v8 (the merge compiled), should the counter have failed too; else v6,
#: the fastest in pure Python.  Not v7: it is as fast as v6 where it runs v6's code (two cores, by
#: default), and where it shards the words its shard processes hold copies of them, which the estimate
#: puts past the CS336 handout's 100 GB on OpenWebText (docs/estimates-owt.json; docs/v7.md).
DEFAULT_VARIANTS: tuple[str, ...] = ("v10", "v9", "v8", "v6")


def unavailable(module: ModuleType) -> str | None:
    """Why a rung cannot run here (its ``UNAVAILABLE``: v8 built without a C compiler), or ``None``."""
    return getattr(module, "UNAVAILABLE", None)


def best_variant() -> str:
    """The default variant: the first of :data:`DEFAULT_VARIANTS` that can run here, else the last rung."""
    for name in DEFAULT_VARIANTS:
        if name in VARIANTS:
            return name
    return next(reversed(VARIANTS))


def default_note() -> str:
    """Which rung the default is here, and, where it is not the first choice (v10 not built), why: the first
    choice's reason alone, once (without a C compiler v10 names v9's and v8's in its own, for the same reason), with the
    fix for this install.  ``bench`` prints it when no variant is named, ``train`` when the default is not
    the first choice.

    >>> default_note().startswith("default variant: ")
    True
    """
    chosen = best_variant()
    passed = DEFAULT_VARIANTS[:DEFAULT_VARIANTS.index(chosen)] if chosen in DEFAULT_VARIANTS else DEFAULT_VARIANTS
    reasons = [reason for reason in (unavailable(VARIANTS.module(name)) for name in passed) if reason]
    return f"default variant: {chosen}" + (f" ({reasons[0]})" if reasons else "")


def get_variant(name: str | None) -> ModuleType:
    """The rung ``name`` (the default when ``None``), or a :class:`BPEError` naming why it cannot be had."""
    if name is None:
        name = best_variant()
    if name in VARIANTS:
        return VARIANTS[name]
    try:
        reason = unavailable(VARIANTS.module(name))
    except KeyError:
        reason = None
    if reason is not None:
        raise BPEError(reason)
    raise BPEError(f"unknown variant {name!r}; valid variants: {', '.join(VARIANTS)}")
