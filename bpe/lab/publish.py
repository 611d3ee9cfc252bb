"""Where a command's result goes: ``out/`` by default, the committed file with ``--publish``.

A result a page quotes is committed (``profiles/``, ``docs/``); the same command run to try something
writes under ``out/`` (not in git), so trying never dirties the tree.  ``--publish`` asks for the
committed place, and is refused from a checkout with uncommitted code: the result's provenance line
would name a commit that is not the code that made it.  An explicit ``--out``/``--out-dir`` wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from bpe.lab.runinfo import check_publishable


def resolve_out(publish: bool, given: str | os.PathLike | None, committed: Path, default: Path,
                command: str) -> Path:
    """``given`` when named, else ``committed`` with ``publish``, else ``default``.

    With ``publish``, first refuses (a :class:`~bpe.errors.BPEError` naming ``command``) when the
    code has uncommitted changes.
    """
    if publish:
        check_publishable(command)
    if given:
        return Path(given)
    return committed if publish else default
