"""Getting started (bpe/dependencies.py): a Python without the dependencies gets one clear line with the fix;
one whose memory (an address-space limit) is too small for them is told that, not that a package is missing."""

from __future__ import annotations

import re
import resource
import subprocess
import sys

import pytest

from conftest import HANG_GUARD_SECONDS, REPO_ROOT, child_env

# Makes `import regex` fail in the child, as in a Python where the package was never installed.
_NO_REGEX = """
import runpy, sys
class _NoRegex:
    def find_spec(self, name, path=None, target=None):
        if name == "regex" or name.startswith("regex."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.modules.pop("regex", None)
sys.meta_path.insert(0, _NoRegex())
sys.argv = ["bpe", "--help"]
runpy.run_module("bpe", run_name="__main__", alter_sys=True)
"""


def address_space(mib: int | None):
    """A ``preexec_fn`` that limits the child's address space to ``mib`` MiB (None: no limit)."""
    def limit() -> None:
        if mib is not None:
            resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return limit


def run_bpe(args: list[str], mib: int | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=child_env(**env), capture_output=True,
                          text=True, preexec_fn=address_space(mib), timeout=HANG_GUARD_SECONDS)


@pytest.mark.parametrize("mib", [None, 200], ids=["no limit", "under a limit"])
def test_missing_dependency_is_one_line_with_the_fix(mib):
    """Under a limit near the need (one OpenBLAS thread: about 120 MiB) the import is tried in a copy of the
    process first: a module missing there is still called missing."""
    proc = run_bpe(["-c", _NO_REGEX], mib, OPENBLAS_NUM_THREADS="1")
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("bpe: error: ") and "'regex'" in lines[0] and "'tqdm'" not in lines[0]
    assert ".venv/bin/bpe" in lines[0] and "pip install -e ." in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_runs_with_every_dependency():
    proc = run_bpe(["-m", "bpe", "--help"])
    assert proc.returncode == 0 and "train" in proc.stdout


#: Address-space limits from below what numpy's libraries alone need (about 40 MiB on top of the
#: interpreter's 15) to near what this machine needs with OpenBLAS's buffers: importing numpy fails at each
#: here, in one of three ways (a library not mapped, MemoryError, OpenBLAS ending the process).
LIMITS_MIB = [30, 60, 90, 120]
TRAIN = ["-m", "bpe", "train", "--variant", "v2", "--data", "corpus-en", "--vocab-size", "300", "--quiet"]
NOT_ENOUGH = re.compile(r"bpe: error: not enough memory to import (\w+): the address-space limit is (\d+) MiB "
                        r"\(ulimit -v (\d+)\) and bpe-lab needs about (\d+) MiB to start; raise the limit "
                        r"\(ulimit -v (\d+)\) or lift it\n")


def assert_works_or_one_line(proc: subprocess.CompletedProcess, mib: int, works: str) -> None:
    """Under ``mib`` MiB the command either works (``works`` on stdout) or ends with one line: the memory
    line naming that limit, or another ``bpe: error:``; never a traceback, OpenBLAS's line, or 'lacks'."""
    if proc.returncode == 0:
        assert works in proc.stdout and proc.stderr == "", proc.stderr
        return
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("bpe: error: ") and "lacks the package" not in proc.stderr, proc.stderr
    said = NOT_ENOUGH.fullmatch(proc.stderr)
    if said:
        assert said[1] in ("regex", "tqdm", "numpy") and int(said[2]) == mib and int(said[3]) == mib * 1024
        assert int(said[4]) > mib and int(said[5]) == int(said[4]) * 1024


@pytest.mark.parametrize("mib", LIMITS_MIB)
def test_an_address_space_limit_is_one_line_or_no_problem(mib):
    assert_works_or_one_line(run_bpe(["-m", "bpe", "--help"], mib), mib, "train")
    assert_works_or_one_line(run_bpe(TRAIN, mib), mib, "trained v2")


def test_too_little_address_space_for_numpy_names_the_need_and_the_need_is_enough():
    """Below what numpy's libraries alone take, the import fails for memory wherever this runs: the line
    says so, and at the limit it names the command starts and trains.  OpenBLAS's threads are held to two
    (one where there is one core), so the need checked is the same on any machine."""
    two_threads = {"OPENBLAS_NUM_THREADS": "2"}
    proc = run_bpe(["-m", "bpe", "--help"], LIMITS_MIB[0], **two_threads)
    said = NOT_ENOUGH.fullmatch(proc.stderr)
    assert said and proc.returncode == 2 and proc.stdout == "", proc.stderr
    needed = int(said[4])
    started = run_bpe(["-m", "bpe", "--help"], needed, **two_threads)
    assert started.returncode == 0 and "train" in started.stdout, started.stderr
    assert_works_or_one_line(run_bpe(TRAIN, needed, **two_threads), needed, "trained v2")


def test_a_loader_short_of_memory_is_told_from_a_missing_module():
    from bpe.dependencies import _for_memory

    mapped = ImportError("libscipy_openblas64_.so: failed to map segment from shared object")
    wrapped = ImportError("Importing the numpy C-extensions failed.")
    wrapped.__cause__ = mapped
    assert _for_memory(wrapped, limit=64 << 20) and not _for_memory(wrapped, limit=None)
    assert _for_memory(ImportError("x"), limit=None) is False
    with_memory_error = ImportError("x")
    with_memory_error.__context__ = MemoryError()
    assert _for_memory(with_memory_error, limit=None)
    tls = ImportError("libgomp.so.1: cannot allocate memory in static TLS block")
    assert not _for_memory(tls, limit=64 << 20)  # a full TLS block, not a lack of memory
    assert not _for_memory(ModuleNotFoundError("No module named 'numpy'"), limit=64 << 20)
