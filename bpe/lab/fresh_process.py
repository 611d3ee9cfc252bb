"""Run one timed job in a fresh Python process, so its peak memory and heap are its own.

The bench (one training run per repeat) and the peers (one peer run per repeat) both use this:
the settings go in as JSON on stdin, the child writes its result as JSON on stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from bpe.io.datasets import REPO_ROOT
from bpe.errors import BPEError


def run_json_child(code: str, settings: dict, prefix: Sequence[str] = (), **extra_env: str
                   ) -> subprocess.CompletedProcess:
    """``python -c code`` with the repo importable and ``settings`` as JSON on stdin.

    ``prefix`` runs the child under another program (``bpe merge-cost --instructions``: valgrind).
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
               **extra_env)
    return subprocess.run([*prefix, sys.executable, "-c", code], input=json.dumps(settings),
                          capture_output=True, text=True, env=env)


def child_result(proc: subprocess.CompletedProcess, what: str) -> dict:
    """The JSON a child wrote, or a :class:`BPEError` with the end of its stderr if it failed."""
    if proc.returncode != 0:
        raise BPEError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)
