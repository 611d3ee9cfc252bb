"""Every module imports on its own, in a fresh interpreter, and no two modules import each other.

A cycle hides until someone imports the "wrong" module first (a variant before ``bpe``, say); both
checks below catch it without relying on import order.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, project_modules

MODULES = project_modules()
MODULES_BY_PATH = {path: module for module, path in MODULES.items()}


@pytest.mark.parametrize("module", [m for m in MODULES if not m.endswith("__main__")])
def test_module_imports_on_its_own(module):
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def imports_of(path: Path) -> set[str]:
    """Project modules a file imports, at top level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative (``from .v2_inverted_index import Merger``): from this file's package
                package = MODULES_BY_PATH[path].split(".")
                if path.name != "__init__.py":
                    package.pop()
                base = ".".join(package[:len(package) - node.level + 1])
                module = f"{base}.{module}" if module else base
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in MODULES}


def test_no_import_cycles():
    graph = {module: imports_of(path) - {module} for module, path in MODULES.items()}
    # A package imports its own submodules by design (``bpe/__init__`` re-exports); an edge into a
    # package's ``__init__`` from inside that package is not a cycle of modules, so leave those out.
    for module, targets in graph.items():
        graph[module] = {t for t in targets if not module.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


#: The lab's folders import one way: a folder may import the ones listed for it, and nothing in the lab's
#: own shared modules (``bpe/lab/*.py``) imports a folder.  ``teach`` may use both others.
LAB_MAY_NOT_IMPORT = {"bpe.lab.judge": ("bpe.lab.measure", "bpe.lab.teach"),
                      "bpe.lab.measure": ("bpe.lab.teach",)}
LAB_FOLDERS = ("bpe.lab.judge", "bpe.lab.measure", "bpe.lab.teach")


def lab_imports_against_the_rule() -> list[str]:
    wrong = []
    for module, path in sorted(MODULES.items()):
        if not module.startswith("bpe.lab."):
            continue
        folder = next((f for f in LAB_FOLDERS if module == f or module.startswith(f + ".")), None)
        banned = LAB_MAY_NOT_IMPORT.get(folder, ()) if folder else LAB_FOLDERS
        for target in sorted(imports_of(path)):
            if any(target == b or target.startswith(b + ".") for b in banned):
                wrong.append(f"{module} imports {target}")
    return wrong


def test_the_lab_folders_import_one_way():
    """``judge`` imports no ``measure`` (a bench hands the judge its runner), ``measure`` no ``teach``, and
    the lab's shared modules no folder: read from the source, so a lazy import counts as much as one at the top."""
    assert lab_imports_against_the_rule() == []


def test_nothing_installed_imports_the_tools():
    """``tools/`` (the page-makers) is not installed: ``bpe`` and the rungs never import it, lazily or not."""
    wrong = [f"{module} imports {target}" for module, path in sorted(MODULES.items())
             if not module.startswith("tools") for target in sorted(imports_of(path)) if target.startswith("tools")]
    assert wrong == []


# --- The floors (docs/layout.md, "The floors: who imports whom") -----------------------------------------------

#: docs/layout.md's floors, as the rooms they hold, from the ground up: a folder of bpe/ (the lab's three folders
#: rooms of their own), a module at the top of bpe/, variants/ and tools/.
FLOOR_LINE = re.compile(r"^(\d+)\. (.*)$")
ROOM = re.compile(r"`((?:bpe|variants|tools)/[\w/]*?)(?:\.py)?`")


def floors_on_the_page() -> dict[str, int]:
    page = (REPO_ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    section = page[page.index("## The floors: who imports whom"):]
    section = section[:section.index("\n## ", 1)]
    return {room.rstrip("/"): int(match.group(1)) for match in map(FLOOR_LINE.match, section.splitlines()) if match
            for room in ROOM.findall(match.group(2))}


def room_of(module: str) -> str:
    """The room a module is in: its folder of bpe/ (the lab's folders on their own), the module itself at the top
    of bpe/, or variants/ or tools/ whole."""
    path = MODULES[module].relative_to(REPO_ROOT)
    parts = path.parts
    if parts[0] in ("variants", "tools"):
        return parts[0]
    if len(parts) == 2:
        return path.with_suffix("").as_posix()
    if parts[1] == "lab" and len(parts) > 3:
        return "/".join(parts[:3])
    return "/".join(parts[:-1])


def is_face(module: str) -> bool:
    """A package whose ``__init__.py`` holds no code (a docstring): importing it imports nothing."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return path.name == "__init__.py" and all(isinstance(node, ast.Expr) for node in tree.body)


def room_arrows() -> dict[tuple[str, str], str]:
    """(importer's room, imported room) -> one import that makes the arrow, for every arrow between rooms."""
    arrows = {}
    for module, path in sorted(MODULES.items()):
        for target in sorted(imports_of(path)):
            if is_face(target):
                continue
            ends = (room_of(module), room_of(target))
            if ends[0] != ends[1]:
                arrows.setdefault(ends, f"{module} imports {target}")
    return arrows


def test_every_room_is_on_a_floor_of_the_page():
    floors, rooms = floors_on_the_page(), {room_of(module) for module in MODULES}
    assert sorted(rooms - set(floors)) == []


def test_no_import_runs_back_up_a_floor():
    floors = floors_on_the_page()
    upward = [why for (importer, imported), why in room_arrows().items() if floors[imported] >= floors[importer]]
    assert upward == []
