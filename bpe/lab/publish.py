"""Where a lab run writes: ``out/`` by default, the committed file with ``--publish``.

A result a page quotes is committed (``profiles/``, ``docs/``); the same command run to try something
writes under ``out/`` (not in git), so trying never dirties the tree.  ``--publish`` asks for the
committed place, and is refused from a checkout with uncommitted code: the result's provenance line
would name a commit that is not the code that made it.  An explicit ``--out``/``--out-dir`` wins.
:func:`output_path` is that rule for every command with ``--publish`` (bench's JSON, report,
reproduce, profile, handout).  A JSON result is checked writable before the run and written whole.
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
    naming ``command`` (tests/lab/test_publish.py)."""
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


def write_json_atomic(path: Path, data: dict, log=None) -> None:
    """``data`` as indented JSON, written whole or not at all; ``wrote PATH`` on ``log`` when given."""
    from bpe.io.outputs import write_text_atomic

    write_text_atomic(Path(path), json.dumps(data, indent=2) + "\n")
    if log is not None:
        print(f"\nwrote {path}", file=log)
