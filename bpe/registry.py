"""The registry: variant name -> variant module, found by listing ``variants/vN_<idea>.py``.

A variant module provides

* ``IDEA``: one line, the optimization it adds;
* ``count_pretokens(path, special_tokens, *, workers=None, errors="strict") -> Counter[bytes]``,
  which also takes ``end=`` (count only the first ``end`` bytes) when training on a subset;
* ``Merger``: the merge algorithm (see :mod:`bpe.merge_loop`).

Adding a step of the ladder is adding a file; nothing here changes.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

import variants
from bpe.errors import BPEError

_VARIANT_FILE = re.compile(r"^(v\d+)_\w+$")


def _discover() -> dict[str, ModuleType]:
    found = {}
    for info in pkgutil.iter_modules(variants.__path__):
        match = _VARIANT_FILE.match(info.name)
        if match:
            found[match.group(1)] = importlib.import_module(f"variants.{info.name}")
    return dict(sorted(found.items(), key=lambda item: int(item[0][1:])))


#: name -> module, in ladder order (v1, v2, ...).
VARIANTS: dict[str, ModuleType] = _discover()


def best_variant() -> str:
    """The last (fastest) step of the ladder."""
    return next(reversed(VARIANTS))


def get_variant(name: str | None) -> ModuleType:
    if name is None:
        name = best_variant()
    try:
        return VARIANTS[name]
    except KeyError:
        raise BPEError(f"unknown variant {name!r}; valid variants: {', '.join(VARIANTS)}") from None
