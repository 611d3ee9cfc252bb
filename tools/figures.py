"""Figure markers: every measured number a page quotes, checked against the result file it comes from.

A page quotes a figure between two HTML comments, which Markdown renders as nothing::

    <!--fig docs/report-bench.json runs.v1.total-->3.58<!--/fig-->
    <!--fig docs/report-bench.json speedups.v2 / speedups.v1 "{:.1f}x"-->5.9x<!--/fig-->

``FILE`` is a repo-relative path to a committed JSON file; ``KEYPATH`` walks into it, dot-separated
(an integer part indexes a list; a key holding a dot or a space is quoted: ``a.'v7 shards'.b``).  A
second key path after `` / `` makes the figure the ratio of the two; a number there (``1e6``) divides by
that number instead (bytes shown in MB).  ``min(KEYPATH)``, ``max(KEYPATH)`` and ``median(KEYPATH)``,
where one part of the key path is ``*`` (every item of a list or dict), give the smallest, largest or
middle of the values: the range of a median's runs, or the median of an article's three runs.
``FORMAT``, last and optional, is a Python format string applied to the number (default
``"{:.2f}"``); a figure that is text rather than a number is shown as it is, and FORMAT then has to be
left out; a JSON ``null`` is shown as ``never``.

A figure that a committed result file will hold only once it is re-made (a step added to a command
before its published run) is marked ``pending``: ``<!--fig pending FILE KEYPATH ...-->?<!--/fig-->``.
While its key is missing it shows :data:`PENDING` and counts as current; once the key is there it is
stale until ``--update`` rewrites it into an ordinary marker with its value.  A missing file is still
a problem, pending or not.

``python -m tools.figures`` checks every shown text against its value (one line per stale figure, exit 1;
``--update`` rewrites them); ``tests/docs/test_pages.py`` runs it on every page.  Left out: a figure
computed from more than two numbers needs its own field in the result file.

Example: ``python -m tools.figures docs/v6.md`` (check one page), ``make figures`` (rewrite them all).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from tools.command import tool_main
from tools.keypath import lookup

#: The pages whose figures are checked, relative to the repo root (globs).
PAGES = ("README.md", "docs/*.md", "docs/web/*.md", "profiles/README.md")

MARKER = re.compile(r"<!--fig (?P<spec>.*?)-->(?P<shown>.*?)<!--/fig-->", re.DOTALL)
_KEYPATH = r"(?:'[^']*'|[^\s'\"/])+"
_SPEC = re.compile(rf'^(?P<file>\S+)\s+(?P<key>{_KEYPATH})(?:\s+/\s+(?P<key2>{_KEYPATH}))?(?:\s+"(?P<fmt>[^"]*)")?\s*$')
DEFAULT_FORMAT = "{:.2f}"
#: What a pending figure shows while its result file does not hold its key yet.
PENDING = "?"
_PENDING_PREFIX = "pending "


@dataclass
class Figure:
    """One marker on one page: where it is, what it names, what it shows."""

    page: Path
    line: int
    file: str
    key: str
    key2: str | None
    fmt: str | None
    shown: str
    span: tuple[int, int]  # the shown text's offsets in the page
    pending: bool = False  # its key may be missing from the file until the file is re-made
    marker_start: int = 0  # the offset of its opening comment, ``<!--fig``

    def spec(self) -> str:
        """The marker's spec as an ordinary (not pending) marker writes it."""
        keys = self.key + (f" / {self.key2}" if self.key2 else "")
        return f"{self.file} {keys}" + (f' "{self.fmt}"' if self.fmt is not None else "")

    def where(self) -> str:
        page = self.page.relative_to(REPO_ROOT) if self.page.is_relative_to(REPO_ROOT) else self.page
        return f"{page}:{self.line}"


def parse(page: Path, text: str | None = None) -> list[Figure]:
    """Every marker on ``page`` (its text may be given); a malformed marker is a :class:`BPEError`."""
    if text is None:
        text = page.read_text(encoding="utf-8")
    figures = []
    for match in MARKER.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        raw = match.group("spec").strip()
        pending = raw.startswith(_PENDING_PREFIX)
        spec = _SPEC.match(raw[len(_PENDING_PREFIX):] if pending else raw)
        if spec is None:
            raise BPEError(f"{page}:{line}: malformed figure marker <!--fig {match.group('spec')}-->; "
                           'expected <!--fig FILE KEYPATH [/ KEYPATH2] ["FORMAT"]-->')
        figures.append(Figure(page, line, spec["file"], spec["key"], spec["key2"], spec["fmt"],
                              match.group("shown"), match.span("shown"), pending, match.start()))
    return figures


def render(figure: Figure, root: Path = REPO_ROOT, cache: dict | None = None) -> str:
    """The text ``figure`` should show, from its result file."""
    cache = {} if cache is None else cache
    path = root / figure.file
    if path not in cache:
        try:
            cache[path] = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise BPEError(f"{figure.where()}: result file {figure.file} does not exist") from None
        except json.JSONDecodeError as e:
            raise BPEError(f"{figure.where()}: result file {figure.file} is not JSON: {e}") from None
    data = cache[path]
    try:
        value = lookup(data, figure.key)
        if figure.key2 is not None:
            value = value / lookup(data, figure.key2)
    except BPEError as e:
        if figure.pending:
            return PENDING
        raise BPEError(f"{figure.where()}: {figure.file}: {e}") from None
    except (TypeError, ZeroDivisionError):
        raise BPEError(f"{figure.where()}: {figure.key} / {figure.key2} in {figure.file} is not a ratio "
                       "of two numbers") from None
    if value is None:  # a JSON null: something that did not happen (a v7 run that never gathered)
        return "never"
    if isinstance(value, str):
        if figure.fmt is not None:
            raise BPEError(f"{figure.where()}: {figure.key} in {figure.file} is text; drop the format")
        return value
    try:
        return (figure.fmt or DEFAULT_FORMAT).format(value)
    except (ValueError, TypeError) as e:
        raise BPEError(f"{figure.where()}: format {figure.fmt!r} does not apply to {value!r}: {e}") from None


def pages(root: Path = REPO_ROOT) -> list[Path]:
    """The pages :data:`PAGES` names under ``root``, sorted."""
    return sorted({page for pattern in PAGES for page in root.glob(pattern)})


def check(paths: list[Path], root: Path = REPO_ROOT) -> list[str]:
    """One line per figure whose shown text differs from its result file (empty: all current)."""
    problems, cache = [], {}
    for page in paths:
        for figure in parse(page):
            try:
                expected = render(figure, root, cache)
            except BPEError as e:
                problems.append(str(e))
                continue
            if figure.pending and expected != PENDING:
                problems.append(f"{figure.where()}: a pending figure that {figure.file} now holds "
                                f"({figure.key}{' / ' + figure.key2 if figure.key2 else ''} gives {expected!r})")
            elif figure.shown != expected:
                problems.append(f"{figure.where()}: shows {figure.shown!r}, {figure.file} "
                                f"{figure.key}{' / ' + figure.key2 if figure.key2 else ''} gives {expected!r}")
    return problems


def update(paths: list[Path], root: Path = REPO_ROOT, problems: list[str] | None = None) -> list[Path]:
    """Rewrite every figure's shown text from its result file; the pages that changed.  A figure whose
    file or key is missing keeps its text, and its problem goes to ``problems``."""
    changed, cache = [], {}
    for page in paths:
        text = page.read_text(encoding="utf-8")
        figures = parse(page, text)
        new = text
        for figure in reversed(figures):  # from the end, so earlier offsets stay valid
            start, end = figure.span
            try:
                shown = render(figure, root, cache)
            except BPEError as e:
                if problems is not None:
                    problems.append(str(e))
                continue
            if figure.pending and shown != PENDING:  # measured now: an ordinary marker from here on
                start = figure.marker_start
                shown = f"<!--fig {figure.spec()}-->{shown}"
            new = new[:start] + shown + new[end:]
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def run_figures(names: list[str] | None = None, rewrite: bool = False, out=None) -> int:
    """``python -m tools.figures [PAGE ...] [--update]``: check (or rewrite) the figures of ``names`` (default
    :func:`pages`), print one line per problem and a total; the exit status (1: something is stale or
    missing)."""
    out = out or sys.stdout
    paths = [Path(p) for p in names] if names else pages()
    for path in paths:
        if not path.is_file():
            raise BPEError(f"no such page: {path}")
    if rewrite:
        problems: list[str] = []
        changed = update(paths, problems=problems)
        for path in changed:
            print(f"updated {path}", file=out)
        outcome = f"{len(changed)} page(s) rewritten" + (
            f"; {len(problems)} left as they were (their result file or key is missing)" if problems else "")
    else:
        problems = check(paths)
        outcome = (f"{len(problems)} stale (python -m tools.figures --update rewrites them)" if problems
                   else "all current")
    for problem in problems:
        print(problem, file=out)
    print(f"{sum(len(parse(page)) for page in paths)} figures on {len(paths)} pages; {outcome}", file=out)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.figures",
                                     description="check the figures the pages quote against the committed result files")
    parser.add_argument("pages", nargs="*", help="pages to check (default: README.md, docs/, profiles/README.md)")
    parser.add_argument("--update", action="store_true", help="rewrite every quoted figure from its result file")
    return tool_main(parser, lambda args: run_figures(args.pages, args.update), argv)


if __name__ == "__main__":
    sys.exit(main())
