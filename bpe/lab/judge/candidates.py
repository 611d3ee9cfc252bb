"""What ``--variant`` names, a *candidate*: a rung of the ladder, or your own trainer (docs/exercises.md)::

    --variant v6                          a ladder variant
    --variant path/to/mine.py             a file defining ``Merger`` (the ladder's protocol), or else
                                          ``train_bpe`` or ``run_train_bpe`` (the CS336 signature)
    --variant path/to/mine.py:my_train    a function of that signature (``mypackage.module:my_train`` too)
    --variant path/to/bpe_v1.py:BPE_Trainer
                                          a class: ``BPE_Trainer().train(input_path, vocab_size, special_tokens)``
    --variant v5,v6,mine.py               several, run in that order (the flag may be repeated)

What an entry names is read here without running it (:func:`resolve`: a file's syntax tree says what it
defines).  Its code runs only in the child that times it (:mod:`bpe.lab.measure.timed_run`) or a tool that
runs it (``bpe trace``, ``python -m tools.merge_cost``), through this module's second half: a file imported as
``import mine`` would (:func:`load_file_module`), whatever it raises one line (:func:`call_candidate`), what it
returns checked for shape (:func:`check_trained`) and its vocab against its merges (:func:`vocab_problems`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType, SimpleNamespace

from bpe.counting.parallel import count_file_parallel
from bpe.counting.plain import PretokenCounts
from bpe.errors import BPEError
from bpe.training.merge_loop import Pair
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


# --- A candidate's own code, loaded and called (in the child, or a tool that runs it) ---------------

class CandidateFailed(Exception):
    """The candidate's own code failed; the message is one line for the table."""


def _not_python(path) -> str:
    return f"{path} is not a Python file; a candidate is a variant name ({', '.join(VARIANTS)}) or a .py file"


def load_file_module(path: str | Path) -> ModuleType:
    """Import a Python file as ``import mine`` would: registered in ``sys.modules`` under its own name
    (``candidate_<name>`` when that is not an identifier or names another module), its folder first on
    ``sys.path``, so that it can import its neighbours and a ``multiprocessing.Pool`` it starts can import
    it again to unpickle its functions."""
    path = Path(path)
    if path.suffix != ".py":
        raise BPEError(_not_python(path))
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name, taken = path.stem, sys.modules.get(path.stem)
    if not name.isidentifier() or (taken is not None and
                                   Path(getattr(taken, "__file__", None) or "").resolve() != path.resolve()):
        name = "candidate_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if name in sys.modules:  # already imported (a neighbour imported it): the same module, not a second copy
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _raised(exc: BaseException) -> str:
    """``ValueError: boom (mine.py line 12)``: the last line of the candidate's traceback, and where."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({Path(frames[-1].filename).name} line {frames[-1].lineno})" if frames else ""
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        where = f" ({Path(exc.filename or '?').name} line {exc.lineno})"
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return f"{last}{where}"


def call_candidate(what: str, fn, *args):
    """``fn(*args)``, with anything it raises (even ``SystemExit``) turned into :class:`CandidateFailed`."""
    try:
        return fn(*args)
    except (KeyboardInterrupt, CandidateFailed):  # an interrupt, or a failure already said in one line
        raise
    except BaseException as exc:  # the candidate's code: whatever it raises is its result, reported
        raise CandidateFailed(f"{what} raised {_raised(exc)}") from None


def load_function(spec: str):
    """The function a ``file.py:function`` or ``module:function`` spec names (in the child); for a class,
    the ``train`` method of an instance made with no arguments (``BPE_Trainer().train``)."""
    where, _, name = spec.rpartition(":")
    if where.endswith(".py") or Path(where).is_file():
        module = call_candidate(f"importing {Path(where).name}", load_file_module, where)
    else:
        module = call_candidate(f"importing {where}", importlib.import_module, where)
    fn = getattr(module, name, None)
    if isinstance(fn, type):
        instance = call_candidate(f"{name}()", fn)
        train = getattr(instance, "train", None)
        if not callable(train):
            raise CandidateFailed(f"{where}: class {name} has no train method "
                                  "(expected train(input_path, vocab_size, special_tokens))")
        return train
    if not callable(fn):
        raise CandidateFailed(f"{where} has no function {name}")
    return fn


def load_algorithm(candidate_kind: str, spec: str):
    """The one loader of a merge algorithm: a variant's module (``candidate_kind`` ``variant``), or a
    namespace with the ``Merger`` and pre-tokenizer of the Python file ``spec`` names.

    A missing file, one without ``Merger``, or one whose import raises, is :class:`CandidateFailed`.
    """
    if candidate_kind == "variant":
        return VARIANTS[spec]
    if not Path(spec).is_file():
        raise CandidateFailed(f"no variant or file named {spec!r}; variants: {', '.join(VARIANTS)}")
    if Path(spec).suffix != ".py":
        raise CandidateFailed(_not_python(spec))
    module = call_candidate(f"importing {Path(spec).name}", load_file_module, spec)
    merger = getattr(module, "Merger", None)
    if merger is None:
        raise CandidateFailed(f"{spec} defines no Merger class")
    own_counter = getattr(module, "count_pretokens", None)
    return SimpleNamespace(Merger=merger, count_pretokens=_with_on_bytes(own_counter) or count_file_parallel,
                           own_counter=own_counter is not None)


def _with_on_bytes(count):
    """A candidate's own pre-tokenizer, taking a rung's settings (bpe/training/rung.py), returning a
    ``PretokenCounts``.  A counter may lack ``on_bytes`` (its bytes are then reported at the end) or ``end``
    (only ``--limit`` needs it)."""
    if count is None:
        return None
    try:
        parameters = inspect.signature(count).parameters
    except (TypeError, ValueError):
        parameters = {}
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if takes_kwargs or {"workers", "errors", "end", "on_bytes"} <= set(parameters):
        return lambda path, special_tokens, **kwargs: _as_counts(count(path, special_tokens, **kwargs))

    def counted_then_reported(path, special_tokens, *, on_bytes=None, **kwargs):
        if "pattern" in kwargs and "pattern" not in parameters:  # given only when it is not GPT-2's
            raise CandidateFailed(f"its count_pretokens takes no pattern, so it cannot count by --pattern "
                                  f"{kwargs['pattern']}; add a pattern parameter, or leave the counting to the lab")
        if "end" not in parameters and kwargs.get("end") == Path(path).stat().st_size:
            del kwargs["end"]  # the whole file: the same as no end
        if parameters and "workers" not in parameters:
            kwargs.pop("workers", None)  # a counter without the setting decides its own processes
        if parameters and "errors" not in parameters and kwargs.get("errors") == "strict":
            del kwargs["errors"]  # the default: strict UTF-8
        counts = _as_counts(count(path, special_tokens, **kwargs))
        if on_bytes is not None:
            on_bytes(kwargs.get("end") or Path(path).stat().st_size)
        return counts

    return counted_then_reported


def _as_counts(counts) -> PretokenCounts:
    if not isinstance(counts, Mapping):  # a Counter of a list would count its items
        raise TypeError(f"count_pretokens returned a {type(counts).__name__}, not a dict of pre-token bytes to counts")
    return counts if isinstance(counts, PretokenCounts) else PretokenCounts(counts)


def check_trained(result, what: str) -> tuple[dict, list]:
    """``(vocab, merges)`` from a CS336-style function, or :class:`CandidateFailed` naming the wrong shape."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        shown = type(result).__name__ + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else "")
        raise CandidateFailed(f"{what} returned a {shown}; expected (vocab, merges)")
    vocab, merges = result
    if not isinstance(vocab, dict):
        raise CandidateFailed(f"{what} returned a vocab of type {type(vocab).__name__}; expected dict[int, bytes]")
    for key, value in vocab.items():
        if not isinstance(key, int) or not isinstance(value, bytes):
            raise CandidateFailed(f"{what}'s vocab has the entry {key!r}: {value!r}; expected int -> bytes")
    if not isinstance(merges, (list, tuple)):
        raise CandidateFailed(f"{what} returned merges of type {type(merges).__name__}; "
                              "expected list[tuple[bytes, bytes]]")
    for i, pair in enumerate(merges):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, bytes) for t in pair)):
            raise CandidateFailed(f"{what}'s merges[{i}] is {pair!r}; expected a pair (bytes, bytes)")
    return vocab, [tuple(pair) for pair in merges]


def vocab_problems(vocab: Mapping[int, bytes], merges: Sequence[Pair], special_tokens: Sequence[str],
                   vocab_size: int | None = None) -> list[str]:
    """What is wrong with a trained vocab beside its merges (CS336: ids ``0..n-1``, the 256 single bytes,
    each special token once, one entry per merge, at most ``vocab_size``); empty when nothing is.

    >>> single_bytes = {i: bytes([i]) for i in range(256)}
    >>> vocab_problems(single_bytes | {256: b"<|e|>", 257: b"ab"}, [(b"a", b"b")], ["<|e|>"])
    []
    >>> for problem in vocab_problems(single_bytes | {256: b"ab"}, [(b"a", b"b")], ["<|e|>"], 258):
    ...     print(problem)
    its vocab lacks the special token '<|e|>'
    its vocab has 257 entries, not 256 bytes + 1 special + 1 merges = 258
    """
    problems = []
    values = Counter(vocab.values())
    for token in special_tokens:
        n = values.get(token.encode("utf-8"), 0)
        if n != 1:
            problems.append(f"its vocab lacks the special token {token!r}" if n == 0 else
                            f"its vocab holds the special token {token!r} {n} times")
    missing = [b for b in range(256) if values.get(bytes([b]), 0) == 0]
    if missing:
        problems.append(f"its vocab lacks {len(missing)} of the 256 single bytes (first: {bytes([missing[0]])!r})")
    lacking = [pair for pair in merges if values.get(pair[0] + pair[1], 0) == 0]
    if lacking:
        problems.append(f"its vocab lacks the token of {len(lacking):,} merge(s) (first: {tuple(lacking[0])})")
    expected = 256 + len(special_tokens) + len(merges)
    if len(vocab) != expected:
        problems.append(f"its vocab has {len(vocab):,} entries, not 256 bytes + {len(special_tokens)} special + "
                        f"{len(merges):,} merges = {expected:,}")
    elif sorted(vocab) != list(range(len(vocab))):
        problems.append(f"its vocab ids are not 0..{len(vocab) - 1} (CS336's tests compare ids and tokens)")
    if vocab_size is not None and len(vocab) > vocab_size:
        problems.append(f"its vocab has {len(vocab):,} entries, more than vocab_size {vocab_size:,}")
    return problems
