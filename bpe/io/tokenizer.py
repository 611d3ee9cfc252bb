"""A tokenizer over trained merges (CS336 §2.6): encode, decode, encode_iterable, and packed ids for arrays.

Encoding is training replayed: the text is split on the special tokens (kept whole, longest first
when they overlap), each piece is cut by the pattern the merges were trained with (``pattern``: GPT-2's
unless the tokenizer says otherwise; :mod:`bpe.split.patterns`), and within each pre-token the adjacent
pair with the lowest merge rank is merged (every occurrence, left to right) until no pair of the
pre-token is a merge.

What makes it fast in pure Python (``docs/encoding.md`` has the measurements):

* **A cache from pre-token to ids.**  A few tens of thousands of distinct pre-tokens make up millions
  of occurrences, so BPE runs once per distinct pre-token.  The cache is a ``dict`` subclass whose
  ``__missing__`` runs BPE: a hit is ``map(cache.__getitem__, pretokens)``, which never leaves C.
* **Ids stored packed** (``array('H')`` bytes, or ``'I'`` when the vocab passes 65,536): a text's ids are
  one ``b"".join`` of the cached values; :meth:`Tokenizer.encode_packed` hands that to ``bpe encode``
  for its ``.npy`` without a Python int per token, :meth:`Tokenizer.encode` unpacks it with ``tolist``.
* **BPE on a miss works on ids, only on the pairs present**: a list of the ranks of the word's adjacent
  pairs, the lowest found by ``min`` in C, and a merge re-ranks only its two neighbours.  Distinct
  pre-tokens are short (a few bytes), so this beats a heap or linked list per word.
* **The fast pre-tokenizer** (v6's), :func:`bpe.split.fast.split_pretokens`: ASCII
  text is cut by a twin of the GPT-2 pattern on the stdlib ``re`` engine, and only the words around
  non-ASCII characters (all of a block dense with them) by the Unicode pattern; the pre-tokens are
  exactly the pattern's, in order.  It is GPT-2's alone: any other pattern is cut by ``regex.findall``.

Where v9's compiled code is built, ``encode_packed`` (hence ``encode`` and ``encode_iterable``) hands the
text's UTF-8 bytes to the compiled encoder instead (:mod:`bpe.io.compiled`, ``bpe/io/_encoder.pyx``):
v9's scanner of the pattern (GPT-2's, cl100k's or o200k's; a custom regex stays on the Python path),
these same merges and a cache in C, the same ids.  ``compiled=False`` keeps a tokenizer on
the Python path, which :meth:`Tokenizer.encode_packed_python` always takes.

>>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"<|e|>", 257: b"lo", 258: b"low"}
>>> tok = Tokenizer(vocab, [(b"l", b"o"), (b"lo", b"w")], ["<|e|>"])
>>> tok.encode("low lo<|e|>")
[258, 32, 257, 256]
>>> tok.decode([258, 32, 257, 256])
'low lo<|e|>'
"""

from __future__ import annotations

import copy
import mmap
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, repeat

import regex

from bpe.errors import ArgumentError, BPEError
from bpe.io.checks import check_merges
from bpe.io.compiled import compiled_encoder
from bpe.io.formats import load_merges, load_vocab
from bpe.split.fast import split_pretokens
from bpe.split.patterns import DEFAULT_PATTERN, compiled_pattern, cuts_of, resolve_pattern, special_token_regex

#: A cut for streaming, by each pattern's rule (bpe/split/chunking.py says why no pre-token spans it): for
#: GPT-2's, a newline right after an ASCII non-space character; for cl100k's and o200k's, whose pre-tokens
#: may end in newlines, a space or tab after a non-space; for a custom regex none (a special token's end).
_SAFE_CUTS = {"gpt2": regex.compile(r"(?<=[!-~])\n"), "spaces": regex.compile(r"(?<=\S)[ \t\x0b\x0c]"),
              "special": None}
#: encode_iterable holds back text until it has at least this many characters, then cuts.
STREAM_BUFFER_CHARS = 1 << 16
#: Pre-tokens cached at most per cache (cleared when full, which keeps memory bounded: about 150 bytes an
#: entry, so ~40 MB).  14 MB of books hold 65,000 distinct pre-tokens.
CACHE_SIZE = 1 << 18

_UINT32 = "I" if array("I").itemsize == 4 else "L"


class _PretokenCache(dict):
    """Pre-token (str) -> its ids packed as bytes; a missing pre-token is encoded by ``bpe`` and stored."""

    __slots__ = ("bpe",)

    def __init__(self, bpe):
        super().__init__()
        self.bpe = bpe

    def __missing__(self, pretoken: str) -> bytes:
        packed = self.bpe(pretoken.encode("utf-8"))
        if len(self) >= CACHE_SIZE:
            self.clear()
        self[pretoken] = packed
        return packed


_UNSET = object()


class DisallowedSpecialToken(ArgumentError, ValueError):
    """A text holds a special token that ``encode`` was told to refuse (``disallowed_special``); a
    ``ValueError`` too, as tiktoken's is."""

    def __init__(self, token: str) -> None:
        self.token = token
        why = f"the text holds {token!r}, a special token that is disallowed: "
        super().__init__(why + "allow it (allowed_special) to encode it as that token, or pass disallowed_special=() "
                               "to encode it as plain text",
                         why + "allow it (--allowed-special) to encode it as that token, or give --disallowed-special "
                               "none to encode it as plain text")

    def __reduce__(self):  # from a pool worker, pickled: made again from its token
        return type(self), (self.token,)


def _token_set(tokens, parameter: str) -> frozenset:
    """``tokens`` (a set, list or tuple of strings) as a frozenset, or one line naming what it is instead."""
    if isinstance(tokens, str) or not isinstance(tokens, (set, frozenset, list, tuple)) or not all(
            isinstance(t, str) for t in tokens):
        raise BPEError(f"{parameter} must be \"all\" or a set of special tokens (strings), got {tokens!r}")
    return frozenset(tokens)


class Tokenizer:
    def __init__(self, vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                 special_tokens: Sequence[str] | None = None, *, compiled: bool = True,
                 pattern: str = DEFAULT_PATTERN):
        self.vocab = dict(vocab)
        self.merges = list(merges)
        self.special_tokens = list(special_tokens or [])
        self.merge_ranks = {pair: rank for rank, pair in reversed(list(enumerate(self.merges)))}
        # bytes -> id; if two ids hold the same bytes, the lower id wins (the first one made).
        self.token_ids: dict[bytes, int] = {}
        for token_id, token in sorted(self.vocab.items()):
            self.token_ids.setdefault(token, token_id)
        for token in self.special_tokens:
            if token.encode("utf-8") not in self.token_ids:  # CS336: add missing special tokens
                self.vocab[len(self.vocab)] = token.encode("utf-8")
                self.token_ids[token.encode("utf-8")] = len(self.vocab) - 1
        #: ``array`` type code of packed ids: ``H`` (uint16) when every id fits, else a 4-byte unsigned.
        self.typecode = "H" if max(self.vocab, default=0) < 1 << 16 else _UINT32
        self._build_id_merges()
        self._base = self  # what with_specials() starts from: this tokenizer, or the one a view was made of
        self._split_out(self.special_tokens, ())
        self._cache = _PretokenCache(self._bpe)
        #: The pre-tokenization pattern the merges were trained with: a name (``gpt2``, ``cl100k``, ``o200k``)
        #: or a regex; its split, GPT-2's fast one or ``regex.findall``; where a stream may be cut.
        self.pattern_name, self.pattern = resolve_pattern(pattern)
        self._split = split_pretokens if self.pattern_name == DEFAULT_PATTERN else compiled_pattern(pattern).findall
        self._safe_cut = _SAFE_CUTS[cuts_of(pattern)]
        #: Whether ``encode_packed`` uses the compiled encoder where it is built (False: always Python).
        self.compiled = compiled
        self._compiled = _UNSET

    def _split_out(self, tokens: Sequence[str], disallowed: Iterable[str]) -> None:
        """Which special tokens the text is split on and encoded as tokens, and which refuse the text."""
        pattern = special_token_regex(tokens)
        self._special_split = None if pattern is None else regex.compile(f"({pattern.pattern})")
        self._special_packed = {t: array(self.typecode, [self.token_ids[t.encode("utf-8")]]).tobytes() for t in tokens}
        #: The special tokens a text may not hold (:meth:`with_specials`; none unless one was asked for).
        self.disallowed_special = tuple(disallowed)
        self._disallowed = special_token_regex(list(disallowed))
        self._max_special_len = max((len(t) for t in (*tokens, *disallowed)), default=0)
        self._views: dict[tuple[frozenset, frozenset], Tokenizer] = {}

    def __getstate__(self) -> dict:
        """Pickled without the compiled encoder (C memory) and the views: each is built again at first use."""
        return {key: value if key != "_views" else {} for key, value in self.__dict__.items() if key != "_compiled"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._compiled = _UNSET

    def with_specials(self, allowed_special=None, disallowed_special=None) -> Tokenizer:
        """This tokenizer as ``encode`` runs with ``allowed_special`` and ``disallowed_special`` (tiktoken's meanings):
        the same merges and cache; split on the allowed special tokens alone, the others encoded as the text they
        spell; a text holding a disallowed one refused (:class:`DisallowedSpecialToken`).  Made once per setting.

        Neither given: this tokenizer, every special token a token (CS336's contract).  One given, the other
        takes tiktoken's default: ``allowed_special=set()`` (none), ``disallowed_special="all"`` (every special
        token not allowed).  ``"all"`` names every special token; a token that is not one of them is not
        allowed (tiktoken ignores it too), and a disallowed one is still looked for in the text.
        """
        if allowed_special is None and disallowed_special is None:
            return self
        if self._base is not self:
            return self._base.with_specials(allowed_special, disallowed_special)
        specials = frozenset(self.special_tokens)
        allowed = (specials if allowed_special == "all" else frozenset() if allowed_special is None
                   else _token_set(allowed_special, "allowed_special") & specials)
        disallowed = (specials - allowed if disallowed_special in (None, "all")
                      else _token_set(disallowed_special, "disallowed_special"))
        view = self._views.get((allowed, disallowed))
        if view is None:
            view = copy.copy(self)  # the vocab, the merges and the cache shared; not the compiled encoder
            view.special_tokens = [t for t in self.special_tokens if t in allowed]  # as the encoders read them
            view._split_out(view.special_tokens, sorted(disallowed))
            view._compiled = _UNSET
            self._views[allowed, disallowed] = view
        return view

    def refuse_disallowed(self, text: str) -> None:
        """A :class:`DisallowedSpecialToken` if ``text`` holds a special token :meth:`with_specials` disallowed."""
        if self._disallowed is not None and (found := self._disallowed.search(text)) is not None:
            raise DisallowedSpecialToken(found.group())

    def refuse_disallowed_in_file(self, path) -> None:
        """:meth:`refuse_disallowed` for a whole file, searched as bytes before it is encoded in chunks (a token
        across two chunks is still found; a byte search runs at memory speed)."""
        if not self.disallowed_special or os.path.getsize(path) == 0:
            return
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = [(data.find(token.encode("utf-8")), token) for token in self.disallowed_special]
        first = min(((at, token) for at, token in found if at >= 0), default=None)
        if first is not None:
            raise DisallowedSpecialToken(first[1])

    def compiled_encoder(self):
        """The compiled encoder of these merges (:mod:`bpe.io.compiled`), built at first use; ``None`` where
        it is not built, cannot hold this tokenizer, or ``compiled`` is False."""
        if not self.compiled:
            return None
        if self._compiled is _UNSET:
            self._compiled = compiled_encoder(self, self.pattern)
        return self._compiled

    def _build_id_merges(self) -> None:
        """Merges as ids: ``(left id, right id) -> rank`` and, per rank, the merged id."""
        ids = self.token_ids
        byte_ids = [ids.get(bytes([b])) for b in range(256)]
        self._missing_bytes = [b for b, token_id in enumerate(byte_ids) if token_id is None]
        # Trained vocabs give byte b the id b: then a pre-token's bytes are already its ids.
        self._byte_id = None if byte_ids == list(range(256)) else byte_ids.__getitem__
        self._pair_rank: dict[tuple[int, int], int] = {}
        self._rank_merged: list[int] = []
        for (first, second), rank in sorted(self.merge_ranks.items(), key=lambda item: item[1]):
            pair = (ids.get(first), ids.get(second))
            merged = ids.get(first + second)
            if None in pair or merged is None or pair in self._pair_rank:
                continue  # a merge whose tokens are not in the vocab can never apply
            self._pair_rank[pair] = len(self._rank_merged)
            self._rank_merged.append(merged)

    def _bpe(self, data: bytes) -> bytes:
        """The ids of one pre-token's bytes, packed."""
        if self._missing_bytes and any(b in data for b in self._missing_bytes):
            missing = next(b for b in data if b in self._missing_bytes)
            raise KeyError(f"byte 0x{missing:02x} has no token in the vocab")
        ids = list(data) if self._byte_id is None else list(map(self._byte_id, data))
        rank_of, no_merge, rank_merged = self._pair_rank.get, len(self._rank_merged), self._rank_merged
        # ranks[i] is the rank of the pair (ids[i], ids[i+1]): only pairs present are ever looked up, each
        # pass finds the lowest with min() and index() in C, and a merge re-ranks just its two neighbours.
        # A heap or linked list per word costs more in Python than it saves on words this short (distinct
        # pre-tokens average ~8 bytes); re-ranking every pair on every pass was 2.5x slower.
        ranks = list(map(rank_of, zip(ids, ids[1:]), repeat(no_merge)))
        while ranks:
            best = min(ranks)
            if best == no_merge:
                break
            merged = rank_merged[best]
            i = ranks.index(best)
            while True:  # every occurrence, left to right, as training merged them
                ids[i] = merged
                del ids[i + 1]
                del ranks[i]
                if i < len(ranks):
                    ranks[i] = rank_of((merged, ids[i + 1]), no_merge)
                if i:
                    ranks[i - 1] = rank_of((ids[i - 1], merged), no_merge)
                # A pair with ``merged`` in it is never the pair being merged, so any further occurrence is
                # to the right; `in` rather than catching index()'s ValueError, which costs more.
                if best not in ranks:
                    break
                i = ranks.index(best, i)
        return array(self.typecode, ids).tobytes()

    @classmethod
    def from_files(cls, vocab_filepath, merges_filepath, special_tokens: Sequence[str] | None = None, *,
                   pattern: str = DEFAULT_PATTERN) -> Tokenizer:
        """From a GPT-2 style ``vocab.json`` and ``merges.txt`` (the CS336 signature), checked against each
        other first (:func:`bpe.io.checks.check_merges`): a malformed pair of files is a :class:`BPEError`.
        The files do not say the pattern: ``pattern`` does (a saved tokenizer's ``train.json`` does:
        :func:`bpe.io.outputs.load_tokenizer`)."""
        vocab, merges = load_vocab(vocab_filepath), load_merges(merges_filepath)
        check_merges(vocab, merges, vocab_filepath, merges_filepath)
        return cls(vocab, merges, special_tokens, pattern=pattern)

    def encode(self, text: str, *, allowed_special=None, disallowed_special=None) -> list[int]:
        """The ids of ``text``.  ``allowed_special``, ``disallowed_special``: what a special token's text in it
        is, as tiktoken's ``encode`` has them (:meth:`with_specials`): by default a token (CS336's contract)."""
        ids = array(self.typecode)
        ids.frombytes(self.encode_packed(text, allowed_special=allowed_special, disallowed_special=disallowed_special))
        return ids.tolist()

    def encode_packed(self, text: str, *, allowed_special=None, disallowed_special=None) -> bytes:
        """The ids of ``text`` as machine integers of type :attr:`typecode` (native byte order): compiled
        where it is built (:meth:`compiled_encoder`), else :meth:`encode_packed_python`; the same ids.
        The special tokens as :meth:`encode` takes them."""
        if allowed_special is not None or disallowed_special is not None:
            return self.with_specials(allowed_special, disallowed_special).encode_packed(text)
        self.refuse_disallowed(text)
        encoder = self.compiled_encoder()
        if encoder is not None:
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: the Python path raises its own error, as it always has
                pass
            else:
                return bytes(encoder.encode_text_bytes(data))
        return self.encode_packed_python(text)

    def encode_packed_python(self, text: str) -> bytes:
        """:meth:`encode_packed` in pure Python: the fast pre-tokenizer (``regex.findall`` for another pattern
        than GPT-2's), and the merges from a cache of pre-token -> packed ids (``bpe encode --encoder python``
        runs it in its process pool)."""
        pieces = [text] if self._special_split is None else self._special_split.split(text)
        lookup, split = self._cache.__getitem__, self._split
        out: list[bytes] = []
        # split() with a capturing group alternates: text, special, text, special, ..., text
        for index, piece in enumerate(pieces):
            if index % 2:
                out.append(self._special_packed[piece])
            elif piece:
                out.append(b"".join(map(lookup, split(piece))))
        return b"".join(out)

    def encode_iterable(self, texts: Iterable[str], *, allowed_special=None, disallowed_special=None) -> Iterator[int]:
        """Ids of the concatenation of ``texts`` (e.g. a file's lines), the same as ``encode`` of it all, the
        special tokens too (:meth:`encode`).

        Text is buffered only until a safe cut is seen (after a complete special token, or where the
        pattern's rule allows: for GPT-2's, at a newline that follows an ASCII non-space character), so memory
        stays bounded for ordinary text (with a custom regex, only special tokens cut it).  The ids
        come out through ``chain`` (C) from one list per piece: a generator yielding each id itself
        made streaming 1.9x slower than ``encode``.
        """
        view = self.with_specials(allowed_special, disallowed_special)
        return chain.from_iterable(view._encoded_pieces(texts))

    def _encoded_pieces(self, texts: Iterable[str]) -> Iterator[list[int]]:
        buffer = ""
        for text in texts:
            buffer += text
            if len(buffer) < STREAM_BUFFER_CHARS:
                continue
            # The whole buffer is searched before a cut: a disallowed token across it is then still seen whole,
            # as none starts within the longest special token of the buffer's end (_last_safe_cut).
            self.refuse_disallowed(buffer)
            cut = self._last_safe_cut(buffer)
            if cut:
                yield self.encode(buffer[:cut])
                buffer = buffer[cut:]
        if buffer:
            yield self.encode(buffer)

    def _last_safe_cut(self, buffer: str) -> int:
        """The last position where the buffer can be cut without changing its encoding (0: none)."""
        # Leave room for a special token that starts before the cut to be seen whole.
        limit = len(buffer) - self._max_special_len
        specials = [] if self._special_split is None else list(self._special_split.finditer(buffer))
        cuts = [m.end() for m in specials if m.end() <= limit]
        if self._safe_cut is not None:
            cuts += [m.start() for m in self._safe_cut.finditer(buffer, 0, max(limit, 0))]
        for cut in sorted(cuts, reverse=True):
            if not any(m.start() < cut < m.end() for m in specials):
                return cut
        return 0

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; byte sequences that are not valid UTF-8 become U+FFFD.

        An id that is not in the vocab is a :class:`~bpe.errors.BPEError` naming it and the valid range.
        """
        vocab, ids = self.vocab, list(ids)
        try:
            return b"".join([vocab[i] for i in ids]).decode("utf-8", errors="replace")
        except (KeyError, TypeError):  # the check runs only on failure, so decoding pays nothing for it
            bad = next(i for i in ids if not isinstance(i, int) or i not in vocab)
            raise BPEError(f"cannot decode token id {bad!r}: the vocab has ids 0 to {len(vocab) - 1}") from None
