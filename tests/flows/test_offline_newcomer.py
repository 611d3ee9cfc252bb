"""A newcomer offline, following the messages alone: ``make bench VARIANT=v5 DATA=tinystories`` says how to fetch
it and what to use offline (the same bench, VARIANT=v5 kept); fetching it fails and names the same stand-in; the
stand-in's commands make a TinyStories-like bench of v5.  Each ``make`` command a message names is turned into
the command the Makefile runs (``make -n``)."""

from __future__ import annotations

import re
import shlex
import shutil
import socket

import pytest

from bpe.cli import main
from conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make_commands(message: str) -> list[str]:
    """The ``make TARGET VAR=value ...`` commands a message names, in order."""
    return [m.group().rstrip(",;.") for m in re.finditer(r"make [a-z]+(?: [A-Z]+=[^\s,;]+)*", message)]


def as_argv(make_command: str) -> list[str]:
    """What the Makefile runs for ``make_command``: its ``python -m bpe ...`` line, as arguments."""
    import subprocess

    words = shlex.split(make_command)[1:]
    dry = subprocess.run(["make", "-n", "-o", ".venv/.installed", *words], cwd=REPO_ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    line = next(line for line in reversed(dry) if " -m bpe " in line and not line.startswith("echo"))
    return shlex.split(line.split(" -m bpe ", 1)[1])


@pytest.fixture
def offline(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nobody listens on: every download fails as offline
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BPE_DATA_URL", f"http://127.0.0.1:{port}/files")
    monkeypatch.setenv("BPE_VIA_MAKE", "1")


def follow_to_the_stand_in(capsys) -> list[str]:
    assert main(as_argv("make bench VARIANT=v5 DATA=tinystories")) == 2
    first = capsys.readouterr().err
    fetch, *offline_way = make_commands(first)
    assert fetch == "make data DATA=tinystories"
    assert offline_way == ["make data DATA=tinystories-synth SIZE=20MB",
                           "make bench VARIANT=v5 DATA=tinystories-synth-20MB"]  # what was typed, data changed
    assert main(as_argv(fetch)) == 2
    second = capsys.readouterr().err
    assert "cannot reach 127.0.0.1" in second and "are you offline?" in second
    # The failed download names the same stand-in; `make data` typed no variant, so its bench names none.
    assert make_commands(second) == [offline_way[0], "make bench DATA=tinystories-synth-20MB"]
    return offline_way


def test_every_message_names_the_next_make_command(offline, capsys):
    make, bench = follow_to_the_stand_in(capsys)
    assert as_argv(make) == ["data", "get", "tinystories-synth", "--size", "20MB"]
    assert as_argv(bench) == ["bench", "--variant", "v5", "--data", "tinystories-synth-20MB"]


@pytest.mark.slow
def test_the_messages_alone_lead_to_a_tinystories_like_bench(offline, capsys):
    make, bench = follow_to_the_stand_in(capsys)
    assert main(as_argv(make)) == 0
    assert "tinystories-synth-20MB.txt" in capsys.readouterr().out
    assert main(as_argv(bench) + ["--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "tinystories-synth-20MB" in out and "identical" in out and "v5" in out
