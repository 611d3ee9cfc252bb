"""Data set names: what ``--data NAME`` / ``make bench DATA=NAME`` resolve to.

Shipped with the repo (always present): ``gutenberg-sample`` (the default bench corpus),
``corpus-en`` and ``tinystories-sample`` (CS336 fixtures).  Downloaded into ``data/`` on request:
``gutenberg-books`` (the benchmark corpus, built from 21 downloaded books by
:mod:`bpe.data.gutenberg`), ``tinystories``, ``tinystories-valid``, ``owt``, ``owt-valid`` (see
``python -m bpe data``).  Generated
on this machine: ``webtext-synth`` (web-like text, :mod:`bpe.data.webtext`) and ``tinystories-synth``
(children's stories like TinyStories, :mod:`bpe.data.tinystories`), at any size:
``webtext-synth-20MB`` names ``data/webtext-synth-20MB.txt``, and plain ``webtext-synth`` the default
100 MB.  A generated data set that is missing is generated when first named (it is deterministic and
needs no network; 100 MB take about 40 s).

Anything that is not a name is taken as a path: a text file, or any corpus the training reads
(:mod:`bpe.corpus.corpus`: a directory, a glob, JSON lines, Parquet, an ``s3://`` or ``hf://`` URL).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bpe.defaults import DATASET, TABLES_FOLDER, VOCAB_SIZE, WEB_VOCAB_SIZE
from bpe.errors import BPEError, signals_as_interrupt
from bpe.interface import IN_CHECKOUT, REPO_ROOT, command, typed_with
from bpe.running.progress import wants_progress
from bpe.running.sizes import parse_size

#: Where an installed wheel keeps the shipped files: pyproject.toml packs each checkout folder
#: below into the package under this name.
_INSTALLED_FOLDERS = {"corpora": "corpora", "tests/fixtures": "fixtures"}


def shipped_file(relative: str) -> Path:
    """A file shipped with the project, named by its path in the checkout (``corpora/gutenberg-sample.txt``):
    there in a checkout, or its copy inside the installed package."""
    if IN_CHECKOUT:
        return REPO_ROOT / relative
    folder, name = relative.rsplit("/", 1)
    return Path(__file__).resolve().parents[1] / _INSTALLED_FOLDERS[folder] / name


def data_dir() -> Path:
    """Where downloaded and generated data sets, and the cached reference merges, live: ``$BPE_DATA_DIR``,
    else ``data/`` at the repo root in a checkout, else the user's cache folder (``$XDG_CACHE_HOME/bpe-lab``,
    ``~/.cache/bpe-lab`` by default): an installed copy has no repo root, and the folder a command happens
    to run in is no place to leave them (each folder would download its own)."""
    given = os.environ.get("BPE_DATA_DIR")
    if given:
        return Path(given)
    if IN_CHECKOUT:
        return REPO_ROOT / "data"
    cache = os.environ.get("XDG_CACHE_HOME", "")  # XDG: a relative one is ignored
    return (Path(cache) if os.path.isabs(cache) else Path.home() / ".cache") / "bpe-lab"


def make_data_folder(folder: Path) -> None:
    """Create ``folder`` (within :func:`data_dir`) and its parents.  Where this creates the user's cache
    folder, it says so in one line on stderr: the data goes to a place the user did not name (the first time;
    a folder that holds only the class tables, which every run keeps there silently, is new to the data)."""
    root = data_dir()
    new = not root.exists() or [p.name for p in root.iterdir()] == [TABLES_FOLDER]
    folder.mkdir(parents=True, exist_ok=True)
    if new and not IN_CHECKOUT and not os.environ.get("BPE_DATA_DIR"):
        print(f"bpe-lab keeps its data sets and cached reference merges in {root} (the user's cache folder: "
              f"no checkout around this install; BPE_DATA_DIR=DIR moves them)", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Dataset:
    name: str
    filename: str
    description: str
    shipped_path: str | None = None  # relative to the repo root, for data shipped in the repo (and the wheel)
    url: str | None = None  # where a downloadable data set comes from
    gz: bool = False  # the download is gzip-compressed and is decompressed into ``filename``
    vocab_size: int = VOCAB_SIZE  # the vocab a command uses on this data when given none
    built: bool = False  # made from several downloads by the project's code (bpe/data/gutenberg.py)
    generated: bool = False  # made on this machine by a generator (sized names: ``NAME-20MB``)
    stand_in: str | None = None  # the data set to use offline instead (generated or shipped)
    full_size: int | None = None  # a download's size in bytes (about): what `bpe estimate` assumes offline

    @property
    def path(self) -> Path:
        if self.shipped_path is not None:
            return shipped_file(self.shipped_path)
        return data_dir() / self.filename

    @property
    def downloadable(self) -> bool:
        return self.shipped_path is None and not self.generated

    def source_url(self, base_url: str | None = None) -> str:
        """The download URL; ``base_url`` (or ``$BPE_DATA_URL``) replaces everything before the file name."""
        assert self.url is not None, f"{self.name} is not downloadable"
        base_url = base_url or os.environ.get("BPE_DATA_URL")
        if not base_url:
            return self.url
        return base_url.rstrip("/") + "/" + self.url.rsplit("/", 1)[1]


DEFAULT_DATASET = DATASET
#: The size of a generated data set named without one (``webtext-synth``).
DEFAULT_GENERATED_SIZE = 100_000_000

_TINYSTORIES_URL = "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
_OWT_URL = "https://huggingface.co/datasets/stanford-cs336/owt-sample/resolve/main/"

DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in [
        Dataset("gutenberg-sample", "gutenberg-sample.txt",
                "2.3 MB: every 6th ~2 KB document of 21 Project Gutenberg books (default)",
                "corpora/gutenberg-sample.txt"),
        Dataset("corpus-en", "corpus.en", "133 KB: CS336 train_bpe test corpus",
                "tests/fixtures/corpus.en"),
        Dataset("tinystories-sample", "tinystories_sample.txt", "4 KB: CS336 TinyStories fixture",
                "tests/fixtures/tinystories_sample.txt"),
        Dataset("gutenberg-books", "gutenberg-books.txt",
                "14 MB: 21 Project Gutenberg books in ~2 KB documents, built from GITenberg (benchmark corpus)",
                built=True, stand_in="gutenberg-sample"),
        Dataset("tinystories", "TinyStoriesV2-GPT4-train.txt", "2.1 GB: TinyStories V2 (GPT-4) train",
                url=_TINYSTORIES_URL + "TinyStoriesV2-GPT4-train.txt", stand_in="tinystories-synth",
                full_size=2_200_000_000),
        Dataset("tinystories-valid", "TinyStoriesV2-GPT4-valid.txt", "22 MB: TinyStories V2 (GPT-4) valid",
                url=_TINYSTORIES_URL + "TinyStoriesV2-GPT4-valid.txt", stand_in="tinystories-synth",
                full_size=22_000_000),
        Dataset("owt", "owt_train.txt", "11 GB: CS336 OpenWebText sample, train (gzip download)",
                url=_OWT_URL + "owt_train.txt.gz", gz=True, vocab_size=WEB_VOCAB_SIZE, stand_in="webtext-synth",
                full_size=11_900_000_000),
        Dataset("owt-valid", "owt_valid.txt", "290 MB: CS336 OpenWebText sample, valid (gzip download)",
                url=_OWT_URL + "owt_valid.txt.gz", gz=True, vocab_size=WEB_VOCAB_SIZE, stand_in="webtext-synth",
                full_size=290_000_000),
        Dataset("webtext-synth", "webtext-synth-100MB.txt",
                "100 MB (any size: webtext-synth-20MB): generated web-like text, see docs/data.md",
                generated=True, vocab_size=WEB_VOCAB_SIZE),
        Dataset("tinystories-synth", "tinystories-synth-100MB.txt",
                "100 MB (any size: tinystories-synth-20MB): generated TinyStories-like stories, see docs/data.md",
                generated=True),
    ]
}


#: The size of the stand-in a hint proposes for a data set that cannot be had offline (a minute to
#: generate, a bench of seconds at the default vocab).
STAND_IN_SIZE = "20MB"


def offline_way(dataset: Dataset) -> str:
    """The sentence that leads on from a data set that is not here and cannot be had offline: its stand-in,
    and the commands that make it and run on it, in the words of the interface in use (:mod:`bpe.interface`):
    the command being run with the stand-in for its data and every other option as typed, else a bench.

    >>> os.environ.pop("BPE_VIA_MAKE", None) and None
    >>> print(offline_way(DATASETS["tinystories"]))  # doctest: +NORMALIZE_WHITESPACE
    offline, use its stand-in tinystories-synth (generated TinyStories-like stories, no network needed):
    python -m bpe data get tinystories-synth --size 20MB, then python -m bpe bench --data tinystories-synth-20MB
    """
    if dataset.stand_in is None:
        return ""
    stand_in = DATASETS[dataset.stand_in]
    runs_on = f"{stand_in.name}-{STAND_IN_SIZE}" if stand_in.generated else stand_in.name
    run = typed_with(dataset.name, runs_on) or command("bench", ("--data", runs_on))
    if stand_in.generated:
        what = stand_in.description.split("): ", 1)[-1].split(", see")[0]
        return (f"offline, use its stand-in {stand_in.name} ({what}, no network needed): "
                f"{command('data', ('--data', stand_in.name), ('--size', STAND_IN_SIZE))}, then {run}")
    return f"offline, use its shipped sample {stand_in.name} ({stand_in.description}), no download needed: {run}"


#: The module whose ``generate(path, size, on_bytes=...)`` makes each generated data set.
GENERATORS = {"webtext-synth": "bpe.data.webtext", "tinystories-synth": "bpe.data.tinystories"}

_SIZED_NAME = re.compile(r"^(?P<name>[a-z][\w-]*?)-(?P<size>\d+(?:\.\d+)?[kmgt]?i?b)$", re.IGNORECASE)


def size_label(size: int) -> str:
    """The size part of a generated file's name: ``20MB``, ``500KB``, ``1234B`` (exact, decimal units).

    >>> size_label(20_000_000), size_label(500_000), size_label(1234)
    ('20MB', '500KB', '1234B')
    """
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"


def generated_file(name: str, size: int) -> Path:
    """Where generated data set ``name`` of ``size`` bytes lives: ``data/NAME-SIZE.txt``."""
    return data_dir() / f"{name}-{size_label(size)}.txt"


def generated_request(key: str) -> tuple[Dataset, int] | None:
    """``webtext-synth`` -> (that data set, its default size); ``webtext-synth-20MB`` -> (..., 20_000_000)."""
    dataset = DATASETS.get(key)
    if dataset is not None:
        return (dataset, DEFAULT_GENERATED_SIZE) if dataset.generated else None
    match = _SIZED_NAME.match(key)
    if match is None:
        return None
    dataset = DATASETS.get(match.group("name"))
    if dataset is None or not dataset.generated:
        return None
    return dataset, parse_size(match.group("size"))


def ensure_generated(dataset: Dataset, size: int, *, progress: bool | None = None) -> Path:
    """The file of generated data set ``dataset`` at ``size``, generating it if missing.

    It says so on stderr; ``progress`` (default: when stderr is a terminal) adds a bar.
    """
    from tqdm import tqdm  # noqa: PLC0415 (third-party: off the start-up of bpe.cli, which imports this)

    generate = importlib.import_module(GENERATORS[dataset.name]).generate
    progress = wants_progress(False) if progress is None else progress
    path = generated_file(dataset.name, size)
    if not path.exists():
        from bpe.running.files import check_free_space  # noqa: PLC0415 (regex: off the start-up of bpe.cli)

        make_data_folder(path.parent)
        check_free_space(path.parent, size, f"generating {path.name}")  # before a word is written
        print(f"generating {path} (once; it is kept for next time)", file=sys.stderr, flush=True)
        with signals_as_interrupt(), tqdm(total=size, unit="B", unit_scale=True, desc=path.name,
                                          disable=not progress, file=sys.stderr) as bar:
            generate(path, size, on_bytes=bar.update)  # ended by a signal: its temporary file is removed
    return path


def resolve_data(name_or_path: str | os.PathLike | None) -> Path | str:
    """The file a data name or path stands for, or a :class:`BPEError` saying how to get it.

    A generated data set (``webtext-synth``, ``webtext-synth-20MB``) is generated if missing.  A path that
    is there (a file, a directory) is returned as a :class:`Path`; a glob or an fsspec URL as it was given,
    for the corpus reader (:mod:`bpe.corpus.corpus`), which lists what it stands for.
    """
    if name_or_path is None:
        name_or_path = DEFAULT_DATASET
    key = str(name_or_path)
    generated = generated_request(key)
    if generated is not None and not Path(key).exists():
        return ensure_generated(*generated)
    dataset = DATASETS.get(key)
    if dataset is not None:
        if not dataset.path.exists():
            if dataset.downloadable:
                raise BPEError(f"data set {key!r} is not downloaded (expected {dataset.path}); fetch it with: "
                               f"{command('data', ('--data', key))}; {offline_way(dataset)}")
            raise BPEError(f"shipped data set {key!r} is missing from the checkout: {dataset.path}")
        return dataset.path
    path = Path(key)
    if not path.exists():
        if "://" in key or any(c in key for c in "*?["):  # a URL or a glob: bpe/corpus/corpus.py reads it
            return key
        raise BPEError(
            f"no data set or file named {key!r}; data sets: {', '.join(DATASETS)} (or give a file path, a "
            "directory, a glob or a URL)"
        )
    return path


def shown_path(path: str | os.PathLike) -> str:
    """``path`` as recorded in published JSON: relative to the repo when inside it, so a committed
    report names no directory of the machine that made it.

    >>> shown_path(REPO_ROOT / "corpora" / "gutenberg-sample.txt"), shown_path("s3://bucket/shards/*.parquet")
    ('corpora/gutenberg-sample.txt', 's3://bucket/shards/*.parquet')
    """
    if "://" in str(path):  # a URL (a corpus read through fsspec) names no local file
        return str(path)
    resolved = Path(path).resolve()
    try:
        return str(resolved.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def data_label(name_or_path: str | os.PathLike | None) -> str:
    """A short label for tables and file names: the data set name, or the file's stem."""
    if name_or_path is None:
        return DEFAULT_DATASET
    key = str(name_or_path)
    if key in DATASETS or generated_request(key) is not None:
        return key
    # a glob or a URL: the folder it reads from (``shards/*.parquet`` -> ``shards``)
    return Path(re.split(r"[*?\[]", key)[0]).name if re.search(r"[*?\[]", key) else Path(key).stem


def default_vocab_size(name_or_path: str | os.PathLike | None) -> int:
    """The vocab size for this data when none is given: the data set's own, else :data:`VOCAB_SIZE`.

    >>> default_vocab_size("owt"), default_vocab_size("tinystories"), default_vocab_size("webtext-synth-20MB")
    (32000, 10000, 32000)
    >>> default_vocab_size("some/file.txt")
    10000
    """
    key = str(name_or_path if name_or_path is not None else DEFAULT_DATASET)
    dataset = DATASETS.get(key)
    if dataset is None:
        generated = generated_request(key)
        dataset = generated[0] if generated is not None else None
    return dataset.vocab_size if dataset is not None else VOCAB_SIZE
