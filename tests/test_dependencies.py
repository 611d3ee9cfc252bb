"""Getting started (bpe/dependencies.py): a Python without the dependencies gets one clear line with the fix."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT

# Makes `import regex` fail in the child, as in a Python where the package was never installed.
_NO_REGEX = """
import runpy, sys
class _NoRegex:
    def find_spec(self, name, path=None, target=None):
        if name == "regex" or name.startswith("regex."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.modules.pop("regex", None)
sys.meta_path.insert(0, _NoRegex())
sys.argv = ["bpe", "--help"]
runpy.run_module("bpe", run_name="__main__", alter_sys=True)
"""


def test_missing_dependency_is_one_line_with_the_fix():
    proc = subprocess.run([sys.executable, "-c", _NO_REGEX], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bpe: error: ") and "'regex'" in lines[0] and "'tqdm'" not in lines[0]
    assert ".venv/bin/bpe" in lines[0] and "pip install -e ." in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_runs_with_every_dependency():
    proc = subprocess.run([sys.executable, "-m", "bpe", "--help"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "train" in proc.stdout
