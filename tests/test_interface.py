"""Hints in the words of the interface in use (bpe/interface.py): make's variables under make, flags otherwise;
every flag named for make is a variable the Makefile passes on."""

import re

from bpe.interface import MAKE_VARIABLES, command, option
from conftest import REPO_ROOT


def test_flags_on_the_command_line_variables_under_make(monkeypatch):
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    assert option("--force") == "--force" and option("--limit", "100MB") == "--limit 100MB"
    assert command("bench", ("--data", "x"), ("--force", None)) == "python -m bpe bench --data x --force"
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert option("--force") == "FORCE=1" and option("--limit", "100MB") == "LIMIT=100MB"
    assert option("--peers") == "--peers"  # no make variable of that name: the flag stays
    assert command("data", ("--data", "x"), ("--size", "20MB")) == "make data DATA=x SIZE=20MB"


def test_the_makefile_sets_the_variable_and_reads_each_named_one():
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^export BPE_VIA_MAKE := 1$", makefile, re.M)
    for flag, variable in MAKE_VARIABLES.items():
        assert re.search(rf"\$\(if \$\({variable}\),{flag}\b|{flag} \$\({variable}\)|\$\({variable}\)", makefile), flag


def test_a_refused_run_names_the_flag_of_its_interface(monkeypatch):
    from bpe.lab.estimate import Estimate, refusal

    slow = [Estimate("v1", 1000, 3600.0, 1e9)]
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    assert "pass --force to run it anyway" in refusal(slow, "bench") and "--limit 100MB" in refusal(slow, "bench")
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert "pass FORCE=1 to run it anyway" in refusal(slow, "bench") and "--force" not in refusal(slow, "bench")
    assert "LIMIT=100MB" in refusal(slow, "bench")
