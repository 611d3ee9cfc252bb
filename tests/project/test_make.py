"""The Makefile: `make` alone prints help and touches nothing; each target echoes one readable line."""

import re
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_echoes_one_line_per_command():
    bench = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "bench", "VARIANT=v2"],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=60).stdout
    echoed = [line for line in bench.splitlines() if line.startswith("echo")]
    assert echoed == ["echo '.venv/bin/python -m bpe bench --variant v2 --data gutenberg-sample --repeat 3'"]
    venv = subprocess.run(["make", "-n", "-B", "--no-print-directory", ".venv/.installed"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60).stdout
    assert "first run: creating .venv and installing bpe-lab with its dev extras" in venv
    assert re.search(r"pip install .*-e '\.\[dev\]'", venv) and "--quiet" not in venv


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_plain_make_prints_help_and_touches_nothing():
    proc = subprocess.run(["make", "-n"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "pip install" not in proc.stdout and "-m venv" not in proc.stdout  # help needs no venv
    proc = subprocess.run(["make", "--no-print-directory"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    for target in ("make bench", "make test", "make data", "make report", "make profile", "make shell"):
        assert target in proc.stdout
