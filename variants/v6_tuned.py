r"""v6 — tuned: heap + fine-grained diff + incremental index, written for CPython's speed.

What it adds: nothing new in the algorithm (heap selection, fine-grained diff and an exact inverted
index, as in v4/v5); everything is re-done for speed in CPython, each choice kept because it measured
faster on this machine:

* **tokens are ints, pairs are one int** ``a << shift | b``: hashing an int is cheaper than hashing a
  ``(bytes, bytes)`` tuple, and a word is a flat ``list[int]`` rewritten in place with one slice
  assignment per occurrence (right to left, so earlier positions stay valid);
* **occurrences found by C-level list methods** (``list.count`` then ``list.index``), not a Python
  loop over the word;
* **fine-grained diff**: only the pairs next to a merged position change; the new pairs (which all
  contain the new token) are gathered in a local dict and pushed to the heap once per merge, with
  their final count;
* **lazy max-heap keyed in byte order**: a heap entry is ``(-count, key, pair)`` where ``key`` is a
  string whose order is the *reverse* of the pair's ``(bytes, bytes)`` order, so ``heapq``'s
  min-heap pops the larger count first and, among equal counts, the larger byte pair, exactly v1's
  tie-break, whatever the token ids are.  The key maps each byte c to ``chr(256 - c)`` and ends
  every token with ``chr(257)``, larger than any mapped character, so a token sorts *after* its
  own extensions (``b"a" < b"ab"`` must become ``key(b"a") > key(b"ab")``); because the end mark
  occurs only at the end of a token, concatenating the two tokens' keys compares exactly like the
  tuple of the two keys.  Counts only fall for pairs that already exist, so a fall pushes nothing:
  a popped entry whose count is stale is re-keyed with its live count (or dropped if the pair is gone);
  pairs below a floor wait outside the heap until the best count comes down to them;
* one token id per distinct byte string: v1's tokens *are* bytes, so should two merges ever produce
  the same bytes (``(a, bc)`` and ``(ab, c)``) they must be one token here too.

Complexity: as v5: build O(L); per merge O(sum of lengths of the words holding the pair) plus
O(log H) per heap push/pop.

Measured on a 2-core machine, sometimes shared with other benchmarks (each run says which), so
figures move between runs; the ratios below are within one run.  End to end, with the peers::

    python -m bpe bench --data ../shared/data/gutenberg-books.txt --vocab-size 10000 --repeat 3 \
        --workers 2 --peers

* final code, idle machine, ``--variant v5,v6`` with the command above: v6 2.00 s = pretokenize
  0.81 + merge phase 1.20 (pair count 0.19 + select 0.07 + update 0.93); v5 3.93 s (v6 1.96x
  faster); HF tokenizers 2.56 s (v6 0.78x its time, merge phase 0.47x of HF's total); rustbpe
  1.10 s (v6 1.82x its time); bpeasy 2.67 s (0.75x).  4x corpus: 4.34 s vs 1.83 s for 1x (2.38x),
  peak RSS 105.4 vs 110.2 MB.  The 2x-over-v5 and 0.45x-of-HF targets sit inside this machine's
  run-to-run spread (this run and the next one below);
* after the second tuning round (below), ``--variant v5,v6`` with the command above, one run, commit
  2f131ed (machine shared with a single-process benchmark): v6 1.94 s = pretokenize 0.67 + merge
  phase 1.20 (pair count 0.18 + select 0.07 + update 0.95); v5 4.23 s in the same run (v6 2.18x
  faster); HF tokenizers 2.75 s (v6 0.71x its time, merge phase 0.44x of HF's total, under the
  <= 0.45x target); rustbpe and bpeasy were not installed in that checkout.  Checkpoints: 1.50 s at
  merge 1,000, 1.94 s at 9,743;
* before that round, two runs: v6 2.31 s and 2.06 s (pretokenize 0.76 / 0.70, merge phase 1.55 / 1.34 =
  pair count 0.25 / 0.24 + select 0.08 / 0.07 + update 1.22 / 1.03); HF tokenizers 2.61 / 2.81 s in
  the same runs: v6 takes 0.89x / 0.73x its time, merge phase 0.60x / 0.48x of HF's total (the
  <= 0.45x target is missed on a quiet machine; under load, when HF slows more than v6, earlier code
  states measured 0.40-0.48x); rustbpe 1.08 / 1.00 s (v6 2.1x); bpeasy 2.16 / 2.52 s (v6 1.07x /
  0.82x).  Earlier code states, at various loads: v6/HF 0.55x-1.00x.  The corpus concatenated 4x
  (56 MB, ``--data /tmp/gutenberg4x.txt``, run right after): 4.16 s = 2.02x the 1x time; peak RSS
  105.4 MB vs 110.2 MB (0.96x);
* v5 uses the same shared pre-tokenizer (0.7 s here), so v6 is 2x faster than v5 end to end only
  if v5's merge phase is above about twice v6's plus 0.7 s;  for v2 on this corpus see the README's
  ladder run (222.3 s, nearly all of it the ``max()`` in select).
* Merges identical to v2's (sha256 ``3cc0d93a3b46a60c`` on this corpus).

What each tuning measured (merge loop alone on the counted pre-tokens of this corpus, CPU seconds,
best of 3 alternating runs; ``/tmp`` harness not shipped):

* exact index (drop a word from ``pair_to_words[p]`` when it loses its last p) instead of a lazy
  superset index: the superset made 626,660 word visits of which 273,937 (44%) found no occurrence;
  the time difference was within the noise, but exactness is what lets the search below use
  ``list.index`` without a try/except and take the fast path without re-checking;
* single-occurrence fast path (a and b each once in the word, so their neighbour pairs surely leave
  it; 81% of the 352,723 visits; widened below): merge loop 1.55 s -> 1.35 s;
* one dict for a gained pair's count and holders (1.90 -> 1.78 s, merge loop + build); words
  visited in id order, i.e. memory order (1.43 -> 1.30 s), new tokens' keys built from their parts;
* a floor under the heap: pairs whose count is below it wait in buckets by bit length and join the
  heap only when the floor halves (80% of the 82,149 pushes were of pairs below the last merge's
  count, which never come near the top): merge loop 1.34 -> 1.21 s;
* tried and dropped: counting the first pairs in flat lists indexed by ``a * 256 + b`` instead
  of dicts (pair count 0.29 vs 0.31 s, no gain).

A second round aimed at the first 1,000 merges, which cost ~70% of the merge loop (157,241 of the
352,723 word visits come in the first 100 merges).  Harness: ``Merger(counts)`` (the build, i.e. the
pair count stage) and ``run_merges(..., 9743, NullTimer())`` timed with ``time.process_time`` on the
serially counted pre-tokens, pinned to one core while another benchmark ran on the other, old and
new code alternating in one process, best of 3-5 (figures move by ~0.05 s between runs; only the
gap within a run counts):

* fast-path words gathered by neighbour token (``right_of[y]``, ``left_of[x]``: one list append per
  side per word), their pair counts and index entries updated once per neighbour token after the
  loop (``sum(map(...))`` of the counts, ``set.difference_update``), instead of two dict updates, a
  set discard and a gain record per side per word: merge loop 1.10-1.17 s -> 1.04-1.13 s;
* the fast path widened from "a and b each once" to "a or b once" (the pair then occurs once; the
  side whose token repeats is rechecked after the loop): 53,000 of the 67,000 general-case visits
  move to it; merge loop 1.06 -> 1.03 s (old code 1.16 s in the same run);
* initial pair count in one pass that only lists each pair's holders, then counts as
  ``sum(map(...))`` and sets as ``set(list)`` in C: build 0.20 -> 0.15 s, and the merge loop after
  it 0.93 -> 0.86 s (the sets are built whole, not grown one add at a time);
* ``gc.freeze()`` at the end of the build (the first round measured pausing or freezing the
  collector as no difference beyond noise, 1.45 vs 1.30-1.59 s; re-measured in fresh processes, as
  the bench runs them, alternating, 4 each: merge loop best 1.01 -> 0.92 s, median ~1.16 ->
  ~1.00 s; ``gc.callbacks`` count ~0.1 s of collections in the merges of the unfrozen run, and the
  full walks likely also evict the words from the cache);
* the four together, fresh processes alternating, 4 each: build + merge loop best 1.38 -> 1.18 s
  (median 1.42 -> 1.20 s); in one process, best of 4: 1.42 -> 1.12 s;
* tried and dropped: visiting the words in set order instead of ``sorted`` (merge loop 1.02 vs
  1.00 s); framing every word with a sentinel token at both ends so a merged position always has
  two neighbours (no ``len`` and no bounds tests; merge loop 1.06-1.09 vs 0.99-1.03 s, slower);
  skipping the recheck of a repeated side when its neighbour token occurs once (``_holds_pair``
  calls 59,570 -> 26,314, merge loop 0.98 vs 1.00 s and 0.976 vs 0.967 s: within noise); building
  the first pair ints with ``map`` (0.23-0.25 s vs 0.17 s for the list pass, slower).

Pre-tokenization (the shared :func:`bpe.parallel.count_file_parallel`, 2 workers) was half of the
end-to-end time, ~70% of it the GPT-2 regex and ~28% ``Counter.update``.  Kept, in the shared
:func:`bpe.pretokenize.count_pretokens` so every variant gets it: an ASCII twin of the pattern run by
the stdlib ``re`` engine (about 2x faster than ``regex`` on ASCII text), applied after replacing
curly quotes, dashes, no-break spaces and a few other marks by unused ASCII control characters of the
same GPT-2 class (94% of this corpus is then ASCII instead of 43%); pre-tokenize CPU on 3.5 MB
0.50 s -> 0.33 s, identical counts (tested on every code point, stand-ins already present, generated
text).  Tried and dropped, all checked to give identical pre-tokens: ``re`` with ``\p{L}``/``\p{N}``/
``\s`` as exact explicit classes built from ``regex``'s own tables (2-4x *slower*: CPython 3.11's
Unicode 14 misses 26,416 letters that ``regex`` knows, so the classes need large explicit ranges);
the ASCII twin on pure-ASCII lines only, found with a look-behind split (only 71% of the text, and the
split costs what it saves); counting whitespace-delimited segments first and running the GPT-2 regex
once per distinct segment (counting segments costs as much as counting pre-tokens); possessive
quantifiers, ASCII-first classes and ``regex.V1`` (no gain); 4 instead of 8 chunks per worker (gain
within noise, worker RSS on the 4x corpus 40 -> 90 MB).
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Mapping
from heapq import heapify, heappop, heappush, heapreplace
from operator import add

from bpe.errors import BPEError
from bpe.merge_loop import Pair
from bpe.parallel import count_file_parallel

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


class Merger:
    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        # Tokens: 0-255 the bytes, then one id per *distinct* merged byte string (v1's tokens are
        # bytes, so two merges producing the same bytes must give the same token).
        self.token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self.token_ids: dict[bytes, int] = {t: i for i, t in enumerate(self.token_bytes)}
        self.token_keys: list[str] = [inverted_key(t) for t in self.token_bytes]
        tokens = [token for token in pretoken_counts if len(token) > 1]
        # A word is a str with one character per token, chr(id); latin-1 maps byte c to chr(c).
        words = [token.decode("latin-1") for token in tokens]
        counts = list(map(pretoken_counts.__getitem__, tokens))
        # The build allocates ~200,000 containers in one go: the collector would walk them all,
        # several times, for nothing (they hold no cycles).
        collecting = gc.isenabled()
        gc.disable()
        try:
            # One pass lists each pair's holders (a word once per occurrence); counts are then summed in C.
            holders: dict[str, list[int]] = defaultdict(list)
            for word_id, word in enumerate(words):
                for pair in pairs_of(word):
                    holders[pair].append(word_id)
            holders = dict(holders)
            count_of = counts.__getitem__
            pair_counts = {pair: sum(map(count_of, ids)) for pair, ids in holders.items()}
            self.words, self.word_counts = words, counts
            # The index is lazy: pair_to_words[p] lists every word holding p, and maybe some that no
            # longer do (merge() skips those); a word is never removed, only appended.
            self.pair_counts, self.pair_to_words = pair_counts, holders
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
        finally:
            if collecting:
                gc.enable()
        # The index and the heap live until training ends and hold no reference cycles: freezing them
        # keeps the collector from walking them again and again during the merges.  Refcounting still
        # frees them.  close() unfreezes, so a long-running process that trains many times does not keep them.
        gc.freeze()

    def close(self) -> None:
        """Called by :func:`bpe.merge_loop.run_merges` when the merges are done: undo ``gc.freeze()``."""
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
                raise BPEError(f"v6 stores a token as one character, so it makes at most {MAX_TOKENS:,} tokens; "
                               f"use another variant (e.g. --variant v5) for a larger vocab")
            ids[merged_bytes] = new
            self.token_bytes.append(merged_bytes)
            keys = self.token_keys
            keys.append(keys[ids[first]][:-1] + keys[ids[second]])  # = inverted_key(merged_bytes), in C
        return new

    def merge(self, pair: Pair) -> None:
        ids = self.token_ids
        a_char, b_char = chr(ids[pair[0]]), chr(ids[pair[1]])
        the_pair = a_char + b_char
        new_char = chr(self._new_token(*pair))
        words, word_counts = self.words, self.word_counts
        pair_counts, pair_to_words = self.pair_counts, self.pair_to_words
        added: dict[str, list] = {}  # new pairs (all contain new) -> [count gained, word ids]
        # Words with one occurrence, by the token right after b / right before a: their pair updates
        # are made once per neighbour token after the loop, not once per word.
        right_of: dict[str, list[int]] = defaultdict(list)  # y -> words that lose (b, y), gain (new, y)
        left_of: dict[str, list[int]] = defaultdict(list)  # x -> words that lose (x, a), gain (x, new)
        for word_id in set(pair_to_words.pop(the_pair)):
            word = words[word_id]
            left, found, right = word.partition(the_pair)  # C-level search for the first occurrence
            if not found:
                continue  # a stale index entry: the word lost the pair in an earlier merge
            if the_pair not in right:
                # One occurrence (99% of the visits): the word loses (x, a) and (b, y) and gains
                # (x, new) and (new, y), where x ends `left` and y starts `right`.
                words[word_id] = left + new_char + right
                if left:
                    left_of[left[-1]].append(word_id)
                if right:
                    right_of[right[0]].append(word_id)
                continue
            # Several occurrences: str.replace merges them left to right without overlap, as v1 does;
            # the change in the word's pairs is the difference of the two pair multisets.
            merged = words[word_id] = word.replace(the_pair, new_char)
            change: dict[str, int] = {}  # (Counter's constructor and subtract cost 15 ms more here)
            for gained in pairs_of(merged):
                change[gained] = change.get(gained, 0) + 1
            for lost in pairs_of(word):
                change[lost] = change.get(lost, 0) - 1
            count = word_counts[word_id]
            for changed, times in change.items():
                if times > 0:
                    gain = added.get(changed)
                    if gain is None:
                        added[changed] = [times * count, [word_id]]
                    else:
                        gain[0] += times * count
                        gain[1].append(word_id)
                elif times < 0 and changed != the_pair:  # the_pair's own count is dropped below
                    left_count = pair_counts[changed] + times * count
                    if left_count:
                        pair_counts[changed] = left_count
                    else:
                        del pair_counts[changed]
                        pair_to_words.pop(changed, None)
        # The one-occurrence words, once per neighbour token: a pair's change is the sum of their counts.
        moves = [(b_char + y, new_char + y, holders) for y, holders in right_of.items()]
        moves += [(x + a_char, x + new_char, holders) for x, holders in left_of.items()]
        count_of = word_counts.__getitem__
        for lost, gained, holders in moves:
            count = sum(map(count_of, holders))
            if lost != the_pair:  # (b, y) is the_pair when a == b == y, as in "aaa"
                left_count = pair_counts[lost] - count
                if left_count:
                    pair_counts[lost] = left_count
                else:
                    del pair_counts[lost]
                    pair_to_words.pop(lost, None)
            gain = added.get(gained)
            if gain is None:
                added[gained] = [count, holders]
            else:
                gain[0] += count
                gain[1] += holders
        pair_counts.pop(the_pair, None)
        keys, heap, waiting, floor = self.token_keys, self.heap, self.waiting, 1 << self.floor_bits
        for gained, (count, holders) in added.items():
            total = pair_counts.get(gained, 0) + count
            pair_counts[gained] = total
            listed = pair_to_words.get(gained)
            if listed is None:
                pair_to_words[gained] = holders
            else:
                listed += holders
            if total >= floor:
                heappush(heap, (-total, keys[ord(gained[0])] + keys[ord(gained[1])], gained))
            else:
                waiting[total.bit_length()].append(gained)

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
