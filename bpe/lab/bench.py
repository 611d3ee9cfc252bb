"""The bench harness: train one or more variants on the same data and print the stage table.

Each repeat runs in a fresh Python process so that peak memory is that run's alone and no run
inherits another's heap.  The figures are the :class:`bpe.training.timer.StageTimer` stages:

* **pretokenize**: read + split on special tokens + GPT-2 regex + count (serial or pooled);
* **pair count**: build the variant's structures (words, initial pair counts, index, heap);
* **select** / **update**: summed over all merges;
* **merge phase**: pair count + select + update;
* **peak RSS**: the training process, and the largest pool worker.

Ratios between variants are only meaningful within one run of this harness (same machine, same
moment); compare them, not absolute seconds across machines.

Your own trainer runs beside the ladder (``--variant v6,path/to/mine.py``; see
:mod:`bpe.lab.candidates`): a ``Merger`` file gets every stage, a CS336 ``train_bpe`` function its
total and peak memory.  A candidate that raises, exits or returns the wrong shape is one ``FAILED``
line.  After the tables, every run's merges are checked against the reference merges of the same
data, and a difference is explained from its first diverging merge (:mod:`bpe.lab.diagnose`).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

from bpe.data.datasets import data_label, resolve_data, shown_path
from bpe.defaults import SPECIAL_TOKENS
from bpe.errors import BPEError
from bpe.lab.candidates import (Candidate, CandidateFailed, call_candidate, check_trained, load_algorithm,
                                 load_function, parse_variants, resolve)
from bpe.lab.diagnose import Evidence, decode_merges, diagnose, encode_merges
from bpe.lab.estimate import (LONG_RUN_SECONDS, Estimate, Probe, corpus_shape, estimate_from_probe, estimate_run,
                               format_duration, refusal)
from bpe.lab.fresh_process import PROGRESS_FD_ENV, child_result, run_json_child, write_result
from bpe.lab.peers import peers_table
from bpe.lab.runinfo import machine_info, merges_digest
from bpe.training.registry import best_variant

_CHILD_CODE = "from bpe.lab.bench import child_main; child_main()"


def child_main() -> None:
    """Entry point of one timed run (settings as JSON on stdin, the result via ``write_result``)."""
    settings = json.load(sys.stdin)
    try:
        result = _train_function(settings) if settings["kind"] == "function" else _train_merger(settings)
    except BPEError as exc:
        result = {"error": str(exc)}
    except CandidateFailed as exc:
        result = {"failed": str(exc)}
    write_result(result)


def _progress_stream():
    """In the child: the parent's terminal for progress (see :func:`run_once`), else ``None``."""
    fd = os.environ.get(PROGRESS_FD_ENV)
    if not fd:
        return None
    try:
        return os.fdopen(int(fd), "w", buffering=1, closefd=False)
    except (OSError, ValueError):
        return None


def _train_merger(settings: dict) -> dict:
    """A ladder variant or a ``Merger`` candidate through ``train_bpe``: every stage timed."""
    from bpe.training.observer import Observer
    from bpe.training.progress import BarProgress
    from bpe.training.timer import StageTimer
    from bpe.training.train import train_bpe

    algorithm = load_algorithm(settings["kind"], settings["spec"])
    if settings.get("counts_out") and getattr(algorithm, "own_counter", False):
        algorithm = SimpleNamespace(Merger=algorithm.Merger,
                                    count_pretokens=_saving_counts(algorithm.count_pretokens, settings["counts_out"]))
    stream = _progress_stream()
    progress = BarProgress(stream, prefix=settings.get("run_label", "")) if stream is not None else False
    observer = Observer(timer=StageTimer(), progress=progress)

    def train():
        return train_bpe(settings["path"], settings["vocab_size"], settings["special_tokens"], variant=algorithm,
                         workers=settings["workers"], limit=settings.get("limit"), observer=observer)

    _, merges = train() if settings["kind"] == "variant" else call_candidate(settings["label"], train)
    # The merger's own facts (v7: gathered_at, where its shards came back) beside the timings, which win a clash.
    result = {**observer.summary, **observer.timer.as_dict()}
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
    from bpe.training.timer import peak_rss_bytes

    label, specials = settings["label"], list(settings["special_tokens"])
    fn = load_function(settings["spec"])
    started = time.perf_counter()
    with Ticker(_progress_stream(), settings.get("run_label") or f"{label}: ", started):
        returned = call_candidate(label, fn, settings["path"], settings["vocab_size"], specials)
    total = time.perf_counter() - started
    peak_rss = peak_rss_bytes()
    vocab, merges = check_trained(returned, label)
    result = {"stages": None, "merge_phase": None, "total": total, "merges": len(merges),
              "checkpoints": [[len(merges), total]], "peak_rss": peak_rss,
              "notes": vocab_notes(vocab, merges, specials)}
    return _with_merges(result, merges, settings)


class Ticker:
    """While a function candidate runs (it reports no merges): its elapsed time on the terminal every second."""

    INTERVAL = 1.0

    def __init__(self, stream, label: str, started: float) -> None:
        import threading

        self.stream, self.label, self.started = stream, label, started
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        while not self.done.wait(self.INTERVAL):
            elapsed = time.perf_counter() - self.started
            self.stream.write(f"\r{self.label}running, {elapsed:.0f} s (a train_bpe function reports no merges)")
            self.stream.flush()

    def __enter__(self):
        if self.stream is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.stream is not None:
            self.done.set()
            self.thread.join()
            self.stream.write("\r\033[K")
            self.stream.flush()


def vocab_notes(vocab: dict, merges: list, special_tokens: list[str]) -> list[str]:
    """What is off in a function candidate's vocab (CS336: the 256 bytes, the special tokens, one per merge)."""
    notes, tokens = [], set(vocab.values())
    expected = 256 + len(special_tokens) + len(merges)
    if len(vocab) != expected:
        notes.append(f"its vocab has {len(vocab):,} entries, not 256 bytes + {len(special_tokens)} special + "
                     f"{len(merges):,} merges = {expected:,}")
    missing = [t for t in special_tokens if t.encode("utf-8") not in tokens]
    if missing:
        notes.append(f"its vocab lacks the special token(s) {', '.join(missing)}")
    return notes


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


def terminal_fd(stream=None) -> int | None:
    """The file descriptor of ``stream`` (stderr) when it is one the child can write progress to."""
    stream = stream or sys.stderr
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def run_once(path: Path, candidate: Candidate | str, vocab_size: int, special_tokens: list[str],
             workers: int | None, limit: int | None = None, want_merges: bool = False,
             counts_out: str | None = None, progress: bool = False, run_label: str = "") -> dict:
    """One fresh-process run.  A candidate's failure comes back as ``{"failed": one line}``; a ladder
    variant's as a :class:`BPEError` (the harness's own fault or bad input).  With ``progress``, the
    child shows its bytes and merges (a function candidate: its elapsed time) on this process's stderr."""
    if isinstance(candidate, str):
        candidate = resolve(candidate)
    settings = {"path": str(path), "kind": candidate.kind, "spec": candidate.spec, "label": candidate.label,
                "vocab_size": vocab_size, "special_tokens": special_tokens, "workers": workers, "limit": limit,
                "want_merges": want_merges, "counts_out": counts_out, "run_label": run_label}
    run = run_json_child(_CHILD_CODE, settings, progress_fd=terminal_fd() if progress else None)
    if candidate.is_variant:
        result = child_result(run, f"bench run of {candidate.label}")
        if "error" in result:
            raise BPEError(result["error"])
    else:
        result = run.result
        if run.returncode != 0 or result is None:
            last = run.stderr.strip().splitlines()[-1:] or ["no message"]
            return {"failed": f"{candidate.label} exited with status {run.returncode} without a result ({last[0]})"}
        if "error" in result:
            return {"failed": f"{candidate.label}: {result['error']}"}
    if "failed" not in result and run.stdout.strip():
        result.setdefault("notes", []).append(_printed_note(run.stdout))
    return result


#: A candidate is timed on about this many bytes of the data (a prefix up to a document boundary) ...
PROBE_BYTES = 250_000
#: ... making this many merges, to estimate it before the real runs (:func:`probe_candidate`).
PROBE_MERGES = 30


def probe_candidate(candidate: Candidate, path: Path, special_tokens: list[str], workers: int | None,
                    end: int | None, tmp: Path) -> Probe | None:
    """Time a candidate on a prefix of the data, for :func:`bpe.lab.estimate.estimate_from_probe`.

    A ``Merger`` candidate's stages split the fixed part from the merges in one run; a function is
    run twice, with no merge and with :data:`PROBE_MERGES`, and the difference is the merges' cost.
    ``None`` when the candidate fails there (it is then estimated as v1, the slowest rung).
    """
    from bpe.training.chunking import find_limit_end

    cut = find_limit_end(path, min(PROBE_BYTES, end if end is not None else path.stat().st_size), special_tokens)
    prefix = tmp / f"probe-{candidate.label}{path.suffix}"
    with open(path, "rb") as f:
        prefix.write_bytes(f.read(cut))
    base = 256 + len(special_tokens)
    if candidate.kind == "function":
        runs = [run_once(prefix, candidate, base + merges, special_tokens, workers) for merges in (0, PROBE_MERGES)]
        if any("failed" in run for run in runs):
            return None
        fixed = runs[0]["total"]
        per_merge = max(0.0, runs[1]["total"] - fixed) / max(1, runs[1]["merges"])
        peak = runs[1]["peak_rss"]["self"]
    else:
        run = run_once(prefix, candidate, base + PROBE_MERGES, special_tokens, workers)
        if "failed" in run:
            return None
        stages = run["stages"]
        fixed = stages["pretokenize"] + stages["pair_count"]
        per_merge = (stages["select"] + stages["update"]) / max(1, run["merges"])
        peak = run["peak_rss"]["self"]
    shape = corpus_shape(prefix, special_tokens)
    return Probe(cut, shape.distinct_length, fixed, per_merge, peak)


def probe_candidates(candidates: list[Candidate], path: Path, special_tokens: list[str], workers: int | None,
                     end: int | None = None, log=None) -> dict[str, Probe | None]:
    """Each of your own trainers (not the ladder's) timed on a prefix of the data (:func:`probe_candidate`)."""
    probes = {}
    with tempfile.TemporaryDirectory(prefix="bpe-probe-") as tmp:
        for c in candidates:
            if not c.is_variant:
                if log is not None:
                    print(f"timing {c.label} on a prefix of the data to estimate it ...", file=log, flush=True)
                probes[c.label] = probe_candidate(c, path, special_tokens, workers, end, Path(tmp))
    return probes


def candidate_estimate(candidate: Candidate, probes: dict[str, Probe | None], shape, num_merges: int,
                       workers: int | None) -> Estimate:
    """A ladder variant's estimate from its model; your own trainer's from its probe (failed: as v1)."""
    if candidate.is_variant:
        return replace(estimate_run(candidate.spec, shape, num_merges, workers), variant=candidate.label)
    probe = probes.get(candidate.label)
    if probe is None:  # it failed on the prefix: guarded as the slowest rung; its own run will say why
        return replace(estimate_run("v1", shape, num_merges, workers), variant=candidate.label,
                       basis="its probe failed: estimated as v1")
    return estimate_from_probe(candidate.label, probe, shape, num_merges)


def estimate_candidates(candidates: list[Candidate], path: Path, special_tokens: list[str], shape,
                        num_merges: int, workers: int | None, end: int | None = None,
                        log=None) -> dict[str, Estimate]:
    """Every candidate's estimate: a ladder variant's from its model, your own trainer's from a probe."""
    probes = probe_candidates(candidates, path, special_tokens, workers, end, log)
    return {c.label: candidate_estimate(c, probes, shape, num_merges, workers) for c in candidates}


def median_run(runs: list[dict]) -> dict:
    """Per-figure medians over the repeats (each figure's own median); a function candidate has no stages."""
    def med(get):
        return statistics.median(get(r) for r in runs)

    timed = runs[0]["stages"] is not None
    checkpoints = [
        [merges, statistics.median(r["checkpoints"][i][1] for r in runs)]
        for i, (merges, _) in enumerate(runs[0]["checkpoints"])
    ]
    return {
        "stages": {name: med(lambda r, n=name: r["stages"][n]) for name in runs[0]["stages"]} if timed else None,
        "merge_phase": med(lambda r: r["merge_phase"]) if timed else None,
        "total": med(lambda r: r["total"]),
        "merges": runs[0]["merges"],
        "checkpoints": checkpoints,
        "peak_rss": {k: med(lambda r, k=k: r["peak_rss"][k]) for k in runs[0]["peak_rss"]},
        "merges_sha256": runs[0]["merges_sha256"],
    }


def _asked_all(spec: str | list[str] | None) -> bool:
    specs = [spec] if isinstance(spec, str) else spec or []
    return any(entry.strip() == "all" for s in specs for entry in s.split(","))


@dataclass(frozen=True)
class BenchSettings:
    """What one ``bench`` or ``report`` run was asked for, built once (by the CLI) and passed down.

    ``variants``: ``--variant`` entries (see :mod:`bpe.lab.candidates`); ``None`` is the default
    rung for ``bench`` and the whole ladder for ``report``.  ``vocab_size`` ``None``: the data set's
    default.  The last three fields are the report's alone.
    """
    variants: str | list[str] | None = None
    data: str | None = None
    vocab_size: int | None = None
    repeat: int = 1
    special_tokens: list[str] = field(default_factory=lambda: list(SPECIAL_TOKENS))
    workers: int | None = None
    limit: int | str | None = None
    peers: bool | str = False
    force: bool = False
    progress: bool = False
    budget: float = LONG_RUN_SECONDS
    busy: int = 0
    json_out: str | None = None
    v1_vocab_size: int = 300
    reduced_vocab_size: int = 2000
    scaling: bool = True


def run_bench(settings: BenchSettings, out=None) -> dict:
    """Bench the variants; a variant estimated past ``settings.budget`` seconds is skipped with a note in
    ``all``, refused otherwise, unless ``force``.  ``busy`` processes spin on a core meanwhile
    (:mod:`bpe.lab.busy`).  The tables go to ``out`` (default stdout)."""
    from bpe.data.datasets import default_vocab_size
    from bpe.lab.busy import spin_on_cores
    from bpe.training.pretokenize import check_input_file
    from bpe.training.train import check_special_tokens, check_vocab_size, check_workers

    s = settings
    variant_spec, data, repeat, special_tokens, workers = s.variants, s.data, s.repeat, s.special_tokens, s.workers
    vocab_size = s.vocab_size or default_vocab_size(data)
    limit, peers, force, progress, budget, busy, json_out = (s.limit, s.peers, s.force, s.progress, s.budget,
                                                              s.busy, s.json_out)
    out = out or sys.stdout
    check_workers(workers)
    path = resolve_data(data)
    check_special_tokens(special_tokens)
    num_merges = check_vocab_size(vocab_size, special_tokens)
    if repeat < 1:
        raise BPEError(f"--repeat must be at least 1, got {repeat}")
    candidates = parse_variants(variant_spec)
    if json_out:  # fail now, not after the whole bench
        check_json_path(json_out)
    if peers:
        peer_names(peers)  # an unknown peer name fails now too
    path = check_input_file(path)  # the one check of the path here: what follows trusts it and its size
    file_bytes = path.stat().st_size
    end = None
    if limit is not None:  # the subset's real end, so the table and JSON show the bytes trained on
        from bpe.training.sizes import parse_size
        from bpe.training.chunking import find_limit_end

        limit = parse_size(limit)
        corpus_bytes = end = find_limit_end(path, limit, special_tokens)
    else:
        corpus_bytes = file_bytes
    shape = corpus_shape(path, special_tokens, corpus_bytes)
    # your own trainer is timed on a prefix and scaled up (bpe/lab/estimate.py: estimate_from_probe)
    estimates = estimate_candidates(candidates, path, special_tokens, shape, num_merges, workers, end,
                                    log=sys.stderr if progress else None)
    slow = [e for e in estimates.values() if e.seconds * repeat > budget]
    if slow and not force and not _asked_all(variant_spec):
        raise BPEError(refusal(slow, f"bench of {', '.join(e.variant for e in slow)} on {data_label(data)} "
                                     f"at vocab {vocab_size:,} x {repeat} repeat(s)", budget))
    report = {
        "machine": machine_info(),
        "settings": {"data": data_label(data), "path": shown_path(path), "corpus_bytes": corpus_bytes,
                     "file_bytes": file_bytes, "limit": limit,
                     "vocab_size": vocab_size, "num_merges": num_merges, "special_tokens": special_tokens,
                     "workers": workers or os.cpu_count(), "repeat": repeat, "busy": busy},
        "variants": {},
        "skipped": {},
        "failed": {},
    }
    report["estimates"] = {name: {"seconds": e.seconds, "peak_bytes": e.peak_bytes} for name, e in estimates.items()}
    print(header(report), file=out)
    print("estimate per run: " + ", ".join(e.describe() for e in estimates.values()), file=out)
    merge_lists: dict[str, list] = {}
    own_counts: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bpe-bench-") as tmp, spin_on_cores(busy):
        subset = None
        if end is not None and any(c.kind == "function" for c in candidates):
            subset = Path(tmp) / path.name  # a function takes a file, not a limit: give it exactly those bytes
            with open(path, "rb") as f:
                subset.write_bytes(f.read(end))
        for candidate in candidates:
            name = candidate.label
            if not force and estimates[name] in slow:
                reason = (f"{name} skipped: estimated {estimates[name].describe()} per run, past the "
                          f"{format_duration(budget)} budget; run it alone with --variant {candidate.spec} --force")
                report["skipped"][name] = reason
                print(reason, file=out)
                continue
            as_function = candidate.kind == "function" and subset is not None
            counts_out = str(Path(tmp) / f"counts-{len(own_counts)}.pickle") if candidate.kind == "merger" else None
            runs = []
            for i in range(repeat):
                run = run_once(subset if as_function else path, candidate, vocab_size, special_tokens, workers,
                               None if as_function else limit, want_merges=i == 0,
                               counts_out=counts_out if i == 0 else None, progress=progress,
                               run_label=f"{name} run {i + 1}/{repeat}: ")
                if "failed" in run:
                    report["failed"][name] = run["failed"]
                    print(f"\n{name}: {candidate.idea}\nFAILED: {run['failed']}", file=out)
                    break
                if i == 0:
                    merge_lists[name] = decode_merges(run.pop("merge_list"))
                runs.append(run)
                if progress:
                    print(f"  {name} run {i + 1}/{repeat}: {run['total']:.2f}s", file=sys.stderr, flush=True)
            if name in report["failed"]:
                continue
            if counts_out and Path(counts_out).exists():
                with open(counts_out, "rb") as f:
                    own_counts[name] = pickle.load(f)
            notes = runs[0].get("notes", [])
            from bpe.training.train import stopped_early

            stopped = stopped_early(runs[0]["merges"], num_merges, corpus_bytes)
            if stopped:  # the header's merge count was what was asked for; say what the text allowed
                notes = [*notes, stopped.replace("stopped early:", "stopped early,", 1)]
            report["variants"][name] = {"kind": candidate.kind, "spec": candidate.spec, "idea": candidate.idea,
                                        "runs": runs, "median": median_run(runs), "notes": notes}
            print(variant_table(name, report["variants"][name]), file=out)
    if len(report["variants"]) > 1:
        print(comparison_table(report), file=out)
    ladder = {n: v for n, v in report["variants"].items() if v["kind"] == "variant"}
    digests = {v["median"]["merges_sha256"] for v in ladder.values()}
    report["merges_identical"] = len(digests) <= 1  # the ladder variants agree (candidates: see verdicts)
    if len(digests) > 1:
        print("WARNING: variants produced different merges: "
              + ", ".join(f"{n}={v['median']['merges_sha256']}" for n, v in ladder.items()), file=out)
    if merge_lists:
        report["verdicts"], report["reference"] = check_correctness(
            merge_lists, own_counts, candidates, path, vocab_size, special_tokens, workers, end, out,
            report["failed"])
    if peers:
        report["peers"] = run_peers(path, vocab_size, special_tokens, workers, repeat, peer_names(peers))
        print(peers_table(report["peers"], report["variants"]), file=out)
    if json_out:
        write_json_atomic(Path(json_out), report)
        print(f"\nwrote {json_out}", file=out)
    return report


def all_correct(report: dict) -> bool:
    """No run failed and every verdict is ``identical``."""
    return not report["failed"] and all(v["verdict"] == "identical" for v in report.get("verdicts", {}).values())


def check_correctness(merge_lists: dict[str, list], own_counts: dict[str, dict], candidates: list[Candidate],
                      path: Path, vocab_size: int, special_tokens: list[str], workers: int | None, end: int | None,
                      out, failed: dict | None = None) -> tuple[dict, dict]:
    """Every run's merges against the reference merges of the same data; prints and returns the verdicts."""
    from bpe.training.parallel import count_file_parallel
    from bpe.training.pretokenize import decode_utf8

    reference_name, reference, source = reference_merges(merge_lists, candidates, path, vocab_size,
                                                         special_tokens, workers, end)

    def load_text() -> str:
        with open(path, "rb") as f:
            return decode_utf8(f.read() if end is None else f.read(end), errors="replace")

    evidence = Evidence(lambda: count_file_parallel(path, special_tokens, workers=workers, end=end), load_text,
                        special_tokens)
    verdicts = {name: diagnose(merges, reference, evidence, name, reference_name, own_counts.get(name))
                for name, merges in merge_lists.items()}
    print(f"\ncorrectness: each run's merges against {reference_name}'s ({source})", file=out)
    failed = failed or {}
    width = max(12, *(len(name) + 2 for name in [*verdicts, *failed]))
    for name, verdict in verdicts.items():
        print(verdict_text(name, verdict, reference_name, width), file=out)
    for name in failed:
        print(f"  {name:<{width}}not checked: it failed (above)", file=out)
    return verdicts, {"name": reference_name, "source": source, "merges": len(reference),
                      "merges_sha256": merges_digest(reference)}


def verdict_text(name: str, verdict: dict, reference_name: str, width: int = 12) -> str:
    """One line for an identical run; for a divergence, the step, both pairs and counts, and the cause."""
    if verdict["verdict"] == "identical":
        return f"  {name:<{width}}identical ({verdict['merges']:,} merges)"
    v, indent = verdict, " " * (width + 2)
    if v["step"] is None:  # the merges agree, its own pre-token counts do not
        return (f"  {name:<{width}}DIFFERS in its pre-token counts\n"
                + indent + ("likely cause: " if v["cause"] else "") + v["explanation"])
    head = f"  {name:<{width}}DIFFERS at merge {v['step']:,} of {v['reference_merges']:,}: "
    if v["candidate_pair"] is None or v["reference_pair"] is None:
        return head + v["explanation"]
    lines = [head + f"{name} chose {v['candidate_pair']} (true count {v['candidate_count']:,}), "
                    f"{reference_name} chose {v['reference_pair']} (true count {v['reference_count']:,})"]
    lines.append(indent + ("likely cause: " if v["cause"] else "") + v["explanation"])
    return "\n".join(lines)


def reference_merges(merge_lists: dict[str, list], candidates: list[Candidate], path: Path, vocab_size: int,
                     special_tokens: list[str], workers: int | None, end: int | None) -> tuple[str, list, str]:
    """``(name, merges, where from)``: the fastest variant's merges from this run, else another ladder
    variant's from this run (all agree), else the fastest variant's computed once and cached in ``data/``."""
    ran = [c for c in candidates if c.is_variant and c.label in merge_lists]
    best = best_variant()
    if ran:
        chosen = next((c for c in ran if c.spec == best), ran[-1])
        return chosen.label, merge_lists[chosen.label], "this run"
    from bpe.data.datasets import data_dir
    from bpe.training.train import train_bpe

    stat = path.stat()
    key = hashlib.sha256(json.dumps([str(path.resolve()), stat.st_size, stat.st_mtime_ns, vocab_size,
                                     special_tokens, end, best]).encode()).hexdigest()[:16]
    cache = data_dir() / "reference-merges" / f"{key}.json"
    if cache.exists():
        return best, decode_merges(json.loads(cache.read_text(encoding="utf-8"))), f"cached in {cache}"
    print(f"computing the reference merges with {best} (once: they are cached for next time) ...", file=sys.stderr,
          flush=True)
    _, merges = train_bpe(path, vocab_size, special_tokens, variant=best, workers=workers, limit=end)
    cache.parent.mkdir(parents=True, exist_ok=True)
    from bpe.io.outputs import write_text_atomic

    write_text_atomic(cache, json.dumps(encode_merges(merges)))
    return best, merges, f"computed now, cached in {cache}"


def peer_names(peers: bool | str) -> list[str]:
    """``True`` or ``"all"``: every peer; else a comma list of names from :data:`bpe.lab.peers.PEERS`.

    >>> peer_names("rustbpe,tokenizers-file")
    ['rustbpe', 'tokenizers-file']
    """
    from bpe.lab.peers import PEERS

    if peers is True or peers == "all":
        return list(PEERS)
    names = [name.strip() for name in str(peers).split(",") if name.strip()]
    unknown = [name for name in names if name not in PEERS]
    if unknown or not names:
        raise BPEError(f"unknown peer {unknown[0] if unknown else peers!r}; peers: {', '.join(PEERS)} (or all)")
    return names


def run_peers(path: Path, vocab_size: int, special_tokens: list[str], workers: int | None, repeat: int,
              names: list[str] | None = None) -> dict:
    """Each peer's median over ``repeat`` fresh-process runs (see :mod:`bpe.lab.peers`)."""
    from bpe.lab.peers import PEERS, run_peer

    results = {}
    for name in names or PEERS:
        runs = []
        for _ in range(repeat):
            run = run_peer(name, path, vocab_size, special_tokens, workers)
            if "total" not in run:
                break
            runs.append(run)
        if not runs:
            results[name] = run
            continue
        results[name] = {"total": statistics.median(r["total"] for r in runs), "merges": runs[0]["merges"],
                         "peak_rss": statistics.median(r["peak_rss"] for r in runs), "runs": runs}
    return results


def check_json_path(json_out: str | os.PathLike) -> Path:
    """Fail before the bench when ``--json`` cannot be written (a directory, an unwritable place)."""
    from bpe.io.outputs import check_writable_dir

    path = Path(json_out)
    if path.is_dir():
        raise BPEError(f"--json {path} is a directory; give a file name such as {path / 'bench.json'}")
    check_writable_dir(path.parent if str(path.parent) else Path("."))
    return path


def write_json_atomic(path: Path, data: dict) -> None:
    from bpe.io.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(data, indent=2) + "\n")


def format_mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def header(report: dict) -> str:
    m, s = report["machine"], report["settings"]
    subset = f" of {s['file_bytes']:,}, --limit {s['limit']:,}" if s.get("limit") else ""
    busy_note = f", busy {s['busy']} (processes spinning meanwhile)" if s.get("busy") else ""
    return (f"bpe-lab bench: {s['data']} ({s['corpus_bytes']:,} bytes{subset}), vocab {s['vocab_size']:,} "
            f"({s['num_merges']:,} merges), special {s['special_tokens']}, workers {s['workers']}, "
            f"repeat {s['repeat']}{busy_note}\n"
            f"machine: {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}, commit {m['git_commit']}")


_COLUMNS = ("pretokenize", "pair count", "select", "update", "merge phase", "total", "peak RSS", "worker RSS")


def _seconds(value: float | None, width: int) -> str:
    """``1.234s`` right-aligned, or ``-`` for a figure a run does not have (a function candidate's stages)."""
    return f"{value:>{width - 1}.3f}s" if value is not None else f"{'-':>{width}}"


def _row(label: str, r: dict) -> str:
    st = r["stages"] or {}
    cells = [st.get("pretokenize"), st.get("pair_count"), st.get("select"), st.get("update"), r["merge_phase"],
             r["total"]]
    return (f"{label:<8}" + "".join(_seconds(c, 13) for c in cells)
            + f"{format_mb(r['peak_rss']['self']):>13}{format_mb(r['peak_rss']['children']):>13}")


def variant_table(name: str, entry: dict) -> str:
    """One run's table: every repeat, the median, the checkpoints, the merges' digest, and any notes."""
    runs = entry["runs"]
    lines = [f"\n{name}: {entry['idea']}",
             f"{'run':<8}" + "".join(f"{c:>13}" for c in _COLUMNS)]
    lines += [_row(str(i + 1), r) for i, r in enumerate(runs)]
    med = median_run(runs)
    if len(runs) > 1:
        lines.append(_row("median", med))
    if med["stages"] is None:
        lines.append("(a train_bpe function is timed as a whole: no stages, no checkpoints)")
    else:
        step = max(1, len(med["checkpoints"]) // 10)  # about ten of the checkpoints; --json has them all
        shown = [point for point in med["checkpoints"][step - 1::step] if point[0] > 0]
        if med["checkpoints"] and med["checkpoints"][-1][0] > 0 and shown[-1:] != med["checkpoints"][-1:]:
            shown.append(med["checkpoints"][-1])
        points = [f"{m:,}: {t:.2f}s" for m, t in shown]
        if points:
            lines.append("elapsed at merge   " + ", ".join(points))
    lines.append(f"merges: {med['merges']:,} (sha256 {med['merges_sha256']})")
    lines += [f"note: {name} {note}" for note in entry.get("notes", [])]
    return "\n".join(lines)


def ratio_text(before: list[float], after: list[float]) -> str:
    """``2.10x`` when the two sets of runs stand clear of each other (or there is one run of each),
    ``within spread`` when they overlap: a ratio inside the run-to-run spread is no gain.

    >>> ratio_text([2.0, 2.2], [1.0, 1.1]), ratio_text([1.0, 1.3], [1.1, 1.2]), ratio_text([3.0], [1.0])
    ('2.00x', 'within spread', '3.00x')
    """
    ratio = statistics.median(before) / statistics.median(after)
    if len(before) > 1 and len(after) > 1 and not (min(before) > max(after) or max(before) < min(after)):
        return "within spread"
    return f"{ratio:.2f}x"


def _totals(entry: dict) -> list[float]:
    return [r["total"] for r in entry["runs"]]


def comparison_rows(report: dict) -> list[tuple[str, dict, str, str]]:
    """``(variant, medians, speed-up vs the previous variant, vs the first)`` in run order; a speed-up
    whose runs overlap the other variant's is ``within spread``."""
    names = list(report["variants"])
    first = report["variants"][names[0]]
    rows, prev = [], None
    for name in names:
        entry = report["variants"][name]
        vs_prev = ratio_text(_totals(prev), _totals(entry)) if prev else "-"
        vs_first = ratio_text(_totals(first), _totals(entry)) if entry is not first else "-"
        rows.append((name, entry["median"], vs_prev, vs_first))
        prev = entry
    return rows


def spread_text(entry: dict) -> str:
    """The range of a variant's total over its runs: ``1.20-1.45`` (empty for one run)."""
    totals = _totals(entry)
    return f"{min(totals):.2f}-{max(totals):.2f}" if len(totals) > 1 else ""


def comparison_table(report: dict) -> str:
    first_name = next(iter(report["variants"]))
    width = max(8, *(len(name) + 1 for name in report["variants"]))
    last = max(15, len(first_name) + 4)  # the "vs <first>" column fits its name
    lines = ["\ncomparison (medians, the total's min-max over the runs; ratios are times, x = faster than; "
             "'within spread': the two variants' runs overlap)",
             f"{'variant':<{width}}{'pretokenize':>13}{'merge phase':>13}{'select':>12}{'update':>12}{'total':>10}"
             f"{'min-max':>14}{'peak RSS':>12}{'vs prev':>15}{'vs ' + first_name:>{last}}"]
    for name, med, vs_prev, vs_first in comparison_rows(report):
        st = med["stages"] or {}
        lines.append(f"{name:<{width}}{_seconds(st.get('pretokenize'), 13)}{_seconds(med['merge_phase'], 13)}"
                     f"{_seconds(st.get('select'), 12)}{_seconds(st.get('update'), 12)}{_seconds(med['total'], 10)}"
                     f"{spread_text(report['variants'][name]):>14}"
                     f"{format_mb(med['peak_rss']['self']):>12}{vs_prev:>15}{vs_first:>{last}}")
    return "\n".join(lines)
