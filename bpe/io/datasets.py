"""Data set names: what ``--data NAME`` / ``make bench DATA=NAME`` resolve to.

Shipped with the repo (always present): ``gutenberg-sample`` (the default bench corpus),
``corpus-en`` and ``tinystories-sample`` (CS336 fixtures).  Downloaded into ``data/`` on request:
``gutenberg-books`` (the benchmark corpus, built from 21 downloaded books by
:mod:`bpe.io.gutenberg`), ``tinystories``, ``tinystories-valid``, ``owt``, ``owt-valid`` (see
``python -m bpe data``).

Anything that is not a name is taken as a path to a text file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bpe.defaults import DATASET, VOCAB_SIZE, WEB_VOCAB_SIZE
from bpe.errors import BPEError

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    """Where downloaded data sets live: ``$BPE_DATA_DIR`` or ``data/`` at the repo root."""
    return Path(os.environ.get("BPE_DATA_DIR") or REPO_ROOT / "data")


@dataclass(frozen=True)
class Dataset:
    name: str
    filename: str
    description: str
    shipped_path: str | None = None  # relative to the repo root, for data shipped in the repo
    url: str | None = None  # where a downloadable data set comes from
    gz: bool = False  # the download is gzip-compressed and is decompressed into ``filename``
    vocab_size: int = VOCAB_SIZE  # the vocab a command uses on this data when given none
    built: bool = False  # made from several downloads by the project's code (bpe/io/gutenberg.py)

    @property
    def path(self) -> Path:
        if self.shipped_path is not None:
            return REPO_ROOT / self.shipped_path
        return data_dir() / self.filename

    @property
    def downloadable(self) -> bool:
        return self.shipped_path is None

    def source_url(self, base_url: str | None = None) -> str:
        """The download URL; ``base_url`` (or ``$BPE_DATA_URL``) replaces everything before the file name."""
        assert self.url is not None, f"{self.name} is not downloadable"
        base_url = base_url or os.environ.get("BPE_DATA_URL")
        if not base_url:
            return self.url
        return base_url.rstrip("/") + "/" + self.url.rsplit("/", 1)[1]


DEFAULT_DATASET = DATASET

_TINYSTORIES_URL = "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
_OWT_URL = "https://huggingface.co/datasets/stanford-cs336/owt-sample/resolve/main/"

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in [
        Dataset("gutenberg-sample", "gutenberg-sample.txt",
                "2.3 MB: every 6th ~2 KB document of 21 Project Gutenberg books (default)",
                "corpora/gutenberg-sample.txt"),
        Dataset("corpus-en", "corpus.en", "133 KB: CS336 train_bpe reference corpus",
                "tests/fixtures/corpus.en"),
        Dataset("tinystories-sample", "tinystories_sample.txt", "4 KB: CS336 TinyStories fixture",
                "tests/fixtures/tinystories_sample.txt"),
        Dataset("gutenberg-books", "gutenberg-books.txt",
                "14 MB: 21 Project Gutenberg books in ~2 KB documents, built from GITenberg (benchmark corpus)",
                built=True),
        Dataset("tinystories", "TinyStoriesV2-GPT4-train.txt", "2.1 GB: TinyStories V2 (GPT-4) train",
                url=_TINYSTORIES_URL + "TinyStoriesV2-GPT4-train.txt"),
        Dataset("tinystories-valid", "TinyStoriesV2-GPT4-valid.txt", "22 MB: TinyStories V2 (GPT-4) valid",
                url=_TINYSTORIES_URL + "TinyStoriesV2-GPT4-valid.txt"),
        Dataset("owt", "owt_train.txt", "11 GB: CS336 OpenWebText sample, train (gzip download)",
                url=_OWT_URL + "owt_train.txt.gz", gz=True, vocab_size=WEB_VOCAB_SIZE),
        Dataset("owt-valid", "owt_valid.txt", "290 MB: CS336 OpenWebText sample, valid (gzip download)",
                url=_OWT_URL + "owt_valid.txt.gz", gz=True, vocab_size=WEB_VOCAB_SIZE),
    ]
}


def resolve_data(name_or_path: str | os.PathLike | None) -> Path:
    """The file a data name or path stands for, or a :class:`BPEError` saying how to get it."""
    if name_or_path is None:
        name_or_path = DEFAULT_DATASET
    key = str(name_or_path)
    dataset = DATASETS.get(key)
    if dataset is not None:
        if not dataset.path.exists():
            if dataset.downloadable:
                raise BPEError(
                    f"data set {key!r} is not downloaded (expected {dataset.path}); "
                    f"fetch it with: make data DATA={key}   (or: python -m bpe data get {key})"
                )
            raise BPEError(f"shipped data set {key!r} is missing from the checkout: {dataset.path}")
        return dataset.path
    path = Path(key)
    if not path.exists():
        raise BPEError(
            f"no data set or file named {key!r}; data sets: {', '.join(DATASETS)} (or give a file path)"
        )
    return path


def data_label(name_or_path: str | os.PathLike | None) -> str:
    """A short label for tables and file names: the data set name, or the file's stem."""
    if name_or_path is None:
        return DEFAULT_DATASET
    key = str(name_or_path)
    return key if key in DATASETS else Path(key).stem


def default_vocab_size(name_or_path: str | os.PathLike | None) -> int:
    """The vocab size for this data when none is given: the data set's own, else :data:`VOCAB_SIZE`.

    >>> default_vocab_size("owt"), default_vocab_size("tinystories"), default_vocab_size("some/file.txt")
    (32000, 10000, 10000)
    """
    dataset = DATASETS.get(str(name_or_path if name_or_path is not None else DEFAULT_DATASET))
    return dataset.vocab_size if dataset is not None else VOCAB_SIZE
