"""``python -m bpe trace``: watch a variant's merge algorithm work, one merge at a time.

For each merge it prints the pair counts before it (the top ``k``, in selection order); the chosen
pair, and on a tie the rule that decided (the larger ``(bytes, bytes)`` pair wins); the affected words
before and after (from the inverted index ``pair_to_words`` when there is one); under each, for a
fine-grained update (v4+), the change computed for that word (``pair -n``/``+n``, then ``(xC)`` for
the word's count); the pair-count diff applied (v1 keeps no counts, so its diff is recounted); and
the stale heap pops skipped (v5+), with the heap's size against the live pairs.

A rung owes the trace nothing: the tracer discovers what a merger has by attribute:

==================  ======================================================================
``pair_counts``     ``{(bytes, bytes): count}`` kept between merges (v2+); else ``count_pairs()``
``words``           a list of words (tuples of ``bytes``), with ``word_counts`` beside it, or a
                    list of ``(word, count)`` tuples (v1)
``pair_to_words``   ``{pair: word ids}``, the inverted index (v2+)
``stale_pops``      an ``int`` that grows by one per stale heap entry popped (v5+)
``heap``            a list of heap entries, live and stale (v5+); only its length is shown
==================  ======================================================================

and ``merge_word_with_changes(word, pair) -> (new_word, {pair: change})`` (v4+) on the modules of the
merger's class and its bases, called again on each affected word (it is pure).  A merger whose internals
differ offers ``trace_state() -> dict`` with any of those keys (and ``heap_size``) in those forms, which
take precedence over the attributes; only the trace calls it.  The rungs that need one (v6, v7: words of
token ids, v7's spread over processes; v8: C arrays) get it from the lab's subclass of their ``Merger``
(:mod:`bpe.lab.teach.traced_rungs`); a file of your own may define it.

``--variant mine.py`` traces a student's own ``Merger`` (:func:`merger_to_trace`, as ``bench --variant``
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
from collections.abc import Iterable, Mapping

from bpe.io.byte_unicode import encode_token
from bpe.errors import BPEError
from bpe.training.merge_loop import Pair, Word
from bpe.training.pretokenize import count_text
from bpe.training.registry import VARIANTS, best_variant, get_variant
from bpe.lab.teach.traced_rungs import traced

DEFAULT_WORDS = "low:5,lower:2,widest:3,newest:6,es:2,st:2"
#: What ``--pretokenize`` cuts without ``--text``: a contraction, numbers, spaces, a newline, a special token.
DEFAULT_TEXT = "It's 2024, and we don't   stop.\nThe end!<|endoftext|>Once upon a time..."


def parse_words(spec: str) -> dict[bytes, int]:
    """``'low:5,lower:2'`` -> ``{b'low': 5, b'lower': 2}``; a word without ``:n`` counts once.

    >>> parse_words("low:5, lower:2,x")
    {b'low': 5, b'lower': 2, b'x': 1}
    """
    counts: dict[bytes, int] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        word, sep, count_text = item.rpartition(":")
        if not sep:
            word, count_text = item, "1"
        if not word:
            raise BPEError(f"--words item {item!r} has no word before ':'")
        try:
            count = int(count_text)
        except ValueError:
            raise BPEError(f"--words item {item!r}: count {count_text!r} is not an integer") from None
        if count < 1:
            raise BPEError(f"--words item {item!r}: count must be at least 1")
        key = word.encode("utf-8")
        counts[key] = counts.get(key, 0) + count
    if not counts:
        raise BPEError("--words is empty; give words like 'low:5,lower:2'")
    return counts


def show_token(token: bytes) -> str:
    """A token as GPT-2's merges.txt writes it (a space shows as ``Ġ``, a newline as ``Ċ``)."""
    return encode_token(token)


def show_pair(pair: Pair) -> str:
    return f"{show_token(pair[0])} {show_token(pair[1])}"


def show_word(word: Iterable[bytes]) -> str:
    return " ".join(show_token(t) for t in word)


class MergerView:
    """Reads a merger's state in one standard form, whatever the variant keeps."""

    def __init__(self, merger):
        self.merger = merger

    def _state(self) -> dict:
        hook = getattr(self.merger, "trace_state", None)
        return hook() if callable(hook) else {}

    def _get(self, name: str):
        """``name`` from the merger's ``trace_state()``, else its attribute of that name (``None``: neither)."""
        state = self._state()
        return state[name] if name in state else getattr(self.merger, name, None)

    def pair_counts(self) -> tuple[dict[Pair, int], bool]:
        """Live pair counts (count > 0) and whether the variant keeps them (True) or they were recounted
        (by its ``count_pairs()``, else by the trace from its words)."""
        counts, kept = self._get("pair_counts"), True
        if counts is None:
            count_pairs = getattr(self.merger, "count_pairs", None)
            counts, kept = (count_pairs() if count_pairs is not None else self._recount()), False
        return {pair: count for pair, count in counts.items() if count > 0}, kept

    def _recount(self) -> dict[Pair, int]:
        counts: dict[Pair, int] = {}
        for word, count in self.words():
            for pair in zip(word, word[1:]):
                counts[pair] = counts.get(pair, 0) + count
        return counts

    def words(self) -> list[tuple[Word, int]]:
        """``(word, count)`` for each word, from ``trace_state()["words"]``, ``words`` with ``word_counts``,
        a list of ``(word, count)`` or a dict ``{word: count}``."""
        state = self._state()
        if "words" in state:
            return [(tuple(w), c) for w, c in state["words"]]
        words = getattr(self.merger, "words", None)
        counts = getattr(self.merger, "word_counts", None)
        try:
            if counts is not None:
                return list(zip(words, counts))
            if isinstance(words, Mapping):
                return [(tuple(w), c) for w, c in words.items()]
            return [(tuple(w), c) for w, c in words]
        except (TypeError, ValueError):
            raise BPEError(f"cannot trace {type(self.merger).__module__}: its Merger's words are not a list of "
                           f"words with word_counts, of (word, count) pairs, or a dict word -> count; define "
                           f"trace_state() (bpe/lab/teach/trace.py)") from None

    def pair_to_words(self) -> Mapping[Pair, Iterable[int]] | None:
        return self._get("pair_to_words")

    def stale_pops(self) -> int | None:
        return self._get("stale_pops")

    def heap_size(self) -> int | None:
        state = self._state()
        if "heap_size" in state:
            return state["heap_size"]
        heap = getattr(self.merger, "heap", None)
        return None if heap is None else len(heap)

    def word_changes_function(self):
        """The variant's ``merge_word_with_changes``, found on the module of its class or a base class."""
        for cls in type(self.merger).__mro__:
            function = getattr(sys.modules.get(cls.__module__), "merge_word_with_changes", None)
            if callable(function):
                return function
        return None


def _ranked(counts: Mapping[Pair, int]) -> list[tuple[Pair, int]]:
    """Pairs in selection order: higher count first, then the larger byte pair."""
    return sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)


def trace_lines(variant: str | None, pretoken_counts: Mapping[bytes, int], num_merges: int, top: int = 5,
                max_words: int = 10) -> list[str]:
    """The trace as a list of lines (see the module docstring for what each merge shows).

    ``variant`` is a rung, or a Python file of your own defining ``Merger`` (as ``bench --variant
    path.py`` takes it): whatever its code raises is one line naming the exception and where.
    """
    merger_class, title = merger_to_trace(variant)
    return _own_code(variant, lambda: trace_merger(merger_class(pretoken_counts), title, num_merges, top, max_words))


def merger_to_trace(variant: str | None):
    """``(Merger class, title)``: a rung's, or the one a student's file defines."""
    if variant is None or variant in VARIANTS:
        module = get_variant(variant)
        return traced(variant or best_variant()), f"{variant or 'default variant'} ({module.IDEA})"
    from bpe.lab.judge.candidate_code import load_algorithm
    from bpe.lab.judge.candidates import resolve

    candidate = resolve(variant)
    if candidate.kind != "merger":
        raise BPEError(f"{variant}: bpe trace follows a Merger class merge by merge, and {candidate.spec} is a "
                       f"whole training function (bpe bench --variant times it and checks its merges)")
    algorithm = _own_code(variant, lambda: load_algorithm("merger", candidate.spec))
    return algorithm.Merger, f"{candidate.label} ({candidate.idea})"


def _own_code(variant: str | None, run):
    """``run()``; for a file of the student's, anything it raises as one :class:`BPEError` line."""
    if variant is None or variant in VARIANTS:
        return run()
    from bpe.lab.judge.candidate_code import CandidateFailed, _raised

    try:
        return run()
    except CandidateFailed as exc:  # loading the file failed
        raise BPEError(str(exc)) from None
    except (BPEError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the student's code: whatever it raises is one line, and where
        raise BPEError(f"{variant} raised {_raised(exc)}") from None


def trained_merges(variant: str | None, pretoken_counts: Mapping[bytes, int], num_merges: int) -> list[Pair]:
    """The merges ``variant`` (a rung or a file) makes on ``pretoken_counts``."""
    from bpe.training.merge_loop import run_merges
    from bpe.training.timer import NullTimer

    merger_class, _ = merger_to_trace(variant)
    return _own_code(variant, lambda: run_merges(merger_class(pretoken_counts), num_merges, NullTimer()))


def trace_merger(merger, title: str, num_merges: int, top: int = 5, max_words: int = 10) -> list[str]:
    """Trace any object with the merge-algorithm interface (see :mod:`bpe.training.merge_loop`)."""
    if num_merges < 1:
        raise BPEError(f"--merges must be at least 1, got {num_merges}")
    if top < 1:
        raise BPEError(f"--top must be at least 1, got {top}")
    view = MergerView(merger)
    words = view.words()
    lines = [f"trace of {title}",
             f"{len(words)} words: " + ", ".join(f"{show_token(b''.join(w))}:{c}" for w, c in words[:max_words])
             + (", ..." if len(words) > max_words else ""),
             "(tokens as in GPT-2 merges.txt: Ġ is a space, Ċ a newline)"]
    word_changes = view.word_changes_function()
    merges: list[Pair] = []
    for number in range(1, num_merges + 1):
        before, kept = view.pair_counts()
        words_before = view.words()
        index = view.pair_to_words()
        stale_before = view.stale_pops()
        pair = merger.select_best_pair()
        lines.append(f"merge {number}")
        ranked = _ranked(before)
        shown = ", ".join(f"{show_pair(p)} {c}" for p, c in ranked[:top])
        lines.append(f"  pair counts (top {min(top, len(ranked))} of {len(ranked)}): {shown or '(none)'}")
        if pair is None:
            lines.append("  no pair left: training stops early")
            break
        best = before.get(pair)
        lines.append(f"  chosen: {show_pair(pair)} (count {best})")
        if pair != ranked[0][0]:  # a bug in a variant under development: say so instead of explaining it
            lines.append(f"  WRONG: the rule (highest count, then the larger byte pair) picks "
                         f"{show_pair(ranked[0][0])} (count {ranked[0][1]})")
        else:
            tied = [p for p, c in ranked if c == best]
            if len(tied) > 1:
                lines.append(f"  tie at {best} between: {', '.join(show_pair(p) for p in tied)}; "
                             f"the larger byte pair wins: {pair!r} > {tied[1]!r}")
        stale_after = view.stale_pops()
        if stale_before is not None and stale_after is not None:
            heap_size = view.heap_size()
            size = f" (heap now {heap_size} entries for {len(before)} live pairs)" if heap_size is not None else ""
            lines.append(f"  stale heap pops skipped: {stale_after - stale_before}{size}")
        if index is not None:
            affected_ids = sorted(index.get(pair, ()))
            source = f"from pair_to_words[{show_pair(pair)}]"
        else:
            affected_ids = [i for i, (w, _) in enumerate(words_before) if pair in zip(w, w[1:])]
            source = "found by scanning every word: no index"
        merger.merge(pair)
        merges.append(pair)
        words_after = view.words()
        lines.append(f"  affected words ({len(affected_ids)} of {len(words_before)}, {source}):")
        for word_id in affected_ids[:max_words]:
            old, count = words_before[word_id]
            lines.append(f"    {show_word(old)} x{count} -> {show_word(words_after[word_id][0])}")
            if word_changes is not None:
                _, changes = word_changes(old, pair)
                shown = ", ".join(f"{show_pair(p)} {c:+d}" for p, c in changes.items())
                lines.append(f"      fine-grained diff: {shown} (x{count})")
        if len(affected_ids) > max_words:
            lines.append(f"    ... {len(affected_ids) - max_words} more")
        after, _ = view.pair_counts()
        diff = {p: after.get(p, 0) - before.get(p, 0) for p in before.keys() | after.keys()}
        diff = {p: d for p, d in diff.items() if d}
        how = "kept by the variant" if kept else "recounted: this variant keeps no pair counts"
        changes = ", ".join(f"{show_pair(p)} {before.get(p, 0)}->{after.get(p, 0)}" for p, d in
                            sorted(diff.items(), key=lambda item: (-abs(item[1]), item[0])))
        lines.append(f"  pair-count diff ({how}): {changes or '(none)'}")
    after, _ = view.pair_counts()
    ranked = _ranked(after)
    lines.append(f"after {len(merges)} merge(s): " + (", ".join(f"{show_pair(p)} {c}" for p, c in ranked[:top])
                                                       or "no pairs left"))
    lines.append("merges: " + ", ".join(show_pair(p) for p in merges))
    return lines


def pretokens_from_args(text: str | None, words: str | None, special_tokens: list[str]) -> dict[bytes, int]:
    if text is not None and words is not None:
        raise BPEError("give --text or --words, not both")
    if text is not None:
        counts = dict(count_text(text, special_tokens))
        if not counts:
            raise BPEError("--text has no pre-tokens")
        return counts
    return parse_words(words if words is not None else DEFAULT_WORDS)


def run_trace(variant: str | None, text: str | None, words: str | None, num_merges: int, top: int,
              special_tokens: list[str], out=None, *, pretokenize: bool = False, encode: str | None = None) -> list[str]:
    """Print the trace: of the merges (default), of pre-tokenizing ``text`` (``pretokenize``), or of
    encoding ``encode`` with the merges trained on ``text`` or ``words``."""
    from bpe.lab.teach.text_trace import encoding_lines, pretokenize_lines

    if pretokenize:
        lines = pretokenize_lines(text if text is not None else DEFAULT_TEXT, special_tokens)
    elif encode is not None:
        if num_merges < 1:
            raise BPEError(f"--merges must be at least 1, got {num_merges}")
        merges = trained_merges(variant, pretokens_from_args(text, words, special_tokens), num_merges)
        lines = [f"trained {len(merges)} merge(s): " + ", ".join(show_pair(p) for p in merges)]
        lines += encoding_lines(encode, merges, special_tokens)
    else:
        lines = trace_lines(variant, pretokens_from_args(text, words, special_tokens), num_merges, top)
    print("\n".join(lines), file=out or sys.stdout)
    return lines
