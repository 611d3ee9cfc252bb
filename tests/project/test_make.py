"""The Makefile: `make` alone prints help and touches nothing; each target echoes one readable line, and each
install step what it installs; a long target says how long it takes as it starts."""

import re
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_echoes_one_line_per_command():
    bench = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "bench", "VARIANT=v2"],
                           cwd=REPO_ROOT, capture_output=True, text=True, timeout=60).stdout
    echoed = [line for line in bench.splitlines() if line.startswith("echo")]
    assert echoed == ["echo '.venv/bin/python -m bpe bench --variant v2 --data gutenberg-sample'"]  # as typed
    venv = subprocess.run(["make", "-n", "-B", "--no-print-directory", ".venv/.installed"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60).stdout
    assert "first run: creating .venv and installing bpe-lab with its dev extras" in venv
    assert re.search(r"pip install .*-e '\.\[dev\]'", venv) and "--quiet" not in venv


def test_every_install_step_says_what_it_installs():
    """Each recipe line that runs pip comes after an echo, in its recipe, naming what it installs (the extra)."""
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    installs = 0
    for recipe in re.split(r"\n(?!\t)", makefile):  # a rule's line with its tab-indented recipe
        for i, line in enumerate(lines := recipe.split("\n")):
            if "-m pip install" not in line:
                continue
            installs += 1
            said = re.findall(r'echo "([^"]*)"', "\n".join(lines[:i]) + line.split("-m pip install")[0])
            extra = re.search(r"\.\[(\w+)\]", line)
            assert said and "install" in said[-1], line
            assert extra is None or extra.group(1) in said[-1], (line, said[-1])
    assert installs >= 3  # the first install, v8's rebuild, the browser extra


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_plain_make_prints_help_and_touches_nothing():
    proc = subprocess.run(["make", "-n"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "pip install" not in proc.stdout and "-m venv" not in proc.stdout  # help needs no venv
    proc = subprocess.run(["make", "--no-print-directory"], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    for target in ("make bench", "make test", "make data", "make report", "make profile", "make shell"):
        assert target in proc.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_long_targets_say_how_long_they_take_as_they_start():
    """Every wait is announced, with the duration docs/lab.md and `make help` give (the report its own, from the
    cost model: tests/lab/measure/test_report.py); pytest's dots reach a pipe."""
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    minutes = re.search(r"^TEST_MINUTES\s*:= (\d+)$", makefile, re.M).group(1)
    for target, said in (("test", f"running ruff, then the tests without the slow ones (about {minutes} min on 2 "
                                  "idle cores, longer on a busy machine"),
                         ("report", "benching every variant for the report (its first line says how long on idle "
                                    "cores, which a busy machine stretches"),
                         ("reproduce", "measuring each step of the articles (about 5 min on an idle 2-core machine"),
                         ("ablation", "v6 without each of its techniques (about 10 min on an idle 2-core machine")):
        dry = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "-o", ".venv/.browser",
                              target],
                             cwd=REPO_ROOT, capture_output=True, text=True, timeout=60).stdout.splitlines()
        assert dry[0].startswith("echo") and said in dry[0], dry[:2]
        if target == "test":
            assert "-m ruff check ." in dry[1]  # the linter first: a second
            assert "-u -m pytest" in dry[2]  # unbuffered: the progress reaches a log as it happens
    shown = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO_ROOT, capture_output=True, text=True,
                           timeout=60).stdout
    assert f"about {minutes} min on 2 idle cores, longer on a busy machine" in shown
    assert "slow, minutes, said as it starts" in shown and "about 2 min on 2 idle cores" in shown
    page = " ".join((REPO_ROOT / "docs" / "lab.md").read_text(encoding="utf-8").split())
    assert f"`make test` about {minutes} minutes idle" in page
    assert "`make report` is slow: it says how long as it starts, estimated from the cost model" in page
    assert "`make reproduce` about 5 minutes on an idle machine" in page
    assert "`make ablation` about 10 on an idle machine" in page
    assert "the first install about 2 minutes" in page and "make venv      create .venv" in shown


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_walkthrough_is_the_class_page_unless_full_or_data_is_given():
    def command(*variables: str) -> str:
        dry = subprocess.run(["make", "-n", "--no-print-directory", "-o", ".venv/.installed", "walkthrough",
                              *variables], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60).stdout
        return dry.splitlines()[0]

    assert command() == "echo '.venv/bin/python -m bpe walkthrough --out out/walkthrough.html'"  # the CLI's class page
    assert command("FULL=1") == ("echo '.venv/bin/python -m bpe walkthrough --data gutenberg-sample "
                                 "--out out/walkthrough.html'")
    assert command("DATA=mine.txt", "VOCAB=500") == ("echo '.venv/bin/python -m bpe walkthrough --data mine.txt "
                                                     "--vocab-size 500 --out out/walkthrough.html'")


def test_skipped_browser_tests_say_why_in_one_line_at_the_end(tmp_path):
    """`make test` without a browser: the reason once, at the end, not a line per test under ``-rs`` alone.
    BPE_CHROMIUM naming no file is what the browser tests' own check (``missing()``) reads as no Chromium."""
    import os
    import sys

    env = {name: value for name, value in os.environ.items() if name != "CI"}  # CI fails instead of skipping
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
                           "tests/lab/teach/test_walkthrough_browser.py"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, env={**env, "BPE_CHROMIUM": str(tmp_path / "no-chromium")})
    *_, said, count = proc.stdout.splitlines()
    skipped = int(re.match(r"(\d+) skipped in ", count).group(1))
    assert skipped > 1 and said == (f"{skipped} browser tests skipped: no Chromium on PATH (Debian: apt-get install "
                                    "chromium; or set BPE_CHROMIUM to its executable)"), proc.stdout[-2000:]
