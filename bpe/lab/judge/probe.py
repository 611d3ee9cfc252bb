"""The probes: small generated corpora on which mistakes that the shipped corpora hide part a trainer's
merges from the reference's.  The bench runs every trainer of your own on each (:func:`probes_verdict`),
and ``tests/student/test_own_trainer.py`` has each as a test.

**The special-token probe** (:func:`special_token_text`).  The shipped corpora meet ``<|endoftext|>`` at
a newline and hold no ``<`` or ``>`` of their own, so a trainer that splits on the special token as an
unescaped pattern (``<`` or ``endoftext`` or ``>``), or cuts the tokens out and joins the pieces, still
learns the reference's merges there.  Here arrows and tags (``->``, ``<b>``, ``x>y``) make ``(' ', '<')``
an early merge, which a split at every ``<`` and ``>`` loses; each document ends on a word and the next
begins on one (``...at last<|endoftext|>Then ...``), joined one pre-token 119 times; and the special
token left in the text has its ``<|``, ``en``, ``|>`` pairs counted.  A vocab that leaves the special
tokens out, or counts them twice, shows in the merge count.

**The tie probe** (:func:`tie_text`).  CS336 breaks a tie by the larger pair, its tokens compared as
bytes; the orders trainers use instead (:mod:`bpe.lab.judge.tie_orders`) agree with it on most ties, and
``corpus-en`` has none on which a trainer comparing decoded text goes wrong.  Its words (:data:`TIE_WORDS`)
make one tie per wrong order, in falling counts, and each tie is broken by bytes under every order whose
own tie comes later: so each wrong order parts from the reference at its own tie, where the diagnosis
names it.

**The newline probe** (:func:`newline_text`).  A file opened in text mode (``open(path)``, or with an
``encoding`` but without ``newline=''``) reads ``\\r\\n`` and a lone ``\\r`` as ``\\n``, Python's universal
newlines; the shipped corpora hold no ``\\r``, so a trainer that reads them so learns the reference's
merges there.  Here every line ends in ``\\r\\n`` and the next is indented three spaces, which makes
``\\r\\n  `` a pre-token and ``(\\r, \\n)`` the third merge; a progress meter's carriage return (``saving
00%\\r   saving 05%``) makes ``(\\r, '  ')`` the 22nd, so reading either one as ``\\n`` shows.  Read in text
mode, ``(\\n, '  ')`` is taken third, beside the overlapping ``(' ', ' ')``: the diagnosis recounts the
text as text mode reads it before it looks for overlaps.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bpe.counting.plain import count_text
from bpe.lab.fresh_process import lab_tempdir
from bpe.lab.judge.candidates import Candidate
from bpe.lab.judge.diagnose import Evidence, decode_merges, diagnose
from bpe.lab.judge.tie_orders import TIE_OPENING, TIE_RULE
from bpe.split.patterns import DEFAULT_PATTERN
from bpe.training.registry import best_variant
from bpe.training.train import train_bpe

_NAMES = ("Ann", "Bob", "Tom", "Sue", "Max", "Lily", "Ben", "Mia")

#: The tie probe's words and counts, one tie per group in falling counts; each word is a pre-token of its own.
TIE_WORDS = (
    ("cd", 60), ("ab", 60), ("ef", 60),  # (e, f) wins; the smaller pair is (a, b), the pair met first (c, d)
    ("gh", 6), ("ghi", 50), ("gz", 50),  # (gh, i) beats (g, z), which is the larger joined: b'gz' > b'ghi'
    ("jk", 4), ("mn", 40), ("jkl", 40),  # (m, n) beats (jk, l), whose merged token has the larger id
    ("é", 4), ("éo", 30), ("ö", 30),  # (é, o) beats (\xc3, \xb6), which decodes to ('\ufffd', '\ufffd')
    ("ü", 20), ("uv", 20),  # (\xc3, \xbc) beats (u, v); ignoring errors, it decodes to ('', '')
    ("ó", 16), ("á", 16), ("í", 16),  # ó beats í, whose byte 0xAD reads U+0143 as a GPT-2 character
)


def joined_documents(documents: int, document: Callable[[int, str, str], str]) -> str:
    """``documents`` documents joined by the special token, the ``i``-th ``document(i, a, b)``, where ``a``
    and ``b`` are two of the names, a pair that changes from one document to the next."""
    return "<|endoftext|>".join(document(i, _NAMES[i % 8], _NAMES[(i * 3 + 2) % 8]) for i in range(documents))


def special_token_text(documents: int = 120) -> str:
    """The special-token probe (11 KB): ``documents`` short documents joined by the special token, none
    with a newline at the join.

    >>> special_token_text(2).split("<|endoftext|>")  # doctest: +NORMALIZE_WHITESPACE
    ['Then Ann -> Tom: the score was 0<7 and x>y, so Tom <- Ann wrote <b>ok</b> at last',
     'Then Bob -> Lily: the score was 1<8 and x>y, so Lily <- Bob wrote <b>ok</b> at last']
    """
    return joined_documents(documents, lambda i, a, b: f"Then {a} -> {b}: the score was {i % 7}<{i % 5 + 7} and "
                                                       f"x>y, so {b} <- {a} wrote <b>ok</b> at last")


def tie_text() -> str:
    """The tie probe (2 KB): each of :data:`TIE_WORDS` as often as its count, one word a line, in that order.

    >>> tie_text()[:9]
    'cd\\ncd\\ncd\\n'
    """
    return "\n".join(word for word, n in TIE_WORDS for _ in range(n))


def newline_text(documents: int = 40) -> str:
    """The newline probe (3 KB): ``documents`` short letters with Windows line ends, each line after the
    first indented three spaces, and a progress meter whose lone ``\\r`` goes back to the line's start.

    >>> newline_text(1)
    'To Tom,\\r\\n   Ann sent 0 maps\\r\\n   saving 00%\\r   saving 05%\\r\\n\\r\\nFrom Ann'
    """
    return joined_documents(documents, lambda i, a, b: f"To {b},\r\n   {a} sent {i % 9} maps\r\n   saving {i % 10}0%"
                                                       f"\r   saving {i % 10}5%\r\n\r\nFrom {a}")


@dataclass(frozen=True)
class Probe:
    """A probe: its name in a verdict, its text, and the vocab size and special tokens a trainer gets."""

    name: str
    text: Callable[[], str]
    vocab_size: int
    special_tokens: tuple[str, ...] = ("<|endoftext|>",)

    @property
    def slug(self) -> str:
        """``tie-probe``: its file's name, and its tests' id."""
        return self.name.removeprefix("the ").replace(" ", "-")

    def write(self, folder: Path) -> Path:
        """The probe's file: its text's own bytes (written in binary, so no line end is translated)."""
        path = Path(folder) / f"{self.slug}.txt"
        path.write_bytes(self.text().encode("utf-8"))
        return path

    def evidence(self, pattern: str = DEFAULT_PATTERN) -> Evidence:
        text, specials = self.text(), list(self.special_tokens)
        return Evidence(lambda: count_text(text, specials, pattern), lambda: text, specials, pattern)

    def default_merges(self, path: Path, pattern: str = DEFAULT_PATTERN) -> list:
        """The default rung's merges on the probe written at ``path``: v1's, as every rung's are, made faster."""
        return train_bpe(path, self.vocab_size, list(self.special_tokens), variant=best_variant(), workers=1,
                         pattern=pattern)[1]


#: 53 merges, past the divergence of every mistake (at merge 35 at the latest) and short of the 64 after
#: which no pair is left (a merge too many must show).
SPECIAL_TOKEN_PROBE = Probe("the special-token probe", special_token_text, 310)
#: 17 merges, every one its words allow; the last tie is at merge 15.
TIE_PROBE = Probe("the tie probe", tie_text, 274)
#: 43 merges: past the lone carriage return's (the 22nd), short of the 73 its pairs allow.
NEWLINE_PROBE = Probe("the newline probe", newline_text, 300)
PROBES = (SPECIAL_TOKEN_PROBE, TIE_PROBE, NEWLINE_PROBE)


def probe_verdict(candidate: Candidate, probe: Probe, run_once: Callable[..., dict],
                  pattern: str = DEFAULT_PATTERN) -> dict:
    """One run of ``candidate`` on ``probe``, its merges diagnosed against the reference's and its vocab
    checked; the verdict names the probe (``corpus``).  ``run_once`` runs it: the bench's runner
    (:func:`bpe.lab.measure.timed_run.run_once`, a fresh process whose child checks the vocab too), handed
    in so that judging imports no measuring.  ``pattern``: the run's and the reference's, as the bench's."""
    with lab_tempdir("probe") as tmp:
        path = probe.write(Path(tmp))
        counts_out = Path(tmp) / "counts.pickle" if candidate.kind == "merger" else None
        run = run_once(path, candidate, probe.vocab_size, list(probe.special_tokens), 1, want_merges=True,
                       counts_out=str(counts_out) if counts_out else None, pattern=pattern)
        if "failed" in run:
            return {"verdict": "failed", "step": None, "merges": 0, "cause": None, "corpus": probe.name,
                    "explanation": run["failed"]}
        own_counts = pickle.loads(counts_out.read_bytes()) if counts_out and counts_out.exists() else None
        verdict = diagnose(decode_merges(run["merge_list"]), probe.default_merges(path, pattern),
                           probe.evidence(pattern), candidate.label, "the reference", own_counts)
    verdict = with_vocab_problems(verdict, run.get("vocab_problems") or [])
    verdict["corpus"] = probe.name
    return verdict


def probes_verdict(candidate: Candidate, run_once: Callable[..., dict], pattern: str = DEFAULT_PATTERN) -> dict:
    """``candidate`` on each probe in turn (run by ``run_once``, as :func:`probe_verdict` says), split by
    ``pattern``: the first verdict that is not ``identical``, else the last one."""
    for probe in PROBES:
        verdict = probe_verdict(candidate, probe, run_once, pattern)
        if verdict["verdict"] != "identical":
            break
    return verdict


def settled_tie(verdict: dict, probed: dict) -> dict:
    """A tie broken the wrong way on the data (``verdict``, its order not named: two tied pairs fit several
    orders), with what the tie probe (``probed``: :func:`probe_verdict` on :data:`TIE_PROBE`), one tie per wrong
    order, shows of the same trainer: the order its tie parts at, or that it breaks them all as CS336 does.

    >>> data = {"cause": "tie", "explanation": TIE_OPENING + "both pairs occur 5 times and mine chose the smaller"
    ...         + TIE_RULE}
    >>> settled_tie(data, {"verdict": "differs", "cause": "tie", "step": 1, "explanation": TIE_OPENING
    ...     + "both pairs occur 60 times and mine chose the smaller" + TIE_RULE})["explanation"][79:168]
    'on the tie probe (one tie per wrong order) it parts at merge 1, where both pairs occur 60'
    """
    on_data = verdict["explanation"].removesuffix(TIE_RULE)
    if probed["verdict"] == "identical":
        found = "the tie probe (one tie per wrong order) it breaks as CS336 does, so no one order explains it"
    elif probed.get("cause") == "tie":
        found = (f"on the tie probe (one tie per wrong order) it parts at merge {probed['step']:,}, where "
                 + probed["explanation"].removeprefix(TIE_OPENING).removesuffix(TIE_RULE))
    else:
        found = f"on the tie probe it differs otherwise: {probed['explanation']}"
    return {**verdict, "explanation": f"{on_data}; {found}{TIE_RULE}",
            "tie_probe": {key: probed.get(key) for key in ("verdict", "step", "cause")}}


def with_vocab_problems(verdict: dict, problems: list[str]) -> dict:
    """``verdict`` with what is wrong in the vocab: an ``identical`` one becomes ``differs`` (cause ``vocab``)."""
    if not problems:
        return verdict
    said = "; ".join(problems)
    if verdict["verdict"] == "identical":
        return {"verdict": "differs", "step": None, "merges": verdict["merges"], "cause": "vocab",
                "explanation": f"its merges are the reference's, but {said}", "vocab": problems}
    return {**verdict, "explanation": f"{verdict['explanation']}; and {said}", "vocab": problems}
