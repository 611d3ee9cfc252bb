"""The README stays a screen or two that orients, and tests/README.md says where every module's tests are.

The README: the two commands in its first lines, both real make targets; one row per rung in its ladder
table; a map ("Where things live") naming every top-level folder git holds; links that resolve. The
module-by-module map is docs/layout.md's (tests/docs/test_layout.py).  tests/README.md: a line for every
test file, and every module either has its own test file (the naming rule written there) or is listed
under "Modules tested in other files".
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT, SOURCE_FOLDERS

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
TESTS_README = (REPO_ROOT / "tests" / "README.md").read_text(encoding="utf-8")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def test_the_readme_fits_two_screens():
    assert len(README.splitlines()) <= 120, "the README is meant to fit a screen or two: move detail to docs/"


def test_the_two_commands_come_first_and_are_make_targets():
    top = "\n".join(README.splitlines()[:20])
    block = re.search(r"```sh\n(.*?)\n```", top, re.S)
    assert block, "the README's first 20 lines hold no sh block with the two commands"
    commands = [line.split("#")[0].split() for line in block.group(1).splitlines()]
    assert [c[:2] for c in commands] == [["make", "bench"], ["make", "test"]]
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("bench", "test"):
        assert re.search(rf"^{target}:", makefile, re.M), f"the Makefile has no {target} target"


def test_the_ladder_table_has_a_row_per_rung():
    rows = re.findall(r"^\| (v\d+) \| `variants/(v\d+_\w+\.py)`", section(README, "The ladder"), re.M)
    files = sorted(p.name for p in (REPO_ROOT / "variants").glob("v*_*.py") if re.match(r"v\d+_", p.name))
    assert sorted(name for _, name in rows) == files
    assert [rung for rung, _ in rows] == [f"v{i}" for i in range(1, len(rows) + 1)]


def test_the_readme_says_what_corpus_en_is_where_it_first_names_it():
    """The data set of most examples: the CS336 assignment's train_bpe test corpus, its file and its source."""
    first = README.index("corpus-en")
    paragraph = README[README.rfind("\n\n", 0, first):README.find("\n\n", first)]
    for said in ("CS336 assignment's `train_bpe` test", "`tests/fixtures/corpus.en`", "`tests/fixtures/SOURCES`"):
        assert said in " ".join(paragraph.split()), paragraph
    assert (REPO_ROOT / "tests" / "fixtures" / "corpus.en").is_file()


@pytest.mark.skipif(shutil.which("git") is None or not (REPO_ROOT / ".git").exists(), reason="needs a git checkout")
def test_the_map_names_every_top_level_folder():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    folders = {path.split("/")[0] + "/" for path in tracked.splitlines() if "/" in path and not path.startswith(".")}
    named = set(re.findall(r"^- `([\w.-]+/)`", section(README, "Where things live"), re.M))
    assert folders - named == set(), f"the README's map (Where things live) does not name {sorted(folders - named)}"


def test_every_relative_link_resolves():
    for target in LINK.findall(README):
        if "://" not in target:
            assert (REPO_ROOT / target).exists(), f"README links {target}, which does not exist"


def test_the_pages_stay_linked():
    for page in ["docs/index.md", "docs/lab.md", "docs/peers.md", "docs/articles.md", "docs/data.md",
                 "docs/library.md", "docs/outputs.md", "docs/encoding.md", "docs/reliability.md",
                 "docs/layout.md", "tests/README.md"]:
        assert f"]({page}" in README, f"the README does not link {page}"


def test_each_package_docstring_names_its_modules():
    import ast

    for init in [*(REPO_ROOT / "bpe").glob("*/__init__.py"), *(REPO_ROOT / "bpe" / "lab").glob("*/__init__.py")]:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        names = [p.stem for p in init.parent.glob("*.py") if p.stem != "__init__"]
        names += [p.name for p in init.parent.iterdir() if (p / "__init__.py").exists()]  # its packages
        missing = sorted(name for name in names if f"``{name}``" not in doc)
        assert not missing, f"{init.relative_to(REPO_ROOT)}'s docstring does not name {missing}"


def test_every_test_file_has_its_line_in_tests_readme():
    tests = REPO_ROOT / "tests"
    named = [path.relative_to(tests).as_posix() for path in sorted(tests.rglob("test_*.py"))]
    missing = [name for name in named if f"`{name}`" not in TESTS_README]
    assert not missing, f"tests/README.md has no line for {missing}"


def own_test_files(module: str) -> list[str]:
    """Where tests/README.md's rule files a module's tests (relative to tests/): its own file, or the file of
    its sub-package when that is one tool (``bpe/lab/teach/walkthrough/``); none for a package's list."""
    parts = module.split("/")
    name = parts[-1].removesuffix(".py")
    if parts[0] == "variants":
        rung = re.match(r"(v\d+)_", name)
        return [f"variants/test_{rung.group(1)}.py"] if rung else []
    if name == "__main__" or (name == "__init__" and (len(parts) <= 3 or lists_only(REPO_ROOT / module))):
        return []  # `python -m bpe` (test_cli.py) and the packages' lists of their modules
    folders = parts[:-1] if parts[0] == "tools" else parts[1:-1]  # tests/tools/ for tools/, tests/X for bpe/X
    own = [] if name == "__init__" else ["/".join([*folders, f"test_{name}.py"])]
    return own + (["/".join([*folders[:-1], f"test_{folders[-1]}.py"])] if folders else [])


def lists_only(init) -> bool:
    """Whether a package's ``__init__.py`` holds nothing but its docstring (the list of its modules)."""
    import ast

    return len(ast.parse(init.read_text(encoding="utf-8")).body) <= 1


def test_every_module_has_its_test_file_or_says_where_its_tests_are():
    elsewhere = section(TESTS_README, "Modules tested in other files")
    tests = REPO_ROOT / "tests"
    unfiled = []
    for root in SOURCE_FOLDERS.values():
        for path in sorted(root.rglob("*.py")):
            module = path.relative_to(REPO_ROOT).as_posix()
            expected = own_test_files(module)
            if expected and not any((tests / name).exists() for name in expected) and f"`{module}`" not in elsewhere:
                unfiled.append(f"{module} (tests/{expected[0]})")
    assert not unfiled, ("modules with neither their own test file nor a line under tests/README.md's "
                         f"'Modules tested in other files': {unfiled}")
