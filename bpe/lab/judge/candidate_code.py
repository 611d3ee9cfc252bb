"""A candidate's own code, loaded and called: only in the child that times it (:mod:`bpe.lab.measure.timed_run`),
or a tool that runs it (``bpe trace``, ``bpe merge-cost``).  What ``--variant`` names is read without running it
(:mod:`bpe.lab.judge.candidates`); here its errors become one line (:func:`call_candidate`), a file is imported as
``import mine`` would (:func:`load_file_module`), and what it returns is checked for shape (:func:`check_trained`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace

from bpe.errors import BPEError
from bpe.training.pretokenize import PretokenCounts
from bpe.training.registry import VARIANTS


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
    except KeyboardInterrupt:
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
    from bpe.training.parallel import count_file_parallel

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
    """A candidate's own pre-tokenizer, taking the settings a rung's does (bpe/training/rung.py) and returning
    a ``PretokenCounts``.  A file written before it knew of progress may leave ``on_bytes`` out (its bytes
    are then reported at the end), and one without ``end`` still runs on a whole file: only ``--limit``
    needs it."""
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
