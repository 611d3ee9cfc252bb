"""The downloader against a real HTTP server on 127.0.0.1: plain and gzip, resume, restart, 404, offline; the
gutenberg-books recipe; `bpe data list`."""

from __future__ import annotations

import gzip
import random
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bpe import BPEError
from bpe.cli import main
from bpe.data.datasets import DATASETS, resolve_data
from bpe.data.download import fetch_dataset

_rng = random.Random(4)
TEXT = "<|endoftext|>\n".join(
    " ".join("".join(_rng.choices("abcdefghij", k=_rng.randint(1, 8))) for _ in range(60)) for _ in range(300)
).encode()
GZ = gzip.compress(TEXT)


class Server:
    """Serves ``files`` by name; can drop the first N responses half-way and can ignore Range."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.drop_first = 0  # responses cut off half-way before the connection is closed
        self.honour_range = True
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                name = self.path.rsplit("/", 1)[1]
                range_header = self.headers.get("Range")
                server.requests.append((self.path, range_header))
                body = server.files.get(name)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                start = 0
                if range_header and server.honour_range:
                    start = int(range_header.removeprefix("bytes=").rstrip("-"))
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                else:
                    self.send_response(200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                payload = body[start:]
                if server.drop_first > 0:
                    server.drop_first -= 1
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/files"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    s = Server()
    s.files["TinyStoriesV2-GPT4-valid.txt"] = TEXT
    s.files["owt_valid.txt.gz"] = GZ
    monkeypatch.setenv("BPE_DATA_URL", s.url)
    yield s
    s.close()


def test_plain_download(server, tmp_path):
    path = fetch_dataset("tinystories-valid", progress=False)
    assert path == tmp_path / "data" / "TinyStoriesV2-GPT4-valid.txt"
    assert path.read_bytes() == TEXT
    assert resolve_data("tinystories-valid") == path
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no .part left over


def test_gzip_download_is_decompressed(server, tmp_path):
    path = fetch_dataset("owt-valid", progress=False)
    assert path.name == "owt_valid.txt" and path.read_bytes() == TEXT
    assert sorted(p.name for p in path.parent.iterdir()) == ["owt_valid.txt"]


def test_present_file_is_not_downloaded_again(server):
    fetch_dataset("tinystories-valid", progress=False)
    fetch_dataset("tinystories-valid", progress=False)
    assert len(server.requests) == 1


def test_dropped_transfer_resumes_with_range(server):
    server.drop_first = 1
    path = fetch_dataset("tinystories-valid", progress=False)
    assert path.read_bytes() == TEXT
    assert server.requests[0][1] is None
    assert server.requests[1][1] == f"bytes={len(TEXT) // 2}-"


def test_dropped_gzip_transfer_resumes(server):
    server.drop_first = 2
    assert fetch_dataset("owt-valid", progress=False).read_bytes() == TEXT
    assert len(server.requests) == 3 and all(r[1] for r in server.requests[1:])


def test_server_without_range_support_restarts_cleanly(server):
    server.drop_first = 1
    server.honour_range = False
    assert fetch_dataset("tinystories-valid", progress=False).read_bytes() == TEXT
    assert server.requests[1][1] is not None  # we asked to resume, got the whole file, restarted


def test_partial_file_from_an_earlier_run_is_resumed(server, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "owt_valid.txt.gz.part").write_bytes(GZ[:1000])
    assert fetch_dataset("owt-valid", progress=False).read_bytes() == TEXT
    assert server.requests == [("/files/owt_valid.txt.gz", "bytes=1000-")]


def test_complete_part_file_is_not_fetched_again(server, tmp_path):
    # killed while decompressing: the .part is whole; the server answers 416 and we just gunzip
    data = tmp_path / "data"
    data.mkdir()
    (data / "owt_valid.txt.gz.part").write_bytes(GZ)
    assert fetch_dataset("owt-valid", progress=False).read_bytes() == TEXT
    assert len(server.requests) == 1


def test_transfer_that_keeps_failing_leaves_no_final_file(server, tmp_path):
    server.drop_first = 100
    server.honour_range = False
    with pytest.raises(BPEError, match=r"stopped at [\d,]+ of [\d,]+ bytes after 3 attempts; run the same command again"):
        fetch_dataset("tinystories-valid", progress=False)
    data = tmp_path / "data"
    assert not (data / "TinyStoriesV2-GPT4-valid.txt").exists()
    assert (data / "TinyStoriesV2-GPT4-valid.txt.part").exists()


def test_corrupt_gzip_is_an_error_and_removed(server, tmp_path):
    server.files["owt_valid.txt.gz"] = b"this is not gzip data" * 10
    with pytest.raises(BPEError, match="not a valid gzip file"):
        fetch_dataset("owt-valid", progress=False)
    assert list((tmp_path / "data").iterdir()) == []


def test_404_is_a_clear_error(server, tmp_path):
    del server.files["TinyStoriesV2-GPT4-valid.txt"]
    with pytest.raises(BPEError, match=r"HTTP 404 Not Found for http://127\.0\.0\.1:\d+/files/TinyStoriesV2-GPT4-valid\.txt"):
        fetch_dataset("tinystories-valid", progress=False)
    assert list((tmp_path / "data").iterdir()) == []


def test_unreachable_host_says_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "data"))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(BPEError, match=r"cannot reach 127\.0\.0\.1:\d+ .*are you offline\?"):
        fetch_dataset("tinystories", base_url=f"http://127.0.0.1:{port}", progress=False, timeout=5)


def test_not_downloadable_names():
    with pytest.raises(BPEError, match="ships with the repo"):
        fetch_dataset("corpus-en")
    with pytest.raises(BPEError, match="no data set named 'nope'"):
        fetch_dataset("nope")


def test_missing_data_set_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    with pytest.raises(BPEError, match=r"fetch it with: python -m bpe data get owt; offline, use its stand-in webtext-synth"):
        resolve_data("owt")


def test_default_urls_are_the_cs336_sources():
    assert DATASETS["tinystories"].source_url().endswith("roneneldan/TinyStories/resolve/main/TinyStoriesV2-GPT4-train.txt")
    assert DATASETS["owt"].source_url().endswith("stanford-cs336/owt-sample/resolve/main/owt_train.txt.gz")
    assert DATASETS["owt"].gz and not DATASETS["tinystories-valid"].gz


def _fake_book(title: str, paragraphs: list[str], *, crlf: bool = False, bom: bool = False,
               marker: str = "*** ") -> bytes:
    """A Project Gutenberg-shaped text: licence header, START marker, paragraphs, END marker, footer."""
    header = (f"The Project Gutenberg EBook of {title}\n\nLicence text.\n\n"
              f"{marker}START OF THIS PROJECT GUTENBERG EBOOK {title.upper()} ***\n\n\n")
    body = "\n\n".join(paragraphs)
    footer = f"\n\n\n{marker}END OF THIS PROJECT GUTENBERG EBOOK {title.upper()} ***\n\nMore licence.\n"
    text = ("\ufeff" if bom else "") + header + body + footer
    return (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")


def test_gutenberg_books_are_built_from_their_sources(server, monkeypatch):
    from bpe.data import gutenberg

    first = ["Produced by Someone", "  An indented title\nover two lines", "x" * 1_960, "short one", "y" * 2_500, "end"]
    second = ["“Curly” quotes and an accent: café", "z" * 2_000]
    monkeypatch.setattr(gutenberg, "BOOKS", [("First_1", "1-0.txt"), ("Second_2", "2.txt")])
    server.files["1-0.txt"] = _fake_book("First", first, crlf=True, bom=True)
    server.files["2.txt"] = _fake_book("Second", second, marker="***")
    path = fetch_dataset("gutenberg-books", progress=False)
    expected = ("Produced by Someone\n  An indented title\nover two lines\n" + "x" * 1_960 + "\n"  # 2,010 characters
                "<|endoftext|>\nshort one\n" + "y" * 2_500 + "\n"
                "<|endoftext|>\nend\n"  # a book's last document may be short
                "<|endoftext|>\n“Curly” quotes and an accent: café\n" + "z" * 2_000 + "\n")
    assert path.read_text(encoding="utf-8") == expected
    assert resolve_data("gutenberg-books") == path
    assert sorted(p.name for p in (path.parent / "gutenberg-books-src").iterdir()) == ["1-0.txt", "2.txt"]
    requests = len(server.requests)
    path.unlink()
    fetch_dataset("gutenberg-books", progress=False)  # the books are kept: rebuilt without downloading again
    assert len(server.requests) == requests and path.read_text(encoding="utf-8") == expected


def test_gutenberg_book_without_markers_is_a_clear_error(server, monkeypatch):
    from bpe.data import gutenberg

    monkeypatch.setattr(gutenberg, "BOOKS", [("Odd_3", "3.txt")])
    server.files["3.txt"] = b"just some text\n\nwith no markers\n"
    with pytest.raises(BPEError, match=r"3.txt has no '\*\*\* START OF' \.\.\. '\*\*\* END OF' markers"):
        fetch_dataset("gutenberg-books", progress=False)
    assert not DATASETS["gutenberg-books"].path.exists()


def test_gutenberg_books_default_sources_are_gitenberg():
    from bpe.data.gutenberg import BOOKS, SOURCE_URL

    assert len(BOOKS) == 21
    assert SOURCE_URL.format(repo=BOOKS[0][0], file=BOOKS[0][1]) == (
        "https://raw.githubusercontent.com/GITenberg/A-Tale-of-Two-Cities_98/master/98-0.txt")


def test_gutenberg_books_checksum_is_the_measured_corpus():
    """The sha256 the build checks is that of the corpus the published figures used (skipped without it)."""
    import hashlib

    from conftest import SHARED_DATA
    from bpe.data.gutenberg import SHA256

    measured = SHARED_DATA / "gutenberg-books.txt"
    if not measured.is_file():
        pytest.skip("the measured corpus is not on this machine")
    assert hashlib.sha256(measured.read_bytes()).hexdigest() == SHA256


def test_a_download_that_cannot_fit_is_refused_before_writing(server, tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(BPEError, match=r"downloading TinyStoriesV2-GPT4-valid.txt needs .* has only 1.0 KB free"):
        fetch_dataset("tinystories-valid", progress=False)
    assert list((tmp_path / "data").iterdir()) == []  # not even a .part


def test_data_list_shows_every_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    (tmp_path / "TinyStoriesV2-GPT4-valid.txt").write_bytes(b"x" * 2500)
    assert main(["data", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(rows) == ["gutenberg-sample", "corpus-en", "tinystories-sample", "gutenberg-books", "tinystories",
                          "tinystories-valid", "owt", "owt-valid",
                          "webtext-synth", "tinystories-synth"]
    assert rows["tinystories-valid"][1:5] == ["yes", "2.5", "KB", str(tmp_path / "TinyStoriesV2-GPT4-valid.txt")]
    assert rows["owt"][1:4] == ["no", "-", str(tmp_path / "owt_train.txt")]
    assert rows["corpus-en"][1] == "yes"


def test_a_failed_books_download_leaves_no_empty_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("BPE_DATA_URL", "http://127.0.0.1:9/nothing")  # nothing listens on the discard port
    assert main(["data", "get", "gutenberg-books"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: cannot reach 127.0.0.1:9")
    assert "offline, use its shipped sample gutenberg-sample" in err and "python -m bpe bench --data gutenberg-sample" in err
    assert not (tmp_path / "gutenberg-books-src").exists()
