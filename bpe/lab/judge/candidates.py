"""What ``--variant`` names, a *candidate*: a rung of the ladder, or your own trainer (docs/exercises.md)::

    --variant v6                          a ladder variant
    --variant path/to/mine.py             a file defining ``Merger`` (the ladder's protocol), or else
                                          ``train_bpe`` or ``run_train_bpe`` (the CS336 signature)
    --variant path/to/mine.py:my_train    a function of that signature (``mypackage.module:my_train`` too)
    --variant path/to/bpe_v1.py:BPE_Trainer
                                          a class: ``BPE_Trainer().train(input_path, vocab_size, special_tokens)``
    --variant v5,v6,mine.py               several, run in that order (the flag may be repeated)

A file is read here without running it (its syntax tree says what it defines): its code runs only in
the child (:mod:`bpe.lab.measure.timed_run`), loaded and called by :mod:`bpe.lab.judge.candidate_code`.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bpe.errors import BPEError
from bpe.training.registry import VARIANTS, best_variant

#: Function names a candidate file may define, in the order they are looked for (after ``Merger``).
FUNCTION_NAMES = ("train_bpe", "run_train_bpe")
#: A class a candidate file may define instead: ``CLASS().train(input_path, vocab_size, special_tokens)``.
CLASS_NAMES = ("BPE_Trainer",)


@dataclass(frozen=True)
class Candidate:
    """One entry of ``--variant``: ``kind`` is ``variant``, ``merger`` or ``function``."""

    label: str  # the row's name: v6, the file's (module's) name, or a function's not called train_bpe
    kind: str
    spec: str  # what the child loads: a variant name, a file, ``file.py:function`` or ``module:function``
    idea: str

    @property
    def is_variant(self) -> bool:
        return self.kind == "variant"


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def _file_idea(tree: ast.Module, fallback: str) -> str:
    """The file's ``IDEA = "..."`` if it has one, else its docstring's first line, else ``fallback``."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "IDEA" for t in node.targets)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    doc = ast.get_docstring(tree)
    return doc.strip().splitlines()[0] if doc and doc.strip() else fallback


def _named(tree: ast.Module | None, module: str, name: str, where: str, spec: str) -> Candidate:
    """The candidate for the function or class ``name`` of a file or module (``tree``: its syntax, if read).
    A function's row is named after it, unless it has the handout's name: then after its file or module,
    as a class's row is (``bpe_v1.py:BPE_Trainer``: ``bpe_v1``)."""
    is_class = tree is not None and name in {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    label = module if is_class or name in FUNCTION_NAMES else name
    if tree is None:
        return Candidate(label, "function", spec, f"{name} from {where}")
    return Candidate(label, "function", spec, _file_idea(tree, f"{name}().train in {where}" if is_class
                                                         else f"{name} in {where}"))


def resolve(spec: str) -> Candidate:
    """The :class:`Candidate` a ``--variant`` entry names, or a :class:`BPEError` saying why none."""
    if spec in VARIANTS:
        return Candidate(spec, "variant", spec, VARIANTS[spec].IDEA)
    where, _, name = spec.rpartition(":") if ":" in spec else (spec, "", "")
    path = Path(where)
    if name and not name.isidentifier():
        raise BPEError(f"{spec!r}: {name!r} is not a function or class name")
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise BPEError(f"no file {path} (a --variant entry is v1..v{len(VARIANTS)}, a .py file, "
                           f"or module:function)")
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as exc:
            raise BPEError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from None
        names = _top_level_names(tree)
        if not name and "Merger" in names:
            return Candidate(path.stem, "merger", str(path), _file_idea(tree, "your Merger"))
        name = name or next((n for n in FUNCTION_NAMES + CLASS_NAMES if n in names), "")
        if not name:
            raise BPEError(f"{path} defines neither a Merger class nor a function {' or '.join(FUNCTION_NAMES)} "
                           f"(nor a class {' or '.join(CLASS_NAMES)}); name another function or class as "
                           f"{path}:NAME")
        return _named(tree, path.stem, name, path.name, f"{path}:{name}")
    if not name:
        raise BPEError(f"unknown variant {spec!r}; valid variants: {', '.join(VARIANTS)} "
                       f"(or your own trainer: a .py file, or module:function)")
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise BPEError(f"no module {where!r} to import (for {spec!r}); is it on PYTHONPATH?")
    origin = getattr(found, "origin", None) or ""
    try:  # its source read, not run: the module is imported only in the child
        tree = ast.parse(Path(origin).read_bytes(), filename=origin) if origin.endswith(".py") else None
    except (OSError, SyntaxError):
        tree = None
    return _named(tree, where.rpartition(".")[2], name, where, spec)


def parse_variants(specs: str | Sequence[str] | None) -> list[Candidate]:
    """``--variant`` values (each a comma list; ``all`` = the ladder) as candidates, labels made unique.

    >>> [c.label for c in parse_variants(["v1,v2", "v2"])]
    ['v1', 'v2', 'v2#2']
    """
    if specs is None:
        specs = [best_variant()]
    elif isinstance(specs, str):
        specs = [specs]
    entries = [s.strip() for spec in specs for s in spec.split(",") if s.strip()]
    if not entries:
        raise BPEError("--variant is empty; name v1..vN, a .py file or module:function")
    candidates: list[Candidate] = []
    for entry in entries:
        found = [resolve(name) for name in VARIANTS] if entry == "all" else [resolve(entry)]
        for candidate in found:
            labels = {c.label for c in candidates}
            label, n = candidate.label, 1
            while label in labels:
                n += 1
                label = f"{candidate.label}#{n}"
            candidates.append(replace(candidate, label=label))
    return candidates
