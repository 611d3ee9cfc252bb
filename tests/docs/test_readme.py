"""The README orients: its map names every module, and every page it points to exists.

The map ("Where things live") has one entry per folder, a line starting ``- `folder/```; every
``.py`` file of that folder must be named in it (as `` `name.py` ``).  The pages the README's long
sections moved to must stay linked from it, and every relative link in it must resolve.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, SOURCE_FOLDERS

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def map_entries() -> dict[str, str]:
    """folder (``bpe/training/``) -> the text of its entry in the map, sub-bullets included."""
    entries: dict[str, str] = {}
    folder = None
    for line in section(README, "Where things live").splitlines():
        match = re.match(r"^- `([\w/.-]+/)`", line)
        if match:
            folder = match.group(1)
            entries[folder] = ""
        elif not line.startswith("  "):  # an entry goes on in indented lines (and its sub-bullets)
            folder = None
        if folder is not None:
            entries[folder] += line + "\n"
    return entries


def test_every_module_is_in_the_readme_map():
    entries = map_entries()
    missing = []
    for folder in sorted({path.parent for root in SOURCE_FOLDERS.values() for path in root.rglob("*.py")}):
        if "__pycache__" in folder.parts:
            continue
        key = folder.relative_to(REPO_ROOT).as_posix() + "/"
        assert key in entries, f"the README's map has no entry for {key}"
        missing += [f"{key}{path.name}" for path in sorted(folder.glob("*.py"))
                    if f"`{path.name}`" not in entries[key]]
    assert not missing, f"modules missing from the README's map (Where things live): {missing}"


def test_every_relative_link_resolves():
    for target in LINK.findall(README):
        if "://" not in target:
            assert (REPO_ROOT / target).exists(), f"README links {target}, which does not exist"


def test_the_moved_sections_stay_linked():
    for page in ["docs/index.md", "docs/lab.md", "docs/peers.md", "docs/data.md", "docs/library.md",
                 "docs/outputs.md", "docs/encoding.md", "docs/reliability.md", "tests/README.md"]:
        assert f"]({page}" in README, f"the README does not link {page}"


def test_each_package_docstring_names_its_modules():
    import ast

    for init in (REPO_ROOT / "bpe").glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        missing = [p.stem for p in sorted(init.parent.glob("*.py"))
                   if p.stem != "__init__" and f"``{p.stem}``" not in doc]
        assert not missing, f"{init.relative_to(REPO_ROOT)}'s docstring does not name {missing}"


def test_every_test_file_has_its_line_in_tests_readme():
    tests = REPO_ROOT / "tests"
    listed = (tests / "README.md").read_text(encoding="utf-8")
    named = [path.relative_to(tests).as_posix() for path in sorted(tests.rglob("test_*.py"))]
    missing = [name for name in named if f"`{name}`" not in listed]
    assert not missing, f"tests/README.md has no line for {missing}"
