"""The walkthrough pages embed real `bpe trace` output: re-run every embedded trace and compare."""

import re
import shlex

import pytest

from bpe.cli import main
from conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
BLOCK = re.compile(r"```text\n\$ python -m bpe (trace [^\n]*)\n(.*?)\n```", re.S)


def embedded_traces():
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for command, output in BLOCK.findall(page.read_text()):
            found.append(pytest.param(command, output, id=f"{page.name}: {command}"))
    return found


def test_pages_v1_v2_embed_traces():
    pages = {p.values[0] for p in embedded_traces()}
    assert any("--variant v1" in c for c in pages) and any("--variant v2" in c for c in pages)


@pytest.mark.parametrize("command,output", embedded_traces())
def test_embedded_trace_is_current(command, output, capsys):
    assert main(shlex.split(command)) == 0
    assert capsys.readouterr().out.rstrip("\n") == output


def test_every_variant_has_a_page_linked_from_the_index():
    from bpe import VARIANTS

    index = (DOCS / "index.md").read_text()
    for name in VARIANTS:
        assert (DOCS / f"{name}.md").exists() and f"({name}.md)" in index


def test_pages_v3_to_v5_embed_what_their_step_adds():
    commands = {p.values[0]: p.values[1] for p in embedded_traces()}
    v4 = [out for cmd, out in commands.items() if "--variant v4" in cmd]
    assert any("      fine-grained diff: a a -3, aa aa +1 (x3)" in out for out in v4)  # the overlapping case
    v5 = [out for cmd, out in commands.items() if "--variant v5" in cmd]
    assert any("  stale heap pops skipped: 2 " in out for out in v5)
    assert any("--variant v3" in cmd for cmd in commands)
