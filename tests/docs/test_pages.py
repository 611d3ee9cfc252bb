"""The pages are current: every embedded `bpe trace` output is re-run and compared, every quoted figure
equals its committed result file, the committed estimates are the model's output, the lab page's example is
current, and every variant has a page linked from the index."""

import json
import re
import shlex

import pytest

from bpe.cli import main
from bpe.training.registry import VARIANTS, unavailable
from conftest import REPO_ROOT
from tools import figures

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


def test_lab_page_example_output_is_current(capsys):
    import re
    import shlex

    from conftest import REPO_ROOT

    page = (REPO_ROOT / "docs" / "lab.md").read_text()
    command, shown = re.search(r"```text\n\$ python -m bpe (bench --variant v6,tests/fixtures/candidates/[^\n]*)\n"
                               r"(.*?)\n```", page, re.S).groups()
    assert main(shlex.split(command)) == 1
    out = capsys.readouterr().out.splitlines()
    for block in shown.split("...\n"):
        lines = [line for line in block.splitlines() if line]
        if not lines:
            continue
        start = out.index(lines[0])
        assert out[start:start + len(lines)] == lines
    assert "tests/student/test_own_trainer.py" in page and "(exercises.md)" in page
    assert "(exercises.md)" in (REPO_ROOT / "docs" / "index.md").read_text()


def test_every_quoted_figure_matches_its_result_file():
    problems = figures.check(figures.pages())
    assert problems == [], "stale figures (python -m tools.figures --update):\n" + "\n".join(problems)


def test_the_pages_quote_figures():
    # The check above passes trivially if no page has a marker; the converted pages must keep theirs.
    assert sum(len(figures.parse(page)) for page in figures.pages()) >= 20


@pytest.mark.parametrize("args, committed", [
    # Not downloaded (BPE_DATA_DIR is empty): estimated from the first 2 MB of their generated stand-ins.
    # the handout's budgets, on a laptop
    (["--data", "tinystories", "--memory", "30GB", "--workers", "4"], "docs/estimates-tinystories.json"),
    (["--data", "owt", "--memory", "100GB", "--workers", "4"], "docs/estimates-owt.json"),
    # the measured OpenWebText-sized run's machine: 2 cores, 24 GB (docs/v8.md)
    (["--data", "owt", "--memory", "24GB", "--workers", "2"], "docs/estimates-owt-2-workers.json"),
])
def test_committed_estimates_are_the_models_current_output(args, committed, tmp_path, monkeypatch, capsys):
    # The index quotes these files; the model is deterministic, so a changed model must re-make them
    # (the command is on docs/index.md), and then `python -m tools.figures --update` the page.
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    out = tmp_path / "estimates.json"
    assert main(["estimate", *args, "--json", str(out)]) == 0
    now = json.loads(out.read_text())["variants"]
    then = json.loads((figures.REPO_ROOT / committed).read_text())["variants"]
    # a rung that cannot run here (v8 built without a C compiler) is left out of the estimate, not stale
    assert all(unavailable(VARIANTS.module(name)) for name in set(then) - set(now))
    then = {name: then[name] for name in now if name in then}
    assert {v: e["time"] + " " + e["memory"] for v, e in now.items()} == \
           {v: e["time"] + " " + e["memory"] for v, e in then.items()}, f"re-make {committed}"
    fits = json.loads(out.read_text())["memory_budget"]["fits"]
    assert fits == {v: f for v, f in
                    json.loads((figures.REPO_ROOT / committed).read_text())["memory_budget"]["fits"].items()
                    if v in fits}, f"re-make {committed}"
    for variant, estimate in now.items():
        modelled, committed_model = estimate["seconds"], then[variant]["seconds"]  # predictions, not timings
        assert modelled == pytest.approx(committed_model, rel=1e-9)


def test_the_library_page_gives_train_bpes_whole_signature():
    import inspect

    from bpe import train_bpe

    page = (DOCS / "library.md").read_text()
    shown = re.search(r"`train_bpe\((.*?)\)`", page, re.S).group(1)
    named = [part.strip().split("=")[0] for part in shown.replace("\n", " ").split(",") if part.strip() != "*"]
    assert named == list(inspect.signature(train_bpe).parameters)
    for name, parameter in inspect.signature(train_bpe).parameters.items():
        if parameter.default is not inspect.Parameter.empty:
            assert f"{name}={parameter.default!r}".replace("'", '"') in shown.replace("\n", " ")
