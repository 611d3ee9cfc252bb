"""Where a lab result goes, and what it is stamped with.

Every result is stamped with the machine, the git commit (or, outside a checkout, the installed version)
and a digest of the merges (:func:`machine_info`, :func:`bpe.lab.judge.diagnose.merges_digest`), so a figure
can be traced to the code and machine that made it; :func:`made_by` names that code in a header.  A result a
page quotes is committed (``profiles/``, ``docs/``); the same command run to try something writes under
``out/`` (not in git), so trying never dirties the tree.  ``--publish`` asks for the committed place, and is
refused from a checkout with uncommitted code: the provenance line would name a commit that is not the code
that made it.  An explicit ``--out``/``--out-dir`` wins (:func:`output_path`).  A JSON result is checked
writable before the run and written whole.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from bpe.errors import BPEError
from bpe.interface import IN_CHECKOUT, REPO_ROOT
from bpe.running.files import check_writable_dir, write_text_atomic

#: Folders of published results, not code: a change there does not make a run's code differ from its
#: commit, so neither the provenance line nor the clean-tree check of ``--publish`` counts it (several
#: results can then be re-made in a row before one commit).
RESULT_DIRS = ("docs", "profiles")


def machine_info() -> dict:
    return {"cpu_count": os.cpu_count(), "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "processor": platform.processor() or platform.machine(), "git_commit": git_commit(exclude=RESULT_DIRS),
            "version": installed_version()}


def installed_version() -> str | None:
    """bpe-lab's version as installed (``pyproject.toml``'s), or ``None`` where it runs uninstalled."""
    from importlib import metadata  # noqa: PLC0415 (here: 15 ms that every bpe train would pay at import)

    try:
        return metadata.version("bpe-lab")
    except metadata.PackageNotFoundError:
        return None


def made_by(machine: dict) -> str:
    """The code that made a result, as a header names it, from its ``machine`` stamp: its commit; outside
    a git checkout (an installed copy) its version, and that no commit can be named.

    >>> made_by({"git_commit": "abc1234"}), made_by({"git_commit": None, "version": "0.1.0"})
    ('commit abc1234', 'bpe-lab 0.1.0 (installed, no git commit)')
    """
    if machine.get("git_commit"):
        return f"commit {machine['git_commit']}"
    version = f" {machine['version']}" if machine.get("version") else ""
    return f"bpe-lab{version} (installed, no git commit)"


def stamp() -> dict:
    """A result's first keys: when it was made (UTC, to the minute) and by what (:func:`machine_info`; taken
    before the runs, it names the commit whose code runs, before anything could edit the tree)."""
    return {"generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine_info()}


def git_commit(exclude: tuple[str, ...] = ()) -> str | None:
    """The short commit of the checkout, with ``-dirty`` when a tracked file outside ``exclude`` differs;
    ``None`` outside a checkout (the folder above an installed copy may be another project's repository)."""
    if not IN_CHECKOUT:
        return None
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    pathspec = ["--", ".", *(f":(exclude){path}" for path in exclude)] if exclude else []
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *pathspec], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=5).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def output_path(given: str | os.PathLike | None, default: Path, published: Path, publish: bool,
                command: str) -> Path:
    """``given`` when named (``--out``), else ``published`` with ``--publish``, else ``default``
    (under ``out/``, not tracked).  ``--publish`` from a tree with uncommitted changes is refused,
    naming ``command`` (tests/lab/measure/test_publish.py)."""
    commit = git_commit(RESULT_DIRS) if publish else None
    if commit is not None and commit.endswith("-dirty"):  # the provenance line would name other code
        raise BPEError(f"{command} writes a committed result, and the checkout has uncommitted changes "
                       f"({commit}); commit them first (git status lists them), or write elsewhere")
    return Path(given) if given else published if publish else default


def check_json_path(json_out: str | os.PathLike) -> Path:
    """Fail before a run when its JSON cannot be written (a directory, an unwritable place)."""
    path = Path(json_out)
    if path.is_dir():
        raise BPEError(f"--json {path} is a directory; give a file name such as {path / 'bench.json'}")
    check_writable_dir(path.parent if str(path.parent) else Path("."))
    return path


def write_json_atomic(path: Path, data: dict, log=None) -> None:
    """``data`` as indented JSON, written whole or not at all; ``wrote PATH`` on ``log`` when given."""
    write_text_atomic(Path(path), json.dumps(data, indent=2) + "\n")
    if log is not None:
        print(f"\nwrote {path}", file=log)
