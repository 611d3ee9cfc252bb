"""Kinds of text, made deterministically, for timing the pre-tokenizers on each (:mod:`tools.pretokenize_ratio`).

Each kind is a stream of documents ending in ``<|endoftext|>``, drawn from its own ``random.Random(seed)``
in a fixed order, so the same kind and size give the same bytes on any machine:

* ``books``: the shipped Gutenberg sample, repeated; ``wikipedia``: a given Wikipedia text, repeated;
* ``ascii``: ``webtext-synth`` with its non-ASCII characters dropped; ``webtext``: ``webtext-synth``;
* ``accented``: made-up Latin-script words, an accent every few words (French/German/Polish letters);
* ``cyrillic``, ``rtl`` (Arabic and Hebrew documents, with direction marks, Arabic-Indic and ASCII
  digits), ``cjk`` (ideographs and kana, few spaces): whole documents in another script;
* ``mixed``: every sentence mixes Latin, Cyrillic, Greek, Arabic, Hebrew, CJK, emoji, combining marks
  and numbers, word by word;
* ``emoji``: English-like text with an emoji (flags, skin tones, ZWJ families) every few dozen words,
  some glued to a word;
* ``combining``: Latin-script words whose accents are combining marks (decomposed, up to two stacked);
* ``digits``: logs and tables: dates, times, ids, prices, decimals, phone numbers (ASCII);
* ``whitespace``: code-like lines: indentation by spaces and tabs, aligned columns, trailing spaces,
  blank lines, CRLF, a rare no-break, thin or ideographic space.

>>> doc = next(SOURCES["mixed"]())
>>> doc == next(SOURCES["mixed"]()) and doc.endswith(SEPARATOR)
True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

from bpe.data.datasets import REPO_ROOT, data_dir, size_label
from bpe.data.generated import write_documents
from bpe.data.webtext import WebTextGenerator

SEPARATOR = "<|endoftext|>"
Documents = Callable[[], Iterator[str]]


def _letters(*ranges: tuple[int, int]) -> list[str]:
    return [chr(c) for lo, hi in ranges for c in range(lo, hi)]


CYRILLIC = _letters((0x0430, 0x0450))
GREEK = _letters((0x03B1, 0x03CA))
ARABIC = _letters((0x0627, 0x063B), (0x0641, 0x064B))
HEBREW = _letters((0x05D0, 0x05EB))
ARABIC_DIGITS = _letters((0x0660, 0x066A))
CJK = [chr(0x4E00 + (i * 7919) % 0x5000) for i in range(3000)] + _letters((0x3041, 0x3097))
EMOJI = ("\U0001f600", "\U0001f44d\U0001f3fd", "\u2764\ufe0f", "\U0001f1eb\U0001f1f7", "\u2705", "\U0001f680",
         "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f914", "\U0001f389", "\u2615")
COMBINING = "\u0300\u0301\u0302\u0303\u0308\u0323\u0327\u030c"
_ONSETS = "b c d f g h j k l m n p q r s t v w z bl br ch cl cr dr fr gr pl pr qu sch st tr".split()


def _syllables(rng: random.Random, vowel: Callable[[], str]) -> str:
    syllables = []
    for _ in range(1 + rng.randrange(3)):
        nucleus = vowel()  # drawn first: the order of the draws is part of what a seed makes
        syllables.append(rng.choice(_ONSETS) + nucleus + rng.choice(("", "", "n", "r", "s", "t", "l")))
    return "".join(syllables)


def _script_word(rng: random.Random, letters: list[str]) -> str:
    return "".join(rng.choice(letters) for _ in range(1 + rng.randrange(9)))


def _words_text(rng: random.Random, word: Callable[[], str], *, quotes=("\u201c", "\u201d"),
                before_punct: str = "", punct: str = ".......?!;:") -> str:
    """A document of paragraphs of sentences made of ``word()``."""
    paragraphs = []
    for _ in range(1 + rng.randrange(8)):
        sentences = []
        for _ in range(1 + rng.randrange(6)):
            words = [word() for _ in range(3 + rng.randrange(15))]
            words[0] = words[0].capitalize()
            if rng.randrange(6) == 0:
                i = rng.randrange(len(words))
                words[i] = f"{quotes[0]}{words[i]}{quotes[1]}"
            if rng.randrange(5) == 0:
                words.insert(rng.randrange(len(words)), str(rng.randrange(1, 3000)))
            sentences.append(" ".join(words) + before_punct + rng.choice(punct))
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def _repeated(path: Path) -> Documents:
    def documents() -> Iterator[str]:
        text = path.read_text(encoding="utf-8")
        while True:
            yield text
    return documents


def _webtext(ascii_only: bool) -> Documents:
    def documents() -> Iterator[str]:
        for doc in WebTextGenerator(0).documents():
            yield (doc.encode("ascii", "ignore").decode("ascii") if ascii_only else doc) + SEPARATOR
    return documents


def _generated(seed: int, document: Callable[[random.Random], str]) -> Documents:
    """A generated kind: its documents drawn one after another from one ``random.Random(seed)``."""
    def documents() -> Iterator[str]:
        rng = random.Random(seed)
        while True:
            yield document(rng) + SEPARATOR
    return documents


def _accented(rng: random.Random) -> str:
    plain, accented = "aeiouaeiouy", "éèêàâùûôîïëçüöäñóíúãõåøłśžčřěß"

    def word() -> str:
        return _syllables(rng, lambda: rng.choice(accented) if rng.randrange(7) == 0 else rng.choice(plain))

    quotes = ("\u00ab\u00a0", "\u00a0\u00bb") if rng.randrange(2) else ("\u201e", "\u201c")
    return _words_text(rng, word, quotes=quotes, before_punct="\u00a0" if rng.randrange(3) == 0 else "")


def _cyrillic(rng: random.Random) -> str:
    return _words_text(rng, lambda: _script_word(rng, CYRILLIC), quotes=("\u00ab", "\u00bb"))


def _cjk(rng: random.Random) -> str:
    latin = ("API", "Python", "iPhone", "COVID-19", "Tokyo", "OK", "USB", "AI")
    lines = []
    for _ in range(1 + rng.randrange(12)):
        sentence = []
        for _ in range(1 + rng.randrange(5)):
            sentence.append("".join(rng.choice(CJK) for _ in range(2 + rng.randrange(20))))
            if rng.randrange(4) == 0:
                sentence.append(rng.choice(latin) if rng.randrange(2) else f"{rng.randrange(1, 2030)}")
            sentence.append(rng.choice("，、"))
        lines.append(("\u3000" if rng.randrange(3) == 0 else "") + "".join(sentence[:-1]) + rng.choice("。！？"))
    return "\n".join(lines) + "\n"


def _rtl(rng: random.Random) -> str:
    def word() -> str:
        roll = rng.randrange(40)
        if roll == 0:
            return rng.choice(("HTML", "Python", "GPS", "iPhone"))
        if roll == 1:
            return "".join(rng.choice(ARABIC_DIGITS) for _ in range(1 + rng.randrange(4)))
        return _script_word(rng, letters) + ("\u200f" if roll == 2 else "")

    letters = ARABIC if rng.randrange(2) else HEBREW
    punct = ".\u060c\u061f!:" if letters is ARABIC else ".,?!:"
    return _words_text(rng, word, quotes=("\u00ab", "\u00bb"), punct=punct)


def _latin(rng: random.Random) -> str:
    return _syllables(rng, lambda: rng.choice("aeiouaeiouy"))


def _mixed(rng: random.Random) -> str:
    scripts = [lambda: _latin(rng)] * 8 + [
        lambda: _script_word(rng, CYRILLIC), lambda: _script_word(rng, GREEK), lambda: _script_word(rng, ARABIC),
        lambda: _script_word(rng, HEBREW), lambda: "".join(rng.choice(CJK) for _ in range(1 + rng.randrange(6))),
        lambda: rng.choice(EMOJI), lambda: _latin(rng) + rng.choice(COMBINING), lambda: f"{rng.randrange(100000)}",
        lambda: _latin(rng) + rng.choice(EMOJI), lambda: rng.choice(("\u2014", "\u2026", "\u00a0", "\u3000")),
    ]
    quotes = rng.choice((("\u201c", "\u201d"), ("\u00ab", "\u00bb"), ("\u300c", "\u300d")))
    return _words_text(rng, lambda: rng.choice(scripts)(), quotes=quotes)


def _emoji(rng: random.Random) -> str:
    def word() -> str:
        roll = rng.randrange(40)
        if roll == 0:
            return "".join(rng.choice(EMOJI) for _ in range(1 + rng.randrange(3)))
        return _latin(rng) + (rng.choice(EMOJI) if roll == 1 and rng.randrange(2) else "")

    return _words_text(rng, word, quotes=('"', '"'))


def _combining(rng: random.Random) -> str:
    def vowel() -> str:
        marks = rng.choice(("", "", "", "", rng.choice(COMBINING), rng.choice(COMBINING) + rng.choice(COMBINING)))
        return rng.choice("aeiouy") + marks

    return _words_text(rng, lambda: _syllables(rng, vowel))


def _digits(rng: random.Random) -> str:
    fields = (
        lambda: f"{rng.randrange(1990, 2030)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
        lambda: f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(1000):03d}",
        lambda: f"id={rng.randrange(10**9)}", lambda: f"${rng.randrange(100000):,}.{rng.randrange(100):02d}",
        lambda: f"{rng.random() * 10 ** rng.randrange(-3, 6):.{rng.randrange(1, 7)}f}",
        lambda: f"{rng.randrange(-999, 9999)}",
        lambda: f"+1 ({rng.randrange(200, 999)}) {rng.randrange(100, 999)}-{rng.randrange(10000):04d}",
        lambda: f"{rng.randrange(100)}%", lambda: rng.choice(("ok", "GET", "total", "x", "v2", "n/a")),
    )
    sep = rng.choice((" ", ", ", "\t", " | "))
    lines = [sep.join(rng.choice(fields)() for _ in range(2 + rng.randrange(8))) for _ in range(1 + rng.randrange(60))]
    return "\n".join(lines) + "\n"


def _whitespace(rng: random.Random) -> str:
    def line() -> str:
        indent = rng.choice((" " * rng.randrange(0, 17, 2), "\t" * rng.randrange(4), " \t"))
        words = [_latin(rng) for _ in range(rng.randrange(6))]
        gaps = [" " * (1 + rng.randrange(8)) if rng.randrange(3) == 0 else rng.choice((" ", " ", "\t", "  "))
                for _ in words]
        body = "".join(g + w for g, w in zip(gaps, words)).lstrip(" ")
        if rng.randrange(40) == 0:
            body = body.replace(" ", rng.choice(("\u00a0", "\u2009", "\u3000")), 1)
        return indent + body + rng.choice(("", "", "", " ", "   ", "\t", "\r"))

    return "\n".join(line() for _ in range(1 + rng.randrange(80))) + "\n" * (1 + rng.randrange(3))


#: The generated kinds, each drawn from its own seed (``books`` and ``wikipedia`` read a file: :func:`sources`).
SOURCES: dict[str, Documents] = {
    "ascii": _webtext(ascii_only=True), "webtext": _webtext(ascii_only=False),
    **{kind: _generated(seed, document) for kind, seed, document in (
        ("accented", 1, _accented), ("cyrillic", 2, _cyrillic), ("rtl", 4, _rtl), ("cjk", 3, _cjk),
        ("mixed", 5, _mixed), ("emoji", 6, _emoji), ("combining", 7, _combining), ("digits", 8, _digits),
        ("whitespace", 9, _whitespace))},
}
#: Every kind, in the order they are reported.
KINDS = ("books", "ascii", "webtext", "wikipedia", "accented", "cyrillic", "rtl", "cjk", "mixed", "emoji",
         "combining", "digits", "whitespace")


def sources(wikipedia: Path | None) -> dict[str, Documents]:
    """Every kind that can be made here, in :data:`KINDS` order (``wikipedia`` only with a file)."""
    found = {"books": _repeated(REPO_ROOT / "corpora" / "gutenberg-sample.txt"), **SOURCES}
    if wikipedia is not None:
        found["wikipedia"] = _repeated(wikipedia)
    return {kind: found[kind] for kind in KINDS if kind in found}


def make_sample(kind: str, documents: Documents, size: int) -> Path:
    """The sample file of ``kind``: whole documents until ``size`` bytes (made once, then reused)."""
    path = data_dir() / f"pretokenize-{kind}-{size_label(size)}.txt"
    if not path.exists():
        write_documents(path, size, documents(), kind)
    return path
