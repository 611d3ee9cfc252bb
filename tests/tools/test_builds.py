"""The compiled modules built again (tools/builds.py): the debug build's checks are really asked for, a
build is made again exactly when what made it changes, and the tests' switch to a debug build refuses, in one
line, a folder that cannot stand in for the rungs' own.  (`make test-debug` builds and runs it end to end.)"""

import subprocess
import sys

import pytest

from bpe import BPEError
from tools import builds


@pytest.mark.parametrize("name", builds.COMPILED)
def test_each_module_gets_every_check(name):
    text = (builds.REPO_ROOT / builds.COMPILED[name]).read_text(encoding="utf-8")
    first = builds.with_checks(text, name).partition("\n")[0]
    assert "boundscheck=True" in first and "initializedcheck=True" in first
    assert "wraparound=False" in first  # a negative index stays an IndexError under the bounds check
    assert builds.with_checks(text, name).partition("\n")[2] == text.partition("\n")[2]


def test_a_source_without_the_directive_is_refused():
    with pytest.raises(BPEError, match=r"m.pyx's first line has no boundscheck=False to turn on"):
        builds.with_checks("# cython: language_level=3\nx = 1\n", "m.pyx")
    with pytest.raises(BPEError, match="first line has no"):
        builds.with_checks('"""a docstring: boundscheck=False initializedcheck=False"""\n', "m.pyx")


def test_the_stamp_changes_with_what_makes_the_build():
    plain = builds.Build("_v8_merge_x", "_v8_merge.pyx")
    assert builds.stamp(plain) == builds.stamp(builds.Build("_v8_merge_x", "_v8_merge.pyx"))
    others = [builds.Build("_v8_merge_x", "_v8_merge.pyx", macros=(("V8_PREFETCH", "0"),)),
              builds.Build("_v8_merge_x", "_v8_merge.pyx", checks=True),
              builds.Build("_v8_merge_x", "_v8_merge.pyx", checks=True, asan=True),
              builds.Build("_v8_merge_y", "_v8_merge.pyx")]
    assert len({builds.stamp(one) for one in [plain, *others]}) == 5


def test_a_module_lies_under_its_package_folders(tmp_path):
    path = builds.module_path(tmp_path, builds.Build("bpe.variants._v8_merge", "variants/_v8_merge.pyx"))
    assert path.parent == builds.debug_folder(tmp_path) / "bpe" / "variants" and path.name.startswith("_v8_merge.")
    assert not builds.is_built(tmp_path, builds.Build("bpe.variants._v8_merge", "variants/_v8_merge.pyx"))


def _use(folder, first=""):
    code = f"{first}from tools.builds import use_compiled_from; use_compiled_from({str(folder)!r})"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_a_folder_without_the_modules_is_refused_in_one_line(tmp_path):
    done = _use(tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"bpe.errors.BPEError: no _v8_merge, _v9_count, _encoder, _v10_merge in {tmp_path}: build it first "
        "(python -m tools.builds)")


def test_a_module_imported_before_the_switch_is_refused(tmp_path):
    done = _use(tmp_path, "import bpe.variants._v8_merge; ")
    if "ModuleNotFoundError" in done.stderr:
        pytest.skip("v8 is not built here")
    assert done.stderr.strip().splitlines()[-1] == (
        f"bpe.errors.BPEError: _v8_merge imported before the build in {tmp_path} could stand in for it")
