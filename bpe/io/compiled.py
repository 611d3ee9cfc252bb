"""The compiled encoder (``bpe/io/_encoder.pyx``) built from a :class:`~bpe.io.tokenizer.Tokenizer`.

The Tokenizer's bulk path (``encode_packed``, hence ``encode`` and ``encode_iterable``) and ``bpe encode``
use it where it is built; elsewhere, or for a tokenizer it cannot hold, :func:`compiled_encoder` answers
``None`` and they take the pure-Python path, unchanged.  It holds nothing of its own: the merges, byte ids
and special tokens are the tokenizer's (``_pair_rank``, ``_rank_merged``, ``token_ids``), the character
classes v9's (:mod:`bpe.split.gpt2_classes`), so both paths give the same ids
(tests/io/test_tokenizer.py and tests/io/test_encode.py hold them to each other and to tiktoken).

What it cannot hold, and leaves to the Python path: an empty special token (the Python path's split then
puts the token between every two characters), and an id that does not fit the tokenizer's packed type
(``array`` raises there, as it always has); and a custom pattern, which has no scanner.  GPT-4's and
GPT-4o's patterns (``pattern="cl100k"``, ``"o200k"``) have theirs (:mod:`bpe.split.patterns`); the
Tokenizer asks for the pattern it was trained with.

Each thread encodes with a :class:`Cache` of its own (the pre-token -> ids table, BPE's scratch, a stop
flag); :meth:`CompiledEncoder.borrow` lends one, kept warm from call to call, and ``give_back`` returns it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from contextlib import contextmanager

from bpe.interface import not_built
from bpe.running.disk_cache import stored_tables
from bpe.running.threads import run_threads
from bpe.split.pattern_classes import contraction_folds
from bpe.split.patterns import CUSTOM, DEFAULT_PATTERN, SCANNERS, resolve_pattern

try:
    from bpe.io._encoder import Cache, Encoder
except ImportError:  # built without a C compiler: encoding takes the Python path
    Cache = Encoder = None

#: Texts this long or longer are encoded on a thread of their own, so that Ctrl-C stops them at once (about
#: 10 ms of encoding: the thread costs far less).
THREAD_ABOVE = 1 << 20
#: The line ``bpe encode --encoder compiled`` answers with where the compiled encoder was not built (its fix
#: worded for how bpe-lab was installed).
NOT_BUILT = not_built("the compiled encoder is", "it needs")
#: Why the compiled encoder cannot run here, or ``None``.
UNAVAILABLE: str | None = NOT_BUILT if Encoder is None else None


class InvalidUTF8(ValueError):
    """The text stops being UTF-8 at byte ``offset`` (of the bytes given): the caller words the error."""

    def __init__(self, offset: int):
        super().__init__(f"invalid UTF-8 at byte {offset}")
        self.offset = offset


class CompiledEncoder:
    """A tokenizer's merges in the compiled :class:`Encoder`, and the caches lent to the threads."""

    def __init__(self, encoder, typecode: str):
        self.encoder, self.typecode, self.width = encoder, typecode, encoder.width
        self._free: list = []  # caches given back, warm; list.pop and append are atomic under the GIL

    def borrow(self):
        """A cache for one thread, its stop flag down: a warm one given back before, or a new one."""
        try:
            cache = self._free.pop()
        except IndexError:
            cache = Cache()
        cache.resume()
        return cache

    def give_back(self, cache) -> None:
        self._free.append(cache)

    @contextmanager
    def cache(self) -> Iterator:
        cache = self.borrow()
        try:
            yield cache
        finally:
            self.give_back(cache)

    def encode_text_bytes(self, data) -> bytearray:
        """The ids of ``data`` (valid UTF-8: an encoded ``str``) with a borrowed cache.  A text of
        :data:`THREAD_ABOVE` bytes or more is encoded on a thread of its own while this one waits, so that
        Ctrl-C here stops it (through the cache's stop flag) instead of waiting for the whole text."""
        with self.cache() as cache:
            if len(data) < THREAD_ABOVE:
                return self.encode_bytes(cache, data)
            return run_threads(lambda _, text: self.encode_bytes(cache, text), [data], threads=1, stop=cache.stop)[0]

    def encode_bytes(self, cache, data) -> bytearray:
        """The ids of ``data`` (UTF-8 bytes, any buffer) packed as the tokenizer's ``typecode``;
        :class:`InvalidUTF8` where a byte is not UTF-8.  Runs without the GIL."""
        out = bytearray(len(data) * self.width)  # no text has more ids than bytes
        count = self.encoder.encode(cache, data, out)
        if count < 0:
            raise InvalidUTF8(-1 - count)
        del out[count * self.width:]
        return out


def compiled_encoder(tokenizer, pattern: str = DEFAULT_PATTERN) -> CompiledEncoder | None:
    """The compiled encoder of ``tokenizer``'s merges, cutting text by ``pattern`` (a name, or a regex), or
    ``None`` where it is not built or cannot hold them (see the module's docstring): the caller then encodes
    in Python."""
    name, _ = resolve_pattern(pattern)
    if Encoder is None or name == CUSTOM or any(not token for token in tokenizer.special_tokens):
        return None
    width = array(tokenizer.typecode).itemsize
    limit = 1 << (8 * width)
    ids = tokenizer.token_ids
    byte_ids = [ids.get(bytes([b])) for b in range(256)]
    pairs = sorted(tokenizer._pair_rank, key=tokenizer._pair_rank.__getitem__)  # ranks 0, 1, 2, ...
    specials = [(token.encode("utf-8"), ids[token.encode("utf-8")]) for token in tokenizer.special_tokens]
    used = [*(i for i in byte_ids if i is not None), *(i for pair in pairs for i in pair), *tokenizer._rank_merged,
            *(i for _, i in specials)]
    if any(not isinstance(i, int) or not 0 <= i < limit for i in used):
        return None
    if name == "gpt2":
        encoder = Encoder(*stored_tables("gpt2"), byte_ids, pairs, tokenizer._rank_merged, specials, width)
    else:
        encoder = Encoder(*stored_tables(name), byte_ids, pairs, tokenizer._rank_merged, specials, width,
                          pattern=SCANNERS[name], folds=contraction_folds())
    return CompiledEncoder(encoder, tokenizer.typecode)
