"""The cluster bench (``python -m tools.cluster_bench``, docs/scaling-out.md): counting a corpus cut
into shards through a 2-worker Dask ``LocalCluster`` against the local path, on one machine, in one process.

What it times, in turns (``a b c a b c ...``, so a drift of the machine falls on all three alike), after one
untimed round that warms the workers (their imports, v9's class tables) and checks that the three give the
same counts:

* **file**: the rung's ``count_pretokens`` on the one text file the shards were cut from (v9: its threads);
* **shards, local**: the shards as a corpus, counted in this process (:func:`bpe.counting.documents.count_documents`);
* **shards, cluster**: the same corpus counted on the cluster (:func:`bpe.corpus.cluster.count_on_cluster`),
  the cluster started once beforehand, in a process of its own as ``--cluster local`` starts it
  (:func:`bpe.corpus.scheduler.local_cluster`; its start is timed apart), each of its runs taken apart by
  Dask's task stream (:func:`task_profile`: the count and sum tasks' seconds, the time outside any task).

Then the figures the on-paper section of docs/scaling-out.md extrapolates from, measured on the same text:
the distinct pre-tokens of a quarter of the shards and of all of them, the counts' bytes per distinct
pre-token (what travels), the merge state's bytes per distinct pre-token once built (the rung's ``Merger``),
and the share of distinct pre-tokens counted once (what ``--min-count 2`` drops); with the committed run of
v10 on 11.9 GB of the same generator (:data:`AT_SCALE`), Heaps' exponent from 100 MB to there, the merge
state per distinct pre-token at its end, and the whole run's peak memory per distinct pre-token (the state
with what holds it while it is built, and the counts beside it); and, from those, what a cluster of N
machines does with OpenWebText, 100 GB and 1 TB, each worker thread counting at the rate a cluster worker
counted here.
``--publish`` writes the committed ``docs/cluster-bench.json`` (from a clean tree).  ``--reproject FILE``
times nothing: it makes the on-paper figures of a run already written again, from its own measurements
(its seconds, its counts) and the committed 11.9 GB run, with the rules here now; the file keeps the
commit it was measured at, and records the one that projected it (``projected_at``).

Example: ``python -m tools.cluster_bench --data webtext-synth-20MB --repeat 3``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from bpe.corpus.cluster import COUNT_TASK, SUM_TASK, TASKS_PER_THREAD, count_on_cluster
from bpe.corpus.corpus import Corpus, open_corpus
from bpe.corpus.scheduler import distributed, local_cluster
from bpe.counting.documents import count_documents, counts_bytes
from bpe.counting.parts import parts_of
from bpe.data.datasets import REPO_ROOT, data_label, resolve_data, shown_path
from bpe.defaults import SPECIAL_TOKEN
from bpe.errors import BPEError
from bpe.lab.fresh_process import lab_tempdir
from bpe.lab.measure.publish import output_path, stamp, write_json_atomic
from bpe.lab.measure.spread import compare, summary
from bpe.training.registry import best_variant, get_variant
from tools.command import tool_main

#: What the bench counts when given nothing: 100 MB of web-like text, cut into 16 shards.
DATA = "webtext-synth"
SHARDS = 16
#: The corpora the on-paper section sizes: CS336's OpenWebText sample, 100 GB and a terabyte.
CORPORA = {"OpenWebText (11.9 GB)": 11_900_000_000, "100 GB": 10**11, "1 TB": 10**12}
#: The clusters it sizes them for: machines of 16 cores, one worker thread a core.
MACHINES = (1, 4, 16, 64)
CORES_PER_MACHINE = 16
PUBLISHED = Path("docs/cluster-bench.json")
#: The committed run of the default rung (v10) on 11.9 GB of webtext-synth (docs/v10.md): the same generator's
#: distinct pre-tokens and merge state at OpenWebText's size, the far end of the Heaps' law the projections use.
AT_SCALE = Path("docs/v10-web-11.9GB.json")


def cut_into_shards(path: Path, folder: Path, shards: int) -> list[Path]:
    """``path``'s documents in ``shards`` text files of about equal size, cut where a separator starts (the
    separator itself left out: each file ends a document, as the corpus reader reads a file)."""
    data, separator = path.read_bytes(), SPECIAL_TOKEN.encode()
    written, start = [], 0
    for i in range(shards):
        stop = len(data) if i == shards - 1 else data.find(separator, max(start, len(data) * (i + 1) // shards))
        stop = len(data) if stop < 0 else stop
        shard = folder / f"part-{i:02d}.txt"
        shard.write_bytes(data[start:stop])
        written.append(shard)
        start = min(len(data), stop + len(separator))
    return written


def run_cluster_bench(data: str | None = None, variant: str | None = None, repeat: int = 5, shards: int = SHARDS,
                      out: str | None = None, publish: bool = False, log=None) -> dict:
    """The bench; its result, written to ``out`` (or, with ``publish``, the committed file)."""
    log = log or sys.stdout
    target = output_path(out, Path("out/cluster-bench.json"), PUBLISHED, publish,
                         "python -m tools.cluster_bench --publish")
    if repeat < 1:
        raise BPEError(f"--repeat must be at least 1, got {repeat}")
    dist = distributed()
    path = Path(resolve_data(data or DATA))
    name = variant or best_variant()
    rung = get_variant(name)
    result = {**stamp(), "settings": {"data": data_label(data or DATA), "path": shown_path(path),
                                      "bytes": path.stat().st_size, "shards": shards, "variant": name,
                                      "repeat": repeat, "workers": 2, "threads_per_worker": 1,
                                      "local_workers": 2}}
    tokens = [SPECIAL_TOKEN]
    with lab_tempdir("cluster-bench") as folder:
        corpus = open_corpus(cut_into_shards(path, Path(folder), shards))
        started = time.perf_counter()
        with local_cluster(2) as address, dist.Client(address) as client:
            client.wait_for_workers(2)
            result["cluster_start_seconds"] = time.perf_counter() - started
            runs = {
                "file": lambda: rung.count_pretokens(path, tokens, workers=2),
                "shards_local": lambda: count_documents(rung, corpus, tokens, workers=2)[0],
                "shards_cluster": lambda: count_on_cluster(client, parts_of(rung), corpus, tokens,
                                                           raw=counts_bytes(rung))[0],
            }
            print(f"[cluster-bench] {name} on {path} ({path.stat().st_size:,} bytes, {shards} shards): "
                  f"file, shards local, shards on a 2-worker LocalCluster, interleaved, {repeat} repeat(s)",
                  file=log, flush=True)
            checked = {label: count() for label, count in runs.items()}  # the untimed round: warm, and checked
            same = {label: dict(counts.items()) for label, counts in checked.items()}
            if not same["file"] == same["shards_local"] == same["shards_cluster"]:
                raise BPEError("the cluster's counts differ from the local path's: a bug, please report it")
            result["distinct_pretokens"], result["pretokens"] = len(checked["file"]), checked["file"].total()
            result["on_paper"] = paper_figures(rung, checked["file"], same["file"], corpus, tokens)
            del same
            for counts in checked.values():
                counts.close()
            seconds: dict[str, list[float]] = {label: [] for label in runs}
            profiles: list[dict] = []
            for i in range(repeat):
                for label, count in runs.items():
                    with dist.get_task_stream(client) as stream:
                        began = time.perf_counter()
                        count().close()
                        seconds[label].append(time.perf_counter() - began)
                    if label == "shards_cluster":
                        profiles.append(task_profile(stream.data, seconds[label][-1]))
                    print(f"  run {i + 1}/{repeat} {label}: {seconds[label][-1]:.2f} s", file=log, flush=True)
    result["seconds"] = {label: summary(values) | {"runs": values} for label, values in seconds.items()}
    result["cluster_profile"] = {
        "what": "each cluster run taken apart by Dask's task stream, medians over the runs: the count tasks' and the "
                "sum tasks' compute seconds summed over the workers, when the last count task ended and the sums' "
                "span (from the run's first task), the transfers between workers, and the rest of the run's time "
                "outside any task (sending the tasks, the sums brought here and joined)",
        **{key: summary([p[key] for p in profiles])["median"] for key in profiles[0]}} if profiles else {}
    result["cluster_over_file"] = compare(seconds["shards_cluster"], seconds["file"])
    result["cluster_over_shards_local"] = compare(seconds["shards_cluster"], seconds["shards_local"])
    result["on_paper"]["clusters"] = projections(result)
    for label, key in (("the file", "cluster_over_file"), ("the shards, locally", "cluster_over_shards_local")):
        figure = result[key]
        print(f"cluster / {label}: {figure['ratio']:.2f}x the time (runs {figure['low']:.2f}-{figure['high']:.2f}x)",
              file=log)
    write_json_atomic(target, result, log=log)
    return result


def task_profile(tasks: list[dict], total: float) -> dict:
    """One cluster run from Dask's task stream (``get_task_stream``'s records): seconds by kind of task."""
    compute = {"count": 0.0, "sum": 0.0}
    first, maps_end, last, transfer, count_tasks = None, 0.0, 0.0, 0.0, 0
    for task in tasks:
        key = task["key"] if isinstance(task["key"], str) else str(task["key"][0])
        kind = "count" if key.startswith(f"{COUNT_TASK}-") else "sum" if key.startswith(f"{SUM_TASK}-") else None
        count_tasks += kind == "count"
        for span in task["startstops"]:
            if span["action"] == "transfer":
                transfer += span["stop"] - span["start"]
            elif span["action"] == "compute":
                first = span["start"] if first is None else min(first, span["start"])
                last = max(last, span["stop"])
                if kind is not None:
                    compute[kind] += span["stop"] - span["start"]
                if kind == "count":
                    maps_end = max(maps_end, span["stop"])
    first = first or 0.0
    return {"count_task_seconds": compute["count"], "sum_task_seconds": compute["sum"],
            "counts_end": maps_end - first, "tasks_span": last - first, "transfer_seconds": transfer,
            "outside_tasks": total - (last - first), "count_tasks": count_tasks}


def reproject(path: str | Path, log=None) -> dict:
    """``--reproject``: the result at ``path`` with its on-paper figures made again (nothing timed)."""
    path = Path(path)
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
        paper, settings = result["on_paper"], result["settings"]
        paper.update(at_scale(settings["bytes"], paper["distinct"]))
    except (OSError, ValueError, KeyError) as exc:
        raise BPEError(f"--reproject {path}: not a cluster bench's result ({exc})") from None
    paper.pop("clusters", None)
    paper["clusters"] = projections(result)
    result["projected_at"] = stamp()["machine"]["git_commit"]
    write_json_atomic(path, result, log=log or sys.stdout)
    return result


def paper_figures(rung, counts, as_dict: dict, corpus, tokens) -> dict:
    """The measured figures the projections start from."""
    quarter = Corpus(corpus.sources[: max(1, len(corpus.sources) // 4)])
    quarter_counts, _ = count_documents(rung, quarter, tokens, workers=2)
    quarter_bytes, all_bytes, quarter_distinct = quarter.size, corpus.size, len(quarter_counts)
    heaps = math.log(len(as_dict) / quarter_distinct) / math.log(all_bytes / quarter_bytes)
    quarter_counts.close()
    key_bytes = sum(map(len, as_dict))
    merger = rung.Merger(as_dict)
    memory = merger.memory_bytes() if hasattr(merger, "memory_bytes") else None
    getattr(merger, "close", lambda: None)()
    once = sum(1 for n in as_dict.values() if n == 1)
    figures = {"quarter_bytes": quarter_bytes, "quarter_distinct": quarter_distinct,
               "bytes": all_bytes, "distinct": len(as_dict), "heaps_exponent_here": heaps, "heaps_exponent": heaps,
               "counts_bytes_per_distinct": (key_bytes + 16 * len(as_dict)) / len(as_dict),
               "merge_bytes_per_distinct_built": None if memory is None else memory / len(as_dict),
               "counted_once_share": once / len(as_dict)}
    figures["merge_bytes_per_distinct"] = figures["merge_bytes_per_distinct_built"]
    return figures | at_scale(all_bytes, len(as_dict))


def at_scale(size: int, distinct: int) -> dict:
    """Heaps' law between this bench's text and the committed 11.9 GB run (:data:`AT_SCALE`) of the same
    generator, that run's merge state per distinct pre-token at its end (``merge_memory_bytes``: the state
    alone), and its process tree's peak memory per distinct pre-token (sampled; the state, what holds it
    while it is built, and the counts); nothing where the file is not in the checkout."""
    path = REPO_ROOT / AT_SCALE
    if not path.is_file():
        return {}
    run = json.loads(path.read_text(encoding="utf-8"))
    big_bytes, big_distinct = run["corpus"]["bytes_used"], run["corpus"]["distinct_pretokens"]
    return {"scale_result": str(AT_SCALE), "scale_bytes": big_bytes, "scale_distinct": big_distinct,
            "heaps_exponent": math.log(big_distinct / distinct) / math.log(big_bytes / size),
            "merge_bytes_per_distinct": run["merger"]["merge_memory_bytes"] / big_distinct,
            "peak_bytes_per_distinct": run["memory"]["peak_tree_rss"] / big_distinct}


def projections(result: dict) -> dict:
    """What a cluster of N machines does with each corpus of :data:`CORPORA`, by Heaps' law from the
    measured figures: the bytes each worker thread reads and how long it counts them (at the rate a cluster
    worker thread counted here: the shards' bytes over the cluster's median run and its threads; the rate of
    a thread in this process, the file's median run, is kept beside it), the distinct pre-tokens, what the
    counts' parts and the sums carry, and what the merging machine holds at its peak (the 11.9 GB run's peak
    per distinct pre-token; where that run is missing, the state built here and the counts);
    ``min_count_2_bytes``: that with ``--min-count 2``, the share counted once at the measured size dropped
    (a larger corpus's share is its own)."""
    paper = result["on_paper"]
    heaps, per_count = paper["heaps_exponent"], paper["counts_bytes_per_distinct"]
    per_merge = paper.get("peak_bytes_per_distinct") or (paper["merge_bytes_per_distinct"] or 0.0) + per_count
    settings = result["settings"]
    threads_here = settings["local_workers"] * settings["threads_per_worker"]
    per_thread = settings["bytes"] / (result["seconds"]["shards_cluster"]["median"] * threads_here)
    paper["bytes_per_second_per_thread"] = per_thread
    paper["bytes_per_second_per_thread_in_process"] = settings["bytes"] / (result["seconds"]["file"]["median"]
                                                                           * settings["local_workers"])

    def distinct(size: float) -> float:
        return paper["distinct"] * (size / paper["bytes"]) ** heaps

    clusters = {}
    for name, size in CORPORA.items():
        rows = {}
        whole = distinct(size)
        for machines in MACHINES:
            threads = machines * CORES_PER_MACHINE
            tasks = TASKS_PER_THREAD * threads
            rows[str(machines)] = {
                "threads": threads, "bytes_per_thread": size / threads, "count_seconds": size / threads / per_thread,
                "parts_bytes": tasks * distinct(size / tasks) * per_count,
                "sums_bytes": whole * per_count,
            }
        clusters[name] = {"bytes": size, "distinct": whole, "merging_machine_bytes": whole * per_merge,
                          "min_count_2_bytes": whole * (1 - paper["counted_once_share"]) * per_merge,
                          "machines": rows}
    clusters["100 M distinct"] = {"distinct": 1e8, "merging_machine_bytes": 1e8 * per_merge,
                                  "bytes": paper["bytes"] * (1e8 / paper["distinct"]) ** (1 / heaps)}
    return clusters


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.cluster_bench",
                                     description="counting shards on a 2-worker Dask LocalCluster against the "
                                                 "local path (docs/scaling-out.md)")
    parser.add_argument("--data", default=None, help=f"a text file or data set name (default: {DATA}, 100 MB)")
    parser.add_argument("--variant", default=None, help="the rung that counts (default: the fastest)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds, the three taking turns (default 5)")
    parser.add_argument("--shards", type=int, default=SHARDS, help=f"shards the text is cut into (default {SHARDS})")
    parser.add_argument("--out", default=None, help="where the JSON goes (default out/cluster-bench.json)")
    parser.add_argument("--publish", action="store_true", help=f"write the committed {PUBLISHED} (clean tree)")
    parser.add_argument("--reproject", metavar="FILE", default=None,
                        help="time nothing: make FILE's on-paper figures again from its own measurements")

    def run(args) -> None:
        if args.reproject:
            reproject(args.reproject)
            return
        run_cluster_bench(args.data, args.variant, args.repeat, args.shards, args.out, args.publish)

    return tool_main(parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
