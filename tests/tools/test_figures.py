"""Figure markers (tools/figures.py): a stale figure is named, --update rewrites only the shown text, broken
markers are problems, not crashes.  That the pages' figures are current: docs/test_pages.py."""

import json

import pytest

from bpe.errors import BPEError
from tools import figures
from tools.figures import main


def _page(tmp_path, shown: str, spec: str = 'r.json runs.v1 / runs.v2 "{:.1f}x"'):
    (tmp_path / "r.json").write_text(json.dumps({"runs": {"v1": 3.58, "v2": 0.6, "v 7.x": {"t": [1.5, 2.25]}},
                                                 "name": "gutenberg-sample"}))
    page = tmp_path / "page.md"
    page.write_text(f"v2 is <!--fig {spec}-->{shown}<!--/fig--> faster.\n")
    return page


def test_a_stale_figure_is_named_with_its_page_line_and_value(tmp_path):
    page = _page(tmp_path, "7.1x")
    problems = figures.check([page], root=tmp_path)
    assert len(problems) == 1
    assert "page.md:1: shows '7.1x'" in problems[0] and "gives '6.0x'" in problems[0]
    assert figures.check([_page(tmp_path, "6.0x")], root=tmp_path) == []


def test_update_rewrites_the_shown_text_and_nothing_else(tmp_path):
    page = _page(tmp_path, "placeholder")
    assert figures.update([page], root=tmp_path) == [page]
    assert page.read_text() == 'v2 is <!--fig r.json runs.v1 / runs.v2 "{:.1f}x"-->6.0x<!--/fig--> faster.\n'
    assert figures.update([page], root=tmp_path) == []


@pytest.mark.parametrize("spec, shown", [
    ("r.json runs.v1", "3.58"),                         # default format
    ("r.json runs.'v 7.x'.t.1 \"{:.3f} s\"", "2.250 s"),  # quoted key with a dot and a space, list index
    ("r.json name", "gutenberg-sample"),                # text is shown as it is
])
def test_key_paths_formats_and_text(tmp_path, spec, shown):
    assert figures.check([_page(tmp_path, shown, spec)], root=tmp_path) == []


@pytest.mark.parametrize("spec, message", [
    ("r.json runs.v9", "no 'runs.v9'"),
    ("missing.json runs.v1", "does not exist"),
    ("r.json name / runs.v1", "not a ratio"),
])
def test_a_broken_marker_is_a_problem_not_a_crash(tmp_path, spec, message):
    problems = figures.check([_page(tmp_path, "x", spec)], root=tmp_path)
    assert len(problems) == 1 and message in problems[0]


def test_a_malformed_marker_is_one_clear_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!--fig onlyafile-->1<!--/fig-->\n")
    with pytest.raises(BPEError, match="malformed figure marker"):
        figures.check([page], root=tmp_path)


def test_cli_exit_status_and_update(tmp_path, capsys, monkeypatch):
    page = _page(tmp_path, "7.1x")
    monkeypatch.setattr(figures, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(figures.check, "__defaults__", (tmp_path,))
    monkeypatch.setattr(figures.update, "__defaults__", (tmp_path, None))
    assert main([str(page)]) == 1
    assert "1 stale" in capsys.readouterr().out
    assert main(["--update", str(page)]) == 0
    assert main([str(page)]) == 0
    assert "all current" in capsys.readouterr().out


def test_a_pending_figure_shows_a_mark_until_its_file_holds_it_then_update_makes_it_ordinary(tmp_path):
    page = _page(tmp_path, figures.PENDING, 'pending r.json runs.v8 "{:.1f}x"')
    assert figures.check([page], root=tmp_path) == []  # the key is not there yet: current as it is
    assert figures.update([page], root=tmp_path) == []
    (tmp_path / "r.json").write_text(json.dumps({"runs": {"v8": 0.25}}))  # the file re-made with the key
    problems = figures.check([page], root=tmp_path)
    assert len(problems) == 1 and "a pending figure that r.json now holds" in problems[0] and "'0.2x'" in problems[0]
    assert figures.update([page], root=tmp_path) == [page]
    assert page.read_text() == 'v2 is <!--fig r.json runs.v8 "{:.1f}x"-->0.2x<!--/fig--> faster.\n'
    assert figures.check([page], root=tmp_path) == []


def test_a_pending_figure_still_needs_its_file_and_its_mark(tmp_path):
    assert "does not exist" in figures.check([_page(tmp_path, "?", "pending missing.json runs.v8")], root=tmp_path)[0]
    stale = figures.check([_page(tmp_path, "1.0x", "pending r.json runs.v8")], root=tmp_path)
    assert len(stale) == 1 and "shows '1.0x'" in stale[0]
