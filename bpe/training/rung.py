"""The rung contract: what a rung of the ladder, ``variants/vN_<idea>.py``, defines.

A rung module defines

* a **docstring**: the idea, what it leaves out, its complexity, and a link to its page (``docs/vN.md``);
* ``IDEA``: one line, the optimization it adds (``bpe bench`` and the report print it);
* ``count_pretokens(path, special_tokens, *, workers=None, errors="strict", end=None, on_bytes=None,
  pattern="gpt2")``: the pre-token counts of the file (see :data:`COUNT_PRETOKENS_PARAMETERS`).  ``workers``
  may be ignored by a serial counter; ``end`` counts only the first ``end`` bytes (``--limit``; ``train_bpe``
  gives it on every run, with the path already checked, so a counter given an ``end`` trusts both);
  ``on_bytes(n)`` is called as each ``n`` more bytes are counted (the progress bar); ``pattern`` is the
  pre-tokenization pattern, a name (``gpt2``, ``cl100k``, ``o200k``) or a regex (:mod:`bpe.split.patterns`),
  counted exactly as ``regex.findall`` counts it, the file cut by its rule (:func:`bpe.split.patterns.cuts_of`).
  v1-v5 count every pattern with the plain counter; v6-v8's fast counter is GPT-2's alone, so they count
  any other pattern with the plain counter in the same pool (:func:`bpe.counting.parallel.counters_for`),
  and v7 shards those counts as it shards its own; v9 has a compiled scanner for each named pattern and
  counts a custom regex with ``regex`` on its threads.  ``train_bpe`` passes ``pattern`` only where it is
  not GPT-2's, so a trainer of your own written without it still runs with the default.  It returns the
  counts as :class:`~bpe.counting.plain.PretokenCounts` (every counter in
  :mod:`bpe.counting.plain` and :mod:`bpe.counting.parallel` does): ``len()``, the distinct
  pre-tokens, and ``total()``, all of them, for the run's corpus figures, and ``close()``, which
  ``train_bpe`` calls when anything fails before the ``Merger`` has taken the counts over.  Counts
  kept elsewhere answer the same three and are taken by their own ``Merger`` (v7's stay in its worker
  processes, and their ``close()`` stops them);
* ``Merger``: the merge algorithm (:class:`Merger` below, driven by
  :func:`bpe.training.merge_loop.run_merges`).  It accepts what ``count_pretokens`` returned and also
  a plain mapping of pre-token bytes to counts (``bpe trace``, ``python -m tools.merge_cost`` and the tests pass
  one).  Besides its two methods it defines ``count_of(pair)`` and ``set_aside(pair)``, which training's
  options call on (see :class:`Merger`), and it may define ``close()`` and ``summary()``, each optional.

Two are optional: ``COUNTS_IN``, where a ``count_pretokens`` that counts with more than one worker runs
them: ``"processes"`` (the process pool of :mod:`bpe.running.pool`, the default) or ``"threads"``
(threads of the calling process, each counting in compiled code without the GIL: v9); and
``count_texts(texts, special_tokens, *, workers=None, on_text=None, pattern="gpt2")``, the rung's counter
of a stream of texts (a corpus's batches of documents, :mod:`bpe.corpus.corpus`), which a rung whose counter
is its own defines (v9, which also takes a plain file's chunks as their UTF-8 bytes: ``COUNTS_BYTES = True``); the
others get the stream counter of their file counter (:func:`texts_counter`).  A rung may also say how its
counts go to a cluster in parts (``count_parts``, ``sum_parts``, ``joined_parts``: v9's arrays;
:func:`bpe.counting.parts.parts_of`).

Nothing else: what the tests and the lab need to know of a rung they find out from these (which rungs
count in several workers: :func:`parallel`; in the pool's processes: :func:`pooled`), and the lab's views
of a rung's state (``bpe trace``, the walkthrough's counts) are its own subclasses of the rung's ``Merger``.

:func:`check_rung` lists what a module leaves out; ``tests/ladder/test_rung_contract.py`` runs it on every
registered rung, so a rung missing a part fails a test rather than being skipped by one.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from types import ModuleType
from typing import Protocol

from bpe.counting.plain import count_file_serial
from bpe.errors import BPEError
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name
from bpe.training.merge_loop import Pair

#: ``count_pretokens``'s parameters: (name, kind, default); ``inspect.Parameter.empty`` for "no default".
COUNT_PRETOKENS_PARAMETERS = (
    ("path", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("special_tokens", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
    ("workers", inspect.Parameter.KEYWORD_ONLY, None),
    ("errors", inspect.Parameter.KEYWORD_ONLY, "strict"),
    ("end", inspect.Parameter.KEYWORD_ONLY, None),
    ("on_bytes", inspect.Parameter.KEYWORD_ONLY, None),
    ("pattern", inspect.Parameter.KEYWORD_ONLY, "gpt2"),
)


#: What every rung's ``Merger`` defines (:class:`Merger`): the two stages, then what the options call on.
MERGER_METHODS = ("select_best_pair", "merge", "count_of", "set_aside")


class Merger(Protocol):
    """A rung's merge algorithm: one method per timed stage, and two that training's options call on.

    The two are called only when ``train_bpe`` is given the option (:class:`~bpe.training.merge_loop.Rules`,
    :func:`~bpe.training.merge_loop.replay_merges`), so a run without options never calls them:

    * ``count_of(pair) -> int``: the pair's count now, 0 for a pair no word holds, also for a token no merge
      has made in this Merger (``min_frequency``; continued training, ``initial_merges``, which merges only
      the pairs the words hold);
    * ``set_aside(pair)``: called right after ``select_best_pair()`` returned ``pair``, which is then never
      to be merged (``max_token_length``); ``select_best_pair()`` then returns the best of the others.
      A pair may be returned again where the rung's structure can bring it back (a lazy heap, when its count
      rises): the loop sets it aside again.  A heap that only peeks at its top pops it (v5, v6, v8); a rung
      that scans keeps a set of the pairs set aside (v1, v2).

    Two methods are optional, each called only if the Merger defines it:

    * ``close()``: :func:`~bpe.training.merge_loop.run_merges` calls it once when the merges end, also
      on an error or Ctrl-C (v6 undoes ``gc.freeze()``, v7 stops its processes);
    * ``summary() -> dict``: plain JSON-able facts about its run, which ``train_bpe`` calls once after
      the merges (after ``close()``) and hands to the run's observer untouched
      (:mod:`bpe.training.observer`; the bench records them beside the run's timings, so a key should
      not be one of theirs).  v7: ``{"gathered_at": the merge its shards came back at, or None}``.
    """

    def __init__(self, pretoken_counts: Mapping[bytes, int]) -> None: ...  # pair_count stage

    def select_best_pair(self) -> Pair | None: ...  # select: the most frequent pair, ties -> larger bytes

    def merge(self, pair: Pair) -> None: ...  # update: rewrite the words, keep the counts up to date

    def count_of(self, pair: Pair) -> int: ...  # the pair's count now (min_frequency, continued training)

    def set_aside(self, pair: Pair) -> None: ...  # the pair just selected is never to be merged (max_token_length)


def merger_summary(merger) -> dict | None:
    """The facts of a Merger's optional ``summary()`` (:class:`Merger`), or ``None`` where it defines none; a
    summary that is not a dict is one line naming the class.

    >>> merger_summary(object()) is None
    True
    """
    summary = getattr(merger, "summary", None)
    if summary is None:
        return None
    facts = summary()
    if not isinstance(facts, dict):
        raise BPEError(f"{type(merger).__name__}.summary() must return a dict, got {type(facts).__name__}")
    return facts


def pattern_keyword(pattern: str) -> dict:
    """How ``train_bpe`` hands ``count_pretokens`` the pattern: ``{"pattern": pattern}``, or nothing for GPT-2's,
    so that a trainer of your own written without the parameter still runs with the default.

    >>> pattern_keyword("gpt2"), pattern_keyword("o200k")
    ({}, {'pattern': 'o200k'})
    """
    return {} if pattern_name(pattern) == DEFAULT_PATTERN else {"pattern": pattern}


def check_rung(module: ModuleType) -> list[str]:
    """What ``module`` leaves out of the contract, one line each; ``[]`` when it defines it all.

    >>> import types
    >>> check_rung(types.ModuleType("v9_empty"))  # doctest: +NORMALIZE_WHITESPACE
    ['v9_empty has no docstring', 'v9_empty.IDEA is missing', 'v9_empty.count_pretokens is missing',
     'v9_empty.Merger is missing']
    """
    name = module.__name__.rpartition(".")[2]
    problems = []
    if not (module.__doc__ or "").strip():
        problems.append(f"{name} has no docstring")
    idea = getattr(module, "IDEA", None)
    if idea is None:
        problems.append(f"{name}.IDEA is missing")
    elif not isinstance(idea, str) or not idea.strip() or "\n" in idea:
        problems.append(f"{name}.IDEA must be one non-empty line, got {idea!r}")
    count = getattr(module, "count_pretokens", None)
    if count is None:
        problems.append(f"{name}.count_pretokens is missing")
    else:
        problems += [f"{name}.count_pretokens: {p}" for p in _signature_problems(count)]
    merger = getattr(module, "Merger", None)
    if merger is None:
        problems.append(f"{name}.Merger is missing")
    else:
        for method in MERGER_METHODS:
            if not callable(getattr(merger, method, None)):
                problems.append(f"{name}.Merger has no method {method}")
    return problems


def _signature_problems(count) -> list[str]:
    try:
        parameters = list(inspect.signature(count).parameters.values())
    except (TypeError, ValueError):
        return ["its signature cannot be read"]
    problems = []
    by_name = {p.name: p for p in parameters}
    for position, (name, kind, default) in enumerate(COUNT_PRETOKENS_PARAMETERS):
        found = by_name.get(name)
        if found is None:
            problems.append(f"takes no {name}")
        elif found.kind != kind:
            problems.append(f"{name} must be {kind.description}, it is {found.kind.description}")
        elif found.default != default:
            problems.append(f"{name} must default to {default!r}, not {found.default!r}")
        elif kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and parameters.index(found) != position:
            problems.append(f"{name} must be positional parameter {position + 1}")
    return problems


def parallel(module) -> bool:
    """Whether the rung's ``count_pretokens`` may count in more than one worker: every counter but the serial
    one of v1 and v2 (:func:`~bpe.counting.plain.count_file_serial`).  The workers are processes
    (:func:`pooled`) or, for a rung whose ``COUNTS_IN`` says so, threads."""
    return module.count_pretokens is not count_file_serial


def pooled(module) -> bool:
    """Whether the rung's ``count_pretokens`` may count in the process pool: every parallel counter
    (:func:`parallel`) but those that count in threads (``COUNTS_IN = "threads"``: v9).  The pool's tests
    (a killed worker, no process left over) run the pooled rungs; the estimate times the serial ones as
    one process.
    """
    return parallel(module) and getattr(module, "COUNTS_IN", "processes") == "processes"


