"""Where a lab run writes its result: ``out/`` by default, the committed file only when asked.

A run's figures belong to the machine and moment that made them; the committed ones (``docs/``,
``profiles/``) are quoted by the pages, so a run rewrites them only with ``--publish``, and never
from a tree with uncommitted changes: their provenance line would name a commit that is not the
code that ran (:func:`bpe.lab.runinfo.check_publishable`).  Every command with ``--publish`` (bench's
report, profile, reproduce, handout) asks :func:`output_path`; a JSON result is checked writable
before the run (:func:`check_json_path`) and written whole or not at all (:func:`write_json_atomic`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bpe.errors import BPEError


def output_path(given: str | os.PathLike | None, default: Path, published: Path, publish: bool,
                command: str) -> Path:
    """``given`` when named (``--out``), else ``published`` with ``--publish``, else ``default``
    (under ``out/``, not tracked).  ``--publish`` from a tree with uncommitted changes is refused,
    naming ``command``.

    >>> output_path(None, Path("out/r.json"), Path("docs/r.json"), False, "bpe x --publish").as_posix()
    'out/r.json'
    """
    from bpe.lab.runinfo import check_publishable

    if publish:
        check_publishable(command)
    return Path(given) if given else published if publish else default


def check_json_path(json_out: str | os.PathLike) -> Path:
    """Fail before a run when its JSON cannot be written (a directory, an unwritable place)."""
    from bpe.io.outputs import check_writable_dir

    path = Path(json_out)
    if path.is_dir():
        raise BPEError(f"--json {path} is a directory; give a file name such as {path / 'bench.json'}")
    check_writable_dir(path.parent if str(path.parent) else Path("."))
    return path


def write_json_atomic(path: Path, data: dict) -> None:
    from bpe.io.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(data, indent=2) + "\n")
