"""The peer runner (bpe.lab.measure.peers): each peer either reports a real result or says how to install it; the peers'
table lines up."""

import pytest

import bpe.lab.measure.peers
from bpe import BPEError
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.lab.measure.peers import INSTALL_HINT, PEERS, peers_table, run_peer
from conftest import TINYSTORIES_SAMPLE


@pytest.mark.parametrize("name", list(PEERS))
def test_peer_reports_a_result_or_how_to_install(name):
    result = run_peer(name, TINYSTORIES_SAMPLE, 300, ["<|endoftext|>"], workers=1)
    if "missing" in result:
        assert result["missing"] == f"{PEERS[name]} is not installed; install the peers with: {INSTALL_HINT}"
    else:
        assert "error" not in result, result.get("error")
        # the same amount of work as ours: 300 - 256 bytes - 1 special token = 43 merges
        assert result["merges"] == 43 and result["total"] > 0 and result["peak_rss"] > 0


def test_bench_says_how_to_install_missing_peers(monkeypatch, capsys):
    monkeypatch.setattr(bpe.lab.measure.peers, "find_spec", lambda module: None)
    report = run_bench(BenchSettings("v2", "tinystories-sample", 300, 1, ["<|endoftext|>"], 1, peers=True))
    printed = capsys.readouterr().out
    for name in PEERS:
        assert report["peers"][name] == {"missing": bpe.lab.measure.peers.missing_message(name)}
        assert f"{PEERS[name]} is not installed; install the peers with: .venv/bin/pip install -e '.[peers]'" in printed


def test_bench_runs_only_the_peers_named(monkeypatch, capsys):
    monkeypatch.setattr(bpe.lab.measure.peers, "find_spec", lambda module: None)
    report = run_bench(BenchSettings("v2", "tinystories-sample", 300, 1, ["<|endoftext|>"], 1, peers="rustbpe,tokenizers-file"))
    assert list(report["peers"]) == ["rustbpe", "tokenizers-file"]
    with pytest.raises(BPEError, match=r"unknown peer 'hf'; peers: tokenizers, tokenizers-file, rustbpe, bpeasy"):
        run_bench(BenchSettings("v2", "tinystories-sample", 300, 1, ["<|endoftext|>"], 1, peers="hf"))


def test_peers_table_columns_line_up():
    table = peers_table({"rustbpe": {"total": 1.2, "merges": 9743, "peak_rss": 5e7},
                         "tokenizers-file": {"total": 12.25, "merges": 9743, "peak_rss": 1.5e8}},
                        {"v6": {"median": {"total": 3.0}}})
    rows = table.splitlines()[2:]
    assert len({row.index("s ") for row in rows}) == 1 and len({row.index(" merges") for row in rows}) == 1
    assert len({row.index(" MB") for row in rows}) == 1
