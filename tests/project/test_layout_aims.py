"""The house's aims (docs/layout.md, "The aims, measured"): no file of ``bpe/`` over 400 lines, the first five
rungs short enough to read as lessons, and a rung's name in code only where the lab's table and the default's
list keep it, and in the tools whose subject is particular rungs.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO_ROOT

#: The longest file of bpe/ (code and text alike: .py, .pyx, .pxi, .h, .html).
MAX_BPE_LINES = 400
#: The longest of the first five rungs, each a lesson read top to bottom.
MAX_FIRST_RUNG_LINES = 120
#: A rung's name as code holds it: ``"v7"``, a whole string.
RUNG_NAME = re.compile(r"v[1-9][0-9]*")
#: Where a rung's name may be held in code: the lab's table and the default's list; and the tools whose subject
#: is particular rungs (the article series' steps, the ablations, the benchmark regimes), and a word of text
#: generated for the pre-tokenizer's kinds of text (``"v2"`` there is text, not a rung).
MAY_NAME_RUNGS = ("bpe/lab/rungs.py", "bpe/training/registry.py", "tools/reproduce_steps.py", "tools/reproduce.py",
                  "tools/ablation/", "tools/benchmarks/regimes.py", "tools/text_kinds.py")


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_file_of_bpe_is_over_400_lines():
    files = [p for p in (REPO_ROOT / "bpe").rglob("*") if p.is_file() and p.suffix in (".py", ".pyx", ".pxi", ".h")]
    assert len(files) > 50
    long = {str(p.relative_to(REPO_ROOT)): lines(p) for p in files if lines(p) > MAX_BPE_LINES}
    assert long == {}


def test_the_first_five_rungs_are_short():
    rungs = sorted((REPO_ROOT / "variants").glob("v[1-5]_*.py"))
    assert len(rungs) == 5
    long = {p.name: lines(p) for p in rungs if lines(p) > MAX_FIRST_RUNG_LINES}
    assert long == {}


def rung_names_in_code(path: Path) -> list[str]:
    """Each string constant of the file that is exactly a rung's name, outside docstrings: ``line: "v7"``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [f"{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            and RUNG_NAME.fullmatch(node.value)]


def test_a_rung_is_named_in_code_only_by_its_row_and_the_defaults():
    named = {}
    for folder in ("bpe", "tools"):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT).as_posix()
            if not relative.startswith(MAY_NAME_RUNGS):
                found = rung_names_in_code(path)
                if found:
                    named[relative] = found
    assert named == {}


def test_the_check_sees_a_rung_named_in_code(tmp_path):
    path = tmp_path / "tool.py"
    path.write_text('"""Names v7 in its docstring, which is prose."""\nif variant == "v7":\n    pass\n',
                    encoding="utf-8")
    assert rung_names_in_code(path) == ["2: 'v7'"]
