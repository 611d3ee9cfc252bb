"""``bpe encode --peers``: tiktoken on the same text, with the same merges and threads; ids must be identical.

tiktoken is built from our tokenizer (:func:`bpe.io.formats.tiktoken_ranks`, GPT-2's pattern); the text
is split on the special tokens as ours is and the pieces go to ``encode_ordinary_batch(pieces,
num_threads=workers)``.  Its timing is that call alone, against the whole of ``bpe encode`` (chunking,
pool, reading, writing), so the ratio, if anything, flatters tiktoken; CPU time is printed too (the
steadier figure on a busy machine).  The text is held in memory: a bench for files that fit.
"""

from __future__ import annotations

import base64
import time
from itertools import chain

from bpe.errors import BPEError
from bpe.lab.measure.peers import INSTALL_HINT


def tiktoken_encoding(tokenizer):
    """A ``tiktoken.Encoding`` with our merges (ranks = our ids) and the GPT-2 pattern."""
    try:
        import tiktoken
    except ImportError:
        raise BPEError(f"--peers needs tiktoken, which is not installed; install it with: {INSTALL_HINT}") from None
    from bpe.io.formats import tiktoken_ranks
    from bpe.training.pretokenize import GPT2_PATTERN

    ranks = {}
    for line in tiktoken_ranks(tokenizer.vocab, tokenizer.special_tokens).splitlines():
        token, rank = line.split(" ")
        ranks[base64.b64decode(token)] = int(rank)
    specials = {t: tokenizer.token_ids[t.encode("utf-8")] for t in tokenizer.special_tokens}
    return tiktoken.Encoding("bpe-lab", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def tiktoken_ids(tokenizer, encoding, text: str, threads: int) -> tuple[list[int], float, float]:
    """tiktoken's ids of ``text`` (special tokens as their ids), and the wall and CPU seconds its encoding took."""
    from bpe.io.encode import cpu_seconds

    split = tokenizer._special_split
    pieces = [text] if split is None else split.split(text)  # text, special, text, ..., text
    started, cpu_started = time.perf_counter(), cpu_seconds()
    encoded = encoding.encode_ordinary_batch(pieces[::2], num_threads=threads)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    specials = [[tokenizer.token_ids[s.encode("utf-8")]] for s in pieces[1::2]] + [[]]
    return list(chain.from_iterable(chain.from_iterable(zip(encoded, specials)))), seconds, cpu


def first_difference(ours, theirs) -> int | None:
    """The first index where two id sequences differ (a length difference counts), or None."""
    import numpy as np

    ours, theirs = np.asarray(ours), np.asarray(theirs)
    common = min(len(ours), len(theirs))
    unequal = np.flatnonzero(ours[:common] != theirs[:common])
    if len(unequal):
        return int(unequal[0])
    return None if len(ours) == len(theirs) else common


def run_encode_peers(tokenizer_dir, stats) -> dict:
    """After ``bpe encode`` (``stats``): time tiktoken on the same file and threads; print the ratio and the check."""
    import numpy as np

    from bpe.io.encode import load_tokenizer_dir

    tokenizer = load_tokenizer_dir(tokenizer_dir)
    encoding = tiktoken_encoding(tokenizer)
    with open(stats.path, encoding="utf-8", newline="") as f:
        text = f.read()
    ids, seconds, cpu = tiktoken_ids(tokenizer, encoding, text, stats.workers)
    ours = np.load(stats.out, mmap_mode="r")
    where = first_difference(ours, ids)
    ratio = stats.seconds / seconds if seconds else float("inf")
    print(f"tiktoken encode_ordinary_batch, {stats.workers} thread{'s' if stats.workers != 1 else ''}: "
          f"{seconds:.2f}s, {stats.bytes / 1e6 / seconds:.1f} MB/s; ours / tiktoken: {ratio:.2f}x the time")
    print(f"CPU time: ours {stats.cpu_seconds:.2f}s (all processes), tiktoken {cpu:.2f}s; "
          f"ours / tiktoken: {stats.cpu_seconds / cpu if cpu else float('inf'):.2f}x")
    if where is None:
        print(f"ids identical to tiktoken's ({len(ids):,} ids)")
    else:
        print(f"ids DIFFER from tiktoken's at index {where:,} (ours {len(ours):,} ids, tiktoken {len(ids):,})")
    result = {"tiktoken_seconds": seconds, "ours_seconds": stats.seconds, "ratio": ratio,
              "tiktoken_cpu_seconds": cpu, "ours_cpu_seconds": stats.cpu_seconds, "identical": where is None}
    if where is not None:
        raise BPEError(f"ids differ from tiktoken's at index {where:,}")
    return result
