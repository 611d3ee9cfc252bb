"""What users see, kept in golden files (``tests/project/golden/``): the ``--help`` of ``bpe`` and of every
subcommand, and a few small, fast runs whose output does not depend on the machine once what varies is masked
(times, sizes in memory units, the output folder, commits, the machine's CPUs).  A change to any of
them fails here with a diff; a change made on purpose is recorded by running this file with
``BPE_UPDATE_GOLDEN=1`` (``BPE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/project/test_golden.py``)
and committing the files it rewrites.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO_ROOT

GOLDEN = REPO_ROOT / "tests" / "project" / "golden"
UPDATE = os.environ.get("BPE_UPDATE_GOLDEN") == "1"

# Each run: (golden file's name, the arguments after ``bpe``, or after ``python`` for a tool: ``-m tools.NAME``);
# ``OUT`` is a fresh folder.
RUNS = [
    ("estimate", ["estimate", "--data", "corpus-en", "--variant", "v1,v4,v6", "--workers", "1"]),
    ("estimate-limit", ["estimate", "--data", "corpus-en", "--variant", "v6", "--limit", "50KB", "--workers", "1"]),
    ("train", ["train", "--data", "corpus-en", "--variant", "v6", "--vocab-size", "300", "--workers", "1",
               "--out", "OUT"]),
    ("bench", ["bench", "--data", "corpus-en", "--variant", "v1,v6", "--vocab-size", "300", "--repeat", "2",
               "--workers", "1"]),
    ("merge-cost", ["-m", "tools.merge_cost", "v4", "v6", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "2",
                    "--workers", "1"]),
    ("trace", ["trace", "--variant", "v1", "--merges", "3"]),
    ("train-vocab-too-small", ["train", "--data", "corpus-en", "--vocab-size", "100"]),
    ("bench-bad-repeat", ["bench", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "0"]),
]

# What varies from machine to machine or run to run, each replaced by a name in angle brackets.
_MASKS = [
    (re.compile(r"^machine: .*$", re.M), "machine: <machine>"),  # CPUs, system, Python, commit
    (re.compile(r"\b[0-9a-f]{40}\b|\bcommit [0-9a-f]{7,12}(-dirty)?\b"), "<commit>"),
    (re.compile(r"~?[0-9][0-9,]*(\.[0-9]+)? ?(B|KB|MB|GB|TB|KiB|MiB|GiB)\b"), "<size>"),
    (re.compile(r"~?[0-9]+(\.[0-9]+)? ?(ms|s|min|h)\b"), "<time>"),
    (re.compile(r"\b[0-9]+(\.[0-9]+)?x (faster|slower)|within spread"), "<ratio>"),
    (re.compile(r"\b[0-9]+\.[0-9]+\b"), "<n>"),  # what is left with a decimal point: a measured figure
]


def mask(text: str, out_dir: str | None = None) -> str:
    """``text`` with what varies masked, and runs of spaces made one (a masked column's width varies).

    >>> mask("trained v6: 0.10s, peak 41.7 MB, wrote /tmp/x/vocab.json", "/tmp/x")
    'trained v6: <time>, peak <size>, wrote <out>/vocab.json\\n'
    """
    if out_dir:
        text = text.replace(out_dir, "<out>")
    for pattern, name in _MASKS:
        text = pattern.sub(name, text)
    return "\n".join(re.sub(r"(?<=\S) {2,}", " ", line).rstrip() for line in text.splitlines()) + "\n"


def _env() -> dict:
    # A fixed width for argparse, no colour, no progress bar: the text is the same on every terminal.
    return {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "PYTHON_COLORS": "0", "BPE_VIA_MAKE": ""}


def subcommands() -> list[list[str]]:
    """Every command line that has its own ``--help``: ``bpe``, each subcommand, and theirs (``data get``)."""
    import argparse

    from bpe.cli import build_parser

    found = []

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        found.append(prefix)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, [*prefix, name])

    walk(build_parser(), [])
    return found


_HELP_SCRIPT = """
import sys
from bpe.cli import main
for line in sys.stdin.read().splitlines():
    print("\\0" + line, flush=True)
    try:
        main([*line.split(), "--help"])
    except SystemExit:
        pass
    sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    """Each command line's ``--help``, all printed by one interpreter (``main`` is what ``python -m bpe`` runs)."""
    lines = [" ".join(argv) for argv in subcommands()]
    proc = subprocess.run([sys.executable, "-c", _HELP_SCRIPT], input="\n".join(lines) + "\n", cwd=REPO_ROOT,
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    shown = {}
    for block in proc.stdout.split("\0")[1:]:
        name, _, text = block.partition("\n")
        shown[name] = text
    assert list(shown) == lines
    return shown


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path.name}: make it with BPE_UPDATE_GOLDEN=1 (see this file's docstring)"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed (on purpose: BPE_UPDATE_GOLDEN=1)"


#: The Python the help files were recorded with: argparse lays help out a little differently from one
#: minor version to the next (3.13 joins an option's names and metavar otherwise), so elsewhere the
#: help is not compared; the runs below are.
RECORDED_PYTHON = GOLDEN / "python-version"


def test_every_help_is_as_recorded(helps):
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if UPDATE:
        RECORDED_PYTHON.write_text(here + "\n", encoding="utf-8")
    elif RECORDED_PYTHON.read_text(encoding="utf-8").strip() != here:
        pytest.skip(f"help recorded with Python {RECORDED_PYTHON.read_text().strip()}, this is {here}")
    for line, text in helps.items():
        check_golden("help-" + ("-".join(line.split()) or "bpe"), text)  # the same on every machine: unmasked


@pytest.mark.parametrize("name, argv", RUNS, ids=[name for name, _ in RUNS])
def test_run_output_is_as_recorded(name, argv, tmp_path):
    out_dir = str(tmp_path / "out")
    argv = [out_dir if arg == "OUT" else arg for arg in argv]
    tool = argv[0] == "-m"
    proc = subprocess.run([sys.executable, *([] if tool else ["-m", "bpe"]), *argv], cwd=REPO_ROOT, env=_env(),
                          capture_output=True, text=True, timeout=120)
    shown = (f"$ {'python' if tool else 'bpe'} {' '.join(argv)}\n[stdout]\n{proc.stdout}[stderr]\n{proc.stderr}"
             f"[exit {proc.returncode}]")
    check_golden(name, mask(shown, out_dir))


def test_no_golden_file_is_left_over(helps):
    """A subcommand removed takes its golden file with it."""
    expected = {"help-" + ("-".join(line.split()) or "bpe") for line in helps} | {name for name, _ in RUNS}
    if UPDATE:
        for path in GOLDEN.glob("*.txt"):
            if path.stem not in expected:
                path.unlink()
    assert {path.stem for path in GOLDEN.glob("*.txt")} == expected
