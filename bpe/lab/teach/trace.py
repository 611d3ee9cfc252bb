"""``python -m bpe trace``: watch a variant's merge algorithm work, one merge at a time.

For each merge it prints the pair counts before it (the top ``k``, in selection order); the chosen
pair, and on a tie the rule that decided (the larger ``(bytes, bytes)`` pair wins); the affected words
before and after (from the inverted index ``pair_to_words`` when there is one), under each, for a
fine-grained update (v4+), that word's own change (``pair -n``/``+n``, then ``(xC)`` for its count);
the pair-count diff (recounted for v1, which keeps no counts); and the stale heap pops skipped (v5+).

A rung owes the trace nothing: :class:`~bpe.lab.teach.recorder.Recorder` makes the merges and reads the
merger's state by attribute or through its ``trace_state()`` (the table there), in snapshots, so the counts
and their diff are the merger's own; a word's fine-grained change comes from the ``merge_word_with_changes(word,
pair) -> (new_word, {pair: change})`` of the module of the merger's class or a base (v4+; it is pure).  A rung
whose row in the lab's table names a reader of its state (:mod:`bpe.lab.rung_states`) gets ``trace_state()``
from a subclass of its ``Merger`` made here for the trace alone (:func:`traced`).

``--variant mine.py`` traces a student's own ``Merger`` (:func:`with_merger`, as ``bench --variant``
takes a file); its words may be a list or a dict ``{word: count}``, and without ``pair_counts`` or
``count_pairs()`` they are recounted from its words.  ``--pretokenize`` and ``--encode`` print the
traces of :mod:`bpe.lab.teach.text_trace` instead.

The worked example (the CS336 handout's words, to which Part 2 of the seed series adds ``es`` and
``st``; the first choice is a tie with or without them):

>>> lines = trace_lines("v2", parse_words("low:5,lower:2,widest:3,newest:6,es:2,st:2"), 2, top=3)
>>> print("\\n".join(lines[3:8]))
merge 1
  pair counts (top 3 of 11): s t 11, e s 11, w e 8
  chosen: s t (count 11)
  tie at 11 between: s t, e s; the larger byte pair wins: (b's', b't') > (b'e', b's')
  affected words (3 of 6, from pair_to_words[s t]):
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from bpe.errors import BPEError
from bpe.io.byte_unicode import encode_token
from bpe.lab.judge.candidates import CandidateFailed, _raised, load_algorithm, resolve
from bpe.lab.rungs import rung_row
from bpe.lab.teach.recorder import Recorder, ranked
from bpe.lab.teach.text_trace import (
    DEFAULT_TEXT,
    encoding_lines,
    parse_words,  # noqa: F401 (the module docstring's example and tests/lab/teach/test_trace.py use it)
    pretokenize_lines,
    pretokens_from_args,
    show_word,
)
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.registry import VARIANTS, best_variant, get_variant

show_pair = show_word  # a pair shown as the two tokens it joins


def _word_changes_function(merger):
    """The variant's ``merge_word_with_changes``, found on the module of its class or a base class."""
    for cls in type(merger).__mro__:
        function = getattr(sys.modules.get(cls.__module__), "merge_word_with_changes", None)
        if callable(function):
            return function
    return None


def traced(name: str) -> type:
    """The rung ``name``'s ``Merger`` as the trace runs it: with ``trace_state()`` where its row in the lab's
    table of rungs (:data:`bpe.lab.rungs.RUNGS`) names one, for a rung whose state is not kept as v2 keeps it.

    >>> merger = traced("v6")({b"low": 5, b"lower": 2})
    >>> merger.merge((b"o", b"w")); merger.trace_state()["words"]
    [((b'l', b'ow'), 5), ((b'l', b'ow', b'e', b'r'), 2)]
    """
    merger, reader = VARIANTS[name].Merger, rung_row(name).trace_state
    return merger if reader is None else type(merger.__name__, (merger,), {"trace_state": reader})


def trace_lines(variant: str | None, pretoken_counts: Mapping[bytes, int], num_merges: int, top: int = 5) -> list[str]:
    """The trace as a list of lines (see the module docstring for what each merge shows) of a rung, or of a
    Python file of your own defining ``Merger`` (as ``bench --variant path.py`` takes it)."""
    return with_merger(variant, lambda merger, title: trace_merger(merger(pretoken_counts), title, num_merges, top))


def with_merger(variant: str | None, work):
    """``work(Merger class, title)`` with a rung's merger or the one a student's file defines; whatever the
    file's code raises, loading or running, is one :class:`BPEError` line naming the exception and where."""
    if variant is None or variant in VARIANTS:
        return work(traced(variant or best_variant()), f"{variant or 'default variant'} ({get_variant(variant).IDEA})")
    candidate = resolve(variant)
    if candidate.kind != "merger":
        raise BPEError(f"{variant}: bpe trace follows a Merger class merge by merge, and {candidate.spec} is a "
                       f"whole training function (bpe bench --variant times it and checks its merges)")
    try:
        return work(load_algorithm("merger", candidate.spec).Merger, f"{candidate.label} ({candidate.idea})")
    except CandidateFailed as exc:  # loading the file failed
        raise BPEError(str(exc)) from None
    except (BPEError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the student's code: whatever it raises is one line, and where
        raise BPEError(f"{variant} raised {_raised(exc)}") from None


def trace_merger(merger, title: str, num_merges: int, top: int = 5, max_words: int = 10) -> list[str]:
    """Trace any object with the merge-algorithm interface (see :mod:`bpe.training.merge_loop`)."""
    if num_merges < 1:
        raise BPEError(f"--merges must be at least 1, got {num_merges}")
    if top < 1:
        raise BPEError(f"--top must be at least 1, got {top}")
    recorder, word_changes = Recorder(merger), _word_changes_function(merger)
    words = recorder.state["words"]
    lines = [f"trace of {title}",
             f"{len(words)} words: " + ", ".join(f"{encode_token(b''.join(w))}:{c}" for w, c in words[:max_words])
             + (", ..." if len(words) > max_words else ""),
             "(tokens as in GPT-2 merges.txt: Ġ is a space, Ċ a newline)"]
    for number in range(1, num_merges + 1):
        merge = recorder.step()
        (state, selected, _), pair = merge.states, merge.pair
        ranked_pairs = ranked(state["pair_counts"])
        lines.append(f"merge {number}")
        shown = ", ".join(f"{show_pair(p)} {c}" for p, c in ranked_pairs[:top])
        lines.append(f"  pair counts (top {min(top, len(ranked_pairs))} of {len(ranked_pairs)}): {shown or '(none)'}")
        if pair is None:
            lines.append("  no pair left: training stops early")
            break
        lines.append(f"  chosen: {show_pair(pair)} (count {merge.count})")
        if pair != ranked_pairs[0][0]:  # a bug in a variant under development: say so instead of explaining it
            lines.append(f"  WRONG: the rule (highest count, then the larger byte pair) picks "
                         f"{show_pair(ranked_pairs[0][0])} (count {ranked_pairs[0][1]})")
        elif len(merge.tied) > 1:
            lines.append(f"  tie at {merge.count} between: {', '.join(show_pair(p) for p in merge.tied)}; "
                         f"the larger byte pair wins: {pair!r} > {merge.tied[1]!r}")
        if state["stale_pops"] is not None and selected["stale_pops"] is not None:
            heap, live = selected["heap_size"], len(ranked_pairs)
            size = f" (heap now {heap} entries for {live} live pairs)" if heap is not None else ""
            lines.append(f"  stale heap pops skipped: {selected['stale_pops'] - state['stale_pops']}{size}")
        source = (f"from pair_to_words[{show_pair(pair)}]" if state["pair_to_words"] is not None
                  else "found by scanning every word: no index")
        lines.append(f"  affected words ({len(merge.words)} of {len(state['words'])}, {source}):")
        for _, old, new, count in merge.words[:max_words]:
            lines.append(f"    {show_word(old)} x{count} -> {show_word(new)}")
            if word_changes is not None:
                _, changes = word_changes(old, pair)
                shown = ", ".join(f"{show_pair(p)} {c:+d}" for p, c in changes.items())
                lines.append(f"      fine-grained diff: {shown} (x{count})")
        if len(merge.words) > max_words:
            lines.append(f"    ... {len(merge.words) - max_words} more")
        how = "kept by the variant" if state["kept"] else "recounted: this variant keeps no pair counts"
        changes = ", ".join(f"{show_pair(p)} {old}->{new}" for p, old, new in merge.changed)
        lines.append(f"  pair-count diff ({how}): {changes or '(none)'}")
    ranked_pairs = ranked(recorder.state["pair_counts"])
    lines.append(f"after {len(recorder.merges)} merge(s): "
                 + (", ".join(f"{show_pair(p)} {c}" for p, c in ranked_pairs[:top]) or "no pairs left"))
    lines.append("merges: " + ", ".join(show_pair(p) for p in recorder.merges))
    return lines


def run_trace(variant: str | None, text: str | None, words: str | None, num_merges: int, top: int,
              special_tokens: list[str], *, pretokenize: bool = False, encode: str | None = None) -> list[str]:
    """Print the trace: of the merges (default), of pre-tokenizing ``text`` (``pretokenize``), or of
    encoding ``encode`` with the merges trained on ``text`` or ``words``."""
    if pretokenize:
        lines = pretokenize_lines(text if text is not None else DEFAULT_TEXT, special_tokens)
    elif encode is not None:
        if num_merges < 1:
            raise BPEError(f"--merges must be at least 1, got {num_merges}")
        counts = pretokens_from_args(text, words, special_tokens)  # the merges the variant makes on them
        merges = with_merger(variant, lambda merger, _: run_merges(merger(counts), num_merges, NullTimer()))
        lines = [f"trained {len(merges)} merge(s): " + ", ".join(show_pair(p) for p in merges)]
        lines += encoding_lines(encode, merges, special_tokens)
    else:
        lines = trace_lines(variant, pretokens_from_args(text, words, special_tokens), num_merges, top)
    print("\n".join(lines))
    return lines
