"""Every page's word on where a `make` target writes is true: each `make report|profile|reproduce|ablation|data`
on a page, followed in its line or list item by "writes", "rewrites", "into" or "->" and a path, names the
folder the command's code writes to (its default, or with PUBLISH=1 its committed place)."""

import re

from bpe.lab.measure import profiling, report
from conftest import REPO_ROOT
from tools import reproduce

PAGES = [REPO_ROOT / "README.md", REPO_ROOT / "profiles" / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")),
         *sorted((REPO_ROOT / "exercises").glob("*.md"))]
MENTION = re.compile(r"make (report|profile|reproduce|ablation|data)\b")
# The first path named after "writes", "rewrites", "into" or "->": it has a folder or a result file's extension.
OUTPUT = re.compile(r"(?:\bwrites|\brewrites|\binto|->)\s+(?:the committed |scalene's JSON and \w+ \w+ )?`?"
                    r"(?P<path>[\w.-]+/[\w./{},-]*|[\w-]+\.(?:md|json|png))")


def relative(path) -> str:
    return str(path.relative_to(REPO_ROOT)) + "/"


def truth() -> dict[tuple[str, bool], str]:
    """(target, PUBLISH=1?) -> where the code writes, from the modules and the Makefile."""
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    # the ablation's file is named after its rung: docs/$(RUNG)-ablation.json, RUNG=v6 unless the page names one
    ablation = re.search(r"--json \$\(or \$\(JSON\),((?:[^()]|\$\(\w+\))+)\)", makefile).group(1)
    return {("report", False): relative(report.DEFAULT_OUT_DIR), ("report", True): relative(report.DOCS_DIR),
            ("profile", False): relative(profiling.DEFAULT_OUT_DIR),
            ("profile", True): relative(profiling.PROFILES_DIR),
            ("reproduce", False): str(reproduce.DEFAULT_OUT.relative_to(REPO_ROOT)),
            ("reproduce", True): str(reproduce.PUBLISHED_OUT.relative_to(REPO_ROOT)),
            ("ablation", False): ablation, ("ablation", True): ablation, ("data", False): "data/"}


def claims():
    """(page, target, PUBLISH=1?, the path it names) for every mention that says where the target writes."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in MENTION.finditer(text):
            # in a code block, the mention's own line; in prose, its list item or paragraph, up to the next mention
            in_code = text.count("```", 0, match.start()) % 2 == 1
            ends = ("\n",) if in_code else ("\n\n", "\n- ")
            end = min([i for i in (text.find(e, match.end()) for e in ends) if i >= 0] or [len(text)])
            window = text[match.end():end]
            window = window[:m.start()] if (m := MENTION.search(window)) else window
            found = OUTPUT.search(window)
            if found:
                line_end = text.find("\n", match.end())
                publish = "PUBLISH=1" in text[match.start():line_end] or "--publish" in text[match.start():line_end]
                rung = re.search(r"RUNG=(\w+)", text[match.start():line_end])
                yield page.relative_to(REPO_ROOT), match.group(1), publish, found.group("path"), rung and rung.group(1)


def test_pages_say_where_each_target_writes():
    known = truth()
    found = list(claims())
    assert len(found) >= 8, found  # the pages do say it: the check reads them
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    default_rung = re.search(r"^RUNG\s*\?= (\w+)$", makefile, re.M).group(1)
    wrong = [(str(page), target, publish, path) for page, target, publish, path, rung in found
             if not path.startswith(known[(target, publish)].replace("$(RUNG)", rung or default_rung))]
    assert not wrong, f"pages naming the wrong output (page, target, PUBLISH=1, path): {wrong}; the code: {known}"
