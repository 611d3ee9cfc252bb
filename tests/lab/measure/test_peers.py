"""The peer runner (bpe.lab.measure.peers): each peer either reports a real result or says how to install it; the peers'
table lines up, and says why a peer has no time; with --limit, or on a corpus, each trains on the text ours train on."""

import json
from importlib.util import find_spec
from types import SimpleNamespace

import pytest

import bpe.lab.measure.peers
from bpe import BPEError
from bpe.corpus.corpus import open_corpus
from bpe.lab.measure.bench import BenchSettings, run_bench
from bpe.lab.measure.peers import FILE_PEERS, INSTALL_HINT, PEERS, peers_table, run_peer, run_peers
from bpe.lab.measure.result import PeerResult
from conftest import TINYSTORIES_SAMPLE

EOT = "<|endoftext|>"


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


# --- With --limit, or on a corpus, the peers train on the text ours train on ---

SHORT = "ab ab ab ab\n"  # a first document with two merges in it; the rest of the text holds far more


def _installed(name: str) -> None:
    if find_spec(PEERS[name]) is None:
        pytest.skip(f"{name} is not installed ({INSTALL_HINT})")


@pytest.mark.parametrize("name", list(PEERS))
def test_with_a_limit_the_peers_train_on_the_bytes_ours_train_on(tmp_path, name):
    """A plain file with --limit: ours train on its first document alone, and so does each peer (a peer that takes
    documents reads the first bytes, a peer that reads files their copy), not on the whole file."""
    _installed(name)
    path = tmp_path / "corpus.txt"
    path.write_text(SHORT + EOT + TINYSTORIES_SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    first = tmp_path / "first.txt"
    first.write_text(SHORT, encoding="utf-8")  # the limit's bytes (gigabpe reads a special token as text)
    alone = run_peer(name, first, 300, [EOT], workers=1)["merges"]
    assert alone < run_peer(name, path, 300, [EOT], workers=1)["merges"]  # the whole file makes more merges
    report = run_bench(BenchSettings("v2", str(path), 300, 1, [EOT], 1, limit=len(SHORT), peers=name))
    assert report.settings["corpus_bytes"] == len(SHORT)  # the limit's end: the first document's
    assert report.variants["v2"].median.merges == 2
    assert report.peers[name].merges == alone and report.peers[name].note is None
    assert sorted(tmp_path.iterdir()) == [path, first]  # the prefix a peer read was written elsewhere, and is gone


@pytest.mark.parametrize("name", list(PEERS))
def test_on_a_corpus_with_a_limit_the_peers_read_its_documents_up_to_it(tmp_path, name):
    """A folder of plain files with --limit: a peer that takes documents gets the documents ours count, a peer that
    reads files those documents written once as a file, and its row says so."""
    _installed(name)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(SHORT, encoding="utf-8")
    (folder / "b.txt").write_text(TINYSTORIES_SAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    first = tmp_path / "first.txt"
    first.write_text(SHORT + EOT, encoding="utf-8")
    alone = run_peer(name, first, 300, [EOT], workers=1)["merges"]
    whole = run_peers(open_corpus(folder), 300, [EOT], 1, 1, [name])[name]
    assert alone < whole.merges and whole.note is None  # the corpus's plain files, as they are
    limited = run_peers(open_corpus(folder), 300, [EOT], 1, 1, [name], end=len(SHORT))[name]
    assert limited.merges == alone
    if name in FILE_PEERS:
        assert limited.note == ("read the corpus's documents up to --limit, written once as one text file of "
                                f"{len(SHORT) + len(EOT)} bytes (it reads files, and no file of the corpus holds "
                                "just them)")
    else:
        assert limited.note is None


def test_a_peer_that_reads_files_says_why_it_skips_json_lines(tmp_path):
    """JSON lines with no limit: the peers that read files are not run, and their row says why (no crash, no copy);
    the peers that take documents get the documents."""
    _installed("tokenizers")
    lines = tmp_path / "c.jsonl"
    documents = TINYSTORIES_SAMPLE.read_text(encoding="utf-8").split(EOT)
    lines.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    peers = run_peers(open_corpus(lines), 300, [EOT], 1, 1, ["tokenizers", "tokenizers-file"])
    assert peers["tokenizers"].merges == 43 and peers["tokenizers"].note is None
    assert peers["tokenizers-file"].total is None and peers["tokenizers-file"].why_none == (
        f"not run: it reads only plain text files, and {lines} holds JSON lines, Parquet, compressed or remote files "
        "(give it the plain text, or a --limit to write that much once)")
    table = peers_table(peers, {"v2": SimpleNamespace(median=SimpleNamespace(total=1.0))})
    assert f"tokenizers-file: not run: it reads only plain text files, and {lines} holds" in table
