r"""v6 — tuned: heap + fine-grained diff + inverted index, written for CPython's speed.

What it adds: nothing new in the algorithm (heap selection, fine-grained diff and an inverted index,
as in v4/v5); everything is re-done for speed in CPython, each choice kept because it measured
faster on this machine:

* **a word is a str with one character per token**, ``chr(id)`` (latin-1 decoding turns a
  pre-token's bytes into exactly its first 256 token ids), and **a pair is a 2-character str**.  The
  search, the rewrite and the test "does this word still hold the pair?" are then single C calls on
  contiguous characters: ``word.partition(pair)`` finds the first occurrence and cuts around it,
  ``pair in after`` tells whether there is a second, ``before + new + after`` is the merged word, and
  ``str.replace`` merges several occurrences left to right without overlap, exactly as v1 does.  On
  lists of int tokens ``list.count``/``list.index`` called ``PyObject_RichCompare`` on every element
  (12% of all instructions), and ``str.find`` parses its arguments the slow way (``vgetargs``),
  which ``partition`` and ``in`` do not;
* **a lazy index**: ``pair_to_words[p]`` lists every word holding ``p`` and maybe some that no longer
  do.  A word is only ever appended (a whole list at a time), never removed; a visit whose
  ``partition`` finds nothing is skipped.  Keeping the index exact cost a set update per lost pair
  per word, which cost more than the stale visits it saves (below);
* **fine-grained diff, grouped by neighbour**: a word with one occurrence (all but 2,511 of the
  352,723 visits on the 14 MB corpus) loses ``(x, a)`` and ``(b, y)`` and gains ``(x, new)`` and
  ``(new, y)``; it is filed under ``x`` and ``y`` (one list append per side), and each neighbour's
  pairs are updated once per merge with ``sum(map(...))`` of the words' counts.  Words with several
  occurrences diff their pair multisets;
* **lazy max-heap keyed in byte order**: a heap entry is ``(-count, key, pair)`` where ``key`` is a
  string whose order is the *reverse* of the pair's ``(bytes, bytes)`` order, so ``heapq``'s
  min-heap pops the larger count first and, among equal counts, the larger byte pair, exactly v1's
  tie-break, whatever the token ids are.  The key maps each byte c to ``chr(256 - c)`` and ends
  every token with ``chr(257)``, larger than any mapped character, so a token sorts *after* its
  own extensions (``b"a" < b"ab"`` must become ``key(b"a") > key(b"ab")``); because the end mark
  occurs only at the end of a token, concatenating the two tokens' keys compares exactly like the
  tuple of the two keys.  Counts only fall for pairs that already exist, so a fall pushes nothing:
  a popped entry whose count is stale is re-keyed with its live count (or dropped if the pair is
  gone); pairs below a floor wait outside the heap until the best count comes down to them;
* one token id per distinct byte string: v1's tokens *are* bytes, so should two merges ever produce
  the same bytes (``(a, bc)`` and ``(ab, c)``) they must be one token here too;
* the build with the garbage collector off, then ``gc.freeze()`` until ``close()``.

What it leaves out: a token is one character, so at most 1,114,112 tokens (``MAX_TOKENS``, a clear
error beyond); compiled code of any kind.

Complexity: as v5: build O(L); per merge O(sum of lengths of the words listed under the pair) plus
O(log H) per heap push/pop; the lazy index lists at most one entry per pair gained, so stale visits
are bounded by the visits that made them.

Measured on a 2-core machine, figures move between runs; the ratios below are within one run.  End
to end, with the peers::

    python -m bpe bench --variant v5,v6 --data ../shared/data/gutenberg-books.txt --vocab-size 10000 \
        --repeat 5 --workers 2 --peers

* three runs of the command above on an idle machine (commit 3672651, this code but for this
  docstring), medians: v6 1.72 / 1.40 / 1.40 s, v5 3.82 / 3.53 / 3.62 s (v6 2.22x /
  2.52x / 2.59x faster); HF tokenizers 3.36 / 2.42 / 2.26 s (v6 0.51x / 0.58x / 0.62x its time);
  v6's merge phase 0.94 / 0.85 / 0.82 s = 0.28x / 0.35x / 0.36x of HF's total; rustbpe 1.00 /
  0.91 / 0.91 s (v6 1.72x / 1.55x / 1.54x its time); bpeasy 2.43 / 1.95 / 1.88 s (0.71x-0.75x);
* the third run in detail: v6 1.40 s = pretokenize 0.52 + merge phase 0.82 (pair count 0.09 +
  select 0.06 + update 0.65); peak RSS 68.7 MB (the int design: 110.2 MB);
* two earlier runs of nearly the same code with ``--repeat 3``: 2.39x / 2.00x faster than v5, merge
  phase 0.37x / 0.49x of HF's total: a 3-repeat median can land on a slow spell of the machine;
* the int design this replaces (commit 38e73da), ``--repeat 3``: v6 2.00 s, merge phase 1.20 s
  (0.47x of HF's 2.56 s), v5 3.93 s (1.96x);
* the corpus concatenated 4x (56 MB, ``--data /tmp/gutenberg4x.txt --variant v6 --repeat 3``): 2.92 s
  = 2.12x the 1.37 s of the 1x corpus, peak RSS 69.8 vs 68.2 MB;
* merges identical to v2's (sha256 ``3cc0d93a3b46a60c`` on this corpus).

How the str design was chosen: the pre-tokens of that corpus counted once and pickled; each
candidate file then builds its ``Merger`` and runs all 9,743 merges in a fresh process.  Instructions
are counted with ``valgrind --tool=cachegrind --cache-sim=no`` (deterministic; each figure includes
0.46 G of start-up and loading, the same for all); seconds are ``process_time`` of the merge loop,
fresh processes alternating, pinned to one core, medians.  ``python -m bpe merge-cost v6 my_copy.py
--data ../shared/data/gutenberg-books.txt --instructions`` does the same (the figures below came
from a /tmp script before it existed, so its totals differ by the start-up of ``bpe``).  Starting from the int
design (lists of ints, exact index, commit 38e73da): 6.19 G instructions.

* lazy list index, still on int words: 5.87 G; merge loop medians 1.13-1.28 s against 1.14-1.34 s
  for the exact index in the same runs; 626,660 visits of which 273,937 stale, but no set updates
  and no rechecks;
* str words and 2-char str pairs: with ``str.find`` 6.34 G (argument parsing and hashing the new
  pair strings ate the gain); with ``str.split`` 5.13 G, merge loop 0.89 vs 1.11 s for the int
  lazy version; with ``str.partition`` 4.95 G;
* ``set`` instead of ``sorted(set)`` for the visit order -0.22 G (words are rewritten as new
  objects, so id order is no longer memory order); pairs of a word built by ``map(add, w, w[1:])``
  in C -0.09 G; the collector off during the build -0.04 G; together 4.61 G, merge loop 0.83 vs
  0.96 s, build 0.09 vs 0.13 s; a ``defaultdict`` for the build's holders -0.06 G;
* tried and dropped: dropping stale entries in C before the loop
  (``compress(ids, map(str.__contains__, ...))``: +0.38 G, the slot-wrapper calls cost more than the
  visits); the new word as an f-string (+0.03 G) or by ``str.replace`` then ``str.find`` (+0.23 G);
  no ``set`` at all, duplicates visited as stale (-0.20 G but 0.73 vs 0.75 s, no faster: visits in
  id order read memory in order); ``Counter`` arithmetic for the several-occurrences diff (+0.04 G);
  the collector off during the merges too (0.03 G fewer than freezing only; not kept: a library
  should not leave the collector off).

Re-measured on the final code with ``python -m bpe merge-cost v6 no_gc_off.py no_freeze.py --data
../shared/data/gutenberg-books.txt --repeat 5 --workers 2 --instructions``: v6 4.642 G, merges
0.735 s (median of 5); without the collector off during the build 4.662 G, 0.784 s; without the
freeze either 4.706 G, 0.776 s.  Small, but instructions and seconds agree, so both stay.

The int design's own tuning (exact index, fast paths, buckets under a floor, ``gc.freeze()``, ...)
is in this file's history (``git log -p variants/v6_tuned.py``) and in ``docs/v6.md``; the buckets,
the byte-order keys and the grouping by neighbour carried over.

Pre-tokenization (the shared :func:`bpe.training.parallel.count_file_parallel`, 2 workers) is now a third to
a half of the end-to-end time, mostly the GPT-2 regex and ``Counter``.  What every variant got from
it: an ASCII twin of the pattern run by the stdlib ``re`` engine (about 2x faster than ``regex`` on
ASCII text), applied after replacing curly quotes, dashes, no-break spaces and a few other marks by
unused ASCII control characters of the same GPT-2 class (94% of this corpus is then ASCII instead of
43%): pre-tokenize CPU on 3.5 MB 0.50 s -> 0.33 s; then only the tokens that hold a stand-in
(control characters, so not printable, found in C) are translated back, and tokens are encoded in C:
CPU for the 14 MB corpus in 16 chunks 0.90-0.94 -> 0.71-0.77 s (two runs); and the parent sums each
chunk's counts as it arrives instead of after the last one (pretokenize 0.60 -> 0.53-0.59 s).  All
give identical counts (tested on every code point, stand-ins already present, generated text).
Tried and dropped: ``re`` with exact explicit Unicode classes (2-4x slower); counting
whitespace-delimited segments first (costs as much as counting pre-tokens); summing chunk counts with
``dict.update`` of a C-level ``zip``/``map`` (0.047 vs 0.049 s); 4 instead of 8 chunks per worker
(gain within noise, worker RSS on the 4x corpus 40 -> 90 MB).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Iterable, Mapping
from heapq import heapify, heappop, heappush, heapreplace
from operator import add

from bpe.errors import BPEError
from bpe.training.merge_loop import Pair
from bpe.training.parallel import count_file_parallel

IDEA = "tuned: words as str (one character per token), C-level search, lazy index, heap keyed in byte order"
count_pretokens = count_file_parallel

#: A token is one character, chr(id), so ids stop at sys.maxunicode.
MAX_TOKENS = 0x110000
#: Maps byte value c to the character 256 - c: larger bytes give smaller characters.
_INVERT = {c: chr(256 - c) for c in range(256)}
#: Ends every inverted key; larger than any mapped character, so a prefix sorts *after* its extensions.
_END = chr(257)


def inverted_key(token: bytes) -> str:
    """A string whose order is the reverse of ``token``'s bytes order (see the module docstring).

    >>> sorted([b"a", b"ab", b"b", b""], key=inverted_key)
    [b'b', b'ab', b'a', b'']
    """
    return "".join(_INVERT[c] for c in token) + _END


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


# --- The phases of a merge, shared with v7's shards ------------------------------------------------
# A merge of pair (a, b) into new token n: rewrite_words() rewrites the words that hold (a, b), and
# add_neighbour_changes() turns the one-occurrence words, filed by neighbour token, into pair-count
# changes.  Both only *collect* the changes: losses as (pair, count lost), `gained` maps a new pair
# (it contains n) to [count gained, ids of the words that gained it].  The caller applies them (v6:
# to its counts; v7: sends them to the parent).  Phases as functions cost nothing
# measurable against the single loop they replace (docs/v6.md, merge-cost).

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
            # One occurrence (99% of the visits): file the word under its neighbours, x ending
            # `before` and y starting `after`; their pairs are updated once per neighbour, later.
            words[word_id] = before + new_char + after
            if before:
                by_previous[before[-1]].append(word_id)
            if after:
                by_next[after[0]].append(word_id)
            continue
        # Several occurrences: str.replace merges them left to right without overlap, as v1 does;
        # the change in the word's pairs is the difference of the two pair multisets.
        merged = words[word_id] = word.replace(the_pair, new_char)
        change: dict[str, int] = {}  # (Counter's constructor and subtract cost 15 ms more here)
        for pair in pairs_of(merged):
            change[pair] = change.get(pair, 0) + 1
        for pair in pairs_of(word):
            change[pair] = change.get(pair, 0) - 1
        count = word_counts[word_id]
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
    return by_previous, by_next


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


def index_gained(pair_to_words: dict[str, list[int]], gained: dict[str, list]) -> None:
    """List the words that gained each new pair under it (appended whole: the index only grows)."""
    for pair, (_, holders) in gained.items():
        listed = pair_to_words.get(pair)
        if listed is None:
            pair_to_words[pair] = holders
        else:
            listed += holders


class Merger:
    """A word is a str of token ids as characters; a merge rewrites the words that hold the pair.

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
        # A word is a str with one character per token, chr(id); latin-1 maps byte c to chr(c).
        words = [token.decode("latin-1") for token in tokens]
        counts = list(map(pretoken_counts.__getitem__, tokens))
        # No cycles here: the collector is off while building, the index is frozen after (with
        # neither, build + merges ran 1.4% more instructions, see docs/v6.md).
        collecting = gc.isenabled()
        gc.disable()
        try:
            self.words, self.word_counts = words, counts
            # The index is lazy: pair_to_words[p] lists every word holding p, and maybe some that no
            # longer do (merge() skips those); a word is never removed, only appended.
            self.pair_counts, self.pair_to_words = count_pairs(words, counts)
            self._init_heap()
        finally:
            if collecting:
                gc.enable()
        # The index and the heap live until training ends and hold no reference cycles: freezing them
        # keeps the collector from walking them again and again during the merges.  Refcounting still
        # frees them.  close() unfreezes, so a long-running process that trains many times does not keep them.
        gc.freeze()

    def _init_tokens(self) -> None:
        # Tokens: 0-255 the bytes, then one id per *distinct* merged byte string (v1's tokens are
        # bytes, so two merges producing the same bytes must give the same token).
        self.token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self.token_ids: dict[bytes, int] = {t: i for i, t in enumerate(self.token_bytes)}
        self.token_keys: list[str] = [inverted_key(t) for t in self.token_bytes]

    def _init_heap(self) -> None:
        """The heap of the pairs at or above the floor; the others wait in buckets by count."""
        pair_counts = self.pair_counts
        # Pairs below `floor` wait in buckets by count (bit length) instead of the heap: most pairs
        # never get near the top, so they are never pushed.  The floor halves when the heap's best
        # falls below it, and the bucket just above the new floor moves into the heap.
        top = max(pair_counts.values(), default=0)
        self.floor_bits = max(0, top.bit_length() - 8)
        self.waiting: list[list[str]] = [[] for _ in range(self.floor_bits + 1)]
        keys, floor = self.token_keys, 1 << self.floor_bits
        self.heap = []
        for pair, count in pair_counts.items():
            if count >= floor:
                self.heap.append((-count, keys[ord(pair[0])] + keys[ord(pair[1])], pair))
            else:
                self.waiting[count.bit_length()].append(pair)
        heapify(self.heap)

    def close(self) -> None:
        """Called by :func:`bpe.training.merge_loop.run_merges` when the merges are done: undo ``gc.freeze()``."""
        gc.unfreeze()

    def select_best_pair(self) -> Pair | None:
        heap, pair_counts = self.heap, self.pair_counts
        while True:
            while heap:
                neg_count, _, pair = heap[0]
                live = pair_counts.get(pair)
                if live == -neg_count:
                    if live >= 1 << self.floor_bits:  # beats every waiting pair
                        tb = self.token_bytes
                        return tb[ord(pair[0])], tb[ord(pair[1])]
                    break
                if live is None or live > -neg_count:
                    heappop(heap)  # gone, or a newer entry with the larger count is in the heap
                else:
                    heapreplace(heap, (-live, heap[0][1], pair))  # count fell since pushed: re-key
            if self.floor_bits == 0:  # floor 1: nothing waits, the heap is empty
                return None
            self._lower_floor()

    def _lower_floor(self) -> None:
        """Halve the floor: pairs whose count (when they waited) reaches the new floor join the heap."""
        self.floor_bits -= 1
        keys, heap, pair_counts = self.token_keys, self.heap, self.pair_counts
        for pair in self.waiting.pop():
            live = pair_counts.get(pair)
            if live is not None:
                heappush(heap, (-live, keys[ord(pair[0])] + keys[ord(pair[1])], pair))

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

    def merge(self, pair: Pair) -> None:
        ids = self.token_ids
        the_pair = chr(ids[pair[0]]) + chr(ids[pair[1]])
        new_char = chr(self._new_token(*pair))
        lost_in_several: dict[str, int] = {}  # by words with several occurrences (1% of the visits)
        gained: dict[str, list] = {}
        by_previous, by_next = rewrite_words(self.words, self.word_counts, self.pair_to_words.pop(the_pair),
                                             the_pair, new_char, lost_in_several, gained)
        lost = add_neighbour_changes(by_previous, by_next, the_pair, new_char, self.word_counts, gained)
        self._subtract_lost(lost_in_several.items())
        self._subtract_lost(lost)
        self.pair_counts.pop(the_pair, None)
        self._add_gained(gained)

    def _subtract_lost(self, lost: Iterable[tuple[str, int]]) -> None:
        """Lower the counts of the pairs the merge broke up; a pair at zero leaves the counts and index."""
        pair_counts, pair_to_words = self.pair_counts, self.pair_to_words
        for pair, count in lost:
            remaining = pair_counts[pair] - count
            if remaining:
                pair_counts[pair] = remaining
            else:
                del pair_counts[pair]
                pair_to_words.pop(pair, None)

    def _add_gained(self, gained: dict[str, list]) -> None:
        """Count the new pairs, list their words in the index, and offer them to the heap (or a bucket)."""
        index_gained(self.pair_to_words, gained)
        pair_counts, keys, heap, waiting = self.pair_counts, self.token_keys, self.heap, self.waiting
        floor = 1 << self.floor_bits
        for pair, (count, _) in gained.items():
            total = pair_counts[pair] = pair_counts.get(pair, 0) + count
            if total >= floor:  # inlined, not a method per pair: this loop runs for every new pair
                heappush(heap, (-total, keys[ord(pair[0])] + keys[ord(pair[1])], pair))
            else:
                waiting[total.bit_length()].append(pair)

    def trace_state(self) -> dict:
        """The state with pairs and words as bytes, for ``bpe trace`` only (never called in training).

        The index is shown exact: the stale entries merge() would skip are left out.
        """
        token_bytes, words = self.token_bytes, self.words

        def as_bytes(pair: str) -> Pair:
            return token_bytes[ord(pair[0])], token_bytes[ord(pair[1])]

        index = {as_bytes(pair): sorted(i for i in set(ids) if pair in words[i])
                 for pair, ids in self.pair_to_words.items()}
        return {
            "pair_counts": {as_bytes(pair): count for pair, count in self.pair_counts.items()},
            "words": [(tuple(token_bytes[ord(t)] for t in word), count)
                      for word, count in zip(words, self.word_counts)],
            "pair_to_words": {pair: ids for pair, ids in index.items() if ids},
            "heap_size": len(self.heap),
        }
