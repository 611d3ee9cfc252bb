"""Downloading the CS336 data sets into ``data/``: progress bar, resume, never a truncated file.

``python -m bpe data list`` is :func:`print_datasets`; ``python -m bpe data get NAME`` (or ``make data
DATA=NAME``) is :func:`get_dataset`, which makes a generated data set and downloads any other with
:func:`fetch_dataset`:

1. the bytes go to ``data/<remote name>.part``; if that file is already there (an earlier run was
   interrupted) the request asks for the rest with an HTTP ``Range`` header.  A server that answers
   ``206 Partial Content`` is appended to; one that answers ``200`` sends the whole file again and
   the ``.part`` file is restarted from zero (a clean restart);
2. a transfer that ends early (connection dropped) is resumed the same way, a few times, before
   giving up with an error that says to run the command again (the ``.part`` file is kept for that);
3. the size is checked against what the server announced (``Content-Length`` / ``Content-Range``);
4. a ``.gz`` download is decompressed to a temporary name (gzip checks its own CRC and length);
5. only then is the result renamed to its final name, so a file under the final name is complete.

Set ``$BPE_DATA_URL`` (or pass ``base_url``) to fetch from a mirror: the file name is appended to it.
The tests serve files from a local ``http.server`` this way.  Standard library only, plus tqdm.
"""

from __future__ import annotations

import gzip
import hashlib
import http.client
import os
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

from tqdm import tqdm

from bpe.data import gutenberg
from bpe.data.datasets import (
    DATASETS,
    Dataset,
    ensure_generated,
    generated_file,
    generated_request,
    make_data_folder,
    offline_way,
)
from bpe.errors import BPEError, signals_as_interrupt
from bpe.running.sizes import format_size, parse_size

#: Seconds to wait for a connection or for the next bytes before calling the host unreachable
#: (a failed name lookup or a refused connection is reported at once).
TIMEOUT_SECONDS = 10
#: How many times a dropped transfer is resumed within one call.
ATTEMPTS = 3
BLOCK_BYTES = 1 << 20


def fetch_dataset(name: str, *, base_url: str | None = None, progress: bool = True,
                  timeout: float = TIMEOUT_SECONDS) -> Path:
    """Download data set ``name`` into the data directory unless it is already there; its path."""
    dataset = DATASETS.get(name)
    if dataset is None:
        raise BPEError(f"no data set named {name!r}; data sets: {', '.join(DATASETS)}")
    if not dataset.downloadable:
        raise BPEError(f"data set {name!r} ships with the repo ({dataset.path}); nothing to download")
    final = dataset.path
    if final.exists():
        return final
    make_data_folder(final.parent)
    if dataset.built:
        return fetch_books(final, base_url=base_url, progress=progress, timeout=timeout)
    url = dataset.source_url(base_url)
    part = final.parent / (url.rsplit("/", 1)[1] + ".part")
    download(url, part, progress=progress, timeout=timeout)
    if dataset.gz:
        _gunzip(part, final, progress=progress)
    else:
        os.replace(part, final)
    return final


def download(url: str, part: Path, *, progress: bool = True, timeout: float = TIMEOUT_SECONDS) -> None:
    """Fetch ``url`` into ``part``, resuming from what ``part`` already holds; complete or an error."""
    for attempt in range(ATTEMPTS):
        have = part.stat().st_size if part.exists() else 0
        total = _transfer(url, part, have, progress=progress, timeout=timeout)
        got = part.stat().st_size
        if total is None or got == total:
            return
        if got > total:  # the file changed on the server: start over
            part.unlink()
    raise BPEError(
        f"download of {url} stopped at {got:,} of {total:,} bytes after {ATTEMPTS} attempts; "
        f"run the same command again to resume (partial data kept in {part})"
    )


def _transfer(url: str, part: Path, have: int, *, progress: bool, timeout: float) -> int | None:
    """One HTTP request: append to ``part`` from byte ``have``.  Returns the full size, if announced."""
    request = urllib.request.Request(url, headers={"User-Agent": "bpe-lab"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left after byte `have`: complete, or not this file
            if _content_range_total(exc.headers.get("Content-Range")) == have:
                return have
            part.unlink()
            return _transfer(url, part, 0, progress=progress, timeout=timeout)
        raise BPEError(f"download failed: HTTP {exc.code} {exc.reason} for {url}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise BPEError(
            f"cannot reach {urllib.parse.urlparse(url).netloc} to download {url} ({reason}); "
            "are you offline? (a mirror can be given with BPE_DATA_URL)"
        ) from None
    with response:
        if response.status == 206:
            total = _content_range_total(response.headers.get("Content-Range"))
            mode = "ab"
        else:  # 200: the whole file, whatever we asked for
            have, mode = 0, "wb"
            length = response.headers.get("Content-Length")
            total = int(length) if length is not None else None
        if total is not None:  # refuse now what cannot fit, rather than fill the disk and fail
            from bpe.running.files import check_free_space  # noqa: PLC0415 (regex: off the start-up of bpe data)

            check_free_space(part.parent, total - have, f"downloading {url.rsplit('/', 1)[-1]}")
        bar = tqdm(total=total, initial=have, unit="B", unit_scale=True, desc=part.name.removesuffix(".part"),
                   disable=not progress, file=sys.stderr)
        with bar, open(part, mode) as out:
            while True:
                try:
                    block = response.read(BLOCK_BYTES)
                except (http.client.IncompleteRead, socket.timeout, ConnectionError) as exc:
                    if isinstance(exc, http.client.IncompleteRead):
                        out.write(exc.partial)
                    break  # the caller sees the short size and resumes
                if not block:
                    break
                out.write(block)
                bar.update(len(block))
    return total


def _content_range_total(header: str | None) -> int | None:
    """``bytes 100-199/200`` -> 200 (None when the total is ``*`` or missing)."""
    if not header or "/" not in header:
        return None
    total = header.rsplit("/", 1)[1].strip()
    return int(total) if total.isdigit() else None


def _gunzip(part: Path, final: Path, *, progress: bool) -> None:
    """Decompress ``part`` into ``final`` through a temporary name; a corrupt archive is removed."""
    tmp = final.with_name(final.name + ".tmp")
    bar = tqdm(total=part.stat().st_size, unit="B", unit_scale=True, desc=f"gunzip {final.name}",
               disable=not progress, file=sys.stderr)
    try:
        with bar, open(part, "rb") as raw, gzip.open(raw) as src, open(tmp, "wb") as dst:
            while block := src.read(BLOCK_BYTES):
                dst.write(block)
                bar.update(raw.tell() - bar.n)
    except (OSError, EOFError, zlib.error) as exc:
        tmp.unlink(missing_ok=True)
        part.unlink(missing_ok=True)
        raise BPEError(f"downloaded {part.name} is not a valid gzip file ({exc}); removed it, run again") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, final)
    part.unlink()


def fetch_books(final: Path, *, base_url: str | None = None, progress: bool = True,
                timeout: float = TIMEOUT_SECONDS) -> Path:
    """``gutenberg-books``: download the 21 books (resuming, like any data set) into
    ``<data>/gutenberg-books-src/`` and build ``final`` from them (:mod:`bpe.data.gutenberg`) through a
    temporary name."""
    base_url = base_url or os.environ.get("BPE_DATA_URL")
    sources = final.parent / "gutenberg-books-src"
    made = not sources.exists()
    sources.mkdir(parents=True, exist_ok=True)
    try:
        return _build_books(final, sources, base_url, progress, timeout)
    except BaseException:
        if made and not any(sources.iterdir()):  # nothing fetched: leave no empty folder behind
            sources.rmdir()
        raise


def _build_books(final: Path, sources: Path, base_url: str | None, progress: bool, timeout: float) -> Path:
    texts = []
    for repo, file in gutenberg.BOOKS:
        url = f"{base_url.rstrip('/')}/{file}" if base_url else gutenberg.SOURCE_URL.format(repo=repo, file=file)
        path = sources / file
        if not path.exists():
            part = sources / (file + ".part")
            download(url, part, progress=progress, timeout=timeout)
            os.replace(part, path)
        try:
            texts.append((file, path.read_bytes().decode("utf-8")))
        except UnicodeDecodeError as exc:
            raise BPEError(f"{path} is not UTF-8 (byte offset {exc.start}); remove it and run again") from None
    data = gutenberg.build_corpus(texts).encode("utf-8")
    tmp = final.with_name(final.name + ".tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    digest = hashlib.sha256(data).hexdigest()
    if digest != gutenberg.SHA256 and not base_url:
        print(f"note: {final.name} differs from the corpus the published figures used (sha256 {digest[:16]} "
              f"instead of {gutenberg.SHA256[:16]}): a source file changed upstream", file=sys.stderr, flush=True)
    return final


def print_datasets(out=None) -> None:
    """``data list``: every data set's name, whether it is present, its size, path and description."""
    out = out or sys.stdout
    print(f"{'name':<20}{'present':<9}{'size':>10}  {'path':<50} description", file=out)
    for dataset in DATASETS.values():
        present = dataset.path.is_file()  # a generated one: its default size
        shown = format_size(dataset.path.stat().st_size) if present else "-"
        print(f"{dataset.name:<20}{'yes' if present else 'no':<9}{shown:>10}  {str(dataset.path):<50} "
              f"{dataset.description}", file=out)


def get_dataset(name: str, size: str | None = None, *, progress: bool = True, out=None) -> Path:
    """``data get NAME``: download a data set, or generate one (``webtext-synth``, ``--size 20MB``)."""
    out = out or sys.stdout
    generated = generated_request(name)
    if generated is not None:
        return _get_generated(*generated, size, progress=progress, out=out)
    if size is not None:
        raise BPEError(f"--size is for generated data sets (webtext-synth); {name!r} is downloaded whole")
    with signals_as_interrupt():  # SIGTERM: what is half-written goes (a download's .part stays, to resume)
        try:
            path = fetch_dataset(name, progress=progress)
        except BPEError as exc:  # offline, or the host failed: name the way on without it
            way = offline_way(DATASETS[name]) if name in DATASETS else ""
            raise BPEError(f"{exc}; {way}" if way else str(exc)) from None
    print(f"{name}: {path} ({format_size(path.stat().st_size)})", file=out)
    return path


#: A generated file's statistics (documents, distinct pre-tokens) are measured up to this size.
STATISTICS_MAX_BYTES = 2_000_000_000


def _get_generated(dataset: Dataset, size: int, asked: str | None, *, progress: bool, out) -> Path:
    """Generate the file unless it is there, then print its statistics (up to :data:`STATISTICS_MAX_BYTES`)."""
    from bpe.data.generated import cached_statistics  # noqa: PLC0415 (numpy: off the start-up of bpe data)

    if asked is not None:
        size = parse_size(asked, "--size")
    if generated_file(dataset.name, size).exists():
        print(f"{dataset.name}: {generated_file(dataset.name, size)} is already there (delete it to make it again)",
              file=sys.stderr, flush=True)
    path = ensure_generated(dataset, size, progress=progress)
    if size > STATISTICS_MAX_BYTES:  # the pass would count every pre-token with the plain counter: hours, and
        # the memory of v5's counting (docs/v8.md trains 11.9 GB of it); what was asked for is the file
        print(f"{dataset.name}: {path} ({format_size(path.stat().st_size)}; its statistics are measured up to "
              f"{format_size(STATISTICS_MAX_BYTES)} only)", file=out)
        return path
    stats, _ = cached_statistics(path, log=sys.stderr)
    print(f"{dataset.name}: {path}\n  {stats['bytes']:,} bytes, {stats['documents']:,} documents "
          f"({stats['bytes'] / max(stats['documents'], 1):,.0f} bytes each), "
          f"{stats['distinct_pretokens']:,} distinct pre-tokens ({stats['distinct_pretokens_per_mb']:,.0f} per MB), "
          f"{stats['non_ascii_share']:.2%} of bytes non-ASCII", file=out)
    return path
