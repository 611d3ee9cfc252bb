"""Where a result goes (bpe/lab/publish.py): out/ by default, the committed place with --publish (refused
from a tree with uncommitted code), an explicit path over both."""

from pathlib import Path

import pytest

from bpe.errors import BPEError
from bpe.lab import runinfo
from bpe.lab.publish import resolve_out

COMMITTED, DEFAULT = Path("docs/result.json"), Path("out/result.json")


def test_the_default_the_committed_place_and_an_explicit_path(monkeypatch):
    monkeypatch.setattr(runinfo, "git_commit", lambda exclude=(): "abc1234")
    assert resolve_out(False, None, COMMITTED, DEFAULT, "bpe x --publish") == DEFAULT
    assert resolve_out(True, None, COMMITTED, DEFAULT, "bpe x --publish") == COMMITTED
    assert resolve_out(False, "mine.json", COMMITTED, DEFAULT, "bpe x --publish") == Path("mine.json")
    assert resolve_out(True, "docs/web", COMMITTED, DEFAULT, "bpe x --publish") == Path("docs/web")


def test_publishing_from_a_dirty_tree_is_refused_naming_the_command(monkeypatch):
    monkeypatch.setattr(runinfo, "git_commit", lambda exclude=(): "abc1234-dirty")
    assert resolve_out(False, None, COMMITTED, DEFAULT, "bpe x --publish") == DEFAULT  # trying is always allowed
    for given in (None, "docs/web"):
        with pytest.raises(BPEError, match=r"bpe x --publish writes a committed result.*\(abc1234-dirty\)"):
            resolve_out(True, given, COMMITTED, DEFAULT, "bpe x --publish")
