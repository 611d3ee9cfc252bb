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

from bpe.merge_loop import Pair
from bpe.parallel import count_file_parallel

IDEA = "tuned: int tokens, int pairs, in-place words, lazy heap keyed in byte order, local diffs"
count_pretokens = count_file_parallel

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


def _holds_pair(word: list[int], x: int, y: int) -> bool:
    """Whether ``y`` directly follows some ``x`` in ``word``.

    >>> _holds_pair([1, 2, 1, 3], 1, 3), _holds_pair([1, 2, 1, 3], 2, 3)
    (True, False)
    """
    return (x, y) in zip(word, word[1:])  # the search runs in C


def _gain(added: dict[int, list], gained: int, count: int, word_id: int) -> None:
    """Record that ``word_id`` gained the pair ``gained``, ``count`` times (its word's count).

    A call per occurrence measured no slower than inlining this (1.30 vs 1.30 s); inlining the
    count decrements next to it is kept, as the same helper-call for them cost 8% (1.41 s).
    """
    gain = added.get(gained)
    if gain is None:
        added[gained] = [count, [word_id]]
    else:
        gain[0] += count
        gain[1].append(word_id)


class Merger:
    def __init__(self, pretoken_counts: Mapping[bytes, int]):
        # Tokens are ints: 0-255 the bytes, then one id per *distinct* merged byte string (v1's tokens
        # are bytes, so two merges producing the same bytes must give the same token).
        self.token_bytes: list[bytes] = [bytes([i]) for i in range(256)]
        self.token_ids: dict[bytes, int] = {t: i for i, t in enumerate(self.token_bytes)}
        self.token_keys: list[str] = [inverted_key(t) for t in self.token_bytes]
        tokens = [token for token in pretoken_counts if len(token) > 1]
        words = list(map(list, tokens))
        counts = list(map(pretoken_counts.__getitem__, tokens))
        # A pair (a, b) is the int a << shift | b; ids never exceed 256 + the number of pairs.
        most_tokens = 256 + sum(len(w) - 1 for w in words)
        self.shift = shift = max(16, most_tokens.bit_length())
        self.mask = (1 << shift) - 1
        # One pass lists each pair's holders (a word once per occurrence); counts and sets are then
        # made from those lists in C.
        holders: dict[int, list[int]] = {}
        for word_id, word in enumerate(words):
            for a, b in zip(word, word[1:]):
                pair = a << shift | b
                ids = holders.get(pair)
                if ids is None:
                    holders[pair] = [word_id]
                else:
                    ids.append(word_id)
        count_of = counts.__getitem__
        pair_counts = {pair: sum(map(count_of, ids)) for pair, ids in holders.items()}
        pair_to_words = {pair: set(ids) for pair, ids in holders.items()}
        self.words, self.word_counts = words, counts
        self.pair_counts, self.pair_to_words = pair_counts, pair_to_words
        # Pairs below `floor` wait in buckets by count (bit length) instead of the heap: most pairs
        # never get near the top, so they are never pushed.  The floor halves when the heap's best
        # falls below it, and the bucket just above the new floor moves into the heap.
        top = max(pair_counts.values(), default=0)
        self.floor_bits = max(0, top.bit_length() - 8)
        self.waiting: list[list[int]] = [[] for _ in range(self.floor_bits + 1)]
        keys, mask, floor = self.token_keys, self.mask, 1 << self.floor_bits
        self.heap = []
        for pair, count in pair_counts.items():
            if count >= floor:
                self.heap.append((-count, keys[pair >> shift] + keys[pair & mask], pair))
            else:
                self.waiting[count.bit_length()].append(pair)
        heapify(self.heap)
        # The words, the index and the heap live until training ends and hold no reference cycles:
        # freezing them keeps the cyclic garbage collector from walking all of them (and likely evicting
        # them from the cache) again and again during the merges.  Refcounting still frees them.
        # close() unfreezes, so a long-running process that trains many times does not keep them.
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
                        return tb[pair >> self.shift], tb[pair & self.mask]
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
        keys, shift, mask, heap, pair_counts = self.token_keys, self.shift, self.mask, self.heap, self.pair_counts
        for pair in self.waiting.pop():
            live = pair_counts.get(pair)
            if live is not None:
                heappush(heap, (-live, keys[pair >> shift] + keys[pair & mask], pair))

    def merge(self, pair: Pair) -> None:
        first, second = pair
        ids = self.token_ids
        a, b = ids[first], ids[second]
        shift, mask = self.shift, self.mask
        merged_bytes = first + second
        new = ids.get(merged_bytes)
        if new is None:
            new = ids[merged_bytes] = len(self.token_bytes)
            self.token_bytes.append(merged_bytes)
            keys = self.token_keys
            self.token_keys.append(keys[a][:-1] + keys[b])  # = inverted_key(merged_bytes), in C
        the_pair = a << shift | b
        words, word_counts = self.words, self.word_counts
        pair_counts, pair_to_words = self.pair_counts, self.pair_to_words
        added: dict[int, list] = {}  # new pairs (all contain `new`) -> [count gained, word ids]
        # Fast-path words, by the token right after b / right before a: their pair updates are done
        # once per neighbour token after the loop, not once per word.
        right_of: dict[int, list[int]] = defaultdict(list)
        left_of: dict[int, list[int]] = defaultdict(list)
        recheck: list[tuple[int, int]] = []  # (pair, word id): may the word still hold it?
        ba = b << shift | a
        new_new = new << shift | new
        new_left = new << shift  # (new, y) is new_left | y
        b_left = b << shift
        # Visit the words in id order: they were allocated in that order, so memory is read in order.
        for word_id in sorted(pair_to_words.pop(the_pair)):
            word = words[word_id]
            n = len(word)
            times_a = word.count(a)
            times_b = word.count(b)  # a == b gives times_a == times_b >= 2: the general case
            if times_a == 1 or times_b == 1:
                # The common case: a or b occurs once, so the pair occurs once, at i (the index is
                # exact, so the word holds the pair; C-level list.index finds it).  The word loses
                # (x, a) and (b, y) once and gains (x, new) and (new, y) once; it surely leaves the
                # index of (x, a) if a occurs once, of (b, y) if b does, else it is rechecked.
                i = word.index(a) if times_a == 1 else word.index(b) - 1
                if i + 2 < n:
                    y = word[i + 2]
                    right_of[y].append(word_id)
                    if times_b != 1:
                        recheck.append((b_left | y, word_id))
                if i:
                    x = word[i - 1]
                    left_of[x].append(word_id)
                    if times_a != 1:
                        recheck.append((x << shift | a, word_id))
                word[i : i + 2] = (new,)
                continue
            # General case: several a's and b's; find the occurrences left to right, without overlap.
            i = word.index(a)
            remaining = times_a
            found = []
            while True:
                remaining -= 1
                if i + 1 < n and word[i + 1] == b:
                    found.append(i)
                    if b == a:
                        remaining -= 1
                    i += 2
                else:
                    i += 1
                if remaining <= 0:
                    break
                i = word.index(a, i)
            count = word_counts[word_id]
            last = len(found) - 1
            lost = []  # pairs whose count fell but stayed above zero: does this word still hold them?
            for k in range(last, -1, -1):  # right to left, so earlier positions stay valid
                pos = found[k]
                swaps = []  # (pair lost, pair gained) at this occurrence's right and left boundaries
                if pos + 2 < n and (k == last or found[k + 1] != pos + 2):
                    y = word[pos + 2]
                    swaps.append((b_left | y, new_left | y))
                if pos:
                    if k and found[k - 1] == pos - 2:
                        swaps.append((ba, new_new))
                    else:
                        x = word[pos - 1] << shift
                        swaps.append((x | a, x | new))
                for gone, gained in swaps:
                    left = pair_counts[gone] - count
                    if left:
                        pair_counts[gone] = left
                        lost.append(gone)
                    else:
                        del pair_counts[gone]
                        del pair_to_words[gone]
                    _gain(added, gained, count, word_id)
                word[pos : pos + 2] = (new,)
            for gone in lost:
                x, y = gone >> shift, gone & mask
                if x in word and y in word and _holds_pair(word, x, y):
                    continue
                word_ids = pair_to_words.get(gone)
                if word_ids is not None:
                    word_ids.discard(word_id)
        # The fast-path words, once per neighbour token: they lose (b, y) and gain (new, y), lose
        # (x, a) and gain (x, new), each once per word, so a pair's change is the sum of their counts.
        moves = [(b_left | y, new_left | y, holders) for y, holders in right_of.items()]
        moves += [(x << shift | a, x << shift | new, holders) for x, holders in left_of.items()]
        count_of = word_counts.__getitem__
        for gone, gained, holders in moves:
            count = sum(map(count_of, holders))
            left = pair_counts[gone] - count
            if left:
                pair_counts[gone] = left
                pair_to_words[gone].difference_update(holders)
            else:
                del pair_counts[gone]
                del pair_to_words[gone]
            gain = added.get(gained)
            if gain is None:
                added[gained] = [count, holders]
            else:
                gain[0] += count
                gain[1] += holders
        for gone, word_id in recheck:
            if _holds_pair(words[word_id], gone >> shift, gone & mask):
                pair_to_words[gone].add(word_id)
        pair_counts.pop(the_pair, None)
        keys, heap, waiting, floor = self.token_keys, self.heap, self.waiting, 1 << self.floor_bits
        for gained, (count, holders) in added.items():
            total = pair_counts.get(gained, 0) + count
            pair_counts[gained] = total
            known = pair_to_words.get(gained)
            if known is None:
                pair_to_words[gained] = set(holders)
            else:
                known.update(holders)
            if total >= floor:
                heappush(heap, (-total, keys[gained >> shift] + keys[gained & mask], gained))
            else:
                waiting[total.bit_length()].append(gained)

    def trace_state(self) -> dict:
        """The state with pairs and words as bytes, for ``bpe trace`` only (never called in training)."""
        token_bytes, shift, mask = self.token_bytes, self.shift, self.mask

        def as_bytes(pair: int) -> Pair:
            return token_bytes[pair >> shift], token_bytes[pair & mask]

        return {
            "pair_counts": {as_bytes(pair): count for pair, count in self.pair_counts.items()},
            "words": [(tuple(token_bytes[t] for t in word), count)
                      for word, count in zip(self.words, self.word_counts)],
            "pair_to_words": {as_bytes(pair): ids for pair, ids in self.pair_to_words.items()},
            "heap_size": len(self.heap),
        }
