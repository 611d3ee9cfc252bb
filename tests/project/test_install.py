"""An installed wheel works with no checkout around it.

The wheel is built offline from a copy of the files ``pyproject.toml`` packs (no build isolation: the
dev extras bring a setuptools that builds wheels), and must hold every module of ``bpe/`` and
``variants/`` (installed as ``bpe.variants``), the shipped corpus and fixtures, and no top-level
``variants``, and v8's compiled merge where a C compiler built it.  It is then installed, without its
dependencies, into a fresh venv that borrows them from the running environment through a ``.pth`` line
(a ``.pth`` file in a folder named that way is
not run, so this checkout's editable install cannot stand in for a missing module); then ``bpe train``,
``bench`` and ``trace`` run from a folder outside the checkout, keeping their data in the user's cache folder
(``XDG_CACHE_HOME``), never in that folder.

Without a C compiler, ``pip install`` of a source folder (what a pip user types) goes on without the compiled
code, says so in one line (``setup.py``), and the installed ``bpe`` names the rung it runs instead, why, and
the pip command that rebuilds it from that folder; the command it names does.
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
BUILD_INPUTS = ["pyproject.toml", "setup.py", "README.md", "bpe", "variants", "corpora", "tests/fixtures"]
SHIPPED_DATA = ["bpe/corpora/gutenberg-sample.txt", "bpe/fixtures/corpus.en", "bpe/fixtures/tinystories_sample.txt",
                "bpe/lab/teach/walkthrough/page.html"]
#: Without a C compiler the wheel is built without v8's compiled merge, and still installs.
V8_UNBUILT = VARIANTS.module("v8").UNAVAILABLE is not None
V9_UNBUILT = VARIANTS.module("v9").UNAVAILABLE is not None


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)
    assert proc.returncode == 0, f"{argv} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


def copy_sources(src: Path) -> Path:
    """What the build reads, copied to ``src`` (a source folder as a pip user has it)."""
    for name in BUILD_INPUTS:
        if (REPO_ROOT / name).is_dir():
            # the checkout's build of v8 (the .c Cython wrote, the .so) stays behind: the wheel builds its own
            shutil.copytree(REPO_ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
        else:
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / name, src / name)
    return src


def build_wheel(tmp: Path, env: dict | None = None) -> Path:
    src = copy_sources(tmp / "src")
    code = "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))"
    proc = run([sys.executable, "-c", code, str(tmp / "dist")], cwd=src, env=env)
    return tmp / "dist" / proc.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def outside_env(tmp: Path) -> dict:
    """The environment of a command run outside the checkout: nothing pointing back into it, the user's cache
    folder in ``tmp``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BPE_DATA_DIR", "BPE_VIA_MAKE")}
    return {**env, "XDG_CACHE_HOME": str(tmp / "cache")}


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
                for module, path in project_modules().items() if not module.startswith("tools")}
    assert expected - names == set(), "modules missing from the wheel (pyproject.toml's [tool.setuptools] packages)"
    assert set(SHIPPED_DATA) <= names
    assert not any(name.startswith("variants/") for name in names), "variants installs as bpe.variants"
    assert not any(name.startswith("tools/") for name in names), "tools/ (the page-makers) is not installed"
    assert {name for name in names if name.endswith(".py")} == expected, "the wheel holds only the source tree"
    for module, unbuilt in (("_v8_merge", V8_UNBUILT), ("_v9_count", V9_UNBUILT)):
        compiled = [name for name in names
                    if name.startswith(f"bpe/variants/{module}") and name.endswith((".so", ".pyd"))]
        assert len(compiled) == (0 if unbuilt else 1), compiled



def test_every_source_folder_is_a_listed_package():
    """The wheel test above, without building: a new folder under bpe/ must be listed in pyproject.toml."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    listed = set(tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    for package, folder in SOURCE_FOLDERS.items():
        if package == "tools":  # run from a checkout, never installed (the wheel test checks it is left out)
            continue
        for init in folder.rglob("__init__.py"):
            name = ".".join([*package.split("."), *init.parent.relative_to(folder).parts])
            assert name in listed, f"{name} is not in pyproject.toml's [tool.setuptools] packages"


def test_the_installed_wheel_trains_outside_the_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    python, site = install(wheel, venv)

    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.txt").write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:30_000])
    env = outside_env(tmp_path)
    where = run([str(python), "-c", "import bpe, bpe.cs336, bpe.variants.v7_sharded; print(bpe.__file__)"],
                cwd=work, env=env).stdout
    assert Path(where.strip()).is_relative_to(site), where
    # no checkout around it: a wheel cannot be rebuilt, so a missing compiled rung names the source folder
    code = "from bpe.interface import IN_CHECKOUT, rebuild_hint; print(IN_CHECKOUT, rebuild_hint())"
    said = run([str(python), "-c", code], cwd=work, env=env).stdout.strip()
    assert said == ("False reinstall bpe-lab from its source folder: pip install --force-reinstall --no-deps "
                    "/path/to/bpe-lab")

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
    bench = run([bpe_cmd, "bench", "--variant", "v2", "--limit", "20KB", "--vocab-size", "300", "--repeat", "1",
                 "--json", "bench.json"], cwd=work, env=env)
    assert "gutenberg-sample" in bench.stdout
    # no git commit to name: the installed version instead, in the header and the result file
    assert ", bpe-lab 0.1.0 (installed, no git commit)\n" in bench.stdout and "commit None" not in bench.stdout
    result = json.loads((work / "bench.json").read_text())
    assert result["variants"]["v2"]["median"]["merges"] == 300 - 257
    assert result["machine"]["git_commit"] is None and result["machine"]["version"] == "0.1.0"
    trace = run([bpe_cmd, "trace", "--variant", "v2", "--merges", "1"], cwd=work, env=env).stdout
    assert "merge 1" in trace
    written = sorted(p.name for p in work.iterdir() if not p.name.startswith("."))
    assert written == ["bench.json", "tiny.txt", "tok"] + ([] if V8_UNBUILT else ["tok8"]) + (
        [] if V9_UNBUILT else ["tok9"])
    # the user's cache folder: where an installed bpe keeps data sets, here the reference merges a rung benched
    # alone is held to, said in one line as it is made
    cache = tmp_path / "cache" / "bpe-lab"
    assert [p.parent.name for p in cache.rglob("*.json")] == ["reference-merges"]
    assert (f"bpe-lab keeps its data sets and cached reference merges in {cache} (the user's cache folder: no "
            f"checkout around this install; BPE_DATA_DIR=DIR moves them)") in bench.stderr.splitlines()


def install_folder(src: Path, venv: Path, env: dict) -> subprocess.CompletedProcess:
    """``pip install -v SRC`` into a fresh venv, as a pip user installs a source folder: offline (its build
    tools, its dependencies and pip itself borrowed from the running environment through a ``.pth`` line)."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(site, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return run([str(python), "-m", "pip", "install", "-v", "--disable-pip-version-check", "--no-deps", "--no-index",
                "--no-build-isolation", str(src)], env=env)


@pytest.fixture(scope="module")
def compilerless(tmp_path_factory) -> dict:
    """bpe-lab installed from a source folder with CC=false (every compile fails), into a venv inside another
    project's git repository (a venv in the CS336 assignment's checkout, say)."""
    root = tmp_path_factory.mktemp("compilerless")
    run(["git", "init", "-q", str(root)])
    run(["git", "-C", str(root), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty",
         "-m", "another project"])
    src = copy_sources(root / "src")
    build = install_folder(src, root / "venv", {**os.environ, "CC": "false"})
    work = root / "work"
    work.mkdir()
    (work / "tiny.txt").write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:20_000])
    return {"root": root, "src": src, "build": build, "work": work, "env": outside_env(root),
            "bpe": str(root / "venv" / "bin" / "bpe"), "python": str(root / "venv" / "bin" / "python")}


def test_without_a_c_compiler_the_install_succeeds_and_says_why_and_how_to_rebuild(compilerless):
    """The build goes on without v8's compiled merge, v9's compiled counter, the encoder and v10's merge (all
    optional in pyproject.toml) and says so in one line; the installed bpe trains and benches with v6, each
    naming why in one line, with the pip command for this install (no Makefile here)."""
    c = compilerless
    site = run([c["python"], "-c", "import bpe; print(bpe.__file__)"], cwd=c["work"], env=c["env"]).stdout
    assert not [p for p in Path(site.strip()).parent.rglob("*") if p.suffix in (".so", ".pyd")]
    build = c["build"].stdout + c["build"].stderr  # pip -v: the build's lines
    said = [line.strip() for line in build.splitlines() if line.strip().startswith("bpe-lab: ")]
    assert said == ["bpe-lab: v8's compiled merge, v9's compiled counter, the compiled encoder and v10's compiled "
                    "merge are not built "
                    "(the C compiler false exited with status 1); bpe-lab works without them, slower (bpe train and "
                    "bench name the rung that runs instead), and a reinstall with a C compiler (gcc or clang) "
                    "builds them"]

    fix = f"then reinstall bpe-lab: pip install --force-reinstall --no-deps {c['src']}"
    lines = run([c["python"], "-c", "from bpe.variants import v8_compiled as v8, v9_counting_compiled as v9, "
                 "v10_threads_compact as v10; print(v8.UNAVAILABLE); print(v9.UNAVAILABLE); print(v10.UNAVAILABLE)"],
                cwd=c["work"], env=c["env"]).stdout.splitlines()
    assert lines[0].startswith("v8 is not built: its compiled merge needs a C compiler when bpe-lab is installed; "
                               "install gcc or clang") and lines[0].endswith(fix)
    assert lines[1].startswith("v9 and v8 are not built: their compiled counter and merge need")
    assert lines[1].endswith(fix)
    assert lines[2].startswith("v10, v9 and v8 are not built: their compiled merges and counter need")
    assert lines[2].endswith(fix)
    v8, v9, v10 = lines
    for variant, reason in (("v8", v8), ("v9", v9), ("v10", v10)):
        argv = [c["bpe"], "train", "--variant", variant, "--data", "tiny.txt", "--vocab-size", "300"]
        proc = subprocess.run(argv, cwd=c["work"], env=c["env"], capture_output=True, text=True, timeout=120)
        assert proc.returncode != 0 and proc.stderr.strip() == f"bpe: error: {reason}"

    # the default runs v6, and each header says so, with the first choice's reason, once
    train = run([c["bpe"], "train", "--data", "tiny.txt", "--vocab-size", "300", "--out", "tok"], cwd=c["work"],
                env=c["env"]).stdout.splitlines()
    assert train[0].startswith("bpe-lab train: v6 on tiny") and train[1] == f"default variant: v6 ({v10})"
    bench = run([c["bpe"], "bench", "--data", "tiny.txt", "--vocab-size", "300", "--repeat", "1"], cwd=c["work"],
                env=c["env"]).stdout.splitlines()
    assert f"default variant: v6 ({v10})" in bench
    # the venv sits in another project's git repository: its commit is not this code's
    assert bench[1].endswith(", bpe-lab 0.1.0 (installed, no git commit)"), bench[1]


@pytest.mark.slow
@pytest.mark.skipif(V9_UNBUILT, reason="no C compiler built v9 here")
def test_the_named_pip_command_builds_the_compiled_rungs(compilerless):
    """The command the not-built line names (run offline: no index, no build isolation), with a compiler this
    time, builds the compiled code: v10 is the default again and the header says no more."""
    c = compilerless
    v8 = run([c["python"], "-c", "from bpe.variants import v8_compiled; print(v8_compiled.UNAVAILABLE)"],
             cwd=c["work"], env=c["env"]).stdout.strip()
    named = v8.rsplit("then reinstall bpe-lab: ", 1)[1].split()
    assert named[:2] == ["pip", "install"]
    run([c["python"], "-m", *named, "--no-index", "--no-build-isolation", "--disable-pip-version-check", "-q"],
        env={k: v for k, v in os.environ.items() if k != "CC"})
    train = run([c["bpe"], "train", "--data", "tiny.txt", "--vocab-size", "300"], cwd=c["work"],
                env=c["env"]).stdout.splitlines()
    assert train[0].startswith("bpe-lab train: v10 on tiny") and not train[1].startswith("default variant")
