"""How the fast pre-tokenizer compares with the plain regex, per kind of text.

The fast pre-tokenizer (:mod:`bpe.training.pretokenize_fast`; v6 and v7) must never lose to the plain
definition it replaces.  This times both on one sample of each kind of text, best of ``--repeat``, checks
they give the same counts, and writes the seconds and ratios that docs/v6.md quotes: **plain** is
:func:`~bpe.training.pretokenize.count_text` on the whole decoded text (v1-v5's counter), **fast** the
pretokenize stage of v6 and v7 with one worker (:func:`~bpe.training.parallel.count_file_parallel_fast`).
The samples are made here, deterministically, under ``data/``: ``books`` (the Gutenberg sample), ``ascii``
(web-like text, non-ASCII dropped), ``webtext``, ``accented``, ``cyrillic``, ``cjk``, and ``wikipedia``
(``--wikipedia PATH``, e.g. WikiText-2, when given or found)::

    python -m bpe.lab.pretokenize_ratio --size 16MB --repeat 3 --json docs/pretokenize-ratio.json

It leaves out the pooled stage (2 or more workers: see docs/v3.md) and any timing of the merges.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bpe.errors import BPEError
from bpe.data.datasets import REPO_ROOT, data_dir, shown_path, size_label
from bpe.lab.spread import ratio_text
from bpe.training.sizes import parse_size

SEPARATOR = "<|endoftext|>"
KINDS = ("books", "ascii", "webtext", "wikipedia", "accented", "cyrillic", "cjk")
#: Where a Wikipedia text is looked for when --wikipedia is not given (the project's shared data).
WIKIPEDIA_CANDIDATES = (REPO_ROOT.parent / "shared" / "data" / "wikitext2.txt",)


# --- samples -------------------------------------------------------------------------------------


def _repeated(path: Path) -> Callable[[], Iterator[str]]:
    def documents() -> Iterator[str]:
        text = path.read_text(encoding="utf-8")
        while True:
            yield text
    return documents


def _webtext(ascii_only: bool) -> Callable[[], Iterator[str]]:
    def documents() -> Iterator[str]:
        from bpe.data.webtext import WebTextGenerator

        for doc in WebTextGenerator(0).documents():
            yield (doc.encode("ascii", "ignore").decode("ascii") if ascii_only else doc) + SEPARATOR
    return documents


def _words_text(rng: random.Random, word: Callable[[], str], *, quotes=("\u201c", "\u201d"),
                before_punct: str = "") -> str:
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
            sentences.append(" ".join(words) + before_punct + rng.choice(".......?!;:"))
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def _accented() -> Iterator[str]:
    rng = random.Random(1)
    plain, accented = "aeiouaeiouy", "éèêàâùûôîïëçüöäñóíúãõåøłśžčřěß"
    onsets = "b c d f g h j k l m n p q r s t v w z bl br ch cl cr dr fr gr pl pr qu sch st tr".split()

    def word() -> str:
        syllables = []
        for _ in range(1 + rng.randrange(3)):
            vowel = rng.choice(accented) if rng.randrange(7) == 0 else rng.choice(plain)
            syllables.append(rng.choice(onsets) + vowel + rng.choice(("", "", "n", "r", "s", "t", "l")))
        return "".join(syllables)

    while True:
        quotes = ("\u00ab\u00a0", "\u00a0\u00bb") if rng.randrange(2) else ("\u201e", "\u201c")
        yield _words_text(rng, word, quotes=quotes, before_punct="\u00a0" if rng.randrange(3) == 0 else "") + SEPARATOR


def _cyrillic() -> Iterator[str]:
    rng = random.Random(2)
    letters = [chr(c) for c in range(0x0430, 0x0450)]

    def word() -> str:
        return "".join(rng.choice(letters) for _ in range(1 + rng.randrange(9)))

    while True:
        yield _words_text(rng, word, quotes=("\u00ab", "\u00bb")) + SEPARATOR


def _cjk() -> Iterator[str]:
    rng = random.Random(3)
    chars = [chr(0x4E00 + (i * 7919) % 0x5000) for i in range(3000)] + [chr(c) for c in range(0x3041, 0x3097)]
    latin = ("API", "Python", "iPhone", "COVID-19", "Tokyo", "OK", "USB", "AI")
    while True:
        lines = []
        for _ in range(1 + rng.randrange(12)):
            sentence = []
            for _ in range(1 + rng.randrange(5)):
                sentence.append("".join(rng.choice(chars) for _ in range(2 + rng.randrange(20))))
                if rng.randrange(4) == 0:
                    sentence.append(rng.choice(latin) if rng.randrange(2) else f"{rng.randrange(1, 2030)}")
                sentence.append(rng.choice("，、"))
            lines.append(("\u3000" if rng.randrange(3) == 0 else "") + "".join(sentence[:-1]) + rng.choice("。！？"))
        yield "\n".join(lines) + "\n" + SEPARATOR


def find_wikipedia(path: str | None) -> Path | None:
    if path is not None:
        if not Path(path).is_file():
            raise BPEError(f"--wikipedia: no such file: {path}")
        return Path(path)
    return next((p for p in WIKIPEDIA_CANDIDATES if p.is_file()), None)


def sample_sources(wikipedia: Path | None) -> dict[str, Callable[[], Iterator[str]]]:
    sources = {"books": _repeated(REPO_ROOT / "corpora" / "gutenberg-sample.txt"), "ascii": _webtext(ascii_only=True),
               "webtext": _webtext(ascii_only=False), "accented": _accented, "cyrillic": _cyrillic, "cjk": _cjk}
    if wikipedia is not None:
        sources["wikipedia"] = _repeated(wikipedia)
    return {kind: sources[kind] for kind in KINDS if kind in sources}


def make_sample(kind: str, documents: Callable[[], Iterator[str]], size: int) -> Path:
    """The sample file of ``kind``: whole documents until ``size`` bytes (made once, then reused)."""
    path = data_dir() / f"pretokenize-{kind}-{size_label(size)}.txt"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    written = 0
    with open(tmp, "wb") as out:
        for doc in documents():
            data = doc.encode("utf-8")
            out.write(data)
            written += len(data)
            if written >= size:
                break
    tmp.replace(path)
    return path


# --- measuring -----------------------------------------------------------------------------------


def count_plain(path: Path):
    from bpe.training.pretokenize import count_text

    return count_text(path.read_bytes().decode("utf-8"), [SEPARATOR])


def count_fast(path: Path):
    from bpe.training.parallel import count_file_parallel_fast

    return count_file_parallel_fast(path, [SEPARATOR], workers=1)


def measure(path: Path, repeat: int) -> dict:
    """Best-of-``repeat`` seconds of both counters on ``path``, alternating, and their ratio."""
    best = {"plain": float("inf"), "fast": float("inf")}
    for run in range(repeat):
        results = {}
        for name, count in (("plain", count_plain), ("fast", count_fast)):
            start = time.perf_counter()
            results[name] = count(path)
            best[name] = min(best[name], time.perf_counter() - start)
        if run == 0 and results["plain"] != results["fast"]:
            raise BPEError(f"{path}: the fast pre-tokenizer's counts differ from the plain pattern's")
        del results
    text = path.read_text(encoding="utf-8")
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return {"path": shown_path(path), "bytes": path.stat().st_size,
            "non_ascii_chars_pct": round(100 * non_ascii / max(len(text), 1), 3), "plain_s": round(best["plain"], 4),
            "fast_s": round(best["fast"], 4), "ratio": round(best["fast"] / best["plain"], 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bpe.lab.pretokenize_ratio", description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="16MB", help="bytes per sample (default 16MB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each counter per sample; the best counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma list of kinds (default: {','.join(KINDS)})")
    parser.add_argument("--wikipedia", help="a Wikipedia text for the 'wikipedia' kind (default: the shared WikiText-2)")
    parser.add_argument("--json", default="out/pretokenize-ratio.json", help="where to write the results")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
        if args.repeat < 1:
            raise BPEError(f"--repeat must be at least 1, got {args.repeat}")
        wanted = [kind.strip() for kind in args.kinds.split(",") if kind.strip()]
        unknown = [kind for kind in wanted if kind not in KINDS]
        if unknown:
            raise BPEError(f"unknown kind(s) {', '.join(unknown)}; choose from {', '.join(KINDS)}")
        sources = sample_sources(find_wikipedia(args.wikipedia))
        from bpe.lab.publish import machine_info

        result = {"command": "python -m bpe.lab.pretokenize_ratio " + " ".join(argv if argv is not None else sys.argv[1:]),
                  "machine": machine_info(), "size": size, "repeat": args.repeat, "kinds": {}}
        for kind in wanted:
            if kind not in sources:
                print(f"{kind:>10}: skipped (no file; pass --wikipedia PATH)", flush=True)
                continue
            figures = measure(make_sample(kind, sources[kind], size), args.repeat)
            result["kinds"][kind] = figures
            print(f"{kind:>10}: plain {figures['plain_s']:.3f} s, fast {figures['fast_s']:.3f} s, "
                  f"the fast one {ratio_text(1 / figures['ratio'])} ({figures['non_ascii_chars_pct']} % non-ASCII)",
                  flush=True)
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    except BPEError as exc:
        print(f"bpe: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
