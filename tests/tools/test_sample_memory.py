"""The memory sampler: the tree's resident memory, a child's included, while the command runs."""

from __future__ import annotations

import json
import sys

import pytest

from tools import sample_memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# A parent that holds 40 MB and starts a child holding 60 MB, both alive together for a moment.
HOLDS = """
import subprocess, sys, time
held = bytearray(40_000_000)
child = subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(60_000_000); time.sleep(1.5)"])
child.wait()
"""


def test_the_peak_counts_the_parent_and_its_child_together(tmp_path):
    out = tmp_path / "memory.json"
    assert sample_memory.main(["--out", str(out), "--every", "0.05", "--", sys.executable, "-c", HOLDS]) == 0
    result = json.loads(out.read_text())
    assert result["returncode"] == 0 and len(result["samples"]) > 3
    assert result["peak_tree_rss"] >= 100_000_000  # both at once: more than either alone
    assert result["peak_tree_rss"] == max(rss for _, rss in result["samples"])


def test_a_failing_command_gives_its_status(tmp_path):
    out = tmp_path / "memory.json"
    assert sample_memory.main(["--out", str(out), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert json.loads(out.read_text())["returncode"] == 3
