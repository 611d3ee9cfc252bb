"""``webtext-synth``: a deterministic generator of web-like text for benchmarking BPE trainers.

A BPE trainer on Project Gutenberg sees a few tens of thousands of distinct pre-tokens per 10 MB;
on web text (OpenWebText, CS336's second data set) it sees millions: rare words, names, typos,
numbers, URLs, code.  Which optimizations pay depends on that number, so the bench needs text of
this kind that anyone can make without downloading 11 GB.  ``python -m bpe data get webtext-synth
--size 100MB`` (``make data DATA=webtext-synth SIZE=100MB``) writes ``data/webtext-synth-100MB.txt``.

What it models (the distribution is described in full in ``docs/data.md``):

* a **Zipf vocabulary** (rank r drawn with weight 1/(r + 2.7)) of English function words followed by
  syllable-built words, common words short, rare ones long, plus a stream of never-seen words (the
  long tail of hapaxes every web corpus has);
* **names** (capitalized, their own Zipf list), **typos** of common words (a dropped, doubled,
  swapped or replaced letter), **ALL-CAPS** and sentence-initial capitals;
* **numbers** (years, counts, prices, percentages, times, dates, phone-like numbers), **URLs** and
  **e-mail-like** strings built from a Zipf list of domains;
* **non-ASCII**: curly quotes, dashes and ellipses in running text, accented Latin words and
  sentences, CJK documents and snippets, emoji;
* **code-like documents**: indented lines of identifiers in ``snake_case``/``camelCase``,
  operators, brackets and numbers;
* documents of varied length (from one line to tens of KB) separated by ``<|endoftext|>``.

Determinism: everything comes from one ``random.Random(seed)``, drawn in a fixed order, with integer
Zipf weights and only exact float operations (no ``math.log``/``pow``, whose last bit can differ
between C libraries) and never the iteration order of a set or dict of strings.  The same seed gives
the same stream of documents on any machine; ``size`` only says where the stream stops (whole
documents, the first that reaches ``size`` bytes is the last), so a smaller file of the same seed is
a prefix of a larger one.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from bpe.errors import BPEError
from bpe.io.outputs import check_free_space, write_text_atomic
from bpe.training.parallel import count_file_parallel

DEFAULT_SEED = 0
SEPARATOR = "<|endoftext|>"

# --- Words ---------------------------------------------------------------------------------------
# The most common English words first (ranks 0..), so the top merges look like real English ones.
FUNCTION_WORDS = (
    "the of and to a in is that for it on was with as be by this are at from or have an not they "
    "which you he but one his all has had were we can their more will been there would if its also "
    "about who so what out up when than other into some them only new time people like just over "
    "after two first most said do our any may most these could how no such many because well then "
    "year years make made between very even back much through where while she her before use used "
    "him work good those being both same during under still own us day way down should world each "
    "know see get says said think going really something need want here last right long state part"
).split()
# Syllables: onset + nucleus + coda, single letters far more often than clusters (repeats are weights).
_ONSETS = tuple("bcdfghklmnprstvwy" * 3 + "jqxz") + ("", "", "", "", "", "", "bl", "br", "ch", "cl", "cr",
           "dr", "fl", "fr", "gr", "pl", "pr", "sh", "sl", "sp", "st", "str", "th", "th", "tr", "wh", "qu")
_NUCLEI = tuple("aaaeeeeiiioou") + ("ea", "ee", "ai", "ou", "oo", "io", "y")
_CODAS = ("",) * 24 + tuple("nnrrsstldm") + ("ng", "st", "nd", "ck", "ght", "rt", "ss", "ll", "x", "th", "nt")
_SUFFIXES = ("",) * 30 + ("s", "s", "s", "s", "ed", "ed", "ing", "er", "ly", "tion", "ment", "ness", "able",
                          "ist", "ity", "al", "ful", "less", "ize")
_ACCENTED_NUCLEI = ("a", "e", "i", "o", "u", "é", "è", "à", "ü", "ö", "ä", "ñ", "ç", "ô", "í", "ó",
                    "ú", "ã", "ø", "å", "ß", "ł", "ś", "ž", "č")
_TLDS = ("com", "com", "com", "org", "net", "io", "co.uk", "de", "fr", "edu", "gov", "info", "jp", "ru",
         "ca", "au", "in", "nl", "es", "it")
# Emoji (code points), and CJK: Zipf over a fixed range of common ideographs plus kana.
_EMOJI = [chr(c) for c in (0x1F600, 0x1F602, 0x1F60D, 0x1F44D, 0x1F525, 0x2764, 0x1F389, 0x1F914, 0x1F64F,
                           0x1F60A, 0x1F622, 0x1F680, 0x2728, 0x1F4AF, 0x1F440, 0x1F923, 0x1F44F, 0x1F31F,
                           0x1F4F7, 0x2705, 0x1F9E0, 0x1F3B5, 0x1F436, 0x1F355)]
_CJK = [chr(0x4E00 + (i * 7919) % 0x5000) for i in range(3000)] + [chr(c) for c in range(0x3041, 0x3097)]
_CJK_PUNCT = ("，", "。", "、", "！", "？", "「", "」")
_QUOTES = (("\u201c", "\u201d"), ('"', '"'), ("\u2018", "\u2019"))
_DASHES = (" \u2014 ", " - ", "\u2013", " -- ", "\u2026 ", "... ")
_CODE_OPERATORS = (" = ", " == ", " += ", " -> ", " != ", " && ", " || ", " + ", " * ", " / ", " < ", " >= ")
_CODE_KEYWORDS = ("if", "for", "while", "return", "def", "const", "let", "var", "import", "from", "class",
                  "elif", "else", "try", "except", "function", "async", "await", "self", "this", "null",
                  "None", "true", "false", "int", "str", "void", "static", "public", "new")


class Draws(random.Random):
    """``random.Random`` with the two draws the generators make most, ``randrange`` and ``choices`` with
    cumulative weights, made cheaper (two thirds of the generator's time went to them).  They draw exactly
    what the base class draws, by the same calls to ``_randbelow`` and ``random()`` in the same order, and
    pick the same items: the same seed gives the same text, byte for byte (tests/data/test_webtext.py).

    * ``randrange`` skips the checks of its arguments that the base class repeats on every call;
    * ``choices`` finds each ``random() * total`` among integer cumulative weights in a numpy copy of
      them: the base class bisects the list of Python ints, a pointer chase into scattered objects at
      every step (a cache miss each on the 300,000 words' list), and compares each int with a float.
    """

    def __init__(self, seed=None):
        super().__init__(seed)
        self._tables: dict[int, tuple[list, object]] = {}  # id -> (the list, kept alive; its numpy copy)

    def randrange(self, start, stop=None, step=1):
        if stop is None:
            if type(start) is int and start > 0:  # noqa: E721 (a bool, float or index type: the base class)
                return self._randbelow(start)
        elif type(start) is int and type(stop) is int and step == 1 and start < stop:  # noqa: E721
            return start + self._randbelow(stop - start)
        return super().randrange(start, stop, step)  # anything else: the base class's draw or its error

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        table = self._table(cum_weights) if weights is None and cum_weights is not None else None
        if table is None or len(cum_weights) != len(population):
            return super().choices(population, weights, cum_weights=cum_weights, k=k)
        total, random_ = cum_weights[-1] + 0.0, self.random
        # For an integer c and a float x >= 0, c <= x exactly when c <= int(x): the same place as the base
        # class's bisect_right(cum_weights, x, 0, n - 1), which never returns past the last item.
        found = table.searchsorted([int(random_() * total) for _ in range(k)], side="right").tolist()
        last = len(population) - 1
        return [population[i] if i < last else population[last] for i in found]

    def _table(self, cum_weights):
        """The numpy copy of a list of integer cumulative weights (None for anything else)."""
        found = self._tables.get(id(cum_weights))
        if found is None:
            ok = isinstance(cum_weights, list) and cum_weights and all(type(c) is int for c in cum_weights)  # noqa: E721
            table = np.array(cum_weights, dtype=np.int64) if ok and 0 <= cum_weights[-1] < 2**62 else None
            found = self._tables[id(cum_weights)] = (cum_weights, table)
        return found[1]


def zipf_cum_weights(n: int, *, shift: int = 27) -> list[int]:
    """Integer cumulative weights for ranks 0..n-1, weight of rank r = round(1e10 / (r + shift/10)).

    Integers, so every machine draws the same ranks (``random.choices`` multiplies one float by the
    total and bisects: exact IEEE operations).

    >>> zipf_cum_weights(3)
    [3703703704, 6406406407, 8534065981]
    """
    total, out = 0, []
    for r in range(n):
        total += (10**11 + (10 * r + shift) // 2) // (10 * r + shift)  # round(1e10 / (r + shift/10))
        out.append(total)
    return out


class WebTextGenerator:
    """The stream of documents for one seed; :meth:`documents` yields them without end."""

    def __init__(self, seed: int = DEFAULT_SEED, *, lexicon_size: int = 300_000, names: int = 60_000,
                 domains: int = 30_000, foreign: int = 40_000):
        self.rng = rng = Draws(seed)
        self.lexicon = FUNCTION_WORDS + [self._new_word(_syllables(r, rng))
                                         for r in range(lexicon_size - len(FUNCTION_WORDS))]
        self.lexicon_cum = zipf_cum_weights(len(self.lexicon))
        self.names = [self._new_word(1 + rng.randrange(3)).capitalize() for _ in range(names)]
        self.names_cum = zipf_cum_weights(names)
        self.domains = [self._new_word(1 + rng.randrange(3), suffix=False) for _ in range(domains)]
        self.domains_cum = zipf_cum_weights(domains)
        self.foreign = [self._new_word(1 + rng.randrange(4), nuclei=_ACCENTED_NUCLEI) for _ in range(foreign)]
        self.foreign_cum = zipf_cum_weights(foreign)
        self.cjk_cum = zipf_cum_weights(len(_CJK), shift=100)
        # What replaces a word of a sentence now and then; weights are per 1,000 replacements.
        injections: list[tuple[Callable[[], str], int]] = [
            (self._rare_word, 260), (self._typo, 170), (self._name, 220), (self._number, 170),
            (self._caps, 40), (self._url, 25), (self._email, 12), (self._foreign_word, 40),
            (self._emoji, 25), (self._cjk_snippet, 15), (self._identifier, 23),
        ]
        self.injections = [fn for fn, _ in injections]
        self.injections_cum = _cumulative([w for _, w in injections])

    # --- pieces ------------------------------------------------------------------------------
    def _new_word(self, syllables: int, *, nuclei=_NUCLEI, suffix: bool = True) -> str:
        rng = self.rng
        parts = []
        for _ in range(syllables):
            parts += (_ONSETS[rng.randrange(len(_ONSETS))], nuclei[rng.randrange(len(nuclei))],
                      _CODAS[rng.randrange(len(_CODAS))])
        if suffix:
            parts.append(_SUFFIXES[rng.randrange(len(_SUFFIXES))])
        return "".join(parts) or "a"

    def _words(self, k: int) -> list[str]:
        return self.rng.choices(self.lexicon, cum_weights=self.lexicon_cum, k=k)

    def _rare_word(self) -> str:
        return self._new_word(2 + self.rng.randrange(2))

    def _typo(self) -> str:
        rng = self.rng
        word = self._words(1)[0]
        if len(word) < 3:
            word = self._words(1)[0] + word
        i = rng.randrange(len(word) - 1)
        kind = rng.randrange(4)
        if kind == 0:  # swapped letters
            return word[:i] + word[i + 1] + word[i] + word[i + 2:]
        if kind == 1:  # dropped letter
            return word[:i] + word[i + 1:]
        if kind == 2:  # doubled letter
            return word[:i] + word[i] + word[i:]
        return word[:i] + "etaoinshrdlucmfwypvbgk"[rng.randrange(22)] + word[i + 1:]

    def _name(self) -> str:
        rng = self.rng
        name = rng.choices(self.names, cum_weights=self.names_cum)[0]
        if rng.randrange(4) == 0:
            name += " " + rng.choices(self.names, cum_weights=self.names_cum)[0]
        return name

    def _caps(self) -> str:
        word = self._words(1)[0]
        return word.upper() if self.rng.randrange(3) else word.capitalize()

    def _number(self) -> str:
        rng = self.rng
        kind = rng.randrange(10)
        if kind < 3:
            return str(rng.randrange(1000))
        if kind == 3:
            return str(1900 + rng.randrange(130))
        if kind == 4:
            return f"${rng.randrange(1, 500)}.{rng.randrange(100):02d}"
        if kind == 5:
            return f"{rng.randrange(100)}%"
        if kind == 6:
            return f"{rng.randrange(1, 1000):,}{rng.randrange(1000):03d}"[: 3 + rng.randrange(9)].rstrip(",")
        if kind == 7:
            return f"{rng.randrange(1, 13)}:{rng.randrange(60):02d}"
        if kind == 8:
            return f"20{rng.randrange(10, 25)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        return f"({rng.randrange(200, 999)}) {rng.randrange(200, 999)}-{rng.randrange(10000):04d}"

    def _domain(self) -> str:
        rng = self.rng
        return rng.choices(self.domains, cum_weights=self.domains_cum)[0] + "." + _TLDS[rng.randrange(len(_TLDS))]

    def _url(self) -> str:
        rng = self.rng
        host = ("www." if rng.randrange(2) else "") + self._domain()
        path = "/".join(self._words(rng.randrange(4)))
        tail = f"?id={rng.randrange(10**6)}" if rng.randrange(4) == 0 else ""
        return f"http{'s' if rng.randrange(5) else ''}://{host}/{path}{tail}"

    def _email(self) -> str:
        rng = self.rng
        user = self._name().split(" ")[0].lower()
        if rng.randrange(2):
            user += "." + self._words(1)[0]
        if rng.randrange(3) == 0:
            user += str(rng.randrange(100))
        return f"{user}@{self._domain()}"

    def _foreign_word(self) -> str:
        return self.rng.choices(self.foreign, cum_weights=self.foreign_cum)[0]

    def _emoji(self) -> str:
        rng = self.rng
        return _EMOJI[rng.randrange(len(_EMOJI))] * (1 + (rng.randrange(4) == 0))

    def _cjk(self, n: int) -> str:
        return "".join(self.rng.choices(_CJK, cum_weights=self.cjk_cum, k=n))

    def _cjk_snippet(self) -> str:
        return self._cjk(2 + self.rng.randrange(6))

    def _identifier(self) -> str:
        rng = self.rng
        parts = self._words(2 + rng.randrange(2))
        style = rng.randrange(3)
        if style == 0:
            return "_".join(parts)
        if style == 1:
            return parts[0] + "".join(p.capitalize() for p in parts[1:])
        return "".join(p.capitalize() for p in parts)

    # --- sentences and documents ----------------------------------------------------------------
    def _sentence(self) -> str:
        rng = self.rng
        n = 3 + rng.randrange(22)
        words = self._words(n)
        # About 8% of the words are replaced by something else (rounding n * 0.08 at random keeps the mean).
        replaced = (n * 8 + rng.randrange(100)) // 100
        for _ in range(replaced):
            fn = rng.choices(self.injections, cum_weights=self.injections_cum)[0]
            words[rng.randrange(n)] = fn()
        if rng.randrange(8) == 0:  # a clause set off by a comma, a dash or a quote
            i = 1 + rng.randrange(n - 1)
            kind = rng.randrange(3)
            if kind == 0:
                words[i] += ","
            elif kind == 1:
                words[i] += _DASHES[rng.randrange(len(_DASHES))].rstrip(" ")
            else:
                q = _QUOTES[rng.randrange(len(_QUOTES))]
                words[i] = q[0] + words[i] + q[1]
        words[0] = words[0][:1].upper() + words[0][1:]
        end = ".........??!:;"[rng.randrange(14)]
        if rng.randrange(30) == 0:
            end += " " + self._emoji()
        return " ".join(words) + end

    def _prose(self) -> str:
        rng = self.rng
        paragraphs = []
        for _ in range(1 + _heavy_tail(rng, 6)):
            paragraphs.append(" ".join(self._sentence() for _ in range(1 + rng.randrange(7))))
        return "\n\n".join(paragraphs)

    def _foreign_prose(self) -> str:
        rng = self.rng
        sentences = []
        for _ in range(2 + rng.randrange(12)):
            n = 3 + rng.randrange(15)
            words = rng.choices(self.foreign, cum_weights=self.foreign_cum, k=n)
            words[0] = words[0].capitalize()
            sentences.append(" ".join(words) + ".")
        return " ".join(sentences)

    def _cjk_prose(self) -> str:
        rng = self.rng
        parts = []
        for _ in range(3 + rng.randrange(40)):
            parts.append(self._cjk(4 + rng.randrange(25)) + _CJK_PUNCT[rng.randrange(len(_CJK_PUNCT))])
            if rng.randrange(10) == 0:
                parts.append(self._name() if rng.randrange(2) else self._number())
        return "".join(parts)

    def _code(self) -> str:
        rng = self.rng
        lines = []
        depth = 0
        for _ in range(5 + _heavy_tail(rng, 60)):
            indent = "    " * depth
            kind = rng.randrange(6)
            if kind == 0:
                lines.append(f"{indent}{_CODE_KEYWORDS[rng.randrange(len(_CODE_KEYWORDS))]} "
                             f"{self._identifier()}({', '.join(self._words(rng.randrange(3)))}):")
                depth = min(depth + 1, 4)
            elif kind == 1 and depth:
                lines.append(f"{indent}return {self._identifier()}")
                depth -= 1
            elif kind == 2:
                lines.append(f"{indent}# {self._sentence()}")
            else:
                lines.append(f"{indent}{self._identifier()}{_CODE_OPERATORS[rng.randrange(len(_CODE_OPERATORS))]}"
                             f"{self._identifier() if rng.randrange(2) else self._number()}"
                             f"{';' if rng.randrange(3) == 0 else ''}")
        return "\n".join(lines)

    def _list(self) -> str:
        rng = self.rng
        title = self._sentence()
        items = [f"{'-*•'[rng.randrange(3)]} {self._sentence()}" for _ in range(2 + rng.randrange(10))]
        return title + "\n\n" + "\n".join(items)

    def document(self) -> str:
        """One document: prose (most), a list, code, accented-Latin or CJK text."""
        kind = self.rng.randrange(100)
        if kind < 78:
            doc = self._prose()
        elif kind < 86:
            doc = self._list() + "\n\n" + self._prose()
        elif kind < 93:
            doc = self._prose() + "\n\n" + self._code() + "\n"
        elif kind < 97:
            doc = self._foreign_prose()
        else:
            doc = self._cjk_prose()
        return doc

    def documents(self) -> Iterator[str]:
        while True:
            yield self.document()


def _cumulative(weights: list[int]) -> list[int]:
    total, out = 0, []
    for w in weights:
        total += w
        out.append(total)
    return out


def _syllables(rank: int, rng: random.Random) -> int:
    """Common words are short: mostly 1 syllable in the top 2,000 ranks, 1-2 to 30,000, then 2-3."""
    if rank < 2_000:
        return 1 + (rng.randrange(3) == 0)
    if rank < 30_000:
        return 1 + rng.randrange(2)
    return 2 + rng.randrange(2)


def _heavy_tail(rng: random.Random, scale: int) -> int:
    """A count with a heavy tail: mostly small, now and then ~50x the median (cube of a uniform)."""
    u = rng.random()
    return int(u * u * u * u * scale * 8)


def generate(path: str | os.PathLike, size: int, *, seed: int = DEFAULT_SEED,
             on_bytes: Callable[[int], None] | None = None) -> dict:
    """Write documents of the ``seed`` stream to ``path`` until ``size`` bytes are reached; statistics.

    The file is written under a temporary name and renamed at the end, so a file under ``path`` is
    always complete.  Returns ``{"bytes", "documents", "non_ascii_bytes"}``.
    """
    documents = (doc + SEPARATOR for doc in WebTextGenerator(seed).documents())
    return write_documents(path, size, documents, "webtext-synth", on_bytes=on_bytes)


def write_documents(path: str | os.PathLike, size: int, documents: Iterator[str], name: str, *,
                    on_bytes: Callable[[int], None] | None = None) -> dict:
    """Write ``documents`` (each with its separator) to ``path`` until ``size`` bytes are reached.

    The generators' shared writer: the free space is checked first, the file is written under a
    temporary name and renamed at the end (removed on any error or signal), and the statistics come
    back as ``{"bytes", "documents", "non_ascii_bytes"}``.
    """
    if size < 1:
        raise BPEError(f"{name} size must be at least 1 byte, got {size}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_free_space(path.parent, size, f"generating {path.name}")
    tmp = path.with_name(path.name + ".tmp")
    written = count = ascii_bytes = 0
    try:
        with open(tmp, "wb") as out:
            while written < size:
                doc = next(documents)
                data = doc.encode("utf-8")
                out.write(data)
                written += len(data)
                ascii_bytes += len(doc.encode("ascii", "ignore"))  # characters below U+0080: one byte each
                count += 1
                if on_bytes is not None:
                    on_bytes(len(data))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {"bytes": written, "documents": count, "non_ascii_bytes": written - ascii_bytes}


def statistics_file(path: str | os.PathLike) -> Path:
    """Where a generated file's statistics are kept: beside it, ``NAME.stats.json``."""
    path = Path(path)
    return path.with_name(path.stem + ".stats.json")


def cached_statistics(path: str | os.PathLike, *, log=None, workers: int | None = None) -> tuple[dict, bool]:
    """``(statistics, True)`` read from beside the file when they are its own (same size and time), else
    measured (a full pass: ``log`` hears so), saved beside it and ``(statistics, False)``."""
    path = Path(path)
    stat = path.stat()
    kept = statistics_file(path)
    try:
        saved = json.loads(kept.read_text(encoding="utf-8"))
        if saved.get("file_bytes") == stat.st_size and saved.get("file_mtime_ns") == stat.st_mtime_ns:
            return saved["statistics"], True
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    if log is not None:
        print(f"computing the statistics of {path.name} (documents, distinct pre-tokens: one pass over the file; "
              f"kept in {kept.name} for next time) ...", file=log, flush=True)
    stats = file_statistics(path, workers=workers)
    try:
        write_text_atomic(kept, json.dumps({"file_bytes": stat.st_size, "file_mtime_ns": stat.st_mtime_ns,
                                            "statistics": stats}, indent=2) + "\n")
    except OSError:
        pass  # read-only data folder: measured again next time
    return stats, False


def file_statistics(path: str | os.PathLike, *, workers: int | None = None) -> dict:
    """What the generator promises, measured on the file: bytes, documents, distinct pre-tokens, non-ASCII."""
    size = documents = non_ascii = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            size += len(block)
            documents += block.count(SEPARATOR.encode())
            non_ascii += len(block.translate(None, _ASCII_BYTES))
    distinct = len(count_file_parallel(path, [SEPARATOR], workers=workers))
    return {"bytes": size, "documents": documents, "distinct_pretokens": distinct,
            "distinct_pretokens_per_mb": distinct / (size / 1e6), "non_ascii_share": non_ascii / size}


_ASCII_BYTES = bytes(range(128))

