"""After the bench's runs: every run's merges against the reference merges of the same data, v1's merges
made faster: every rung is tested to give exactly v1's merges, so the fastest rung's from this bench, or
another rung's cached in the data folder's ``reference-merges/`` (``data/`` in a checkout, the user's cache
folder outside one: :func:`bpe.data.datasets.data_dir`; a rung benched alone is not its own reference,
:func:`reference_merges`), stand for v1's.  A difference is explained from its first diverging merge
(:mod:`bpe.lab.judge.diagnose`).  A trainer of your own is judged on its whole output: its vocab too
(:func:`bpe.lab.judge.candidates.vocab_problems`), and its output on the probes (:mod:`bpe.lab.judge.probe`:
special tokens, ties, line ends), where mistakes that the data at hand hides show.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from bpe.corpus.batches import documents_text
from bpe.corpus.corpus import Corpus
from bpe.corpus.text_file import decode_utf8
from bpe.counting.documents import count_documents
from bpe.counting.parallel import count_file_parallel
from bpe.data.datasets import data_dir, make_data_folder
from bpe.lab.judge.candidates import Candidate
from bpe.lab.judge.diagnose import Evidence, decode_merges, diagnose, encode_merges, merges_digest
from bpe.lab.judge.probe import PROBES, TIE_PROBE, probe_verdict, probes_verdict, settled_tie, with_vocab_problems
from bpe.running.files import write_text_atomic
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name, resolve_pattern
from bpe.training.registry import DEFAULT_VARIANTS, VARIANTS, best_variant
from bpe.training.train import train_bpe


def all_correct(report) -> bool:
    """No run of a bench (:class:`~bpe.lab.measure.result.BenchResult`) failed and every verdict is ``identical``."""
    return not report.failed and all(v["verdict"] == "identical" for v in (report.verdicts or {}).values())


def check_correctness(merge_lists: dict[str, list], own_counts: dict[str, dict], candidates: list[Candidate],
                      data: Path | Corpus, vocab_size: int, special_tokens: list[str], workers: int | None,
                      end: int | None, out, failed: dict | None = None, vocab: dict | None = None, *,
                      run_once: Callable[..., dict], pattern: str = DEFAULT_PATTERN) -> tuple[dict, dict]:
    """Every run's merges against the reference merges of the same data, a function's vocab
    (``vocab``: its problems by name) and each own trainer on the probes, run by ``run_once`` (the bench's
    runner, :func:`bpe.lab.judge.probe.probe_verdict`), all split by ``pattern``; prints and returns the
    verdicts.  ``data``: a text file, its first ``end`` bytes; or a corpus (:class:`~bpe.corpus.corpus.Corpus`),
    read in place, its documents up to ``end`` bytes of text (``train_bpe``'s ``limit``)."""
    reference_name, reference, source = reference_merges(merge_lists, candidates, data, vocab_size,
                                                         special_tokens, workers, end, pattern)
    evidence = _evidence(data, special_tokens, workers, end, pattern)
    verdicts = {name: diagnose(merges, reference, evidence, name, reference_name, own_counts.get(name),
                               name_tie_order=False) for name, merges in merge_lists.items()}
    for candidate in candidates:  # a tie broken the wrong way: which order, the tie probe tells before it is named
        if verdicts.get(candidate.label, {}).get("cause") == "tie":
            verdicts[candidate.label] = settled_tie(verdicts[candidate.label],
                                                    probe_verdict(candidate, TIE_PROBE, run_once))
    verdicts = {name: with_vocab_problems(verdict, (vocab or {}).get(name) or []) for name, verdict in verdicts.items()}
    for candidate in candidates:  # your own trainers, right so far: on the probes too
        if not candidate.is_variant and verdicts.get(candidate.label, {}).get("verdict") == "identical":
            probed = probes_verdict(candidate, run_once, pattern)
            verdicts[candidate.label] = probed if probed["verdict"] != "identical" else {
                **verdicts[candidate.label], "probe": "identical"}
    print(f"\ncorrectness: each run's merges against {reference_name}'s ({source})", file=out)
    failed = failed or {}
    width = max(12, *(len(name) + 2 for name in [*verdicts, *failed]))
    for name, verdict in verdicts.items():
        what, why = verdict_parts(name, verdict, reference_name)
        print(f"  {name:<{width}}{what}" + (f"\n{' ' * (width + 2)}{why}" if why else ""), file=out)
    for name in failed:
        print(f"  {name:<{width}}not checked: it failed (above)", file=out)
    return verdicts, {"name": reference_name, "source": source, "merges": len(reference),
                      "merges_sha256": merges_digest(reference)}


def _evidence(data: Path | Corpus, special_tokens: list[str], workers: int | None, end: int | None,
              pattern: str) -> Evidence:
    """What the diagnosis may look at, of a file or of a corpus: the true counts (the plain counter, in a pool)
    and the text (held whole, as a file's is), each read only if a check needs it."""
    if isinstance(data, Corpus):
        # The plain counter (count_file_parallel's) over the corpus's documents, as train_bpe feeds a rung's.
        plain = SimpleNamespace(count_pretokens=count_file_parallel)
        return Evidence(lambda: count_documents(plain, data, special_tokens, workers=workers, limit=end,
                                                pattern=pattern)[0],
                        lambda: "".join(documents_text(data, special_tokens, limit=end, pattern=pattern)),
                        special_tokens, pattern)

    def load_text() -> str:
        with open(data, "rb") as f:
            return decode_utf8(f.read() if end is None else f.read(end), errors="replace")

    return Evidence(lambda: count_file_parallel(data, special_tokens, workers=workers, end=end, pattern=pattern),
                    load_text, special_tokens, pattern)


def verdict_parts(name: str, v: dict, reference_name: str) -> tuple[str, str]:
    """``(what, why)``: ``identical (N merges)``; or where the run differs (the merge where it parts, the
    verdict's ``step``; both pairs and their true counts) and the likely cause.  The bench prints them, the
    report writes them as markdown."""
    if v["verdict"] == "identical":
        names = [probe.name for probe in PROBES]
        probes = f", and on {', '.join(names[:-1])} and {names[-1]}" if v.get("probe") else ""
        return f"identical ({v['merges']:,} merges){probes}", ""
    where = f" on {v['corpus']}" if v.get("corpus") else ""
    if v["verdict"] == "failed":
        return f"FAILED{where}: {v['explanation']}", ""
    why = ("likely cause: " if v["cause"] else "") + v["explanation"]
    if v["step"] is None:  # the merges agree; its vocab, or its own pre-token counts, do not
        return f"DIFFERS in its {'vocab' if v['cause'] == 'vocab' else 'pre-token counts'}{where}", why
    if v["step"] > v["reference_merges"]:  # merges past the reference's last: no "merge 244 of 243"
        what = f"DIFFERS{where} after the reference's {v['reference_merges']:,} merges: "
    else:
        what = f"DIFFERS{where} at merge {v['step']:,} of {v['reference_merges']:,}: "
    if v["candidate_pair"] is None or v["reference_pair"] is None:
        return what + v["explanation"], ""
    return (what + f"{name} chose {v['candidate_pair']} (true count {v['candidate_count']:,}), "
                   f"{reference_name} chose {v['reference_pair']} (true count {v['reference_count']:,})"), why


def reference_merges(merge_lists: dict[str, list], candidates: list[Candidate], data: Path | Corpus,
                     vocab_size: int, special_tokens: list[str], workers: int | None, end: int | None,
                     pattern: str = DEFAULT_PATTERN) -> tuple[str, list, str]:
    """``(name, merges, where from)``: with other runs to check, the fastest rung's merges from this run,
    else another rung's from this run (all agree).  A rung that ran alone would only be checked against
    itself: its reference, as that of your own trainers alone, is the fastest other rung's merges,
    computed once and cached in the data folder (:func:`reference_cache`).  ``data`` and ``end``:
    :func:`check_correctness`'s (a corpus's reference trains on the corpus itself)."""
    ran = [c for c in candidates if c.is_variant and c.label in merge_lists]
    if ran and len(merge_lists) > 1:
        chosen = next((c for c in ran if c.spec == best_variant()), ran[-1])
        return chosen.label, merge_lists[chosen.label], "this run"
    rung = reference_rung(besides=ran[0].spec if ran else None)
    alone = f"; {ran[0].label} ran alone: checked against another rung, not its own run" if ran else ""
    cache = reference_cache(data, vocab_size, special_tokens, end, rung, pattern)
    if cache.exists():
        return rung, decode_merges(json.loads(cache.read_text(encoding="utf-8"))), f"cached in {cache}{alone}"
    print(f"computing the reference merges with {rung} (once: they are cached for next time) ...", file=sys.stderr,
          flush=True)
    _, merges = train_bpe(data, vocab_size, special_tokens, variant=rung, workers=workers, limit=end, pattern=pattern)
    make_data_folder(cache.parent)
    write_text_atomic(cache, json.dumps(encode_merges(merges)))  # whole or not at all
    return rung, merges, f"computed now, cached in {cache}{alone}"


def reference_rung(besides: str | None = None) -> str:
    """The rung whose merges are the cached reference (v1's merges, made faster): the fastest (the
    default), or the fastest other than ``besides``, the rung being checked.

    >>> reference_rung() == best_variant() != reference_rung(besides=best_variant())
    True
    """
    order = [best_variant(), *DEFAULT_VARIANTS, *reversed(VARIANTS)]
    return next(name for name in order if name in VARIANTS and name != besides)


def reference_cache(data: Path | Corpus, vocab_size: int, special_tokens: list[str], end: int | None, rung: str,
                    pattern: str = DEFAULT_PATTERN) -> Path:
    """Where ``rung``'s merges on this file (as it is now), vocab, special tokens, end and pattern are cached
    (GPT-2's pattern keyed as before patterns were chosen, so its cached merges stay found).  A corpus's are
    keyed by its files as they are now (each one's path, size and time of change; a remote one's URL and size)
    and its text column, with the same settings (``end``: its limit)."""
    other = [] if pattern_name(pattern) == DEFAULT_PATTERN else [resolve_pattern(pattern)[1]]
    if isinstance(data, Corpus):
        what = [[_file_key(source.location) if not source.remote else [source.location, source.size, None]
                 for source in data.sources], data.text_column]
    else:
        what = _file_key(data)
    key = hashlib.sha256(json.dumps([*what, vocab_size, special_tokens, end, rung, *other]).encode()).hexdigest()[:16]
    return data_dir() / "reference-merges" / f"{key}.json"


def _file_key(path: str | Path) -> list:
    """A file as it is now: its resolved path, size and time of change (nanoseconds)."""
    path = Path(path)
    stat = path.stat()
    return [str(path.resolve()), stat.st_size, stat.st_mtime_ns]
