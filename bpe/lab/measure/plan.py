"""The pipeline each measuring command describes: (1) the settings checked once: :func:`plan`, as ``train_bpe``'s
phase 1 checks them, finding where ``--limit`` ends (every run after it trusts the :class:`Plan`), and
:func:`check_repeat`; (2) the candidates run in rounds (``a b a b``: a drift of the machine then falls on all
alike), each run a fresh process: :func:`measure` (bench, reproduce, ablation), :func:`in_turns` with a command's
own run; (3) the runs summarized and compared by the one rule (:mod:`bpe.lab.measure.spread`); (4) the
command's own tables, and its JSON stamped and written (:mod:`bpe.lab.measure.publish`).
"""

from __future__ import annotations

import os
import pickle
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from bpe.corpus.corpus import Corpus
from bpe.corpus.sources import TEXT_COLUMN
from bpe.errors import BPEError
from bpe.lab.rungs import rung_with
from bpe.split.chunking import find_limit_end
from bpe.split.patterns import DEFAULT_PATTERN, cuts_of
from bpe.training.registry import VARIANTS
from bpe.training.train import check_arguments


@dataclass(frozen=True)
class Plan:
    """What every run of a measuring command reads and is asked for, checked once (:func:`plan`).

    The runs read ``path``, one plain text file; or, where ``data`` is given, the corpus it names (a folder, a
    glob or a list of text files, JSON lines, Parquet: :mod:`bpe.corpus.corpus`), which each run's
    ``train_bpe`` reads in place, the text in ``text_column``; ``path`` is then ``None`` and ``corpus`` the
    corpus opened, for what the bench reads of it itself (a sample, the reference, the peers)."""
    path: Path | None
    file_bytes: int  # the file's size; a corpus: its files' size on disk
    limit: int | None  # --limit in bytes
    end: int | None  # where the runs stop in the file; None: at its end (a corpus: train_bpe stops at the limit)
    vocab_size: int
    merges: int
    workers: int | None  # None: each run chooses
    special_tokens: list[str]
    pattern: str = DEFAULT_PATTERN  # the pre-tokenization pattern every run splits by
    data: str | None = None  # the corpus as train_bpe is given it: its path, glob or URL
    text_column: str = TEXT_COLUMN
    corpus: Corpus | None = field(default=None, compare=False, repr=False)
    # A corpus's bytes of text the runs train on (its documents', up to the limit): its files' size where they hold
    # only text, or as counted once it is read (bpe.lab.measure.estimate.corpus_sample); None: not known yet.
    text_bytes: int | None = None

    @property
    def corpus_bytes(self) -> int:
        """The bytes of text the runs train on (a corpus's not known yet: its files' size, up to the limit)."""
        if self.data is None:
            return self.file_bytes if self.end is None else self.end
        if self.text_bytes is not None:
            return self.text_bytes
        return self.file_bytes if self.limit is None else min(self.limit, self.file_bytes)

    @property
    def source(self) -> Path | str:
        """What each run's ``train_bpe`` is given: the file, or the corpus's path, glob or URL."""
        return self.path if self.data is None else self.data

    @property
    def reads(self) -> Path | Corpus:
        """What the bench reads itself beside the runs (the reference, the peers): the file, or the corpus."""
        return self.path if self.data is None else self.corpus

    @property
    def stop(self) -> int | None:
        """Where the runs stop: in the file, at ``end``; in a corpus, at ``limit`` bytes of text (a document's end)."""
        return self.end if self.data is None else self.limit


def plan(path: str | Path, vocab_size: int, special_tokens: Sequence[str], workers: int | None = None,
         limit: int | str | None = None, *, rough_end: bool = False, pattern: str = DEFAULT_PATTERN,
         text_column: str = TEXT_COLUMN, corpus: bool = False) -> Plan:
    """The settings checked by ``train_bpe``'s own phase 1, each failure one :class:`BPEError`.  ``--limit``
    ends at the next document boundary, or with ``rough_end`` at itself: close enough for an estimate.
    ``corpus``: ``path`` may name any corpus (:mod:`bpe.corpus.corpus`), which the runs read in place;
    else anything but one plain text file is refused in one line, for a command that reads a file."""
    # The rung plays no part in the other checks; the reference, plain Python, is always there to stand for the
    # candidates.
    checked = check_arguments(path, vocab_size, special_tokens, VARIANTS[rung_with("reference")], workers, "strict",
                              limit, pattern=pattern, text_column=text_column)
    limit, special_tokens = checked.limit, checked.special_tokens
    if checked.path is None:
        if not corpus:
            raise BPEError(f"{path} is not one plain text file ({checked.corpus.describe()}): this command reads "
                           "one; bpe train and bpe bench read a corpus as it is")
        text = checked.corpus.text_size
        text = text if text is None or limit is None else min(limit, text)
        return Plan(None, checked.file_bytes, limit, None, vocab_size, checked.num_merges, workers, special_tokens,
                    pattern, os.fspath(path), text_column, checked.corpus, text)
    path, size = Path(checked.path), checked.file_bytes
    end = None if limit is None else min(limit, size) if rough_end else find_limit_end(path, limit, special_tokens,
                                                                                        cuts=cuts_of(pattern))
    return Plan(path, size, limit, end, vocab_size, checked.num_merges, workers, special_tokens, pattern)


def check_repeat(repeat: int, json_out: str | Path | None = None) -> None:
    """``--repeat``, and where ``--json`` writes when given: the rest a measuring command checks before a run."""
    if repeat < 1:
        raise BPEError(f"--repeat must be at least 1, got {repeat}")
    if json_out:  # fail now, not after the runs
        from bpe.lab.measure.publish import check_json_path  # noqa: PLC0415 (off bpe train's path: see measure)

        check_json_path(json_out)


def in_turns(names: Sequence[str], repeat: int, run_one: Callable[[str, int], dict | None]) -> dict[str, list]:
    """``repeat`` rounds of ``run_one(name, round)`` for each of ``names`` in order, by name; a name whose
    run is ``None`` (it failed) drops out with all its runs.

    >>> in_turns(["a", "b"], 2, lambda name, i: None if (name, i) == ("b", 1) else f"{name}{i}")
    {'a': ['a0', 'a1']}
    """
    runs: dict[str, list] = {name: [] for name in names}
    for i in range(repeat):
        for name in list(runs):
            if (run := run_one(name, i)) is None:
                del runs[name]
            else:
                runs[name].append(run)
    return runs


def measure(tag: str, p: Plan, specs: Sequence, repeat: int, log, what: str = "", who: str = "", *,
            failed: dict | None = None, for_check: bool = False, progress: bool = False,
            lines: bool = False) -> dict[str, list]:
    """``repeat`` runs of each candidate of ``specs`` (``--variant`` entries, or candidates) on ``p`` in turns, by
    label, each a fresh process timing every stage (:func:`~bpe.lab.measure.timed_run.run_once`); a ``train_bpe``
    function, which takes a whole file, gets exactly the plan's bytes (of a corpus: its documents written once as
    one text file, and said on ``log``; a rung or a ``Merger`` reads the corpus in place).  ``for_check``: each
    first run also keeps its merges (``merge_list``) and a ``Merger``'s own counts (``own_counts``; saving them is
    timed, so only there).  With ``what``, said on ``log`` led by ``[tag]``: what the runs are on and ``who``
    (default: the labels), then each run; else with ``progress`` (a live line while it runs) or ``lines`` each
    run's one line on stderr as it ends, so that a log or a pipe hears from a long bench between its tables.  A
    failed run is a :class:`BPEError` naming ``tag``, or with ``failed`` its line goes there and on ``log``, and
    its candidate drops out."""
    # The runner and what it needs, imported here: ``bpe train`` imports this module (its estimate plans the
    # run) but runs no candidate, and these would weigh on its start-up and on the peak memory it reports.
    from bpe.corpus.batches import text_file_of  # noqa: PLC0415
    from bpe.lab.fresh_process import lab_tempdir  # noqa: PLC0415
    from bpe.lab.judge.candidates import resolve  # noqa: PLC0415
    from bpe.lab.measure.timed_run import run_once, write_prefix  # noqa: PLC0415
    from bpe.running.cores import measure_busy_cores  # noqa: PLC0415

    candidates = {c.label: c for c in (resolve(spec) if isinstance(spec, str) else spec for spec in specs)}
    if what:
        print(f"[{tag}] {what}, vocab {p.vocab_size:,}: {who or ', '.join(candidates)} interleaved, {repeat} "
              "repeat(s)", file=log, flush=True)
    functions = any(c.kind == "function" for c in candidates.values())
    with lab_tempdir("bench") as tmp, ExitStack() as stack:
        prefix = None  # the one file a train_bpe function reads, where it is not the plan's whole file
        if functions and p.data is not None:
            prefix = stack.enter_context(text_file_of(p.corpus, p.special_tokens, tmp, limit=p.limit,
                                                      pattern=p.pattern))
            print("a train_bpe function reads one file: the corpus written once as one text file for it "
                  f"({prefix.stat().st_size:,} bytes)", file=log, flush=True)
        elif functions and p.end is not None:
            prefix = write_prefix(p.path, p.end, Path(tmp) / p.path.name)
        counts = {label: Path(tmp) / f"counts-{n}.pickle" for n, label in enumerate(candidates)}

        def run_one(label: str, i: int) -> dict | None:
            candidate, first = candidates[label], for_check and i == 0
            whole = candidate.kind == "function" and prefix is not None
            counts_out = counts[label] if first and candidate.kind == "merger" else None
            busy = measure_busy_cores()  # the cores other processes keep busy as the run starts (50 ms, untimed)
            run = run_once(prefix if whole else p.source, candidate, p.vocab_size, p.special_tokens, p.workers,
                           None if whole else p.limit, want_merges=first,
                           counts_out=str(counts_out) if counts_out else None, progress=progress,
                           run_label=f"{label} run {i + 1}/{repeat}: ", pattern=p.pattern, text_column=p.text_column)
            run["busy_cores"] = busy
            if "failed" in run and failed is None:
                raise BPEError(f"[{tag}] {run['failed']}")
            if "failed" in run:
                failed[label] = run["failed"]
                print(f"\n{label}: {candidate.idea}\nFAILED: {run['failed']}", file=log)
                return None
            if counts_out is not None and counts_out.exists():
                run["own_counts"] = pickle.loads(counts_out.read_bytes())
            if what:
                print(f"  [{tag}] run {i + 1}/{repeat} {label}: total {run['total']:.2f} s, "
                      f"merge phase {run['merge_phase']:.2f} s", file=log, flush=True)
            elif progress or lines:
                print(f"  {label} run {i + 1}/{repeat}: {run['total']:.2f}s", file=sys.stderr, flush=True)
            return run

        return in_turns(list(candidates), repeat, run_one)
