"""An installed wheel works with no checkout around it.

The wheel is built offline from a copy of the files ``pyproject.toml`` packs (no build isolation: the
dev extras bring a setuptools that builds wheels), and must hold every module of ``bpe/`` and
``variants/`` (installed as ``bpe.variants``), the shipped corpus and fixtures, and no top-level
``variants``, and v8's compiled merge where a C compiler built it.  It is then installed, without its dependencies, into a fresh venv that borrows them
from the running environment through a ``.pth`` line (a ``.pth`` file in a folder named that way is
not run, so this checkout's editable install cannot stand in for a missing module); then ``bpe train``,
``bench`` and ``trace`` run from a folder outside the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from bpe.training.registry import VARIANTS
from conftest import REPO_ROOT, SOURCE_FOLDERS, project_modules

#: What the build reads: pyproject.toml, the readme it names, and the folders it packs.
BUILD_INPUTS = ["pyproject.toml", "README.md", "bpe", "variants", "corpora", "tests/fixtures"]
SHIPPED_DATA = ["bpe/corpora/gutenberg-sample.txt", "bpe/fixtures/corpus.en", "bpe/fixtures/tinystories_sample.txt",
                "bpe/lab/teach/walkthrough/page.html"]
#: Without a C compiler the wheel is built without v8's compiled merge, and still installs.
V8_UNBUILT = VARIANTS.module("v8").UNAVAILABLE is not None
V9_UNBUILT = VARIANTS.module("v9").UNAVAILABLE is not None


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


def build_wheel(tmp: Path, env: dict | None = None) -> Path:
    src = tmp / "src"
    for name in BUILD_INPUTS:
        if (REPO_ROOT / name).is_dir():
            # the checkout's build of v8 (the .c Cython wrote, the .so) stays behind: the wheel builds its own
            shutil.copytree(REPO_ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / name, src / name)
    code = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    proc = run([sys.executable, "-c", code, str(tmp / "dist")], cwd=src, env=env)
    return tmp / "dist" / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def install(wheel: Path, venv: Path) -> tuple[Path, str]:
    """A fresh venv with ``wheel`` installed, its dependencies borrowed from the running environment."""
    run([sys.executable, "-m", "venv", str(venv)])  # its pip comes from the standard library (ensurepip): offline
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    # the dependencies (regex, tqdm, numpy) come from the running environment: the test stays offline
    Path(site, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-index",
         str(wheel)])
    return python, site


def test_the_wheel_holds_every_module_and_the_shipped_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {"/".join(module.split(".")) + ("/__init__.py" if path.name == "__init__.py" else ".py")
                for module, path in project_modules().items()}
    assert expected - names == set(), "modules missing from the wheel (pyproject.toml's [tool.setuptools] packages)"
    assert set(SHIPPED_DATA) <= names
    assert not any(name.startswith("variants/") for name in names), "variants installs as bpe.variants"
    assert {name for name in names if name.endswith(".py")} == expected, "the wheel holds only the source tree"
    for module, unbuilt in (("_v8_merge", V8_UNBUILT), ("_v9_count", V9_UNBUILT)):
        compiled = [name for name in names if name.startswith(f"bpe/variants/{module}") and name.endswith((".so", ".pyd"))]
        assert len(compiled) == (0 if unbuilt else 1), compiled



def test_every_source_folder_is_a_listed_package():
    """The wheel test above, without building: a new folder under bpe/ must be listed in pyproject.toml."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    listed = set(tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    for package, folder in SOURCE_FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            name = ".".join([*package.split("."), *init.parent.relative_to(folder).parts])
            assert name in listed, f"{name} is not in pyproject.toml's [tool.setuptools] packages"


def test_the_installed_wheel_trains_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    python, site = install(wheel, venv)

    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.txt").write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:30_000])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BPE_DATA_DIR")}
    where = run([str(python), "-c", "import bpe, bpe.cs336, bpe.variants.v7_sharded; print(bpe.__file__)"],
                cwd=work, env=env).stdout
    assert Path(where.strip()).is_relative_to(site), where

    bpe_cmd = str(venv / "bin" / "bpe")
    run([bpe_cmd, "train", "--variant", "v5", "--data", "tiny.txt", "--vocab-size", "300", "--out", "tok"],
        cwd=work, env=env)
    from bpe import train_bpe
    from bpe.io.outputs import load_tokenizer

    _, merges = train_bpe(work / "tiny.txt", 300, ["<|endoftext|>"], variant="v2")
    assert load_tokenizer(work / "tok").merges == merges
    if not V8_UNBUILT:  # the wheel's own build of the compiled merge
        run([bpe_cmd, "train", "--variant", "v8", "--data", "tiny.txt", "--vocab-size", "300", "--out", "tok8"],
            cwd=work, env=env)
        assert load_tokenizer(work / "tok8").merges == merges
    if not V9_UNBUILT:  # and of the compiled counter, with the scanner it includes
        run([bpe_cmd, "train", "--variant", "v9", "--data", "tiny.txt", "--vocab-size", "300", "--out", "tok9"],
            cwd=work, env=env)
        assert load_tokenizer(work / "tok9").merges == merges

    # the shipped corpus, named by its data set name, comes from the package data
    out = run([bpe_cmd, "bench", "--variant", "v2", "--limit", "20KB", "--vocab-size", "300", "--repeat", "1",
               "--json", "bench.json"], cwd=work, env=env).stdout
    assert "gutenberg-sample" in out
    assert json.loads((work / "bench.json").read_text())["variants"]["v2"]["median"]["merges"] == 300 - 257
    trace = run([bpe_cmd, "trace", "--variant", "v2", "--merges", "1"], cwd=work, env=env).stdout
    assert "merge 1" in trace
    written = sorted(p.name for p in work.iterdir() if not p.name.startswith("."))
    assert written == ["bench.json", "data", "tiny.txt", "tok"] + ([] if V8_UNBUILT else ["tok8"]) + (
        [] if V9_UNBUILT else ["tok9"])
    # data/: where an installed bpe keeps data sets, here the reference merges a rung benched alone is held to
    assert [p.parent.name for p in (work / "data").rglob("*.json")] == ["reference-merges"]


def test_without_a_c_compiler_the_install_succeeds_and_v8_says_why(tmp_path):
    """CC=false: every compile fails.  The build goes on without v8's compiled merge and v9's compiled counter
    (both optional in pyproject.toml); the installed bpe trains with the default, v6, and names each compiled
    rung's absence in one line."""
    env = {**os.environ, "CC": "false"}
    wheel = build_wheel(tmp_path / "build", env=env)
    assert not [name for name in zipfile.ZipFile(wheel).namelist() if name.endswith((".so", ".pyd"))]
    venv = tmp_path / "venv"
    install(wheel, venv)
    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.txt").write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:20_000])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BPE_DATA_DIR")}
    bpe_cmd = str(venv / "bin" / "bpe")
    proc = subprocess.run([bpe_cmd, "train", "--variant", "v8", "--data", "tiny.txt", "--vocab-size", "300"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    from bpe.variants.v8_compiled import NOT_BUILT
    from bpe.variants.v9_counting_compiled import NOT_BUILT as V9_NOT_BUILT

    assert proc.returncode != 0 and proc.stderr.strip() == f"bpe: error: {NOT_BUILT}"
    proc = subprocess.run([bpe_cmd, "train", "--variant", "v9", "--data", "tiny.txt", "--vocab-size", "300"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and proc.stderr.strip() == f"bpe: error: {V9_NOT_BUILT}"
    out = run([bpe_cmd, "train", "--data", "tiny.txt", "--vocab-size", "300", "--out", "tok"], cwd=work, env=env)
    assert "bpe-lab train: v6 on tiny" in out.stdout  # the default without v8: the fastest in one process
