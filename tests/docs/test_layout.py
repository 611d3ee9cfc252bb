"""docs/layout.md maps every module: a new file of `bpe/` or `variants/` is not done until it has its line.

The map ("The folders and their modules") has one entry per folder, a line starting ``- `folder/```;
every ``.py`` file of that folder must be named in it (as `` `name.py` ``).  Every file path the page
names (``bpe/...``, ``tests/...``, ``variants/...``) and every relative link must exist, so the page
cannot point at a module or test that moved.
"""

from __future__ import annotations

import re

from conftest import REPO_ROOT, SOURCE_FOLDERS

PAGE = REPO_ROOT / "docs" / "layout.md"
LAYOUT = PAGE.read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# A path in backquotes, as the page names files (a template such as `variants/vN_<idea>.py` does not match).
PATH = re.compile(r"`((?:bpe|tests|variants|benchmarks|tools|exercises|docs)/[\w/.-]+\.(?:py|pyx|md|json))`")


def map_entries() -> dict[str, str]:
    """folder (``bpe/training/``) -> the text of its entry in the map, sub-bullets included."""
    start = LAYOUT.index("\n## The folders and their modules\n")
    end = LAYOUT.index("\n## ", start + 1)
    entries: dict[str, str] = {}
    folder = None
    for line in LAYOUT[start:end].splitlines():
        match = re.match(r"^- `([\w/.-]+/)`", line)
        if match:
            folder = match.group(1)
            entries[folder] = ""
        elif not line.startswith("  "):  # an entry goes on in indented lines (and its sub-bullets)
            folder = None
        if folder is not None:
            entries[folder] += line + "\n"
    return entries


def test_every_module_is_in_the_map():
    entries = map_entries()
    missing = []
    for folder in sorted({path.parent for root in SOURCE_FOLDERS.values() for path in root.rglob("*.py")}):
        if "__pycache__" in folder.parts:
            continue
        key = folder.relative_to(REPO_ROOT).as_posix() + "/"
        assert key in entries, f"docs/layout.md's map has no entry for {key}"
        missing += [f"{key}{path.name}" for path in sorted(folder.glob("*.py"))
                    if f"`{path.name}`" not in entries[key]]
    assert not missing, f"modules missing from docs/layout.md's map: {missing}"


def test_every_file_it_names_exists():
    named = {path for path in PATH.findall(LAYOUT) if "vN" not in path}  # `docs/vN.md`: a new rung's page
    assert len(named) >= 20, named  # the page does name files: the check reads them
    gone = sorted(path for path in named if not (REPO_ROOT / path).exists())
    assert not gone, f"docs/layout.md names files that do not exist: {gone}"


def test_every_relative_link_resolves():
    for target in LINK.findall(LAYOUT):
        if "://" not in target:
            assert (PAGE.parent / target).exists(), f"docs/layout.md links {target}, which does not exist"
