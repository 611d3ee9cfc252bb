"""tools/whole_process.py: a command timed as a whole process, its tree's peak memory sampled; the first call's
fixed cost timed inside one process; a peer that is not installed refused in one line."""

import sys

import pytest

from bpe.errors import BPEError
from tools import whole_process


def test_a_whole_process_is_timed_and_its_memory_sampled():
    run = whole_process.timed([sys.executable, "-c", "x = bytearray(50_000_000); import time; time.sleep(0.2)"],
                              env={})
    assert run["seconds"] > 0 and run["peak_tree_rss"] >= 50_000_000


def test_a_failed_command_is_one_line():
    with pytest.raises(BPEError, match=r"failed \(exit 3\)"):
        whole_process.timed([sys.executable, "-c", "import sys; sys.exit(3)"], env={})


def test_the_first_call_is_timed_against_the_second():
    figures = whole_process.first_call("v2")
    assert set(figures) == {"imports", "first", "second"} and all(value > 0 for value in figures.values())


def test_our_command_is_bpe_train_as_typed():
    argv = whole_process.ours(whole_process.FIRST_CALL_TEXT, 300, 2, "v9")
    assert argv[1:4] == ["-m", "bpe", "train"] and argv[-2:] == ["--variant", "v9"] and "--quiet" in argv


def test_a_missing_peer_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(whole_process, "find_spec", lambda name: None)
    assert whole_process.tool_main(whole_process.parser(), whole_process.run,
                                   ["--data", "corpus-en", "--peer", "gigabpe", "--repeat", "1"]) == 2
    assert capsys.readouterr().err == ("python -m tools.whole_process: error: gigabpe is not installed: "
                                       ".venv/bin/pip install -e '.[peers]'\n")
