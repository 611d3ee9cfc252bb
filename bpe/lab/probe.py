"""The special-token probe: a small generated corpus on which the usual special-token mistakes part a
trainer's output from the reference's, where the shipped corpora let them pass.

The shipped corpora meet ``<|endoftext|>`` at a newline and hold no ``<`` or ``>`` of their own, so a
trainer that splits on the special token as an *unescaped* pattern (``<`` or ``endoftext`` or ``>``),
or cuts the tokens out and joins the pieces, still learns the reference's merges there.  The probe's
documents are built to catch each mistake early (:func:`probe_text`):

* arrows and tags (``->``, ``<-``, ``<b>``, ``x>y``): ``(' ', '<')`` is among the first merges, and a
  split at every ``<`` and ``>`` loses it;
* each document ends on a word and the next begins on one (``...at last<|endoftext|>Then ...``):
  joined, ``last`` + ``Then`` is one pre-token, 119 times;
* the special token between documents: left in the text, its ``<|``, ``en``, ``|>`` pairs are counted.

A vocab that leaves the special tokens out, or counts them twice, shows in the merge count and in the
vocab check (:func:`bpe.lab.diagnose.vocab_problems`).  The bench runs every candidate of your own on
the probe too (:mod:`bpe.lab.correctness`); ``tests/student/test_own_trainer.py`` has it as a test.
"""

from __future__ import annotations

from pathlib import Path

from bpe.lab.candidates import Candidate
from bpe.lab.diagnose import Evidence, decode_merges, diagnose
from bpe.lab.fresh_process import lab_tempdir

#: The probe's special token, and its vocab: 53 merges, past the divergence of every mistake (at merge 35 at the
#: latest) and short of the 64 after which no pair is left (a merge too many must show).
PROBE_SPECIAL_TOKENS = ["<|endoftext|>"]
PROBE_VOCAB_SIZE = 310
PROBE_NAME = "the special-token probe"
_NAMES = ("Ann", "Bob", "Tom", "Sue", "Max", "Lily", "Ben", "Mia")


def probe_text(documents: int = 120) -> str:
    """The probe corpus (11 KB): ``documents`` short documents joined by the special token, none with a
    newline at the join.

    >>> probe_text(2)
    'Then Ann -> Tom: the score was 0<7 and x>y, so Tom <- Ann wrote <b>ok</b> at last<|endoftext|>Then Bob -> Lily: the score was 1<8 and x>y, so Lily <- Bob wrote <b>ok</b> at last'
    """
    docs = []
    for i in range(documents):
        a, b = _NAMES[i % 8], _NAMES[(i * 3 + 2) % 8]
        docs.append(f"Then {a} -> {b}: the score was {i % 7}<{i % 5 + 7} and x>y, so {b} <- {a} wrote <b>ok</b> "
                    "at last")
    return PROBE_SPECIAL_TOKENS[0].join(docs)


def write_probe(folder: Path) -> Path:
    path = Path(folder) / "special-token-probe.txt"
    path.write_text(probe_text(), encoding="utf-8")
    return path


def probe_evidence(text: str) -> Evidence:
    from bpe.training.pretokenize import count_text

    return Evidence(lambda: count_text(text, PROBE_SPECIAL_TOKENS), lambda: text, PROBE_SPECIAL_TOKENS)


def reference_probe_merges(path: Path) -> list:
    from bpe.training.registry import best_variant
    from bpe.training.train import train_bpe

    return train_bpe(path, PROBE_VOCAB_SIZE, PROBE_SPECIAL_TOKENS, variant=best_variant(), workers=1)[1]


def probe_verdict(candidate: Candidate) -> dict:
    """One run of ``candidate`` on the probe (a fresh process, as the bench's), its merges diagnosed against
    the reference's and its vocab checked; the verdict names the probe (``corpus``)."""
    import pickle

    from bpe.lab.timed_run import run_once  # the child checks the vocab too (its vocab_problems)

    with lab_tempdir("probe") as tmp:
        path = write_probe(Path(tmp))
        counts_out = Path(tmp) / "counts.pickle" if candidate.kind == "merger" else None
        run = run_once(path, candidate, PROBE_VOCAB_SIZE, PROBE_SPECIAL_TOKENS, 1, want_merges=True,
                       counts_out=str(counts_out) if counts_out else None)
        if "failed" in run:
            return {"verdict": "failed", "step": None, "merges": 0, "cause": None, "corpus": PROBE_NAME,
                    "explanation": run["failed"]}
        own_counts = pickle.loads(counts_out.read_bytes()) if counts_out and counts_out.exists() else None
        merges = decode_merges(run["merge_list"])
        verdict = diagnose(merges, reference_probe_merges(path), probe_evidence(probe_text()), candidate.label,
                           "the reference", own_counts)
    verdict = with_vocab_problems(verdict, run.get("vocab_problems") or [])
    verdict["corpus"] = PROBE_NAME
    return verdict


def with_vocab_problems(verdict: dict, problems: list[str]) -> dict:
    """``verdict`` with what is wrong in the vocab: an ``identical`` one becomes ``differs`` (cause ``vocab``)."""
    if not problems:
        return verdict
    said = "; ".join(problems)
    if verdict["verdict"] == "identical":
        return {"verdict": "differs", "step": None, "merges": verdict["merges"], "cause": "vocab",
                "explanation": f"its merges are the reference's, but {said}", "vocab": problems}
    return {**verdict, "explanation": f"{verdict['explanation']}; and {said}", "vocab": problems}
