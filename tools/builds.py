"""The compiled modules built again, beside the rungs' own, into ``out/`` (the rungs' build is not touched):
a debug build for the tests, and v8's merge with one trick off for its ablation.

* The debug build (``python -m tools.builds``, ``make test-debug``): v8's merge, v9's counter and the
  encoder with Cython's ``boundscheck`` and ``initializedcheck`` on and C's ``assert`` kept (``-UNDEBUG``),
  optionally with AddressSanitizer (``--asan``).  ``BPE_COMPILED_FROM`` names its folder to the tests
  (``tests/conftest.py`` calls :func:`use_compiled_from`), so the compiled rungs' tests run against it.
  ``wraparound`` stays off: with bounds checked, a negative index is then an ``IndexError``, where
  Python's wrapping would read the end of the array without a word.  Cython's checks cover memoryviews
  and typed lists, which these modules index little: most of their arrays are raw C pointers, which only
  AddressSanitizer watches (a read or write past a block's end is caught where it happens).
* v8 with a trick off (:func:`build`, from :mod:`tools.ablation.v8`): the same source with one
  of ``variants/_v8_tricks.h``'s switches set to 0, under a module name of its own.

Both compile a checkout's sources (``variants/``, and what they include from ``bpe/``: an installed wheel holds no
``.pyx``) with setuptools and Cython,
as ``pip install`` builds the rungs, with the same compiler and flags: a build here differs from the rung
only in what it was asked to change.  A build is kept in its folder with a stamp of what made it (the
sources' bytes, the settings, Cython's and Python's versions) and made again only when that changes.

Example: ``python -m tools.builds --asan -- -q tests/variants/test_v8.py`` (what ``make test-debug`` runs).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError

#: The folders of the checkout's compiled sources: the ``.pyx``, what they include, the headers.
SOURCE_FOLDERS = tuple(REPO_ROOT / folder for folder in ("variants", "bpe/io", "bpe/split", "bpe/running"))
#: The compiled modules of the package, each from its ``.pyx`` (a path from the checkout's root).
COMPILED = {"bpe.variants._v8_merge": "variants/_v8_merge.pyx", "bpe.variants._v9_count": "variants/_v9_count.pyx",
            "bpe.io._encoder": "bpe/io/_encoder.pyx", "bpe.variants._v10_merge": "variants/_v10_merge.pyx"}
#: Where the debug build goes, and the folder of its modules (``BPE_COMPILED_FROM``).
DEBUG_DIR = REPO_ROOT / "out" / "debug-build"
#: The directives the debug build turns on in each ``.pyx``'s ``# cython:`` line (set there, a directive
#: cannot be overridden from outside, so the build compiles a copy with the line rewritten).
CHECKS = {"boundscheck=False": "boundscheck=True", "initializedcheck=False": "initializedcheck=True"}
#: AddressSanitizer's flags, to compile and to link.
ASAN_FLAGS = ["-fsanitize=address", "-fno-omit-frame-pointer"]


@dataclass(frozen=True)
class Build:
    """One compiled module to build: its full name, the ``.pyx`` it is made from (a path from the checkout's
    root), C macros (``("V8_PREFETCH", "0")``), and for a debug build the checks and AddressSanitizer."""

    name: str
    source: str
    macros: tuple[tuple[str, str], ...] = ()
    checks: bool = False
    asan: bool = False

    @property
    def leaf(self) -> str:
        return self.name.rpartition(".")[2]


def _needs_checkout() -> None:
    if not (REPO_ROOT / COMPILED["bpe.variants._v8_merge"]).is_file():
        raise BPEError(f"no {REPO_ROOT / COMPILED['bpe.variants._v8_merge']}: building the compiled modules again "
                       "needs a checkout of bpe-lab (git clone), not an installed wheel")


def _sources() -> list[Path]:
    """Every file a build reads: the ``.pyx``, the scanner and parts they include, the headers."""
    return sorted(path for folder in SOURCE_FOLDERS for pattern in ("_*.pyx", "_*.pxi", "_*.h")
                  for path in folder.glob(pattern))


def stamp(one: Build) -> str:
    """What made a build: its settings, the sources' bytes, Cython's, Python's and the compiler's settings."""
    import Cython  # noqa: PLC0415 (an optional dependency: the dev extra)

    digest = hashlib.sha256(json.dumps([asdict(one), Cython.__version__, sys.version,
                                        sysconfig.get_config_var("CC"), sysconfig.get_config_var("CFLAGS")])
                            .encode())
    for path in _sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def module_path(where: Path, one: Build) -> Path:
    """Where the module of ``one`` lies once built under ``where``: ``lib/`` and its package's folders."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    return where / "lib" / Path(*one.name.split(".")[:-1]) / f"{one.leaf}{suffix}"


def _stamp_path(where: Path, one: Build) -> Path:
    return where / "stamps" / f"{one.name}.sha256"


def is_built(where: Path, one: Build) -> bool:
    stamp_file = _stamp_path(where, one)
    return (module_path(where, one).is_file() and stamp_file.is_file()
            and stamp_file.read_text().strip() == stamp(one))


def build(builds: Sequence[Build], where: Path, log=None) -> list[Path]:
    """Build each of ``builds`` into ``where`` (unless already built there from the same stamp), two at a time
    on two cores or more; the modules' paths, in order.  The compiler's lines are shown only on a failure, a
    :class:`BPEError` with their end."""
    _needs_checkout()
    try:
        import Cython  # noqa: F401, PLC0415 (an optional dependency: the dev extras, setuptools and Cython)
    except ImportError:
        raise BPEError("building the compiled modules again needs Cython: install the dev extras "
                       "(pip install -e '.[dev]', as make venv does)") from None
    where = Path(where)
    todo = [one for one in builds if not is_built(where, one)]
    if todo:
        print(f"building {len(todo)} compiled module(s) into {where} ({', '.join(one.name for one in todo)}; "
              f"about {15 * len(todo) // min(2, os.cpu_count() or 1)} s)", file=log or sys.stderr, flush=True)
        spec = json.dumps({"where": str(where), "builds": [asdict(one) for one in todo]})
        # In a child: the compiler writes to its stdout and stderr, kept here and shown only on a failure.
        done = subprocess.run([sys.executable, "-c", "import sys; from tools.builds import _build_here; "
                               "_build_here(sys.stdin.read())"], input=spec, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BPEError(f"building {', '.join(one.name for one in todo)} failed (a C compiler is needed: "
                           f"apt-get install gcc); the build's last lines:\n{tail}")
        for one in todo:
            _stamp_path(where, one).parent.mkdir(parents=True, exist_ok=True)
            _stamp_path(where, one).write_text(stamp(one) + "\n")
    return [module_path(where, one) for one in builds]



def built_module(one: Build, where: Path):
    """The module of ``one``, built into ``where`` if it is not yet, imported once under its own name (a second
    call gives the same module: a compiled module cannot be loaded twice)."""
    path, = build([one], where)
    module = sys.modules.get(one.name)
    if module is None:
        spec = importlib.util.spec_from_file_location(one.name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[one.name] = module
    return module

def with_checks(text: str, name: str) -> str:
    """A ``.pyx``'s text with :data:`CHECKS` turned on in its ``# cython:`` line, or a :class:`BPEError` where
    the line lacks one (the build would otherwise run without the check it was asked for).

    >>> with_checks("# cython: boundscheck=False, wraparound=False, initializedcheck=False\\nx = 1\\n", "m.pyx")
    '# cython: boundscheck=True, wraparound=False, initializedcheck=True\\nx = 1\\n'
    """
    first, newline, rest = text.partition("\n")
    for off, on in CHECKS.items():
        if not first.startswith("# cython:") or off not in first:
            raise BPEError(f"{name}'s first line has no {off} to turn on: {first!r}")
        first = first.replace(off, on)
    return first + newline + rest


def _build_here(spec: str) -> None:
    """The child's part of :func:`build`: copy each module's sources into a folder of its own (so that each
    compiles to a C file of its own, and a debug build's ``# cython:`` line can be rewritten), cythonize them
    and compile them with setuptools' ``build_ext``."""
    # the build child's own imports, of the dev extras (optional dependencies)
    from Cython.Build import cythonize  # noqa: PLC0415
    from setuptools import Distribution, Extension  # noqa: PLC0415

    spec = json.loads(spec)
    where = Path(spec["where"])
    extensions = []
    for entry in spec["builds"]:
        one = Build(**{**entry, "macros": tuple(map(tuple, entry["macros"]))})
        folder = where / "src" / one.name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for path in _sources():  # side by side: each include and header found by its name, as include-dirs find it
            if path.suffix != ".pyx":
                shutil.copy(path, folder / path.name)
        source = Path(one.source).name
        text = (REPO_ROOT / one.source).read_text(encoding="utf-8")
        (folder / source).write_text(with_checks(text, source) if one.checks else text, encoding="utf-8")
        flags = (["-UNDEBUG"] if one.checks else []) + (ASAN_FLAGS if one.asan else [])
        extensions.append(Extension(one.name, [str(folder / source)], include_dirs=[str(folder)],
                                    define_macros=list(one.macros), extra_compile_args=flags,
                                    extra_link_args=ASAN_FLAGS if one.asan else []))
    jobs = min(2, os.cpu_count() or 1)
    distribution = Distribution({"ext_modules": cythonize(extensions, nthreads=jobs, quiet=True, force=True)})
    command = distribution.get_command_obj("build_ext")
    command.build_lib, command.build_temp = str(where / "lib"), str(where / "temp")
    command.parallel = jobs
    command.force = True
    command.ensure_finalized()
    command.run()


# --- the debug build ----------------------------------------------------------------------------------

def debug_builds(asan: bool = False) -> list[Build]:
    """The package's compiled modules, each with the checks on (and AddressSanitizer with ``asan``)."""
    return [Build(name, source, checks=True, asan=asan) for name, source in COMPILED.items()]


def debug_folder(where: Path = DEBUG_DIR) -> Path:
    """The folder of a debug build's package (its modules under ``bpe/``): what ``BPE_COMPILED_FROM`` names."""
    return where / "lib"


def asan_runtime() -> str:
    """AddressSanitizer's runtime, which must be loaded first (``LD_PRELOAD``) in a Python not built with it."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    try:
        found = subprocess.run([compiler, "-print-file-name=libasan.so"], capture_output=True,
                               text=True).stdout.strip()
    except OSError:
        found = ""
    if not found or not Path(found).is_file():
        raise BPEError(f"{compiler} has no AddressSanitizer runtime (libasan.so): install it "
                       "(apt-get install libasan8, or gcc's package), or build without --asan")
    return found


def use_compiled_from(folder: str | Path) -> None:
    """Import the package's compiled modules from ``folder`` (a debug build's ``lib/``, holding ``bpe/...``) in
    this process, in place of the installed ones: each module's folder goes first on its package's path.  One
    line, and nothing imported, where a module is not there or one was imported already."""
    folder = Path(folder).resolve()
    already = [_leaf(name) for name in COMPILED if name in sys.modules]
    if already:
        raise BPEError(f"{', '.join(already)} imported before the build in {folder} could stand in for it")
    missing = [_leaf(name) for name in COMPILED if not any(_built_folder(folder, name).glob(f"{_leaf(name)}.*.so"))]
    if missing:
        raise BPEError(f"no {', '.join(missing)} in {folder}: build it first (python -m tools.builds)")
    for name in COMPILED:
        package = importlib.import_module(name.rpartition(".")[0])
        if str(_built_folder(folder, name)) not in package.__path__:
            package.__path__.insert(0, str(_built_folder(folder, name)))
        module = importlib.import_module(name)
        if Path(module.__file__).resolve().parent != _built_folder(folder, name):
            raise BPEError(f"{name} came from {module.__file__}, not from {folder}")


def _leaf(name: str) -> str:
    return name.rpartition(".")[2]


def _built_folder(lib: Path, name: str) -> Path:
    """Where a build under ``lib`` holds the module ``name``: its package's folders."""
    return lib.joinpath(*name.split(".")[:-1])


def debug_environment(where: Path, asan: bool) -> dict[str, str]:
    """The variables a Python process needs to run against the debug build in ``where``."""
    env = {"BPE_COMPILED_FROM": str(debug_folder(where))}
    if asan:
        # Loaded first, as a Python not built with it requires; Python's own allocations, kept to its exit
        # by design, are not leaks worth a report.
        env.update(LD_PRELOAD=asan_runtime(), ASAN_OPTIONS="detect_leaks=0")
    return env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.builds", description=(
        "Build v8's merge, v9's counter and the encoder with Cython's bounds checks and C asserts on, into "
        "out/debug-build/ (the rungs' own build is not touched), then run pytest with the arguments given "
        "against that build; without arguments, print the variables that make a process use it."))
    parser.add_argument("--asan", action="store_true", help="with AddressSanitizer too")
    parser.add_argument("--out", default=str(DEBUG_DIR), help="where to build (default out/debug-build/)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="pytest's arguments (after --)")
    args = parser.parse_args(argv)
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    try:
        where = Path(args.out) / ("asan" if args.asan else "checks")
        build(debug_builds(args.asan), where)
        env = debug_environment(where, args.asan)
    except BPEError as exc:
        print(f"builds: error: {exc}", file=sys.stderr)
        return 2
    if not pytest_args:
        print("\n".join(f"{name}={value}" for name, value in env.items()))
        return 0
    print(f"running pytest {' '.join(pytest_args)} against the debug build in {where}", file=sys.stderr,
          flush=True)
    return subprocess.run([sys.executable, "-u", "-m", "pytest", *pytest_args],
                          env={**os.environ, **env}).returncode


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C: the build's or pytest's child has stopped too (one process group)
        print("builds: interrupted", file=sys.stderr)
        sys.exit(130)
