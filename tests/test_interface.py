"""Hints in the words of the interface in use (bpe/interface.py): make's variables under make, flags otherwise;
every flag named for make is a variable the Makefile passes on; a hint proposing a stand-in keeps what was typed."""

import re
from pathlib import Path

from bpe.interface import MAKE_VARIABLES, command, option
from conftest import REPO_ROOT


def test_flags_on_the_command_line_variables_under_make(monkeypatch):
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    assert option("--force") == "--force" and option("--limit", "100MB") == "--limit 100MB"
    assert command("bench", ("--data", "x"), ("--force", None)) == "python -m bpe bench --data x --force"
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert option("--force") == "FORCE=1" and option("--limit", "100MB") == "LIMIT=100MB"
    assert option("--busy", "2") == "--busy 2"  # no make variable of that name: the flag stays
    assert command("data", ("--data", "x"), ("--size", "20MB")) == "make data DATA=x SIZE=20MB"


def test_the_makefile_sets_the_variable_and_reads_each_named_one():
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^export BPE_VIA_MAKE := 1$", makefile, re.M)
    for flag, variable in MAKE_VARIABLES.items():
        assert re.search(rf"\$\(if \$\({variable}\),{flag}\b|{flag} \$\({variable}\)|\$\({variable}\)", makefile), flag


def test_a_refused_run_names_the_flag_of_its_interface(monkeypatch):
    from bpe.lab.measure.estimate import Estimate, refusal

    slow = [Estimate("v1", 1000, 3600.0, 1e9)]
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    assert "pass --force to run it anyway" in refusal(slow, "bench") and "--limit 100MB" in refusal(slow, "bench")
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert "pass FORCE=1 to run it anyway" in refusal(slow, "bench") and "--force" not in refusal(slow, "bench")
    assert "LIMIT=100MB" in refusal(slow, "bench")


def test_a_stand_in_hint_keeps_every_other_option_typed(tmp_path, monkeypatch, capsys):
    """`bench --variant v5 --data tinystories ...` offline: the stand-in's command is the same command, only
    the data changed, in make's words under make and the command line's otherwise."""
    from bpe.cli import main

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))  # tinystories is not downloaded there
    typed = ["bench", "--variant", "v5", "--data", "tinystories", "--vocab", "500", "--workers=1", "--repeat", "2",
             "--special", "<|endoftext|>", "--force"]
    monkeypatch.delenv("BPE_VIA_MAKE", raising=False)
    assert main(typed) == 2
    said = capsys.readouterr().err
    assert ("python -m bpe data get tinystories-synth --size 20MB, then python -m bpe bench --variant v5 --data "
            "tinystories-synth-20MB --vocab-size 500 --workers 1 --repeat 2 --special '<|endoftext|>' --force") in said
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert main(["bench", "--variant", "v5", "--data", "tinystories", "--vocab-size", "500", "--peers"]) == 2
    said = capsys.readouterr().err
    assert ("make data DATA=tinystories-synth SIZE=20MB, then make bench VARIANT=v5 DATA=tinystories-synth-20MB "
            "VOCAB=500 PEERS=all") in said.splitlines()[-1]


def test_a_hint_that_cannot_repeat_the_command_proposes_a_bench(monkeypatch):
    from bpe.data.datasets import DATASETS, offline_way
    from bpe.interface import typed

    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    bench = "make bench DATA=tinystories-synth-20MB"
    assert offline_way(DATASETS["tinystories"]).endswith(f"then {bench}")  # a library call: nothing was typed
    with typed("data", [("--size", "20MB")]):  # `data get tinystories`: no option holds the data set
        assert offline_way(DATASETS["tinystories"]).endswith(f"then {bench}")
    with typed("ablation", [("--data", "tinystories"), ("--data", "webtext-synth-20MB")]):  # no make variable twice
        assert offline_way(DATASETS["tinystories"]).endswith(f"then {bench}")
    with typed("profile", [("--variant", "v2"), ("--data", "gutenberg-books"), ("--workers", "1")]):
        assert offline_way(DATASETS["gutenberg-books"]).endswith(
            "no download needed: make profile VARIANT=v2 DATA=gutenberg-sample WORKERS=1")


def test_a_checkout_is_told_make_venv_and_a_pip_install_the_pip_command(tmp_path):
    """How bpe-lab was installed words the fix of a compiled rung not built: ``make venv`` in the checkout's
    own .venv, pip elsewhere (tests/project/test_install.py checks an installed copy's detection and command
    for real)."""
    from bpe.interface import REPO_ROOT as ROOT
    from bpe.interface import is_checkout, rebuild_command

    assert ROOT == REPO_ROOT and is_checkout(REPO_ROOT)
    # a site-packages inside another project (a venv in its folder): a pyproject.toml above is not a checkout
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "bpe").mkdir()
    assert not is_checkout(tmp_path)
    assert rebuild_command(REPO_ROOT, True, None) == "run make venv"
    assert rebuild_command(Path("/home/me/bpe lab"), False, None) == (
        "reinstall bpe-lab: pip install --no-deps -e '/home/me/bpe lab'")
    folder = {"url": "file:///home/me/bpe%20lab", "dir_info": {}}
    assert rebuild_command(None, False, folder) == (
        "reinstall bpe-lab: pip install --force-reinstall --no-deps '/home/me/bpe lab'")
    wheel = {"url": "file:///tmp/bpe_lab-0.1.0-cp311-cp311-linux_x86_64.whl", "archive_info": {}}
    for origin in (wheel, None, {"url": "https://example.org/bpe-lab.tar.gz", "archive_info": {}}):
        assert rebuild_command(None, False, origin) == (
            "reinstall bpe-lab from its source folder: pip install --force-reinstall --no-deps /path/to/bpe-lab")
