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

from bpe.datasets import REPO_ROOT


def run_json_child(code: str, settings: dict, prefix: Sequence[str] = (), **extra_env: str
                   ) -> subprocess.CompletedProcess:
    """``python -c code`` with the repo importable and ``settings`` as JSON on stdin.

    ``prefix`` runs the child under another program (``bpe merge-cost --instructions``: valgrind).
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
               **extra_env)
    return subprocess.run([*prefix, sys.executable, "-c", code], input=json.dumps(settings),
                          capture_output=True, text=True, env=env)
