"""tools/staleness.py: a figure measured before its code last changed is named, unless its section says its
commit; a move of files, or an edit of comments and imports, ages nothing; the pages pass."""

import json
import subprocess

import pytest

from conftest import REPO_ROOT
from tools import figures, staleness

MOVE = "ccf1cdf"  # the commit that filed the code into folders by what they hold, changing no behaviour


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"})
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                          text=True).stdout.strip()


RUNG = '''"""v1: the docstring."""

from bpe.counting.plain import count_file_serial  # where it comes from


class Merger:
    def __init__(self, counts):
        self.counts = dict(counts)
        self.merges = []

    def select_best_pair(self):
        pairs = {{}}
        for word, count in self.counts.items():
            for pair in zip(word, word[1:]):
                pairs[pair] = pairs.get(pair, 0) + count
        return max(pairs, key=lambda pair: (pairs[pair], pair), default=None)

    def merge(self, pair):
        self.merges.append(pair)
        return pair  # {comment}
'''


def _repo(tmp_path):
    """A repository with one rung, its result file made at the first commit, and a page quoting it."""
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "v1_naive.py").write_text(RUNG.format(comment="first"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    measured = _git(tmp_path, "commit", "-qm", "v1")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "r.json").write_text(json.dumps({"machine": {"git_commit": measured},
                                                          "variants": {"v1": {"total": 1.5}}}))
    return measured


def _page(tmp_path, text):
    page = tmp_path / "docs" / "p.md"
    page.write_text(text)
    return page


FIGURE = "v1 took <!--fig docs/r.json variants.v1.total-->1.50<!--/fig--> s.\n"


def test_a_figure_older_than_its_rungs_code_is_named_until_its_section_says_its_commit(tmp_path):
    measured = _repo(tmp_path)
    page = _page(tmp_path, "# One\n\n" + FIGURE)
    assert staleness.check([page], root=tmp_path) == []  # the code is as it was measured
    (tmp_path / "variants" / "v1_naive.py").write_text(RUNG.format(comment="first").replace("return pair",
                                                                                            "return pair[::-1]"))
    problems = staleness.check([page], root=tmp_path)  # changed in the working tree, not yet committed
    assert len(problems) == 1
    assert f"p.md:3: docs/r.json was measured at {measured}" in problems[0]
    assert "variants/v1_naive.py" in problems[0]
    mark = f"Measured at <!--fig docs/r.json machine.git_commit-->{measured}<!--/fig-->.\n"
    assert staleness.check([_page(tmp_path, "# One\n\n" + mark + FIGURE)], root=tmp_path) == []
    # a mark in another section does not cover it
    assert len(staleness.check([_page(tmp_path, "# One\n\n" + mark + "# Two\n\n" + FIGURE)], root=tmp_path)) == 1


def test_a_move_and_an_edit_of_comments_docstrings_and_imports_age_nothing(tmp_path):
    _repo(tmp_path)
    page = _page(tmp_path, FIGURE)
    _git(tmp_path, "mv", "variants/v1_naive.py", "variants/v1_plain.py")
    text = RUNG.format(comment="second").replace("the docstring", "another docstring")
    (tmp_path / "variants" / "v1_plain.py").write_text(text.replace("bpe.counting.plain", "bpe.training.plain"))
    _git(tmp_path, "commit", "-qam", "moved")
    assert staleness.check([page], root=tmp_path) == []


@pytest.mark.parametrize("path, before, after, same", [
    ("a.pyx", "cdef int f():\n    # why\n    return 1\n", "cdef int f():\n    return 1  # why not\n", True),
    ("a.pyx", 'def f():\n    """Old."""\n    return 1\n',
     'def f():\n    """New,\n    longer."""\n    return 1\n', True),
    ("a.pyx", 'cdef extern from *:\n    """\n    #define X 1\n    """\n',
     'cdef extern from *:\n    """\n    #define X 2\n    """\n', False),  # C code in a string is code
    ("a.pyx", 'include "variants/_s.pxi"\n', 'include "_s.pxi"\n', True),
    ("a.h", "/* a\n   b */\n#define X 1  // one\n", "#define X 1\n", True),
    ("a.h", "#define X 1\n", "#define X 2\n", False),
    ("a.py", "import os\nx = os.sep\n", "from os import sep\nx = sep\n", False),
])
def test_what_counts_as_a_change_of_code(path, before, after, same):
    assert (staleness.normalized(path, before) == staleness.normalized(path, after)) is same


def _history_here() -> bool:
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO_ROOT, capture_output=True,
                             text=True)
    return shallow.returncode == 0 and shallow.stdout.strip() == "false"


needs_history = pytest.mark.skipif(not _history_here(), reason="needs the repository's whole history (git clone, "
                                                                "not --depth)")


@needs_history
@pytest.mark.parametrize("rung", ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"])
def test_the_move_into_folders_changed_no_rungs_code(rung):
    assert staleness.changed_since(REPO_ROOT, f"{MOVE}~1", (rung,), MOVE) == ()


@needs_history
def test_v8_losing_its_tricks_aged_v9s_figures():
    # v9 merges with v8's code: the commit that dropped four of v8's tricks changed v9's code too
    assert "variants/_v8_merge.pyx" in staleness.changed_since(REPO_ROOT, "76c9245~1", ("v9",), "76c9245")


@needs_history
def test_every_page_figure_is_measured_at_its_code_or_marked_with_its_commit():
    problems = staleness.check(figures.pages())
    assert problems == [], "python -m tools.staleness:\n" + "\n".join(problems)
