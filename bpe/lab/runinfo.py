"""Run metadata recorded beside every figure: the machine, the git commit, a digest of the merges.

The bench, the report, the profiler, merge-cost and ``bpe train`` all stamp their outputs with these, so
a figure can be traced to the code and machine that made it, and two runs' merges compared by digest.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess

from bpe.data.datasets import REPO_ROOT


#: Folders of published results, not code: a change there does not make a run's code differ from its
#: commit, so neither the provenance line nor the clean-tree check of ``--publish`` counts it (several
#: results can then be re-made in a row before one commit).
RESULT_DIRS = ("docs", "profiles")


def machine_info() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "processor": platform.processor() or platform.machine(),
        "git_commit": git_commit(exclude=RESULT_DIRS),
    }


def git_commit(exclude: tuple[str, ...] = ()) -> str | None:
    """The short commit of the checkout, with ``-dirty`` when a tracked file differs from it.

    ``exclude`` names folders whose changes do not count: a tool that rewrites its own committed
    outputs (the profiler, ``profiles/``) is not running changed code.
    """
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    pathspec = ["--", ".", *(f":(exclude){path}" for path in exclude)] if exclude else []
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *pathspec], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=5).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def check_publishable(what: str, exclude: tuple[str, ...] = RESULT_DIRS) -> None:
    """Refuse to write a committed result from a tree with uncommitted changes: its provenance line
    would name a commit that is not the code that made it (``-dirty``)."""
    from bpe.errors import BPEError

    commit = git_commit(exclude)
    if commit is not None and commit.endswith("-dirty"):
        raise BPEError(f"{what} writes a committed result, and the checkout has uncommitted changes "
                       f"({commit}); commit them first (git status lists them), or write elsewhere")


def merges_digest(merges) -> str:
    h = hashlib.sha256()
    for a, b in merges:
        h.update(len(a).to_bytes(4, "big") + a + len(b).to_bytes(4, "big") + b)
    return h.hexdigest()[:16]
