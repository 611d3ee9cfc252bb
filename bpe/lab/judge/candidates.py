"""What ``--variant`` names, a *candidate*: a rung of the ladder, or your own trainer.

``bpe bench --variant`` and ``bpe report --variant`` take a comma list, and the flag may be repeated::

    --variant v6                          a ladder variant
    --variant path/to/mine.py             a file defining ``Merger`` (the ladder's protocol, see
                                          bpe/training/merge_loop.py), or else ``train_bpe`` or
                                          ``run_train_bpe`` (the CS336 signature)
    --variant path/to/mine.py:my_train    a function of that signature in a file
    --variant mypackage.module:my_train   a function of that signature in an importable module
    --variant path/to/bpe_v1.py:BPE_Trainer
                                          a class whose ``train`` method has that signature
                                          (``BPE_Trainer().train(input_path, vocab_size, special_tokens)``,
                                          as some published trainers are written); ``module:Class`` too
    --variant v5,v6,mine.py               several, run in that order

A ``Merger`` candidate is pre-tokenized by the pooled counter (or its own ``count_pretokens``) and
gets every stage timed; a function is timed as a whole.  A file is read here without running it (its
syntax tree says what it defines): its code runs only in the child (:mod:`bpe.lab.measure.timed_run`), loaded and
called by :mod:`bpe.lab.judge.candidate_code`.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
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


def _module_tree(module: str) -> ast.Module | None:
    """The syntax tree of an importable module's source file, found without importing it (None if none)."""
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    if not origin or not origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(origin).read_bytes(), filename=origin)
    except (OSError, SyntaxError):
        return None


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


def _parse_file(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise BPEError(f"{path}: syntax error on line {exc.lineno}: {exc.msg}") from None


def _label(module: str, function: str, is_class: bool = False) -> str:
    """A function's row is named after it, unless it has the handout's name: then after its file or
    module.  A class's row is named after its file or module (``bpe_v1.py:BPE_Trainer``: ``bpe_v1``)."""
    return module if is_class or function in FUNCTION_NAMES else function


def _named(tree: ast.Module, module: str, name: str, where: str, spec: str) -> Candidate:
    """The candidate for ``name`` in a file or module whose syntax tree is ``tree``: a class or a function."""
    if name in {node.name for node in tree.body if isinstance(node, ast.ClassDef)}:
        return Candidate(_label(module, name, True), "function", spec,
                         _file_idea(tree, f"{name}().train in {where}"))
    return Candidate(_label(module, name), "function", spec, _file_idea(tree, f"{name} in {where}"))


def resolve(spec: str) -> Candidate:
    """The :class:`Candidate` a ``--variant`` entry names, or a :class:`BPEError` saying why none."""
    if spec in VARIANTS:
        return Candidate(spec, "variant", spec, VARIANTS[spec].IDEA)
    path_part, _, function = spec.rpartition(":") if ":" in spec else (spec, "", "")
    path = Path(path_part)
    if function and not function.isidentifier():
        raise BPEError(f"{spec!r}: {function!r} is not a function or class name")
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise BPEError(f"no file {path} (a --variant entry is v1..v{len(VARIANTS)}, a .py file, "
                           f"or module:function)")
        tree = _parse_file(path)
        if function:
            return _named(tree, path.stem, function, path.name, f"{path}:{function}")
        names = _top_level_names(tree)
        if "Merger" in names:
            return Candidate(path.stem, "merger", str(path), _file_idea(tree, "your Merger"))
        for name in FUNCTION_NAMES + CLASS_NAMES:
            if name in names:
                return _named(tree, path.stem, name, path.name, f"{path}:{name}")
        raise BPEError(f"{path} defines neither a Merger class nor a function {' or '.join(FUNCTION_NAMES)} "
                       f"(nor a class {' or '.join(CLASS_NAMES)}); name another function or class as "
                       f"{path}:NAME")
    if function:
        try:
            found = importlib.util.find_spec(path_part)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise BPEError(f"no module {path_part!r} to import (for {spec!r}); is it on PYTHONPATH?")
        module = path_part.rpartition(".")[2]
        tree = _module_tree(path_part)
        if tree is not None:
            return _named(tree, module, function, path_part, spec)
        return Candidate(_label(module, function), "function", spec, f"{function} from {path_part}")
    raise BPEError(f"unknown variant {spec!r}; valid variants: {', '.join(VARIANTS)} "
                   f"(or your own trainer: a .py file, or module:function)")


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
            candidates.append(Candidate(label, candidate.kind, candidate.spec, candidate.idea))
    return candidates
