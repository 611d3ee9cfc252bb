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

import os
import random
from collections.abc import Callable, Iterator

from bpe.data.generated import (
    CODAS,
    NUCLEI,
    ONSETS,
    SEPARATOR,
    Draws,
    cached_statistics,
    file_statistics,
    write_documents,
    zipf_cum_weights,
)

DEFAULT_SEED = 0

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
    def _new_word(self, syllables: int, *, nuclei=NUCLEI, suffix: bool = True) -> str:
        rng = self.rng
        parts = []
        for _ in range(syllables):
            parts += (ONSETS[rng.randrange(len(ONSETS))], nuclei[rng.randrange(len(nuclei))],
                      CODAS[rng.randrange(len(CODAS))])
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


