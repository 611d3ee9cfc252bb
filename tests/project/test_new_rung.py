"""A rung is its file and its row: a new rung, ``v99`` (v2 under another name), added to a copy of the checkout
as ``variants/v99_copy.py`` and a row in the lab's table, is benched, traced, walked through, estimated and
reported with no other file edited.

The copy is the checkout's tracked files and its built compiled modules, run with the copy first on the path
(``bpe/variants`` there is a link to its ``variants/``, as the install maps it), so every import is the copy's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT

RUNG_FILE = """\"\"\"v99: v2 under another name, to show that a rung is its file and its row.\"\"\"

from .v2_inverted_index import Merger, count_pretokens  # noqa: F401 (the rung's two parts, as v2 has them)

IDEA = "v2 again, as a new rung would be added"
"""

ROW = """    "v99": Rung(CostModel("scan", 2.9e-7, 1.7e-6, 0.0, 150), None, _V2_COUNTS, None, "v2 again"),
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the checkout with the rung's file and its row, and nothing else changed."""
    root = tmp_path_factory.mktemp("checkout")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    built = [p.relative_to(REPO_ROOT) for folder in ("variants", "bpe") for p in (REPO_ROOT / folder).rglob("*.so")]
    for relative in [Path(name) for name in tracked.decode().split("\0") if name] + built:
        if (REPO_ROOT / relative).is_file():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / relative, root / relative)
    (root / "bpe" / "variants").symlink_to(root / "variants", target_is_directory=True)
    (root / "variants" / "v99_copy.py").write_text(RUNG_FILE, encoding="utf-8")
    table = root / "bpe" / "lab" / "rungs.py"
    text = table.read_text(encoding="utf-8")
    end = text.index("\n}\n", text.index("RUNGS: dict[str, Rung] = {"))
    table.write_text(text[:end + 1] + ROW + text[end + 1:], encoding="utf-8")
    return root


def bpe(tree: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree), "BPE_VIA_MAKE": ""}
    return subprocess.run([sys.executable, "-m", "bpe", *args], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_copy_is_the_one_imported(tree):
    done = subprocess.run([sys.executable, "-c", "import bpe, bpe.variants; from bpe import VARIANTS; "
                           "print(bpe.__file__, bpe.variants.__path__[0], list(VARIANTS)[-1])"],
                          cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    init, variants, last = done.stdout.split()
    assert Path(init).is_relative_to(tree) and Path(variants).resolve() == (tree / "variants").resolve()
    assert last == "v99"


def test_bench_runs_the_new_rung_and_checks_its_merges(tree):
    out = tree / "out" / "bench.json"
    done = bpe(tree, "bench", "--variant", "v2,v99", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "1",
               "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["verdicts"]["v99"]["verdict"] == "identical" and result["merges_identical"]
    assert result["variants"]["v99"]["runs"][0]["merges_sha256"] == result["variants"]["v2"]["runs"][0]["merges_sha256"]
    assert result["variants"]["v99"]["idea"] == "v2 again, as a new rung would be added"


def test_trace_runs_the_new_rung(tree):
    done = bpe(tree, "trace", "--variant", "v99", "--merges", "2")
    assert done.returncode == 0, done.stderr
    assert "merge 2" in done.stdout and "from pair_to_words[" in done.stdout


def test_the_walkthrough_counts_the_new_rung(tree):
    page = tree / "out" / "page.html"
    done = bpe(tree, "walkthrough", "--variant", "v2,v99", "--out", str(page))
    assert done.returncode == 0, done.stderr
    assert '"v99"' in page.read_text(encoding="utf-8")


def test_estimate_has_the_new_rungs_model(tree):
    out = tree / "out" / "estimate.json"
    done = bpe(tree, "estimate", "--variant", "v2,v99", "--data", "corpus-en", "--vocab-size", "300", "--json",
               str(out))
    assert done.returncode == 0, done.stderr
    estimates = json.loads(out.read_text())["variants"]
    assert estimates["v99"]["seconds"] == estimates["v2"]["seconds"]  # the same model, on the same data


def test_the_report_has_the_new_rungs_row(tree):
    folder = tree / "out" / "report"
    done = bpe(tree, "report", "--variant", "v2,v99", "--data", "corpus-en", "--vocab-size", "300", "--repeat", "1",
               "--no-scaling", "--out-dir", str(folder))
    assert done.returncode == 0, done.stderr
    assert "| v99 |" in (folder / "report.md").read_text(encoding="utf-8")
