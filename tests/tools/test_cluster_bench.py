"""tools/cluster_bench.py: the shards are the text's documents, cut at separators; a small bench runs
the three countings in turns on a real 2-worker LocalCluster, checks they agree, and writes the figures the
on-paper section extrapolates from."""

import io
import json

import pytest

from bpe.defaults import SPECIAL_TOKEN
from tools.cluster_bench import CORPORA, cut_into_shards, run_cluster_bench

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
    owt = paper["clusters"]["OpenWebText (11.9 GB)"]
    assert owt["distinct"] > paper["distinct"] and owt["min_count_2_bytes"] < owt["merging_machine_bytes"]
