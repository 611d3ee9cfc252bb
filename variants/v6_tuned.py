r"""v6 — tuned: v5's algorithm, re-done for CPython's speed.

Unlike v5: no new idea in the algorithm (v5's heap, v4's fine-grained diff, v2's inverted index),
but every structure re-done so that a merge's work runs in C calls rather than in Python bytecode;
each choice was kept only because it measured faster.

The techniques, one section each, in the order the file shows them (the last two inside ``Merger``).
Each one that can be turned off is a name a subclass or a candidate file can swap, and
``tools/ablation/`` runs v6 without each in turn (docs/v6.md, "What each technique buys"):

* **The fast pre-tokenizer** (``count_pretokens``, ``bpe/split/fast.py``): v3's pool
  counts with an ASCII twin of the GPT-2 pattern on the stdlib ``re`` engine, and only the words
  around non-ASCII characters take ``regex`` (all of a block dense with them); the counts are the
  plain counter's;
* **Words as strings** (``pairs_of``, ``count_pairs``): a word is a ``str`` with one character per
  token, a pair a 2-character ``str``, so search and rewrite are C-level ``str`` methods;
* **The diff grouped by neighbour** (``rewrite_words``, ``add_neighbour_changes``;
  ``Merger.rewrite``): a one-occurrence word is filed under its two neighbour tokens, and each
  neighbour's pairs change once per merge;
* **A lazy index** (``index_gained``; ``Merger.update_index``): words are appended, never removed;
  a stale visit is skipped;
* **A heap keyed in byte order, with a floor** (``inverted_key``, ``FlooredHeap``;
  ``Merger.new_queue``): v1's tie-break in one string comparison; pairs below the floor wait in
  buckets;
* **One token id per distinct byte string** (``Merger._new_token``): a correctness point, not speed;
* **The build with the collector off, then frozen** (``Merger.build``, ``Merger.close``).

What it leaves out: a token is one character, so at most 1,114,112 tokens (``MAX_TOKENS``, a clear
error beyond); compiled code of any kind.

Complexity: as v5: build O(L); per merge O(sum of lengths of the words listed under the pair) plus
O(log H) per heap push/pop; the lazy index lists at most one entry per pair gained, so stale visits
are bounded by the visits that made them.

Measured: v6 against v5 and the Rust trainers, how each choice was measured, kept or dropped
(``python -m tools.merge_cost``), and what each technique buys (``python -m tools.ablation``):
docs/v6.md.

Walkthrough: docs/v6.md.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterable, Mapping
from heapq import heappop, heappush, heapreplace
from operator import add

from bpe.counting.parallel import count_file_parallel_fast
from bpe.errors import BPEError
from bpe.training.merge_loop import Pair

IDEA = ("tuned pure Python: words as str (one character per token), C-level search, lazy index, floored "
        "byte-order heap, fast pre-tokenizer")


# --- The fast pre-tokenizer --------------------------------------------------------------------------
# v3's pool with the tuned counter (bpe/split/fast.py): an ASCII twin of the GPT-2 pattern
# on the stdlib `re` engine, `regex` only for the few words around non-ASCII characters (docs/v6.md, "The
# fast pre-tokenizer").  Its counts are exactly the plain counter's.

count_pretokens = count_file_parallel_fast


# --- Words as strings --------------------------------------------------------------------------------
# A word is a str with one character per token, chr(id): latin-1 decoding turns a pre-token's bytes into
# exactly its first 256 token ids.  A pair is a 2-character str.  Finding a pair in a word, cutting the
# word around it and asking whether the word still holds it are then single C calls on contiguous
# characters (str.partition, `in`, str.replace).  On a word as a list of int ids, list.count and
# list.index call PyObject_RichCompare on every element: 12 % of all instructions (docs/v6.md).

def pairs_of(word: str):
    """The pairs of a word, left to right, each a 2-character string.

    >>> list(pairs_of("abca"))
    ['ab', 'bc', 'ca']
    """
    return map(add, word, word[1:])  # the loop and the concatenations run in C


def count_pairs(words: list[str], counts: list[int]) -> tuple[dict[str, int], dict[str, list[int]]]:
    """Each pair's count, and the ids of the words holding it (a word once per occurrence).

    One pass lists each pair's holders; the counts are then summed in C.

    >>> count_pairs(["abab", "ba"], [2, 5])
    ({'ab': 4, 'ba': 7}, {'ab': [0, 0], 'ba': [0, 1]})
    """
    holders: dict[str, list[int]] = defaultdict(list)
    for word_id, word in enumerate(words):
        for pair in pairs_of(word):
            holders[pair].append(word_id)
    count_of = counts.__getitem__
    return {pair: sum(map(count_of, ids)) for pair, ids in holders.items()}, dict(holders)


# --- The diff grouped by neighbour -------------------------------------------------------------------
# A merge of pair (a, b) into new token n rewrites the words that hold (a, b).  A word with one occurrence
# (nearly every visit) loses (x, a) and (b, y) and gains (x, n) and (n, y), x ending the text before the
# occurrence and y starting the text after it.  So instead of diffing its pairs, the word is filed under
# x and under y (one list append each), and each neighbour's pairs change once per merge, by the sum of
# its words' counts, summed in C.  Words with several occurrences (rare) diff their pair multisets.
#
# rewrite_words() and add_neighbour_changes() only *collect* the changes: losses as (pair, count lost),
# `gained` maps a new pair (it contains n) to [count gained, ids of the words that gained it].  The
# caller applies them (v6: to its counts; v7: sends them to the parent).  Phases as functions cost
# nothing measurable against the single loop they replace (docs/v6.md, merge-cost).

def rewrite_words(words: list[str], word_counts: list[int], listed: list[int], the_pair: str, new_char: str,
                  lost: dict[str, int], gained: dict[str, list]) -> tuple[dict, dict]:
    """Merge ``the_pair`` into ``new_char`` in every listed word; the one-occurrence words by neighbour.

    Returns ``(by_previous, by_next)``: token x -> ids of the words where x came right before the
    merged occurrence (they lose (x, a) and gain (x, n)), token y -> ids of those where y came right
    after it (they lose (b, y), gain (n, y)).  Words with several occurrences are diffed here, into
    ``lost`` and ``gained``.  ``listed`` may hold stale ids (the index is lazy) and duplicates.
    """
    by_previous: dict[str, list[int]] = defaultdict(list)
    by_next: dict[str, list[int]] = defaultdict(list)
    for word_id in set(listed):
        word = words[word_id]
        before, found, after = word.partition(the_pair)  # C-level search for the first occurrence
        if not found:
            continue  # a stale index entry: the word lost the pair in an earlier merge
        if the_pair not in after:
            # One occurrence (nearly every visit): file the word under its neighbours, x ending
            # `before` and y starting `after`; their pairs are updated once per neighbour, later.
            words[word_id] = before + new_char + after
            if before:
                by_previous[before[-1]].append(word_id)
            if after:
                by_next[after[0]].append(word_id)
            continue
        # Several occurrences: str.replace merges them left to right without overlap, as v1 does.
        merged = words[word_id] = word.replace(the_pair, new_char)
        diff_word(word, merged, word_id, word_counts[word_id], the_pair, lost, gained)
    return by_previous, by_next


def diff_word(word: str, merged: str, word_id: int, count: int, the_pair: str, lost: dict[str, int],
              gained: dict[str, list]) -> None:
    """A rewritten word's change, the difference of its two pair multisets, added to ``lost`` and ``gained``."""
    change: dict[str, int] = {}  # a dict, not a Counter: its constructor and subtract cost more (docs/v6.md)
    for pair in pairs_of(merged):
        change[pair] = change.get(pair, 0) + 1
    for pair in pairs_of(word):
        change[pair] = change.get(pair, 0) - 1
    for pair, times in change.items():
        if times > 0:
            gain = gained.get(pair)
            if gain is None:
                gained[pair] = [times * count, [word_id]]
            else:
                gain[0] += times * count
                gain[1].append(word_id)
        elif times < 0 and pair != the_pair:  # the_pair's own count is dropped by the caller
            lost[pair] = lost.get(pair, 0) - times * count


def add_neighbour_changes(by_previous: dict, by_next: dict, the_pair: str, new_char: str, word_counts: list[int],
                          gained: dict[str, list]) -> list[tuple[str, int]]:
    """The one-occurrence words, once per neighbour token: a pair's change is the sum of their counts.

    Gains go into ``gained``; the losses are returned as ``(pair, count)`` (a pair may come twice).
    """
    a_char, b_char = the_pair
    moves = [(b_char + y, new_char + y, holders) for y, holders in by_next.items()]
    moves += [(x + a_char, x + new_char, holders) for x, holders in by_previous.items()]
    count_of = word_counts.__getitem__
    lost = []
    for lost_pair, gained_pair, holders in moves:
        count = sum(map(count_of, holders))  # in C
        if lost_pair != the_pair:  # (b, y) is the_pair when a == b == y, as in "aaa"
            lost.append((lost_pair, count))
        gain = gained.get(gained_pair)
        if gain is None:
            gained[gained_pair] = [count, holders]
        else:
            gain[0] += count
            gain[1] += holders
    return lost


def subtract_lost(pair_counts: dict[str, int], lost: Iterable[tuple[str, int]], gone: list[str]) -> None:
    """Lower the counts of the pairs a merge broke up; a pair that reaches zero leaves the counts and
    is appended to ``gone`` (v6 drops it from its index, v7 tells the shards)."""
    for pair, count in lost:
        remaining = pair_counts[pair] - count
        if remaining:
            pair_counts[pair] = remaining
        else:
            del pair_counts[pair]
            gone.append(pair)


# --- A lazy index ------------------------------------------------------------------------------------
# pair_to_words[p] lists every word holding p, and maybe some that no longer do.  A word is only ever
# appended (the words that gained p, a whole list at a time), never removed; a visit whose partition
# finds nothing is skipped (rewrite_words).  Keeping the index exact would cost a set update per lost
# pair per word, more than the stale visits cost; a word is listed at most once per pair it gained, so
# the stale visits are bounded by the visits that made them.

def index_gained(pair_to_words: dict[str, list[int]], gained: dict[str, list]) -> None:
    """List the words that gained each new pair under it (appended whole: the index only grows)."""
    for pair, (_, holders) in gained.items():
        listed = pair_to_words.get(pair)
        if listed is None:
            pair_to_words[pair] = holders
        else:
            listed += holders


# --- A heap keyed in byte order, with a floor ---------------------------------------------------------
# A heap entry is (-count, key, pair) where key is a string whose order is the *reverse* of the pair's
# (bytes, bytes) order, so heapq's min-heap pops the larger count first and, among equal counts, the
# larger byte pair: v1's tie-break in one comparison in C, whatever the token ids are.  The key maps each
# byte c to chr(256 - c) and ends every token with chr(257), larger than any mapped character, so a token
# sorts *after* its own extensions (b"a" < b"ab" must become key(b"a") > key(b"ab")); because the end
# mark occurs only at the end of a token, concatenating the two tokens' keys compares exactly like the
# tuple of the two keys.  Most pairs never get near the top: those below a floor wait in buckets.

#: Maps byte value c to the character 256 - c: larger bytes give smaller characters.
_INVERT = {c: chr(256 - c) for c in range(256)}
#: Ends every inverted key; larger than any mapped character, so a prefix sorts *after* its extensions.
_END = chr(257)


def inverted_key(token: bytes) -> str:
    """A string whose order is the reverse of ``token``'s bytes order (see the section's comment).

    >>> sorted([b"a", b"ab", b"b", b""], key=inverted_key)
    [b'b', b'ab', b'a', b'']
    """
    return "".join(_INVERT[c] for c in token) + _END


class FlooredHeap:
    """The pairs by count, best first, as v1 orders them: a lazy heap above a floor, buckets below it.

    A heap entry is ``(-count, key, pair)`` with ``key`` the two tokens' inverted keys (see
    :func:`inverted_key`), so ``heapq``'s min-heap pops the larger count first and, among equal counts,
    the larger byte pair.  Pairs below ``floor`` wait in buckets by count (bit length) instead of the
    heap: most pairs never get near the top, so they are never pushed.  The floor halves when the
    heap's best falls below it, and the bucket just above the new floor moves into the heap.

    The counts are the merger's ``pair_counts`` (read, never written).  Counts only fall for pairs that
    already exist, so a fall pushes nothing: a popped entry whose count is stale is re-keyed with its
    live count (or dropped if the pair is gone).  A merger offers each pair whose count rose, once
    per merge, with :meth:`offer`: one call for all of them, so no call per pair in the merge loop.
    """

    def __init__(self, pair_counts: dict[str, int], token_keys: list[str]):
        self.pair_counts, self.token_keys = pair_counts, token_keys
        self.floor_bits = self.first_floor_bits(max(pair_counts.values(), default=0))
        self.waiting: list[list[str]] = [[] for _ in range(self.floor_bits + 1)]
        self.heap: list[tuple] = []
        self.offer(pair_counts)

    @staticmethod
    def first_floor_bits(top: int) -> int:
        """The floor to start with, as a bit length: pairs within 2**8 of the best count go into the heap."""
        return max(0, top.bit_length() - 8)

    def offer(self, pairs: Iterable[str]) -> None:
        """Each pair, with its count now, into the heap if at or above the floor, else into its bucket."""
        pair_counts, keys, heap, waiting = self.pair_counts, self.token_keys, self.heap, self.waiting
        floor = 1 << self.floor_bits
        for pair in pairs:
            total = pair_counts[pair]
            if total >= floor:
                heappush(heap, (-total, keys[ord(pair[0])] + keys[ord(pair[1])], pair))
            else:
                waiting[total.bit_length()].append(pair)

    def pop_live(self) -> str | None:
        """The best pair (its entry stays: once merged, its count is gone and the entry is stale)."""
        heap, pair_counts = self.heap, self.pair_counts
        while True:
            while heap:
                neg_count, _, pair = heap[0]
                live = pair_counts.get(pair)
                if live == -neg_count:
                    if live >= 1 << self.floor_bits:  # beats every waiting pair
                        return pair
                    break
                if live is None or live > -neg_count:
                    heappop(heap)  # gone, or a newer entry with the larger count is in the heap
                else:
                    heapreplace(heap, (-live, heap[0][1], pair))  # count fell since pushed: re-key
            if self.floor_bits == 0:  # floor 1: nothing waits, the heap is empty
                return None
            # Halve the floor: the pairs that waited in the bucket just above it (and still exist) are offered.
            self.floor_bits -= 1
            self.offer([pair for pair in self.waiting.pop() if pair in pair_counts])


# --- The merger: the techniques put together ---------------------------------------------------------

#: A token is one character, chr(id), so ids stop at sys.maxunicode.
MAX_TOKENS = 0x110000


class Merger:
    """A word is a str of token ids as characters; a merge rewrites the words that hold the pair.

    Each technique above is one method here, which a subclass can swap: :meth:`rewrite` (the diff
    grouped by neighbour), :meth:`update_index` (the lazy index), :meth:`new_queue` (the heap),
    :meth:`build` and :meth:`close` (the collector).  They are called once per merge (or once), never
    per word, so being methods costs nothing measurable.

    >>> merger = Merger({b"low": 5, b"lower": 2})
    >>> merger.words, merger.pair_counts["ow"]
    (['low', 'lower'], 7)
    >>> merger.select_best_pair()  # (o, w) and (l, o) tie at 7: the larger byte pair wins
    (b'o', b'w')
    >>> merger.merge((b"o", b"w")); merger.words  # the new token is id 256, chr(256) == "\u0100"
    ['lĀ', 'lĀer']
    """

    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        self._init_tokens()
        tokens = [token for token in pretoken_counts if len(token) > 1]
        words = [token.decode("latin-1") for token in tokens]  # words as strings: chr(id) per token
        self.build(words, list(map(pretoken_counts.__getitem__, tokens)))

    def build_structures(self, words: list[str], counts: list[int]) -> None:
        """The words, each pair's count and holders (the lazy index), and the heap."""
        self.words, self.word_counts = words, counts
        self.pair_counts, self.pair_to_words = count_pairs(words, counts)
        self.queue = self.new_queue()

    def new_queue(self) -> FlooredHeap:
        """The heap keyed in byte order, with a floor."""
        return FlooredHeap(self.pair_counts, self.token_keys)

    def select_best_pair(self) -> Pair | None:
        pair = self.queue.pop_live()
        if pair is None:
            return None
        token_bytes = self.token_bytes
        return token_bytes[ord(pair[0])], token_bytes[ord(pair[1])]

    def set_aside(self, pair: Pair) -> None:
        """The pair just selected is never to be merged (``max_token_length``): its live entry, the heap's top,
        is popped; one offered again when its count rises surfaces and is set aside again."""
        heappop(self.queue.heap)

    def count_of(self, pair: Pair) -> int:
        """The pair's count now (``min_frequency``, continued training): 0 for a token no merge has made here."""
        first, second = self.token_ids.get(pair[0]), self.token_ids.get(pair[1])
        if first is None or second is None:
            return 0
        return self.pair_counts.get(chr(first) + chr(second), 0)

    def merge(self, pair: Pair) -> None:
        ids = self.token_ids
        the_pair = chr(ids[pair[0]]) + chr(ids[pair[1]])
        new_char = chr(self._new_token(*pair))
        lost, gained = self.rewrite(self.pair_to_words.pop(the_pair), the_pair, new_char)
        pair_counts, gone = self.pair_counts, []
        subtract_lost(pair_counts, lost, gone)
        pair_counts.pop(the_pair, None)
        self.update_index(gained, gone)
        for new_pair, (count, _) in gained.items():
            pair_counts[new_pair] = pair_counts.get(new_pair, 0) + count
        self.queue.offer(gained)

    def rewrite(self, listed: list[int], the_pair: str, new_char: str) -> tuple[list, dict[str, list]]:
        """The diff grouped by neighbour: rewrite the listed words, return ``(lost, gained)`` (see the section)."""
        lost_in_several: dict[str, int] = {}  # by words with several occurrences (few visits)
        gained: dict[str, list] = {}
        by_previous, by_next = rewrite_words(self.words, self.word_counts, listed, the_pair, new_char,
                                             lost_in_several, gained)
        lost = add_neighbour_changes(by_previous, by_next, the_pair, new_char, self.word_counts, gained)
        lost += lost_in_several.items()
        return lost, gained

    def update_index(self, gained: dict[str, list], gone: list[str]) -> None:
        """The lazy index: a pair at zero leaves it; the words that gained a pair are appended under it."""
        pair_to_words = self.pair_to_words
        for gone_pair in gone:
            pair_to_words.pop(gone_pair, None)
        index_gained(pair_to_words, gained)

    # -- One token id per distinct byte string: v1's tokens *are* bytes, so should two merges ever
    # produce the same bytes ((a, bc) and (ab, c)), they must be one token here too.

    def _init_tokens(self) -> None:
        # Tokens: 0-255 the bytes, then one id per *distinct* merged byte string.
        self.token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self.token_ids: dict[bytes, int] = {t: i for i, t in enumerate(self.token_bytes)}
        self.token_keys: list[str] = [inverted_key(t) for t in self.token_bytes]

    def _new_token(self, first: bytes, second: bytes) -> int:
        """The id of ``first + second``: an existing one if a merge already made these bytes."""
        ids, merged_bytes = self.token_ids, first + second
        new = ids.get(merged_bytes)
        if new is None:
            new = len(self.token_bytes)
            if new == MAX_TOKENS:
                raise BPEError(f"v6 stores a token as one character, so it makes at most {MAX_TOKENS:,} "
                               f"tokens; use another variant (e.g. --variant v5) for a larger vocab")
            ids[merged_bytes] = new
            self.token_bytes.append(merged_bytes)
            keys = self.token_keys
            keys.append(keys[ids[first]][:-1] + keys[ids[second]])  # = inverted_key(merged_bytes), in C
        return new

    # -- The build with the collector off, then frozen: what the build makes holds no reference cycle,
    # so the collector is off while it runs (it would walk the growing index again and again), and
    # gc.freeze() then keeps it from walking the index and the heap during the merges.  They live until
    # training ends; refcounting still frees them.

    def build(self, words: list[str], counts: list[int]) -> None:
        collecting = gc.isenabled()
        gc.disable()
        try:
            self.build_structures(words, counts)
        finally:
            if collecting:
                gc.enable()
        gc.freeze()

    def close(self) -> None:
        """Called by :func:`bpe.training.merge_loop.run_merges` when the merges are done: undo ``gc.freeze()``,
        so that a long-running process that trains many times does not keep them."""
        gc.unfreeze()

