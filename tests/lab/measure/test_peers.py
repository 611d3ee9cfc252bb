"""The peer runner (bpe.lab.measure.peers): each peer either reports a real result or says how to install it; the peers'
table lines up, and says why a peer has no time."""

from types import SimpleNamespace

import pytest

import bpe.lab.measure.peers
from bpe import BPEError
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.lab.measure.peers import INSTALL_HINT, PEERS, peers_table, run_peer
from bpe.lab.measure.result import PeerResult
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
        assert report.peers[name] == PeerResult(missing=bpe.lab.measure.peers.missing_message(name))
        assert report.to_json()["peers"][name] == {"missing": bpe.lab.measure.peers.missing_message(name)}
        assert f"{PEERS[name]} is not installed; install the peers with: .venv/bin/pip install -e '.[peers]'" in printed


def test_bench_runs_only_the_peers_named(monkeypatch, capsys):
    monkeypatch.setattr(bpe.lab.measure.peers, "find_spec", lambda module: None)
    report = run_bench(BenchSettings("v2", "tinystories-sample", 300, 1, ["<|endoftext|>"], 1,
                                     peers="rustbpe,tokenizers-file"))
    assert list(report.peers) == ["rustbpe", "tokenizers-file"]
    with pytest.raises(BPEError, match=r"unknown peer 'hf'; peers: tokenizers, tokenizers-file, rustbpe, bpeasy"):
        run_bench(BenchSettings("v2", "tinystories-sample", 300, 1, ["<|endoftext|>"], 1, peers="hf"))


def test_peers_table_columns_line_up():
    table = peers_table({"rustbpe": PeerResult(1.2, 9743, 5e7), "tokenizers-file": PeerResult(12.25, 9743, 1.5e8),
                         "bpeasy": PeerResult(missing="bpeasy is not installed")},
                        {"v6": SimpleNamespace(median=SimpleNamespace(total=3.0))})
    header, *rows, missing = table.splitlines()[2:]
    assert header.split() == ["peer", "total", "merges", "peak", "RSS", "v6"]
    assert rows[0].split() == ["rustbpe", "1.200", "s", "9,743", "50.0", "MB", "2.50x", "slower"]  # v6 against rustbpe
    for column in ("total", "merges", "RSS", "v6"):  # each cell ends where its header does
        end = header.index(column) + len(column)
        assert all(row[end - 1] != " " and row[end:end + 1] in (" ", "") for row in rows), column
    assert missing == "bpeasy: bpeasy is not installed"


def test_the_peers_split_by_the_pattern_and_gigabpe_says_it_takes_none():
    result = run_peer("tokenizers", TINYSTORIES_SAMPLE, 300, ["<|endoftext|>"], workers=1, pattern="cl100k")
    if "missing" not in result:
        assert "error" not in result, result.get("error")
        assert result["merges"] == 43
    peers = {"gigabpe": PeerResult(1.0, 43, 5e7), "rustbpe": PeerResult(1.0, 43, 5e7)}
    variants = {"v6": SimpleNamespace(median=SimpleNamespace(total=1.0))}
    rows = peers_table(peers, variants, "o200k").splitlines()[3:]
    assert rows[0].startswith("gigabpe (GPT-2 split: takes no pattern)") and rows[1].startswith("rustbpe ")
    assert "takes no pattern" not in peers_table(peers, variants)
