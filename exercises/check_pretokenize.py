"""The checker of exercise 0 (pre-tokenization and special tokens): ``python exercises/check_pretokenize.py mine.py``.

``mine.py`` defines ``split_on_special_tokens(text, special_tokens)`` and ``pretokenize(text,
special_tokens)`` (start from ``exercises/start_pretokenize.py``).  Each case runs them on one text and
compares with the project's own definition (``bpe/counting/plain.py``); a failed case shows the
call, what it gave, what was expected and the likely mistake.  The last case trains 20 merges on the
pre-tokens of a text full of special tokens, so a split that lets a merge cross one is seen in the
merges themselves.  Exit status: 0 when every case passes, 1 when one fails, 2 when the file cannot be used.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's bpe, run from anywhere

from bpe.lab.judge.candidates import _raised, load_file_module  # noqa: E402
from bpe.running.timer import NullTimer  # noqa: E402
from bpe.split.patterns import GPT2_REGEX, split_on_special_tokens  # noqa: E402
from bpe.training.merge_loop import run_merges  # noqa: E402
from bpe.variants.v1_naive import Merger  # noqa: E402

EOT = "<|endoftext|>"

#: (function, what the case tests, text, special tokens, the likely mistake when it fails)
CASES = [
    ("split", "no special tokens: the text is one piece", "Hello world", [],
     "with no special tokens there is nothing to cut at (an empty pattern matches everywhere)"),
    ("split", "a special token is cut out and dropped", f"Hi{EOT}there", [EOT],
     "the pieces are the text between the tokens; the tokens themselves are not pieces"),
    ("split", "a special token is text, not a pattern: escape it", f"a|b<c>d{EOT}e", [EOT],
     "unescaped, <|endoftext|> means '<' or 'endoftext' or '>': escape each token (regex.escape)"),
    ("split", "every special token is escaped, whatever it holds", "a.b axb[SEP]c", ["[SEP]", "a.b"],
     "'.' matches any character and '[SEP]' is a character class unless escaped"),
    ("split", "the longer of two overlapping special tokens wins", f"x{EOT}{EOT}y", [EOT, EOT + EOT],
     "put the longer tokens first in the alternation (sort by length, longest first)"),
    ("pretokenize", "contractions, numbers, punctuation", "It's 2024, we don't stop!", [],
     "use the GPT-2 pattern as given, with the regex package (re has no \\p{L})"),
    ("pretokenize", "runs of spaces and newlines", "a   b\n\nc  ", [],
     "keep every match of the pattern, whitespace included: the last space of a run joins the next word"),
    ("pretokenize", "letters of every script", "naïve café 東京 ١٢٣", [],
     "\\p{L} and \\p{N} are any script's letters and digits; decode the text as UTF-8 first"),
    ("pretokenize", "nothing joins across a special token", f"end.{EOT}The end{EOT} again", [EOT],
     "cut at the special tokens first, then each piece by the pattern; replacing a token by a space "
     "adds a space to the next word"),
    ("pretokenize", "a special token is never a pre-token", f"{EOT}a{EOT}", [EOT],
     "the special tokens are dropped: they are added to the vocab once, never counted or merged"),
]

#: The last case: merges trained on the pre-tokens of this text must be the reference's.
TRAINING_TEXT = f"ab{EOT}ba{EOT}ab cd{EOT}<|{EOT}|>" * 20


def reference(function: str, text: str, special_tokens: list[str]) -> list[str]:
    pieces = split_on_special_tokens(text, special_tokens)
    if function == "split":
        return [piece for piece in pieces if piece]
    return [token for piece in pieces for token in GPT2_REGEX.findall(piece)]


def trained(pretokens: list[str]) -> list[tuple[bytes, bytes]]:
    counts = Counter(token.encode("utf-8") for token in pretokens)
    return run_merges(Merger(counts), 20, NullTimer())


def check(module) -> list[str]:
    """One line per case (``ok`` or ``FAIL`` with the call, the results and the hint), then the count."""
    functions = {"split": getattr(module, "split_on_special_tokens", None),
                 "pretokenize": getattr(module, "pretokenize", None)}
    lines, passed = [], 0
    for number, (function, what, text, specials, hint) in enumerate(CASES, 1):
        name = "split_on_special_tokens" if function == "split" else "pretokenize"
        expected = reference(function, text, specials)
        try:
            gave = functions[function](text, list(specials))
            if function == "split" and isinstance(gave, list):
                gave = [piece for piece in gave if piece]  # empty pieces (two tokens side by side) are fine
        except Exception as exc:  # the student's code: what it raises is the case's result
            gave, hint = None, f"it raised {_raised(exc)}"
        if gave == expected:
            passed += 1
            lines.append(f"ok    {number:2} {what}")
            continue
        lines += [f"FAIL  {number:2} {what}: {name}({text!r}, {specials!r})",
                  f"          gave     {gave!r}", f"          expected {expected!r}", f"          hint: {hint}"]
    number = len(CASES) + 1
    what = "training on these pre-tokens merges nothing across a special token"
    try:
        gave = trained(functions["pretokenize"](TRAINING_TEXT, [EOT]))
        hint = "a merge joined bytes of a special token or across one: split at the special tokens first"
    except Exception as exc:
        gave, hint = None, f"it raised {_raised(exc)}"
    expected = trained(reference("pretokenize", TRAINING_TEXT, [EOT]))
    if gave == expected:
        passed += 1
        lines.append(f"ok    {number:2} {what}")
    else:
        lines += [f"FAIL  {number:2} {what}", f"          gave     {gave!r}", f"          expected {expected!r}",
                  f"          hint: {hint}"]
    lines.append(f"{passed} of {len(CASES) + 1} cases pass")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python exercises/check_pretokenize.py mine.py", file=sys.stderr)
        return 2
    try:
        module = load_file_module(argv[0])
    except Exception as exc:
        print(f"error: importing {argv[0]} raised {_raised(exc)}", file=sys.stderr)
        return 2
    if (not callable(getattr(module, "pretokenize", None))
            or not callable(getattr(module, "split_on_special_tokens", None))):
        print(f"error: {argv[0]} must define split_on_special_tokens and pretokenize "
              f"(start from exercises/start_pretokenize.py)", file=sys.stderr)
        return 2
    lines = check(module)
    print("\n".join(lines))
    return 0 if lines[-1].startswith(f"{len(CASES) + 1} of") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
