"""tools/cluster_bench.py: the shards are the text's documents, cut at separators; a small bench runs
the three countings in turns on a real 2-worker LocalCluster, checks they agree, and writes the figures the
on-paper section extrapolates from."""

import io
import json

import pytest

from bpe.defaults import SPECIAL_TOKEN
from conftest import REPO_ROOT
from tools.cluster_bench import AT_SCALE, CORPORA, cut_into_shards, run_cluster_bench

pytest.importorskip("distributed")


def test_the_shards_hold_the_documents_cut_at_separators(tmp_path):
    text = SPECIAL_TOKEN.join(f"document {i} " * (i + 1) for i in range(40))
    (tmp_path / "all.txt").write_text(text)
    (tmp_path / "shards").mkdir()
    shards = cut_into_shards(tmp_path / "all.txt", tmp_path / "shards", 4)
    assert len(shards) == 4
    assert SPECIAL_TOKEN.join(shard.read_text() for shard in shards) == text
    assert all(SPECIAL_TOKEN not in shard.read_text()[:1] for shard in shards)


def test_a_small_bench_agrees_and_writes_its_figures(tmp_path):
    from bpe.data.webtext import generate

    generate(tmp_path / "web.txt", 400_000)
    out = tmp_path / "bench.json"
    result = run_cluster_bench(str(tmp_path / "web.txt"), "v9", repeat=1, shards=4, out=str(out),
                               log=io.StringIO())
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert set(result["seconds"]) == {"file", "shards_local", "shards_cluster"}
    assert all(len(figure["runs"]) == 1 for figure in result["seconds"].values())
    paper = result["on_paper"]
    assert paper["distinct"] == result["distinct_pretokens"] and 0.3 < paper["heaps_exponent"] < 1
    assert paper["merge_bytes_per_distinct"] > paper["counts_bytes_per_distinct"] > 16
    assert set(paper["clusters"]) == {*CORPORA, "100 M distinct"}
    # the cluster's run taken apart: its count and sum tasks ran, the sums after the last count
    profile = result["cluster_profile"]
    assert profile["count_tasks"] >= 1 and profile["count_task_seconds"] > 0 and profile["sum_task_seconds"] > 0
    assert 0 < profile["counts_end"] <= profile["tasks_span"]
    owt = paper["clusters"]["OpenWebText (11.9 GB)"]
    assert owt["distinct"] > paper["distinct"] and owt["min_count_2_bytes"] < owt["merging_machine_bytes"]
    # the merging machine at its peak: the 11.9 GB run's whole process tree, per distinct pre-token (the state,
    # what holds it while it is built, the counts), not the state alone
    scale = json.loads((REPO_ROOT / AT_SCALE).read_text())
    per_distinct = scale["memory"]["peak_tree_rss"] / scale["corpus"]["distinct_pretokens"]
    assert paper["peak_bytes_per_distinct"] == pytest.approx(per_distinct)
    assert owt["merging_machine_bytes"] == pytest.approx(owt["distinct"] * per_distinct)
    assert paper["peak_bytes_per_distinct"] > paper["merge_bytes_per_distinct"]
    # the projections count at a cluster worker thread's rate, not at a thread's in this process
    cluster_rate = result["settings"]["bytes"] / (result["seconds"]["shards_cluster"]["median"] * 2)
    assert paper["bytes_per_second_per_thread"] == pytest.approx(cluster_rate)
    one = owt["machines"]["1"]
    assert one["count_seconds"] == pytest.approx(one["bytes_per_thread"] / cluster_rate)


def test_reproject_makes_the_on_paper_figures_again_from_a_runs_own_measurements(tmp_path):
    from bpe.errors import BPEError
    from tools.cluster_bench import reproject

    committed = json.loads((REPO_ROOT / "docs" / "cluster-bench.json").read_text())
    copy = tmp_path / "cluster-bench.json"
    copy.write_text(json.dumps(committed))
    result = reproject(copy, log=io.StringIO())
    assert json.loads(copy.read_text()) == result
    assert result["seconds"] == committed["seconds"] and result["machine"] == committed["machine"]  # nothing timed
    assert result["projected_at"]
    paper = result["on_paper"]
    rate = result["settings"]["bytes"] / (result["seconds"]["shards_cluster"]["median"] * 2)
    assert paper["bytes_per_second_per_thread"] == pytest.approx(rate)
    owt = paper["clusters"]["OpenWebText (11.9 GB)"]
    assert owt["merging_machine_bytes"] == pytest.approx(owt["distinct"] * paper["peak_bytes_per_distinct"])
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(BPEError, match="not a cluster bench's result"):
        reproject(tmp_path / "other.json")
