"""A corpus's documents counted by a rung's counter of texts, as they are read.

A rung's counter of a stream of texts is its own ``count_texts`` (v9), or the one that counts as its
``count_pretokens`` does (:func:`texts_counter`); :func:`count_documents` feeds it the corpus's batches of
documents (:mod:`bpe.corpus.batches`), each followed by the separator, and says how far it has read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from bpe.corpus.batches import batches, counting_tokens, separator_of
from bpe.corpus.corpus import Corpus
from bpe.counting.parallel import count_file_parallel, count_texts_parallel, count_texts_parallel_fast
from bpe.counting.plain import count_file_serial, count_texts
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name


def count_documents(rung, corpus: Corpus, special_tokens: Sequence[str], *, workers: int | None = None,
                    errors: str = "strict", limit: int | None = None,
                    on_bytes: Callable[[int], None] | None = None, pattern: str = DEFAULT_PATTERN):
    """The pre-token counts of ``corpus``'s documents by ``pattern``, counted by ``rung``'s counter of a stream
    of texts as they are read; ``(counts, text bytes counted)``.  ``on_bytes(n)`` as each batch is counted: the bytes of
    the sources read for it (of the documents, for documents in memory)."""
    read_for: dict[int, int] = {}  # the batches given to the counter and not yet counted: their bytes read
    used = [0]

    def texts() -> Iterator[str | bytes]:
        pieces = corpus.pieces(counting_tokens(special_tokens), errors=errors, limit=limit, raw=counts_bytes(rung),
                               pattern=pattern)
        for index, batch in enumerate(batches(pieces, separator_of(special_tokens), errors=errors)):
            # documents in memory: no file is read, the progress is their bytes
            read_for[index] = batch.text_bytes if corpus.documents is not None else batch.read
            used[0] += batch.text_bytes
            yield batch.text

    def on_text(index: int) -> None:
        read = read_for.pop(index, 0)
        if on_bytes is not None and read:
            on_bytes(read)

    counter = texts_counter(rung)
    tokens = counting_tokens(special_tokens)
    if pattern_name(pattern) == DEFAULT_PATTERN:  # GPT-2's: called as it always was, so a rung's own counter of
        counts = counter(texts(), tokens, workers=workers, on_text=on_text)  # texts need not take a pattern
    else:
        counts = counter(texts(), tokens, workers=workers, on_text=on_text, pattern=pattern)
    return counts, used[0]


def counts_bytes(rung) -> bool:
    """Whether the rung's counter of texts takes a plain file's chunks as bytes (``COUNTS_BYTES``: v9, whose
    scanner reads UTF-8; a chunk then skips being decoded into a ``str`` and encoded back)."""
    return bool(getattr(rung, "COUNTS_BYTES", False))


def texts_counter(module):
    """The rung's counter of a stream of texts (:mod:`bpe.corpus`): its own ``count_texts``, or the one
    that counts as its ``count_pretokens`` does: the plain counter in this process (v1, v2) or in the pool
    (v3-v5), else the fast one in the pool (v6-v8, and a candidate with a counter of its own: the same
    counts, tested).  Each takes ``(texts, special_tokens, *, workers=None, on_text=None, pattern="gpt2")``."""
    own = getattr(module, "count_texts", None)
    if own is not None:
        return own
    if module.count_pretokens is count_file_serial:  # serial: the plain counter in this process
        return count_texts
    return count_texts_parallel if module.count_pretokens is count_file_parallel else count_texts_parallel_fast
