"""Figures measured before the code they measured last changed: each one found, unless its page says so.

A result file records the commit it was made at (``machine.git_commit``; ``git_commit`` at the top of a
perf record).  A figure a page quotes from it measured some code: the rungs its key path names
(``variants.v8.median.total`` measured v8), else every rung the file ran (its ``variants``, ``rung``,
``settings.variant``, a ``--variant`` in its ``command``), else the code :data:`MEASURED` names for the files
whose subject is not a rung.  A rung's code is its file in ``variants/``, the rungs and private parts it
imports from there (``from .v2_inverted_index import ...``, ``bpe.variants._v7_policy``, ``._v8_merge``), and
the files its compiled parts include (``include``, ``cdef extern from``); the shared machinery of ``bpe/``
(the pool, the counters) is not followed, so a change there does not age every figure of every rung.

The rule: that code as it was at the file's commit is compared with the code in the working tree.  Files are
matched across a move by git's own rename detection between the two (``git diff -M``), and compared with
what does not run left out: comments, docstrings, and where an import comes from (the names imported are
kept).  A move of files, or an edit of their comments and imports only, does not age a result file; a
change to what runs does, even one later undone only in part.  Content compared at both ends rather than
``git log --follow`` of every file: a log follows one path, and the move that split ``bpe/training`` into
folders also rewrote the imports and comments of the files it moved, which a log would count as changes.

A stale figure is allowed where its section of the page (from one heading to the next) says the commit it
was measured at, as a figure of its own: ``<!--fig FILE machine.git_commit-->0d4f083<!--/fig-->``, so that
``python -m tools.figures`` keeps the mark true.  :data:`UNMEASURED` are the files quoted that record no
commit because nothing in them was timed here.

Example: ``python -m tools.staleness`` (one line per stale figure left unmarked; exit 1 if any).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from tools import figures
from tools.command import tool_main
from tools.keypath import split_keypath

#: Quoted result files that record no commit, and why that is right.
UNMEASURED = {
    "docs/v10-estimates.json": ("bpe/lab/rungs.py", "bpe/lab/measure/estimate.py"),
    "docs/v10-counting-pages.json": ("variants/_v9_count.pyx", "variants/v9_counting_compiled.py"),
    "docs/articles-figures.json": "the articles' own figures, copied from their text",
    "docs/estimates-owt.json": "the cost model's output, which tests/docs/test_pages.py re-makes and compares",
    "docs/estimates-owt-2-workers.json": "the cost model's output, re-made and compared as the other estimates",
    "docs/estimates-tinystories.json": "the cost model's output, re-made and compared as the other estimates",
}

#: The code a result file measured where its subject is not a rung (files of the tree, as now).
MEASURED = {
    "docs/pretokenize-ratio.json": ("bpe/split/fast.py", "bpe/counting/fast.py"),
    "docs/v9-pretokenize-ratio.json": ("bpe/split/fast.py", "bpe/counting/fast.py",
                                       "variants/v9_counting_compiled.py"),
    "docs/v9-encode-web-100MB.json": ("bpe/io/_encoder.pyx", "bpe/io/encode.py", "bpe/io/compiled.py"),
    "docs/v9-encode-gutenberg-books.json": ("bpe/io/_encoder.pyx", "bpe/io/encode.py", "bpe/io/compiled.py"),
    "docs/cluster-bench.json": ("bpe/corpus/cluster.py", "bpe/counting/parts.py"),
    "docs/patterns-measured.json": ("bpe/counting/plain.py", "bpe/split/_scanners.pxi", "bpe/split/_gpt2_scanner.pxi",
                                    "bpe/split/_cl100k_scanner.pxi", "bpe/split/_o200k_scanner.pxi",
                                    "variants/_v9_count.pyx", "variants/v9_counting_compiled.py",
                                    "variants/v10_threads_compact.py"),
}

#: Where a compiled part's ``include`` and ``cdef extern from`` are looked for (pyproject's include-dirs).
INCLUDE_DIRS = ("variants", "bpe/split", "bpe/running", "bpe/io")
#: A result file's keys that say when and on what it was made, not what it measured.
STAMP_KEYS = ("machine", "generated", "command", "git_commit")
RUNG = re.compile(r"^v\d+$")
HEADING = re.compile(r"^#{1,6} ", re.M)


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        raise BPEError(f"git {' '.join(args)}: {out.stderr.strip() or 'failed'}")
    return out.stdout


class Tree:
    """The files of the repository at ``root`` at one commit (``None``: the working tree)."""

    def __init__(self, root: Path, commit: str | None):
        self.root, self.commit = root, commit
        self._files = None

    def files(self) -> set[str]:
        if self._files is None:
            listing = (("ls-files", "--cached", "--others", "--exclude-standard") if self.commit is None
                       else ("ls-tree", "-r", "--name-only", self.commit))
            self._files = set(git(self.root, *listing).split("\n")) - {""}
        return self._files

    def read(self, path: str) -> str | None:
        if path not in self.files():
            return None
        if self.commit is None:
            file = self.root / path
            return file.read_text(encoding="utf-8") if file.is_file() else None
        return _show(self.root, self.commit, path)

    def rung_file(self, rung: str) -> str | None:
        return next((f for f in sorted(self.files()) if re.fullmatch(rf"variants/{rung}_\w+\.py", f)), None)


@lru_cache(maxsize=None)
def _show(root: Path, commit: str, path: str) -> str:
    return git(root, "show", f"{commit}:{path}")


_PY_IMPORT = re.compile(r"^\s*from\s+(\.|bpe\.variants\.?)(\w*)\s+import\s+([\w, ]+)", re.M)
_C_INCLUDE = re.compile(r'^\s*(?:include|cdef extern from|#include)\s+"([^"]+)"', re.M)


def closure(tree: Tree, roots: list[str]) -> set[str]:
    """``roots`` and what they take from ``variants/`` and their compiled parts' includes, in ``tree``."""
    found, todo = set(), list(roots)
    while todo:
        path = todo.pop()
        if path in found:
            continue
        text = tree.read(path)
        if text is None:
            continue
        found.add(path)
        names = []
        if path.endswith(".py"):
            for _prefix, module, imported in _PY_IMPORT.findall(text):
                names += [module] if module else [n.strip() for n in imported.split(",")]
            for name in names:
                todo += [f"variants/{name}{ext}" for ext in (".py", ".pyx") if f"variants/{name}{ext}" in tree.files()]
        for include in _C_INCLUDE.findall(text):
            base = Path(include).name
            places = [f"{d}/{base}" for d in (str(Path(path).parent), *INCLUDE_DIRS)]
            todo += [place for place in places if place in tree.files()][:1]
    return found


def normalized(path: str, text: str) -> str:
    """``text`` with what does not run left out: comments, docstrings, where imports come from."""
    return _python_code(text) if path.endswith(".py") else _compiled_code(text, header=path.endswith(".h"))


def _python_code(text: str) -> str:
    """The syntax tree, less docstrings, each body's imports reduced to the names they bind."""
    try:
        module = ast.parse(text)
    except SyntaxError:
        return text
    for node in ast.walk(module):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body.pop(0)  # a docstring
        imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = sorted(alias.asname or alias.name for n in imports for alias in n.names)
        body[:] = [n for n in body if n not in imports]
        if names:
            body.insert(0, ast.Expr(ast.Constant("imports " + " ".join(names))))
    return ast.dump(module)


_DIRECTIVE = re.compile(r"#\s*(include|define|undef|if|ifdef|ifndef|elif|else|endif)\b")


def _compiled_code(text: str, header: bool) -> str:
    """Cython or C, line by line: comments, docstrings (a string opening the body of a ``def``, not C code
    in a ``cdef extern`` block), blank lines and the folders of included files left out."""
    if header:
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    lines, previous, in_docstring = [], "", False
    for line in text.splitlines():
        stripped = line.strip()
        if in_docstring:
            in_docstring = stripped.count('"""') % 2 == 0
            continue
        if stripped.startswith('"""') and previous.endswith(":") and "extern" not in previous:
            in_docstring = stripped.count('"""') == 1
            continue
        if header:
            code = re.sub(r"//.*", "", line)
        elif _DIRECTIVE.match(stripped):  # C inside a Cython string
            code = line
        else:
            code = re.sub(r"(^|\s)#.*", "", line)
        code = re.sub(r'^(\s*(?:include|cdef extern from|#include)\s+")[^"]*/', r"\1", code).strip()
        if code:
            lines.append(code)
            previous = code
    return "\n".join(lines)


@lru_cache(maxsize=None)
def renames(root: Path, commit: str, later: str | None = None) -> dict[str, str]:
    """Paths at ``later`` (default: the working tree) -> their path at ``commit``, for the files git sees as
    moved between the two."""
    moved = {}
    ends = (commit, later) if later else (commit,)
    fields = git(root, "diff", "-M", "--name-status", "-z", *ends, "--", "variants", "bpe").split("\0")
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status.startswith(("R", "C")):
            moved[fields[i + 2]] = fields[i + 1]
            i += 3
        else:
            i += 2
    return moved


def changed_since(root: Path, commit: str, code: tuple[str, ...], later: str | None = None) -> tuple[str, ...]:
    """The files of ``code`` (rungs ``vN`` or paths, as at ``later``: default the working tree) whose running
    code differs from ``commit``'s."""
    now, then = Tree(root, later), Tree(root, commit)
    roots_now, roots_then = [], []
    for item in code:
        if RUNG.match(item):
            roots_now += [p for p in [now.rung_file(item)] if p]
            roots_then += [p for p in [then.rung_file(item)] if p]
        else:
            roots_now.append(item)
            roots_then.append(renames(root, commit, later).get(item, item))
    files_now = closure(now, roots_now)
    back = {path: renames(root, commit, later).get(path, path) for path in files_now}
    differ = [path for path, old in back.items()
              if then.read(old) is None or normalized(path, then.read(old)) != normalized(path, now.read(path))]
    differ += [f"{old} (gone)" for old in closure(then, roots_then) - set(back.values())]
    return tuple(sorted(differ))


def commit_key(data: dict) -> str | None:
    if isinstance(data.get("machine"), dict) and data["machine"].get("git_commit"):
        return "machine.git_commit"
    return "git_commit" if data.get("git_commit") else None


def file_rungs(data: dict) -> set[str]:
    """Every rung a result file ran."""
    found = set()
    def keys(value):
        return {k for k in value if RUNG.match(k)} if isinstance(value, dict) else set()
    found |= keys(data.get("variants")) | keys(data.get("rows"))  # a bench's variants, an ablation's rows
    for table in data.get("tables") or []:
        found |= keys(table.get("variants")) if isinstance(table, dict) else set()
    for one in (data.get("sets") or {}).values():
        found |= keys(one.get("variants")) if isinstance(one, dict) else set()
    for value in (data.get("rung"), (data.get("settings") or {}).get("variant")):
        if isinstance(value, str):
            found |= {v for v in value.split(",") if RUNG.match(v)}
    found |= set(re.findall(r"--variant (v\d+)", str(data.get("command", ""))))
    return found


def measured_code(file: str, data: dict, keys: list[str]) -> tuple[str, ...]:
    named = {str(part) for key in keys for part in split_keypath(key) if RUNG.match(str(part))}
    return tuple(sorted(named or set(MEASURED.get(file, ())) | file_rungs(data)))


def sections(text: str) -> list[tuple[int, int]]:
    starts = [0] + [m.start() for m in HEADING.finditer(text)] + [len(text)]
    return list(zip(starts, starts[1:]))


def check(paths: list[Path], root: Path = REPO_ROOT) -> list[str]:
    """One line per figure quoted from a result file older than the code it measured, left unmarked (the
    pages, the result files and the code in the repository at ``root``)."""
    problems, cache, compared = [], {}, {}
    for page in paths:
        text = page.read_text(encoding="utf-8")
        marks = figures.parse(page, text)
        spans = sections(text)
        for figure in marks:
            if figure.file in UNMEASURED:
                continue
            if figure.file not in cache:
                cache[figure.file] = json.loads((root / figure.file).read_text(encoding="utf-8"))
            data = cache[figure.file]
            key = commit_key(data)
            if key is None:
                problems.append(f"{figure.where()}: {figure.file} records no commit; re-make it with its command")
                continue
            if figure.key == key or figure.key.split(".")[0] in STAMP_KEYS:  # when and where, not a measurement
                continue
            code = measured_code(figure.file, data, [figure.key] + ([figure.key2] if figure.key2 else []))
            if not code:
                problems.append(f"{figure.where()}: cannot tell what {figure.file} measured "
                                "(no rung in it; add it to tools/staleness.py's MEASURED)")
                continue
            commit = lookup_commit(data, key)
            try:
                if (commit, code) not in compared:  # the working tree is read once per check
                    compared[commit, code] = changed_since(root, commit, code)
                differ = compared[commit, code]
            except BPEError:
                problems.append(f"{figure.where()}: {figure.file} was measured at {commit}, which this clone's "
                                "history lacks (a shallow clone: git fetch --unshallow)")
                continue
            if not differ:
                continue
            start, end = next(s for s in spans if s[0] <= figure.span[0] < s[1])
            marked = any(m.file == figure.file and m.key == key and start <= m.span[0] < end for m in marks)
            if not marked:
                problems.append(f"{figure.where()}: {figure.file} was measured at {commit}, and {', '.join(code)} "
                                f"changed since ({', '.join(differ)}): measure it again, or say the commit in its "
                                f"section: <!--fig {figure.file} {key}-->{commit}<!--/fig-->")
    return problems


def lookup_commit(data: dict, key: str) -> str:
    value = data
    for part in key.split("."):
        value = value[part]
    return value.removesuffix("-dirty")


def run_staleness(names: list[str] | None = None, out=None) -> int:
    out = out or sys.stdout
    paths = [Path(p).resolve() for p in names] if names else figures.pages()
    problems = check(paths)
    for problem in problems:
        print(problem, file=out)
    print(f"{len(problems)} figure(s) measured before their code last changed, unmarked" if problems
          else "every figure measured at its code, or marked with its commit", file=out)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.staleness",
                                     description="find the figures measured before the code they measured changed")
    parser.add_argument("pages", nargs="*", help="pages to check (default: every page tools.figures checks)")
    return tool_main(parser, lambda args: run_staleness(args.pages), argv)


if __name__ == "__main__":
    sys.exit(main())
