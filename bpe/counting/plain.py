"""The plain counter: text -> counts of pre-tokens (as UTF-8 bytes), the definition every counter is held to.

Each piece between special tokens (:mod:`bpe.split.patterns`) is cut by the pattern (``regex.findall``;
GPT-2's unless ``pattern`` names another, or is a regex of its own) and every pre-token counted
(``Counter``); each distinct pre-token is encoded to UTF-8 once, at the end.  For every pattern this is
the definition.

>>> count_text("low low<|endoftext|>lower", ["<|endoftext|>"])
Counter({b'low': 1, b' low': 1, b'lower': 1})
>>> sorted(count_text("HelloWorld 1234", [], pattern="o200k").items())
[(b' ', 1), (b'123', 1), (b'4', 1), (b'Hello', 1), (b'World', 1)]

Which rung counts with what:

* v1, v2: :func:`count_file_serial`, this counter in this process, one safely cut chunk of the file at
  a time (:mod:`bpe.split.chunking`, read by :func:`bpe.corpus.text_file.read_texts`);
* v3, v4, v5: :func:`bpe.counting.parallel.count_file_parallel`, this same counter in a process pool;
* v6, v7, v8: the fast counter, :mod:`bpe.counting.fast` (the fast split of :mod:`bpe.split.fast`), in the
  same pool; its counts are tested equal to :func:`count_text`'s.  The fast split is GPT-2's alone: with any
  other pattern they count with this counter, in the same pool;
* v9: its compiled scanners' counts (GPT-2's, cl100k's, o200k's; a custom regex by ``regex`` on its threads),
  tested equal to these too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from operator import add, itemgetter
from pathlib import Path

from bpe.corpus.text_file import read_texts
from bpe.split.patterns import DEFAULT_PATTERN, compiled_pattern, cuts_of, split_on_special_tokens


def count_into(counts: Counter[str], text: str, special_tokens: Sequence[str], pattern: str = DEFAULT_PATTERN) -> None:
    """Add the pre-tokens of ``text`` by ``pattern`` (a name or a regex; special tokens split out) to
    ``counts``, as ``str``.

    ``findall`` and ``Counter.update`` keep the loop over the matches in C.
    """
    findall = compiled_pattern(pattern).findall
    for piece in split_on_special_tokens(text, special_tokens):
        counts.update(findall(piece))


class PretokenCounts(Counter):
    """What a rung's ``count_pretokens`` returns: pre-token bytes -> count, as a ``Counter`` (``len()``: the
    distinct pre-tokens, ``total()``: all of them), and a ``close()`` that releases what holds them.

    These counts live in this process, so ``close()`` has nothing to do.  v7's counts, kept in its worker
    processes (:class:`bpe.variants._v7_shards.ShardedCounts`), answer the same three, and there ``close()``
    stops the workers; ``train_bpe`` calls it if the run fails before a ``Merger`` takes the counts.
    """

    def close(self) -> None:
        """Nothing to release: the counts are this object."""


def encoded(counts: Counter[str], kind: type[Counter] = Counter) -> Counter[bytes]:
    """``counts`` keyed by the UTF-8 bytes of each pre-token, as a ``kind``: one encoding per distinct pre-token."""
    return kind({token.encode("utf-8"): n for token, n in counts.items()})


def count_text(text: str, special_tokens: Sequence[str], pattern: str = DEFAULT_PATTERN) -> Counter[bytes]:
    """Counts of every pre-token of ``text`` by ``pattern`` (UTF-8 encoded), special tokens split out.

    The definition: every faster counter (:mod:`bpe.split.fast`, the pool of
    :mod:`bpe.counting.parallel`, v9's scanners) is tested equal to it.
    """
    counts: Counter[str] = Counter()
    count_into(counts, text, special_tokens, pattern)
    return encoded(counts)


def add_counts(total: dict, more: dict) -> None:
    """``total += more`` for counts; ``more`` is used up.  Not pre-tokenization but summing: the pool's
    reduce, the fast counter and v7's shards use it.

    No Python-level step per key (``Counter.update`` takes one for every key): the pre-tokens in both
    are summed with ``itemgetter``/``map`` over C functions, the rest copied by ``dict.update``.  On web
    text about half of a chunk's pre-tokens are new to the running count.

    >>> counts = {b"a": 1, b"b": 2}
    >>> add_counts(counts, {b"a": 3, b"c": 1}); add_counts(counts, {b"a": 1, b"b": 1}); counts
    {b'a': 5, b'b': 3, b'c': 1}
    """
    common = list(more.keys() & total.keys())
    if len(common) > 1:  # itemgetter of one key returns the value, not a tuple
        values = itemgetter(*common)
        dict.update(more, zip(common, map(add, values(more), values(total))))
    elif common:
        more[common[0]] += total[common[0]]
    dict.update(total, more)  # dict's own update: Counter.update would add again


def count_file_serial(
    path: str | Path, special_tokens: Sequence[str], *, workers: int | None = None, errors: str = "strict",
    end: int | None = None, on_bytes: Callable[[int], None] | None = None, pattern: str = DEFAULT_PATTERN,
) -> PretokenCounts:
    """Count the file's pre-tokens in this process, chunk by chunk (bytes exactly as stored): v1, v2.

    Each chunk's pre-tokens go straight into one ``Counter`` of ``str``, encoded once at the end.
    ``end`` (a safe cut from :func:`bpe.split.chunking.find_limit_end`) reads only the first ``end``
    bytes; ``on_bytes(n)`` is called after each chunk of ``n`` bytes (see :func:`read_texts`); the chunks
    are cut by ``pattern``'s rule (:func:`bpe.split.patterns.cuts_of`).  ``workers`` is accepted and
    ignored, so every variant's pre-tokenizer has the same signature.
    """
    texts = read_texts(path, special_tokens, errors=errors, end=end, on_bytes=on_bytes, cuts=cuts_of(pattern))
    return count_texts(texts, special_tokens, pattern=pattern)


def count_texts(texts: Iterable[str], special_tokens: Sequence[str], *, workers: int | None = None,
                on_text: Callable[[int], None] | None = None, pattern: str = DEFAULT_PATTERN) -> PretokenCounts:
    """Count a stream of texts in this process, one after another, into one ``Counter`` of ``str`` encoded
    once at the end: the file's chunks (:func:`count_file_serial`) or a corpus's batches of documents
    (:mod:`bpe.corpus.corpus`), each counted on its own.  ``on_text(i)`` is called once text ``i``
    (from 0) is counted; ``workers`` is accepted and ignored, as the file counters do.
    """
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        count_into(counts, text, special_tokens, pattern)
        if on_text is not None:
            on_text(i)
    return encoded(counts, PretokenCounts)
