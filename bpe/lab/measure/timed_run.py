"""One timed run of a candidate in a fresh Python process (its peak memory its own): the parent's
:func:`run_once` and the child's :func:`child_main`.  A rung or a ``Merger`` goes through ``train_bpe``,
every stage timed; a CS336 ``train_bpe`` function is timed as a whole and its return value checked.
The bench, the estimates' probes and ``reproduce`` all time their runs here.
"""

from __future__ import annotations

import json
import pickle
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from bpe.errors import ArgumentError, BPEError
from bpe.lab.fresh_process import child_result, progress_stream, run_json_child, write_result
from bpe.lab.judge.candidates import (
    Candidate,
    CandidateFailed,
    call_candidate,
    check_trained,
    load_algorithm,
    load_function,
    resolve,
    vocab_problems,
)
from bpe.lab.judge.diagnose import encode_merges, merges_digest
from bpe.running.progress import Progress
from bpe.running.timer import StageTimer, peak_rss_bytes
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name
from bpe.training.observer import Observer

_CHILD_CODE = "from bpe.lab.measure.timed_run import child_main; child_main()"


def child_main() -> None:
    """Entry point of one timed run (settings as JSON on stdin, the result via ``write_result``)."""
    settings = json.load(sys.stdin)
    try:
        result = _train_function(settings) if settings["kind"] == "function" else _train_merger(settings)
    except BPEError as exc:  # an argument refused comes back in both wordings (ArgumentError)
        result = {"error": str(exc), **({"flagged": exc.flagged} if isinstance(exc, ArgumentError) else {})}
    except CandidateFailed as exc:
        result = {"failed": str(exc)}
    write_result(result)


def _train_merger(settings: dict) -> dict:
    """A rung or a ``Merger`` candidate through ``train_bpe``: every stage timed."""
    # Not at the top: a function candidate's child, whose peak memory is its own, never trains through it.
    from bpe.training.train import train_bpe  # noqa: PLC0415

    algorithm = load_algorithm(settings["kind"], settings["spec"])
    own_counter = getattr(algorithm, "own_counter", False)
    if settings.get("counts_out") and own_counter:
        algorithm = SimpleNamespace(Merger=algorithm.Merger,
                                    count_pretokens=_saving_counts(algorithm.count_pretokens, settings["counts_out"]))
    line = RunningLine(progress_stream(), settings.get("run_label") or f"{settings['label']}: ")
    observer = Observer(timer=StageTimer(), progress=line)

    def train():
        return train_bpe(settings["path"], settings["vocab_size"], settings["special_tokens"], variant=algorithm,
                         workers=settings["workers"], limit=settings.get("limit"), observer=observer,
                         pattern=settings.get("pattern", DEFAULT_PATTERN),
                         text_column=settings.get("text_column", "text"))

    with line:
        _, merges = train() if settings["kind"] == "variant" else call_candidate(settings["label"], train)
    # The merger's own facts (v7: shards, gathered_at) beside the processes that counted (a counter of the
    # candidate's own may start processes of its own: not known) and the timings, which win a clash.
    result = {**observer.summary, "workers": None if own_counter else observer.workers, **observer.timer.as_dict()}
    return _with_merges(result, merges, settings)


def _saving_counts(count_pretokens, out: str):
    """The candidate's own pre-tokenizer, also saving its counts for the diagnosis (first repeat only)."""
    def counting(*args, **kwargs):
        counts = count_pretokens(*args, **kwargs)
        with open(out, "wb") as f:
            pickle.dump(dict(counts), f, protocol=pickle.HIGHEST_PROTOCOL)
        return counts

    return counting


def _train_function(settings: dict) -> dict:
    """A CS336-style ``train_bpe`` function, timed as a whole; its return value checked."""
    label, specials = settings["label"], list(settings["special_tokens"])
    pattern = settings.get("pattern", DEFAULT_PATTERN)
    if pattern_name(pattern) != DEFAULT_PATTERN:  # the CS336 signature has no place for one
        raise CandidateFailed(f"{label}: a train_bpe function takes no pattern, so it cannot be run with --pattern "
                              f"{pattern}; give a file that defines Merger")
    fn = load_function(settings["spec"])
    started = time.perf_counter()
    with RunningLine(progress_stream(), settings.get("run_label") or f"{label}: ",
                     "a train_bpe function reports no merges", started):
        returned = call_candidate(label, fn, settings["path"], settings["vocab_size"], specials)
    total = time.perf_counter() - started
    peak_rss = peak_rss_bytes()
    vocab, merges = check_trained(returned, label)
    result = {"stages": None, "merge_phase": None, "total": total, "merges": len(merges), "workers": None,
              "checkpoints": [[len(merges), total]], "peak_rss": peak_rss,
              "vocab_problems": vocab_problems(vocab, merges, specials, settings["vocab_size"])}
    return _with_merges(result, merges, settings)


class RunningLine(Progress):
    """Every timed run's one live line on the terminal, a rung's as a student's: ``v1 run 1/3: running, 12 s
    (merging, 5 of 43)``, rewritten each ``interval`` seconds from a thread, so a run whose merges are slow
    (v1) or that reports none (a ``train_bpe`` function, ``note`` says so) still shows it is alive.  Used as
    a ``with`` block; with no ``stream`` (progress off) it shows nothing."""

    def __init__(self, stream, label: str, note: str = "", started: float | None = None, interval: float = 1.0):
        self.stream, self.label, self.note, self.interval = stream, label, note, interval
        self.started = time.perf_counter() if started is None else started
        self.phase, self.done, self.total = "", 0, 0
        self._lock, self._done = threading.Lock(), threading.Event()
        self._thread: threading.Thread | None = None

    def text(self) -> str:
        elapsed = time.perf_counter() - self.started
        if self.phase == "merging":
            detail = (f"merging, {self.done:,} of {self.total:,}" if self.done <= self.total
                      else f"merging, {self.done:,}, past the {self.total:,} asked for")
        elif self.phase:
            detail = f"{self.phase}, {100 * self.done / self.total:.0f}%" if self.total else self.phase
        else:
            detail = self.note
        return f"{self.label}running, {elapsed:.0f} s" + (f" ({detail})" if detail else "")

    def show(self) -> None:
        if self.stream is not None:
            with self._lock:
                self.stream.write(f"\r{self.text()}\033[K")
                self.stream.flush()

    def __enter__(self) -> RunningLine:
        if self.stream is not None:
            self.show()
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._done.wait(self.interval):
            self.show()

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            with self._lock:
                self.stream.write("\r\033[K")
                self.stream.flush()

    def start_bytes(self, total: int) -> None:
        self.phase, self.done, self.total = "pre-tokenizing", 0, total
        self.show()

    def on_bytes(self, done: int) -> None:
        self.done += done

    def start_merges(self, total: int) -> None:
        self.phase, self.done, self.total = "merging", 0, total
        self.show()

    def on_merge(self) -> None:
        self.done += 1


def _with_merges(result: dict, merges: list, settings: dict) -> dict:
    result["merges_sha256"] = merges_digest(merges)
    if settings.get("want_merges"):
        result["merge_list"] = encode_merges(merges)
    return result


def _printed_note(stdout: str) -> str:
    lines = stdout.strip().splitlines()
    first = lines[0] if len(lines[0]) <= 60 else lines[0][:57] + "..."
    return (f"printed {len(lines):,} line(s) to stdout (first: {first!r}); the bench caught it, but the "
            "printing is inside the timed run")


def run_once(path: Path | str, candidate: Candidate | str, vocab_size: int, special_tokens: list[str],
             workers: int | None, limit: int | None = None, want_merges: bool = False,
             counts_out: str | None = None, progress: bool = False, run_label: str = "",
             pattern: str = DEFAULT_PATTERN, text_column: str = "text") -> dict:
    """One fresh-process run of ``candidate`` (or a ``--variant`` entry) on the first ``limit`` bytes of
    ``path``: a text file, or for a rung or a ``Merger`` any corpus ``train_bpe`` reads (a folder, a glob, JSON
    lines or Parquet, the text in ``text_column``).  ``want_merges``: the result holds them (``merge_list``);
    ``counts_out``: a ``Merger``'s own counter saves its counts there; ``pattern``: the pre-tokenization
    pattern the run splits by.  A candidate's failure is ``{"failed": one line}``, a rung's a
    :class:`BPEError`.  ``progress``: the child's progress on stderr, led by ``run_label``."""
    if isinstance(candidate, str):
        candidate = resolve(candidate)
    settings = {"path": str(path), "kind": candidate.kind, "spec": candidate.spec, "label": candidate.label,
                "vocab_size": vocab_size, "special_tokens": special_tokens, "workers": workers, "limit": limit,
                "want_merges": want_merges, "counts_out": counts_out, "run_label": run_label, "pattern": pattern,
                "text_column": text_column}
    run = run_json_child(_CHILD_CODE, settings, progress=progress)
    if candidate.is_variant:
        result = child_result(run, f"bench run of {candidate.label}")
        if "error" in result:
            raise (ArgumentError(result["error"], result["flagged"]) if "flagged" in result
                   else BPEError(result["error"]))
    elif run.returncode != 0 or run.result is None:
        last = run.stderr.strip().splitlines()[-1:] or ["no message"]
        return {"failed": f"{candidate.label} exited with status {run.returncode} without a result ({last[0]})"}
    elif "error" in (result := run.result):
        return {"failed": f"{candidate.label}: {result['error']}"}
    if "failed" not in result and run.stdout.strip():
        result.setdefault("notes", []).append(_printed_note(run.stdout))
    return result


def write_prefix(path: Path, size: int, dest: Path) -> Path:
    """The first ``size`` bytes of ``path`` as the file ``dest`` (for a candidate that takes a whole file)."""
    with open(path, "rb") as f:
        dest.write_bytes(f.read(size))
    return dest
