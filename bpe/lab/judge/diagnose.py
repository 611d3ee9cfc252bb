"""Why do a trainer's merges differ from the reference?  The first divergence, the true counts, a likely cause.

Once two merge lists part, later merges say nothing new, so :func:`diagnose` reports the first merge
where they part (1-based; the verdict's key ``step``, kept for saved result files), the pair each side
chose there and both pairs' *true* counts before it: the reference's earlier merges replayed on the
true pre-token counts (the replay at the end of this module).  Then a likely cause, the first of the usual
mistakes that fits, in this order:

* ``newlines``: recounted on the text as a file opened in text mode reads it (``\\r\\n`` and a lone ``\\r``
  read as ``\\n``, :func:`translate_newlines`), its pair is the most frequent (or its own pre-token counts
  are that text's).  First, because it changes the counts every later check starts from: on lines indented
  with spaces, ``(\\n, '  ')`` sits beside the overlapping ``(' ', ' ')``, which would take the blame;
* ``pretokenization``: the candidate's own pre-token counts differ (the first pre-token that does is
  shown), or its pair never occurs inside one GPT-2 pre-token (shown: the boundary it spans);
* ``tie``: equal counts and the smaller pair chosen, with the wrong order that chose it
  (:mod:`bpe.lab.judge.tie_orders`);
* ``special-tokens``: recounted with the special tokens left in the text, cut out and the pieces joined,
  or split on as an unescaped pattern (``<|endoftext|>`` reads ``<`` or ``endoftext`` or ``>``), its pair
  is the most frequent; or one merge too many or too few per special token (a vocab that leaves them
  out, or counts them twice);
* ``word-counts``: recounted with each distinct pre-token counted once, its pair is the most frequent;
* ``overlap``: a pair ``(x, x)`` whose overlapping occurrences (``aaa`` holds ``a a`` twice; merging
  leaves ``aa a``) were counted wrong, or merged from the right (``a aa``).

An own pre-tokenizer's counts are compared even when the merges agree (a few miscounted rare pre-tokens
may part the merges only at a larger vocab); a function's vocab is checked on its own
(:func:`bpe.lab.judge.candidates.vocab_problems`): merges alone can agree with a wrong vocab.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import regex

from bpe.counting.plain import count_text
from bpe.lab.judge.replay import best_pair, non_overlapping_count, pair_counts_after, pair_counts_merging_from_right
from bpe.lab.judge.tie_orders import tie_explanation
from bpe.split.patterns import DEFAULT_PATTERN, compiled_pattern, pattern_name, split_on_special_tokens
from bpe.training.merge_loop import Pair


def encode_merges(merges: Sequence[Pair]) -> list[list[str]]:
    """Merges as JSON-safe strings (each byte one latin-1 character), for the child-to-parent channel."""
    return [[a.decode("latin-1"), b.decode("latin-1")] for a, b in merges]


def decode_merges(data: Sequence[Sequence[str]]) -> list[Pair]:
    return [(a.encode("latin-1"), b.encode("latin-1")) for a, b in data]


def merges_digest(merges: Sequence[Pair]) -> str:
    """A short digest of the merges in order, stamped beside every result: two runs agree when their
    digests do (each token is length-prefixed, so no two lists share a byte stream)."""
    h = hashlib.sha256()
    for a, b in merges:
        h.update(len(a).to_bytes(4, "big") + a + len(b).to_bytes(4, "big") + b)
    return h.hexdigest()[:16]


def first_divergence(merges: Sequence[Pair], reference: Sequence[Pair]) -> int | None:
    """The index of the first merge that differs (or where one list ends first); ``None`` if identical."""
    at = next((i for i, (mine, theirs) in enumerate(zip(merges, reference)) if mine != theirs),
              min(len(merges), len(reference)))
    return None if at == len(merges) == len(reference) else at


def show(pair: Pair | None) -> str | None:
    return None if pair is None else f"({pair[0]!r}, {pair[1]!r})"


@dataclass
class Evidence:
    """What the diagnosis may look at, each part computed only if a check needs it."""

    load_counts: Callable[[], Mapping[bytes, int]]  # the true pre-token counts (the pattern's)
    load_text: Callable[[], str]  # the training text (the same bytes)
    special_tokens: Sequence[str]
    pattern: str = DEFAULT_PATTERN  # the pre-tokenization pattern the run was asked for

    @property
    def pattern_words(self) -> str:
        """How a sentence names the pattern: ``the GPT-2 pattern``, ``the cl100k pattern``, ``the custom pattern``."""
        name = pattern_name(self.pattern)
        return "the GPT-2 pattern" if name == DEFAULT_PATTERN else f"the {name} pattern"

    @cached_property
    def counts(self) -> Mapping[bytes, int]:
        return self.load_counts()

    @cached_property
    def text(self) -> str:
        return self.load_text()


def diagnose(merges: Sequence[Pair], reference: Sequence[Pair], evidence: Evidence, name: str = "candidate",
             reference_name: str = "reference", candidate_counts: Mapping[bytes, int] | None = None,
             name_tie_order: bool = True) -> dict:
    """The verdict for one run: ``{"verdict": "identical", ...}`` or the first divergence, explained.

    ``candidate_counts``: the candidate's own pre-token counts, when it has its own pre-tokenizer.
    ``name_tie_order``: a tie broken the wrong way names the order that explains it (off where the tie probe
    will tell, :func:`bpe.lab.judge.probe.settled_tie`: a tie of two pairs fits several orders).  The
    verdict's ``step`` is the number of the first merge that differs (1-based), a key kept for saved files.
    """
    at = first_divergence(merges, reference)
    counts_differ = candidate_counts is not None and dict(candidate_counts) != dict(evidence.counts)
    if at is None and not counts_differ:
        return {"verdict": "identical", "merges": len(merges)}
    found = {"verdict": "differs", "step": None, "merges": len(merges), "reference_merges": len(reference),
             "candidate_pair": None, "reference_pair": None, "candidate_count": None, "reference_count": None}
    if at is None:
        cause, explanation = pretokenization_cause(candidate_counts, evidence, name)
        return {**found, "cause": cause,
                "explanation": (f"its {len(merges):,} merges are {reference_name}'s, but its pre-token counts are "
                                f"not (a larger vocab or other text would part the merges): {explanation}")}
    mine = merges[at] if at < len(merges) else None
    theirs = reference[at] if at < len(reference) else None
    counts = pair_counts_after(evidence.counts, reference[:at])
    found.update(step=at + 1, candidate_pair=show(mine), reference_pair=show(theirs),
                 candidate_count=None if mine is None else counts.get(mine, 0),
                 reference_count=None if theirs is None else counts.get(theirs, 0))
    if mine is None or theirs is None:
        found["cause"], why = merge_count_cause(len(merges), len(reference), evidence.special_tokens)
        found["explanation"] = f"{name} made {len(merges):,} merges, {reference_name} {len(reference):,}: {why}"
    elif counts_differ:
        found["cause"], found["explanation"] = pretokenization_cause(candidate_counts, evidence, name)
    else:
        found["cause"], found["explanation"] = likely_cause(mine, theirs, counts, reference[:at], evidence, name,
                                                            name_tie_order)
    return found


def likely_cause(mine: Pair, theirs: Pair, counts: Counter[Pair], before: Sequence[Pair], evidence: Evidence,
                 name: str, name_tie_order: bool = True) -> tuple[str | None, str]:
    """``(cause, one or two sentences)`` for a divergence where both sides chose a pair, from the same
    pre-token counts."""
    mine_n, theirs_n = counts.get(mine, 0), counts.get(theirs, 0)
    translated = text_mode_counts(evidence)
    if translated is not None:
        recount = pair_counts_after(translated, before)
        if best_pair(recount) == mine and (recount.get(mine, 0) > mine_n or recount.get(theirs, 0) < theirs_n):
            return "newlines", newline_translation(
                f"read that way, {show(mine)} is the most frequent pair ({recount[mine]:,} times; true count "
                f"{mine_n:,}), and {show(theirs)} occurs {recount.get(theirs, 0):,} times, not {theirs_n:,}")
    if mine_n == theirs_n and mine < theirs:
        tied = [pair for pair, n in counts.items() if n == mine_n]  # in the order the words meet them
        return "tie", tie_explanation(mine, theirs, mine_n, tied, before, name, name_tie_order)
    for how, mistaken in special_token_mistakes(evidence):
        recount = pair_counts_after(mistaken, before)
        if best_pair(recount) == mine and (recount.get(mine, 0) > mine_n or recount.get(theirs, 0) < theirs_n):
            if how == UNESCAPED:
                return "special-tokens", (f"{unescaped_text(evidence.special_tokens)}; split that way, {show(mine)} "
                                          f"is the most frequent pair ({show(theirs)} occurs "
                                          f"{recount.get(theirs, 0):,} times, not {theirs_n:,}); escape each "
                                          "special token (regex.escape) before joining them into a pattern")
            return "special-tokens", (f"counts that cross a special token: with the special tokens {how}, "
                                      f"{show(mine)} occurs {recount[mine]:,} times (true count {mine_n:,}) and "
                                      "is the most frequent pair; split the text on the special tokens first "
                                      "and count each piece on its own")
    once = pair_counts_after({token: 1 for token in evidence.counts}, before)
    if best_pair(once) == mine and mine != theirs:
        return "word-counts", (f"pair counts not weighted by the pre-token counts: counting each distinct pre-token "
                               f"once, {show(mine)} is the most frequent pair ({once[mine]:,} counted that way; "
                               f"its true count is {mine_n:,}, {show(theirs)}'s {theirs_n:,}); a pair in a "
                               "pre-token seen n times adds n to the pair's count, not 1")
    from_right = pair_counts_merging_from_right(evidence.counts, before, counts)
    if from_right is not None and best_pair(from_right[0]) == mine:
        doubled = from_right[1]
        return "overlap", (f"overlapping occurrences merged from the right: after the merge of {show(doubled)}, "
                           f"a word like {doubled[0] * 3!r} must read {doubled[0] * 2!r} + {doubled[0]!r} (merge "
                           f"the leftmost occurrence first, then go on after it); merged from the right it reads "
                           f"{doubled[0]!r} + {doubled[0] * 2!r}, and with words split that way {show(mine)} is "
                           f"the most frequent pair (true count {mine_n:,}); scan each word left to right")
    if mine_n == 0:
        return "pretokenization", boundary_example(mine, evidence, name)
    overlapped = [p for p in (mine, theirs) if p[0] == p[1]] + [p for p in before if p[0] == p[1] and (
        p[0] in mine or p[0] + p[1] in mine or p[0] in theirs or p[0] + p[1] in theirs)]
    if overlapped:
        pair = overlapped[0]
        single = non_overlapping_count(evidence.counts, before, theirs) if theirs[0] == theirs[1] else None
        how = (f"; counted without overlaps, {show(theirs)} has {single:,}" if single is not None and single < theirs_n
               else "")
        return "overlap", (f"overlapping occurrences: {show(pair)} is a pair of equal tokens, so in a word like "
                           f"{pair[0] * 3!r} its occurrences overlap (counted twice as pairs; merged once, "
                           f"leaving {pair[0] * 2!r} + {pair[0]!r}){how}; {name}'s count for {show(mine)} must "
                           f"have been above its true {mine_n:,}")
    off = (f"{name}'s count for {show(mine)} must have been above its true {mine_n:,} (or its count for "
           f"{show(theirs)} below {theirs_n:,})")
    if not before:  # the first merge: no update has happened, so the first count itself is off
        return None, (f"{off} before any merge: check how the pairs are first counted (every adjacent pair of "
                      "every pre-token, times the pre-token's count)")
    return None, (f"{off}: its pair counts drifted from the words before this merge; check how the counts are "
                  "updated after a merge")


def pretokenization_cause(candidate_counts: Mapping[bytes, int], evidence: Evidence, name: str) -> tuple[str, str]:
    """``(cause, sentence)`` for a candidate whose own pre-token counts differ from the true ones."""
    translated = text_mode_counts(evidence)
    if translated is not None and dict(candidate_counts) == dict(translated):
        return "newlines", newline_translation(f"{name}'s pre-token counts are {evidence.pattern_words}'s on the text "
                                               "read that way")
    for how, mistaken in special_token_mistakes(evidence):
        if dict(candidate_counts) == dict(mistaken):
            if how == UNESCAPED:
                return "special-tokens", (f"{name}'s pre-tokenizer splits on the "
                                          f"{unescaped_text(evidence.special_tokens)}; "
                                          "escape each special token (regex.escape) before joining them")
            return "special-tokens", (f"{name}'s pre-tokenizer does not split the text on the special tokens: "
                                      f"its pre-token counts are {evidence.pattern_words}'s on the text with the "
                                      f"special tokens {how}; split on them first and count each piece on its own")
    return "pretokenization", first_pretoken_difference(candidate_counts, evidence.counts, name,
                                                        evidence.pattern_words)


def first_pretoken_difference(mine: Mapping[bytes, int], theirs: Mapping[bytes, int], name: str,
                              pattern_words: str = "the GPT-2 pattern") -> str:
    """The first pre-token (in the true counts' order, then the candidate's) whose count differs, and how
    many differ."""
    tokens = list(theirs) + [t for t in mine if t not in theirs]
    differing = [t for t in tokens if mine.get(t, 0) != theirs.get(t, 0)]
    if not differing:
        return "a pre-tokenization difference"
    token = differing[0]
    return (f"a pre-tokenization difference: the pre-token {token!r} is counted {mine.get(token, 0):,} times "
            f"by {name}'s pre-tokenizer, {theirs.get(token, 0):,} by {pattern_words} ({len(differing):,} "
            f"pre-token(s) counted differently; {len(mine):,} vs {len(theirs):,} distinct pre-tokens); "
            "if it cuts the text into chunks, cut only where a pre-token cannot continue (at a special token)")


def boundary_example(pair: Pair, evidence: Evidence, name: str) -> str:
    """Where ``pair``'s bytes occur in the text although no GPT-2 pre-token holds them: a boundary it spans."""
    joined = (pair[0] + pair[1]).decode("utf-8", errors="replace")
    where = evidence.text.find(joined)
    kind = evidence.pattern_words.removeprefix("the ").removesuffix(" pattern")  # GPT-2, cl100k, ...
    base = (f"a pre-tokenization difference: {show(pair)} never occurs inside one {kind} pre-token, so {name} "
            "must have counted it across a pre-token boundary (or its pre-tokens differ)")
    if where < 0:
        return base
    start = max(0, evidence.text.rfind("\n", 0, where) + 1, where - 40)
    window = evidence.text[start: where + len(joined) + 40]
    spans = [repr(match.group()) for match in compiled_pattern(evidence.pattern).finditer(window)
             if match.end() > where - start and match.start() < where - start + len(joined)]
    return f"{base}: at character {where:,} of the text {evidence.pattern_words} splits it as {' | '.join(spans)}"


def translate_newlines(text: str) -> str:
    """``text`` as a file opened in text mode reads it: Python's universal newlines turn ``\\r\\n`` and a
    lone ``\\r`` into ``\\n`` (``open(path)``, or with an ``encoding`` but without ``newline=''``).

    >>> translate_newlines("a\\r\\nb\\rc\\r\\r\\n")
    'a\\nb\\nc\\n\\n'
    """
    return text.replace("\r\n", "\n").replace("\r", "\n")


def text_mode_counts(evidence: Evidence) -> Counter | None:
    """The pre-token counts of the text as text mode reads it; ``None`` when it holds no ``\\r``, the one
    character text mode changes (then nothing is recounted)."""
    if "\r" not in evidence.text:
        return None
    return count_text(translate_newlines(evidence.text), evidence.special_tokens, evidence.pattern)


def newline_translation(detail: str) -> str:
    """The diagnosis of a file read in text mode, with ``detail`` (how its counts show it) and the fix."""
    return (f"newline translation: the file was read in text mode, where \\r\\n and a lone \\r read as \\n; "
            f"{detail}; open it in binary or with newline=''")


#: How :func:`special_token_mistakes` names the split on the special tokens as an unescaped pattern.
UNESCAPED = "read as an unescaped regular expression"


def special_token_mistakes(evidence: Evidence) -> list[tuple[str, Counter]]:
    """The usual ways of mishandling the special tokens, each with the pre-token counts it gives: left in
    the text, cut out and the pieces joined (counts across them), and split on as an unescaped regular
    expression (``<|endoftext|>`` reads as ``<`` or ``endoftext`` or ``>``: it splits at every ``<`` and
    ``>`` of the text and keeps the bars as text).  None without special tokens."""
    if not evidence.special_tokens:
        return []
    text, specials = evidence.text, evidence.special_tokens
    pattern = evidence.pattern
    mistakes = [("left in the text", count_text(text, [], pattern)),
                ("cut out and the pieces joined",
                 count_text("".join(split_on_special_tokens(text, specials)), [], pattern))]
    unescaped = "|".join(specials)
    if unescaped != "|".join(regex.escape(t) for t in specials):
        counts: Counter = Counter()
        for piece in regex.split(unescaped, text):
            if piece:
                counts.update(count_text(piece, [], pattern))
        mistakes.append((UNESCAPED, counts))
    return mistakes


def unescaped_text(special_tokens: Sequence[str]) -> str:
    """What a split on unescaped special tokens does, in words."""
    pattern = "|".join(special_tokens)
    parts = " or ".join(repr(p) for p in pattern.split("|") if p)
    return (f"special tokens read as a regular expression, unescaped: the pattern {pattern!r} matches {parts} "
            "anywhere in the text, so it cuts words at those characters and leaves the special tokens' other "
            "characters in the text")


def merge_count_cause(made: int, expected: int, special_tokens: Sequence[str]) -> tuple[str | None, str]:
    """``(cause, sentence)`` for a run that made a different number of merges with the same choices."""
    n = len(special_tokens)
    if n and made == expected + n:
        return "special-tokens", (f"{n} merge(s) too many, one per special token: its vocab leaves the special "
                                  "tokens out (vocab_size counts 256 bytes + the special tokens + the merges)")
    if n and made == expected - n:
        return "special-tokens", (f"{n} merge(s) too few, one per special token: it counts the special tokens "
                                  "twice against vocab_size (256 bytes + each special token once + the merges)")
    return None, ("it stopped while pairs were left" if made < expected else
                  "it merged past the vocab size (or past the last pair)")
