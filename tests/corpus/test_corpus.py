"""bpe/corpus/corpus.py: a corpus as it comes (JSON lines, compressed or not, Parquet, a directory of shards, a
glob, a list, an iterator, a ``datasets`` object) gives exactly the merges of one text file of its documents, each
followed by the separator, on every kind of counter (v1, v2 in this process; v6, v8 in the pool; v9 on threads)
and both regimes; the reading streams; every bad input is one line naming the file and the line or row."""

import gzip
import io
import json
import sys
from pathlib import Path

import pytest

import bpe.corpus.batches as corpus_module
import bpe.split.chunking as chunking
from bpe import VARIANTS, train_bpe, train_bpe_from_iterator
from bpe.cli import main
from bpe.counting.plain import count_text
from bpe.errors import BPEError
from bpe.running.progress import Progress
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from bpe.training.observer import Observer
from conftest import DEFAULT_CORPUS, FIXTURES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

EOT = "<|endoftext|>"
CANDIDATES = FIXTURES / "candidates"


def whole_documents(text: str, size: int) -> str:
    """The documents of ``text`` up to about ``size`` characters, cut at a separator."""
    return text[:text.index(EOT, size)]


@pytest.fixture(scope="module")
def tiny() -> str:
    return whole_documents(DEFAULT_CORPUS.read_text(encoding="utf-8"), 30_000)


@pytest.fixture(scope="module", params=["gutenberg", "webtext"])
def regime(request, tmp_path_factory) -> str:
    """A few hundred KB of each regime: the shipped Gutenberg sample, generated web text."""
    if request.param == "gutenberg":
        return whole_documents(DEFAULT_CORPUS.read_text(encoding="utf-8"), 300_000)
    from bpe.data.webtext import generate

    path = tmp_path_factory.mktemp("webtext") / "webtext.txt"
    generate(path, 300_000)
    return path.read_text(encoding="utf-8")


def write_forms(folder: Path, text: str, forms) -> dict:
    """``text``'s documents in each form asked for: name -> what train_bpe takes."""
    documents = text.split(EOT)
    lines = "".join(json.dumps({"id": i, "text": d}) + "\n" for i, d in enumerate(documents)).encode()
    made = {}
    for form in forms:
        if form == "jsonl":
            (folder / "c.jsonl").write_bytes(lines)
            made[form] = folder / "c.jsonl"
        elif form == "json.gz":
            (folder / "c.json.gz").write_bytes(gzip.compress(lines))
            made[form] = folder / "c.json.gz"
        elif form == "jsonl.zst":
            (folder / "c.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines))
            made[form] = folder / "c.jsonl.zst"
        elif form == "parquet":  # small row groups: several are read
            pq.write_table(pa.table({"id": list(range(len(documents))), "text": documents}), folder / "c.parquet",
                           row_group_size=max(1, len(documents) // 5))
            made[form] = folder / "c.parquet"
        elif form in ("directory", "glob", "list"):
            shards = folder / "shards"
            shards.mkdir(exist_ok=True)
            n = len(documents)
            for i in range(4):  # text shards cut at document boundaries, the separator left out
                (shards / f"part-{i}.txt").write_text(EOT.join(documents[i * n // 4:(i + 1) * n // 4]),
                                                      encoding="utf-8")
            made[form] = {"directory": shards, "glob": str(shards / "part-*.txt"),
                          "list": sorted(shards.iterdir())}[form]
    return made


def merges_of(given, vocab_size: int, variant: str, **kwargs):
    if isinstance(given, (str, Path, list)):
        return train_bpe(given, vocab_size, [EOT], variant=variant, **kwargs)
    return train_bpe_from_iterator(given, vocab_size, [EOT], variant=variant, **kwargs)


ALL_FORMS = ["jsonl", "json.gz", "jsonl.zst", "parquet", "directory", "glob", "list"]


@pytest.mark.parametrize("variant", ["v1", "v2"])
def test_every_form_gives_the_files_merges_on_the_plain_counter(tmp_path, tiny, variant):
    (tmp_path / "corpus.txt").write_text(tiny, encoding="utf-8")
    expected = train_bpe(tmp_path / "corpus.txt", 320, [EOT], variant=variant)
    documents = tiny.split(EOT)
    given = {**write_forms(tmp_path, tiny, ALL_FORMS), "iterator": iter(documents),
             "batched iterator": (documents[i:i + 7] for i in range(0, len(documents), 7))}
    for form, what in given.items():
        assert merges_of(what, 320, variant) == expected, form


def test_a_datasets_object_is_read_by_its_column(tmp_path, tiny):
    datasets = pytest.importorskip("datasets")
    (tmp_path / "corpus.txt").write_text(tiny, encoding="utf-8")
    expected = train_bpe(tmp_path / "corpus.txt", 320, [EOT], variant="v2")
    table = datasets.Dataset.from_dict({"body": tiny.split(EOT), "n": list(range(len(tiny.split(EOT))))})
    assert train_bpe(table, 320, [EOT], variant="v2", text_column="body") == expected
    assert train_bpe_from_iterator(table, 320, [EOT], variant="v2", text_column="body") == expected
    assert train_bpe_from_iterator(table.to_iterable_dataset(), 320, variant="v2", text_column="body") == expected
    with pytest.raises(BPEError) as error:
        train_bpe(table, 320, [EOT])
    assert str(error.value) == ("the dataset has no column 'text' (its columns: 'body', 'n'); name the text's column "
                                "with text_column= (--text-column)")
    with pytest.raises(BPEError, match=r"^a DatasetDict holds splits \(train\): give one, e\.g\. dataset\['train'\]$"):
        train_bpe(datasets.DatasetDict({"train": table}), 320, [EOT])


@pytest.mark.parametrize("variant", ["v6", "v8", "v9"])
def test_every_form_gives_the_files_merges_on_both_regimes(tmp_path, regime, variant, monkeypatch):
    # Batches of 20,000 characters: the pool (v6, v8) and v9's threads get many, in several windows.
    monkeypatch.setattr(corpus_module, "BATCH_CHARS", 20_000)
    (tmp_path / "corpus.txt").write_text(regime, encoding="utf-8")
    expected = train_bpe(tmp_path / "corpus.txt", 400, [EOT], variant=variant, workers=2)
    given = {**write_forms(tmp_path, regime, ["jsonl.zst", "parquet", "directory"]),
             "iterator": iter(regime.split(EOT))}
    for form, what in given.items():
        assert merges_of(what, 400, variant, workers=2) == expected, form


class Heard(Progress):
    def __init__(self):
        self.bytes = []

    def on_bytes(self, done: int) -> None:
        self.bytes.append(done)


@pytest.mark.parametrize("variant", ["v2", "v6", "v9"])
def test_documents_are_counted_as_they_are_read(variant, monkeypatch):
    """Batches are counted before the iterator is at its end: it is never held whole."""
    monkeypatch.setattr(corpus_module, "BATCH_CHARS", 1_000)
    taken, seen_when_counted = [0], []
    heard = Heard()
    heard.on_bytes = lambda done: seen_when_counted.append(taken[0])

    def documents():
        for i in range(400):
            taken[0] += 1
            yield f"document {i} says something of its own, {i * 7} times over. " * 20

    train_bpe_from_iterator(documents(), 300, variant=variant, workers=2, observer=Observer(progress=heard))
    assert seen_when_counted and seen_when_counted[0] < 400


def test_documents_never_merge_across_even_without_special_tokens():
    # "ab" then "cd": b and c are never side by side (as "abcd" they would be), so two merges are all there is
    assert train_bpe_from_iterator(["ab", "cd"] * 3, 256 + 3, [], variant="v2")[1] == [(b"c", b"d"), (b"a", b"b")]
    assert train_bpe_from_iterator(["abcd"] * 3, 256 + 3, [], variant="v2")[1] == \
        [(b"c", b"d"), (b"b", b"cd"), (b"a", b"bcd")]


def test_a_lone_surrogate_is_named_or_replaced(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "fine"}\n{"text": "bad \\ud800 here"}\n', encoding="utf-8")
    with pytest.raises(BPEError) as error:
        train_bpe(path, 300, [EOT])
    assert str(error.value) == (f"{path}, line 2: a lone surrogate U+D800, which UTF-8 cannot hold; fix the text or "
                                "pass errors='replace' (--errors replace)")
    (tmp_path / "replaced.txt").write_text(f"fine{EOT}bad \ufffd here{EOT}", encoding="utf-8")
    assert train_bpe(path, 300, [EOT], errors="replace") == train_bpe(tmp_path / "replaced.txt", 300, [EOT])


def test_a_limit_takes_whole_documents(tmp_path, tiny):
    documents = tiny.split(EOT)
    path = write_forms(tmp_path, tiny, ["jsonl"])["jsonl"]
    taken, used = [], 0
    for document in documents:  # every document until one reaches 5,000 bytes
        taken.append(document)
        used += len(document.encode("utf-8"))
        if used >= 5_000:
            break
    (tmp_path / "first.txt").write_text(EOT.join(taken), encoding="utf-8")
    observer = Observer()
    assert train_bpe(path, 300, [EOT], variant="v2", limit=5_000, observer=observer) == \
        train_bpe(tmp_path / "first.txt", 300, [EOT], variant="v2")
    assert observer.corpus.bytes_used == used


def test_min_count_drops_rare_pretokens_and_changes_the_merges(tmp_path, tiny):
    from bpe.variants.v2_inverted_index import Merger

    path = tmp_path / "corpus.txt"
    path.write_text(tiny, encoding="utf-8")
    kept = {token: n for token, n in count_text(tiny, [EOT]).items() if n >= 3}
    expected = run_merges(Merger(kept), 60, NullTimer())
    for variant in ("v2", "v6", "v9"):
        assert train_bpe(path, 256 + 1 + 60, [EOT], variant=variant, min_count=3)[1] == expected, variant
    assert train_bpe(path, 256 + 1 + 60, [EOT], variant="v2")[1] != expected
    with pytest.raises(BPEError, match=r"^min_count must be a count of at least 1, got 0$"):
        train_bpe(path, 300, [EOT], min_count=0)


def bad_inputs(folder: Path) -> list[tuple[object, str]]:
    """(what train_bpe is given, the one line it answers)."""
    def jsonl(name: str, content: bytes) -> Path:
        (folder / name).write_bytes(content)
        return folder / name

    table = folder / "t.parquet"
    pq.write_table(pa.table({"body": ["a", "b"], "n": [1, 2]}), table)
    nulls = folder / "nulls.parquet"
    pq.write_table(pa.table({"text": ["a", None]}), nulls)
    numbers = folder / "numbers.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), numbers)
    (folder / "empty").mkdir()
    compress = zstandard.ZstdCompressor().compress
    lines = b"".join(b'{"text": "document %d of a few"}\n' % i for i in range(3000))
    zstd_lines = compress(lines[:40_000]) + compress(lines[40_000:])  # two frames
    return [
        (jsonl("a.jsonl", b'{"text": "a"}\nnot json\n'),
         f"{folder}/a.jsonl, line 2: not JSON (Expecting value: line 1 column 1 (char 0)); each line must be one JSON "
         "object"),
        (jsonl("b.jsonl", b'{"text": "a"}\n\n{"body": "b", "n": 1}\n'),
         f"{folder}/b.jsonl, line 3: no field 'text' (its fields: 'body', 'n'); name the text's field with "
         "--text-column"),
        (jsonl("c.jsonl", b'{"text": null}\n'), f"{folder}/c.jsonl, line 1: field 'text' is a JSON null, not a string"),
        (jsonl("d.jsonl", b'["text"]\n'), f"{folder}/d.jsonl, line 1: a JSON list, not an object with a 'text' field"),
        (jsonl("e.jsonl", b'{"text": "ok"}\n{"text": "\xff"}\n'),
         f"{folder}/e.jsonl, line 2: invalid UTF-8 (byte 0xff); fix the file or pass errors='replace' "
         "(--errors replace)"),
        (jsonl("f.jsonl.gz", b"plain text"),
         f"{folder}/f.jsonl.gz: cannot read it as gzip: Not a gzipped file (b'pl')"),
        (jsonl("g.jsonl.gz", gzip.compress(b'{"text": "a"}\n' * 100)[:40]),
         f"{folder}/g.jsonl.gz: cannot read it as gzip: Compressed file ended before the end-of-stream marker "
         "was reached"),
        # zstandard's own reader ends quietly inside a cut frame (it trained on what it had read): cut anywhere,
        # within a frame or a later frame of several, it is refused as a cut gzip is
        *[(jsonl(f"z{cut}.jsonl.zst", zstd_lines[:cut]),
           f"{folder}/z{cut}.jsonl.zst: cannot read it as zstd: Compressed file ended before the end-of-stream "
           "marker was reached") for cut in (3, len(zstd_lines) // 3, len(zstd_lines) - 1)],
        (jsonl("y.jsonl.zst", b"plain text"),
         f"{folder}/y.jsonl.zst: cannot read it as zstd: zstd decompressor error: Unknown frame descriptor"),
        (table, f"{table}: no column 'text' (its columns: 'body', 'n'); name the text's column with --text-column"),
        (nulls, f"{nulls}, row 2: column 'text' is null, not a string"),
        (numbers, f"{numbers}: column 'text' holds int64, not strings"),
        (jsonl("h.parquet", b"not parquet"), None),  # pyarrow's own words follow "not a Parquet file"
        (str(folder / "nothing-*.jsonl"), f"no file matches '{folder}/nothing-*.jsonl'"),
        (folder / "empty", f"no file of text, JSON lines or Parquet in the directory {folder}/empty "
                           "(names ending .txt, .text, .jsonl, .json, .ndjson, .parquet, .pq, also .gz or .zst)"),
        (jsonl("i.txt.gz", gzip.compress(b"text")), f"{folder}/i.txt.gz: compressed plain text is not read as it is; "
                                                    "decompress it first, or give the documents as JSON lines "
                                                    "(.jsonl.gz, .jsonl.zst)"),
        (folder / "missing.jsonl", f"input file not found: {folder}/missing.jsonl"),
        ([folder / "a.jsonl", 3], "input_path must be a file path, a directory, a glob, a list of them or a dataset, "
                                  "got 3 in the list"),
    ]


def test_bad_input_is_one_line_naming_the_file_and_line(tmp_path):
    for given, message in bad_inputs(tmp_path):
        with pytest.raises(BPEError) as error:
            train_bpe(given, 300, [EOT], variant="v2")
        if message is None:
            assert str(error.value).startswith(f"{given}: not a Parquet file ("), error.value
        else:
            assert str(error.value) == message


@pytest.mark.parametrize("items, message", [
    (["fine", 3], "item 2 of the iterator is a int, not a string (or a list of strings)"),
    ([["a", "b"], ["c", None]], "item 2 of the iterator holds a NoneType at position 1, not a string"),
    ([b"bytes"], "item 1 of the iterator is a bytes, not a string (or a list of strings)"),
])
def test_a_bad_item_of_an_iterator_is_named(items, message):
    with pytest.raises(BPEError) as error:
        train_bpe_from_iterator(iter(items), 300, variant="v2")
    assert str(error.value) == message


def test_an_iterator_function_refuses_a_path():
    with pytest.raises(BPEError, match="^train_bpe_from_iterator takes documents"):
        train_bpe_from_iterator("corpus.txt", 300)


def test_a_missing_reader_package_says_what_to_install(tmp_path, monkeypatch):
    import sys

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": ["a"]}), path)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # import fails as where pyarrow is not installed
    with pytest.raises(BPEError) as error:
        train_bpe(path, 300, [EOT])
    assert str(error.value) == (f"reading Parquet ({path}) needs pyarrow, which this Python lacks: pip install "
                                "'bpe-lab[corpora]' (or: pip install 'pyarrow')")


def test_train_bench_and_encode_take_a_corpus_on_the_command_line(tmp_path, tiny, capsys):
    (tmp_path / "corpus.txt").write_text(tiny, encoding="utf-8")
    shards = tmp_path / "shards"
    shards.mkdir()
    documents = tiny.split(EOT)
    for i in range(2):
        pq.write_table(pa.table({"body": documents[i::2]}), shards / f"part-{i}.parquet")
    pq.write_table(pa.table({"body": []}), shards / "part-2.parquet")  # an empty shard: its column's type is null
    # the shards hold the documents in another order: the same counts, so the same merges
    assert main(["train", "--data", str(shards / "*.parquet"), "--text-column", "body", "--vocab-size", "300",
                 "--variant", "v6", "--out", str(tmp_path / "tok"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "bpe-lab train: v6 on shards (" in out and "3 file(s), counted as they are read" in out
    assert (tmp_path / "tok" / "merges.txt").read_text() == _merges_file(tmp_path, tmp_path / "corpus.txt")
    assert main(["bench", "--data", str(shards), "--text-column", "body", "--vocab-size", "300", "--variant", "v2",
                 "--repeat", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    # read in place: the header names the files and counts their documents' text; nothing is written for the runs
    text_bytes = sum(len(d.encode("utf-8")) for d in documents)
    assert "bpe-lab bench: shards, 3 files (" in out and f": {text_bytes:,} bytes of text, vocab 300" in out
    assert "written as one text file" not in out and "identical" in out
    assert main(["encode", "--tokenizer", str(tmp_path / "tok"), "--data", str(shards / "part-0.parquet"),
                 "--text-column", "body", "--out", str(tmp_path / "ids.npy")]) == 0
    assert f"encoded {shards / 'part-0.parquet'}:" in capsys.readouterr().out
    assert list(tmp_path.glob(".bpe-corpus-*")) == []  # the text written for the encoding is gone
    assert main(["train", "--data", str(tmp_path / "none-*.parquet"), "--quiet"]) == 2
    assert capsys.readouterr().err == f"bpe: error: no file matches '{tmp_path}/none-*.parquet'\n"


@pytest.mark.parametrize("form", ["directory", "jsonl"])
def test_bench_reads_a_corpus_in_place_with_the_merges_of_its_joined_file(tmp_path, tiny, monkeypatch, form):
    """`bpe bench` on a folder of plain text files or on JSON lines: its rungs' runs read the corpus itself (the
    corpus is never written as one text file: ``text_file_of`` raises), their merges are the reference's (another
    rung's, trained on the corpus), and they are the merges of benching the corpus's joined text as one file."""
    from bpe.corpus.batches import documents_text
    from bpe.corpus.corpus import open_corpus
    from bpe.lab.measure.bench import BenchSettings, run_bench

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))  # the reference computed now, not found cached
    data = write_forms(tmp_path, tiny, [form])[form]
    joined = tmp_path / "joined.txt"
    joined.write_bytes("".join(documents_text(open_corpus(data), [EOT])).encode("utf-8"))
    of_file = run_bench(BenchSettings("v2", str(joined), 300, 1, [EOT]), out=io.StringIO())

    def no_copy(*args, **kwargs):
        raise AssertionError("the corpus was written as one text file")

    for module in [corpus_module, *(m for name, m in list(sys.modules.items())
                                    if name.startswith("bpe.lab") and hasattr(m, "text_file_of"))]:
        monkeypatch.setattr(module, "text_file_of", no_copy)
    out = io.StringIO()
    report = run_bench(BenchSettings("v2", str(data), 300, 1, [EOT]), out=out)
    assert report.verdicts["v2"]["verdict"] == "identical" and report.reference["name"] != "v2"
    assert report.reference["source"].startswith("computed now")
    assert report.variants["v2"].median.merges_sha256 == of_file.variants["v2"].median.merges_sha256
    # the text's bytes: plain files' sizes (the separators between their documents are text), JSON lines' documents
    text_bytes = (sum(p.stat().st_size for p in data.iterdir()) if form == "directory" else
                  sum(len(d.encode("utf-8")) for d in tiny.split(EOT)))
    assert report.settings["corpus_bytes"] == text_bytes and report.settings["path"] == str(data)
    assert report.settings["corpus"] == open_corpus(data).describe()
    assert f": {text_bytes:,} bytes of text, vocab 300" in out.getvalue().splitlines()[0]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".bpe-corpus")) == []


def test_a_train_bpe_function_on_a_corpus_gets_it_written_once_as_one_file(tmp_path, tiny):
    """A CS336 ``train_bpe`` function takes one path: on a corpus (JSON lines) it alone gets the corpus written as
    one text file, said in one line, with the merges of the rungs that read the corpus in place."""
    from bpe.corpus.batches import documents_text
    from bpe.corpus.corpus import open_corpus
    from bpe.lab.measure.bench import BenchSettings, run_bench

    data = write_forms(tmp_path, tiny, ["jsonl"])["jsonl"]
    joined_bytes = len("".join(documents_text(open_corpus(data), [EOT])).encode("utf-8"))
    out = io.StringIO()
    report = run_bench(BenchSettings(f"v2,{CANDIDATES / 'correct.py'}", str(data), 300, 1, [EOT]), out=out)
    assert report.verdicts["correct"]["verdict"] == "identical" and not report.failed
    assert report.variants["correct"].median.merges_sha256 == report.variants["v2"].median.merges_sha256
    said = [line for line in out.getvalue().splitlines() if "written once as one text file" in line]
    assert said == [f"a train_bpe function reads one file: the corpus written once as one text file for it "
                    f"({joined_bytes:,} bytes)"]


def _merges_file(tmp_path: Path, corpus: Path) -> str:
    out = tmp_path / "from-file"
    assert main(["train", "--data", str(corpus), "--vocab-size", "300", "--variant", "v6", "--out", str(out),
                 "--quiet"]) == 0
    return (out / "merges.txt").read_text()


@pytest.mark.parametrize("pattern", ["cl100k", "o200k", r"\w+|[^\w\s]+|\s+"], ids=["cl100k", "o200k", "custom"])
def test_documents_and_files_of_a_corpus_split_by_the_pattern(tmp_path, pattern, monkeypatch):
    """Documents in memory, JSON lines and a directory of text files read in small pieces cut by the pattern's
    rule give the merges of one text file of the documents joined by the separator, with any pattern."""
    documents = [f"HelloWorld {i} times 2024!\n\n  don'T x/y\n" * (i % 5 + 1) for i in range(60)]
    joined = tmp_path / "joined.txt"
    joined.write_text("<|endoftext|>".join(documents) + "<|endoftext|>", encoding="utf-8")
    expected = train_bpe(joined, 320, ["<|endoftext|>"], variant="v1", pattern=pattern)
    assert expected != train_bpe(joined, 320, ["<|endoftext|>"], variant="v1")
    for variant in ("v2", "v6"):
        assert train_bpe_from_iterator(iter(documents), 320, variant=variant, pattern=pattern) == expected
    lines = tmp_path / "docs.jsonl"
    lines.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    assert train_bpe(lines, 320, ["<|endoftext|>"], variant="v3", workers=2, pattern=pattern) == expected
    folder = tmp_path / "texts"
    folder.mkdir()
    for i in range(3):
        (folder / f"{i}.txt").write_text("".join(d + "<|endoftext|>" for d in documents[i * 20:(i + 1) * 20]),
                                         encoding="utf-8")
    monkeypatch.setattr(chunking, "STREAM_CHUNK_BYTES", 300)  # each file read in many pieces
    for variant in [name for name in ("v2", "v9") if name in VARIANTS]:
        assert train_bpe(folder, 320, ["<|endoftext|>"], variant=variant, pattern=pattern) == expected, variant


def test_the_joined_text_ends_each_document_once_however_a_file_is_read(tmp_path, monkeypatch):
    """The joined text (what ``bpe encode`` encodes for a corpus) holds the separator after each plain file,
    each JSON line and each Parquet row with text, and nowhere else: not between the pieces the reader cuts a
    file into, nor after an empty file or an empty line's text."""
    from bpe.corpus.batches import documents_text
    from bpe.corpus.corpus import open_corpus

    monkeypatch.setattr(chunking, "STREAM_CHUNK_BYTES", 64)  # the reader cuts each file into many pieces
    folder = tmp_path / "texts"
    folder.mkdir()
    first = "the first file, long enough to be cut into pieces. " * 20
    second = "a second one" + EOT + " with a separator of its own\n" * 5
    (folder / "a.txt").write_text(first, encoding="utf-8")
    (folder / "b.txt").write_text("", encoding="utf-8")
    (folder / "c.txt").write_text(second, encoding="utf-8")
    assert "".join(documents_text(open_corpus(folder), [EOT])) == first + EOT + second + EOT
    lines = tmp_path / "docs.jsonl"
    lines.write_text("\n".join(json.dumps({"text": t}) for t in ("one", "", "two")) + "\n", encoding="utf-8")
    assert "".join(documents_text(open_corpus(lines), [EOT])) == "one" + EOT + "two" + EOT
