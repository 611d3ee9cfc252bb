"""What a run keeps on disk for the next: the compiled scanners' class tables.

The scanners classify each code point through two-stage tables read off ``regex`` itself
(:mod:`bpe.split.gpt2_classes`, :mod:`bpe.split.pattern_classes`): every code point run through ``regex``
once, some 0.04 s that every command paid as it started, the largest part of a small run's set-up.  The
tables depend on nothing but the pattern's classes and the installed ``regex`` (its Unicode version), so a
file named by both keeps them for the next process, in ``$BPE_CACHE_DIR`` if it is set (set and empty: no
file is read or written), else ``$XDG_CACHE_HOME/bpe-lab/class-tables`` (``~/.cache/bpe-lab/class-tables``),
beside an installed copy's data sets.

A file is never trusted over the code that made it: it is read only if its first line names this format,
its length is the one its header gives and its SHA-256 is the one it holds.  Anything else (a file cut short
or edited, a folder that cannot be read or written) is as if there were no file: the tables are read off
``regex`` again, and written back where that can be done.  A file is written whole, to a temporary sibling
renamed into place, and the temporary of a run killed meanwhile is removed by the next
(:mod:`bpe.running.leftovers`' rule), so two runs starting together each find a whole file or none.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

import regex

from bpe.defaults import TABLES_FOLDER
from bpe.running.files import remove_orphaned_temporaries, temporary_of
from bpe.split.gpt2_classes import CLASS_PATTERNS
from bpe.split.pattern_classes import CLASSES, scanner_tables

#: The first bytes of every file: what it is, and the layout that follows (``FORMAT``, then stage 1's length
#: as 8 bytes, the SHA-256 of the rest, stage 1 and stage 2).
FORMAT = b"bpe-lab class tables 1\n"
_DIGEST = 32


def cache_dir() -> Path | None:
    """The folder the files are kept in, or ``None`` where ``BPE_CACHE_DIR`` is set and empty."""
    chosen = os.environ.get("BPE_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    home = os.environ.get("XDG_CACHE_HOME", "")  # XDG: a relative one is ignored
    return (Path(home) if os.path.isabs(home) else Path.home() / ".cache") / "bpe-lab" / TABLES_FOLDER


def tables_file(name: str) -> Path | None:
    """The file of pattern ``name``'s tables: named by the pattern, the installed ``regex`` and the classes as
    the code defines them (a hash of their definitions), so that a change to any of them reads ``regex`` again."""
    folder = cache_dir()
    if folder is None:
        return None
    classes = repr(CLASS_PATTERNS if name == "gpt2" else CLASSES[name])
    defined = hashlib.sha256(FORMAT + classes.encode()).hexdigest()[:12]
    return folder / f"{name}-regex-{regex.__version__}-{defined}.tables"


@cache
def stored_tables(name: str) -> tuple[bytes, bytes]:
    """``(stage1, stage2)`` of pattern ``name``'s scanner (``gpt2``, ``cl100k``, ``o200k``), as
    :func:`bpe.split.pattern_classes.scanner_tables` makes them: from this machine's file where it holds them,
    else made and kept there for the next process."""
    path = tables_file(name)
    found = read_tables(path) if path is not None else None
    if found is not None:
        return found
    tables = scanner_tables(name)
    if path is not None:
        write_tables(path, tables)
    return tables


def read_tables(path: Path) -> tuple[bytes, bytes] | None:
    """The two stages a whole file holds, or ``None`` for a file missing, unreadable, cut or changed."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    start = len(FORMAT) + 8 + _DIGEST
    if len(data) < start or not data.startswith(FORMAT):
        return None
    first = int.from_bytes(data[len(FORMAT) : len(FORMAT) + 8], "little")
    body = data[start:]
    if first > len(body) or hashlib.sha256(body).digest() != data[start - _DIGEST : start]:
        return None
    return body[:first], body[first:]


def write_tables(path: Path, tables: tuple[bytes, bytes]) -> None:
    """Keep ``tables`` in ``path``, whole or not at all; a folder that cannot be made or written is passed over
    (the next process reads ``regex`` again), never an error."""
    stage1, stage2 = tables
    body = stage1 + stage2
    temporary = temporary_of(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_orphaned_temporaries(path)
        temporary.write_bytes(FORMAT + len(stage1).to_bytes(8, "little") + hashlib.sha256(body).digest() + body)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink()
        except OSError:
            pass
