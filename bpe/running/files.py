"""Files written whole: a file (or a set of files) is either complete or absent, and an unusable place is one
line before anything is written.

Every command that writes (a tokenizer's files, a result file, a page, a generated data set, the reference
cache) writes through here: each file into a temporary sibling, flushed, then renamed into place, so an
error, Ctrl-C or a full disk leaves the old file or none, never half of one; :func:`check_writable_dir` and
:func:`check_free_space` say before the work why it could not be written.  A temporary file is named by its
process's pid (``.NAME.PID.tmp``): one that a run killed outright left is removed by the next write of ``NAME``
(:func:`remove_orphaned_temporaries`, :mod:`bpe.running.leftovers`' rule).  A folder is swapped for another in one step
where the system can (:func:`exchange`).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from bpe.errors import BPEError
from bpe.running.leftovers import remove_orphans
from bpe.running.sizes import format_size


def check_writable_dir(out_dir: str | os.PathLike) -> Path:
    """``out_dir`` if a file can be created in it (it may not exist yet), else a clear :class:`BPEError`.

    For single files written beside others (``bench --json out/bench.json``); nothing is created.
    """
    out_dir = Path(out_dir)
    existing = out_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise BPEError(f"cannot create output directory {out_dir}: {existing} is a file, not a directory")
    try:  # os.access is not enough (root, read-only mounts): try to create a file
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".bpe-write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BPEError(unwritable(out_dir, existing, exc)) from None
    return out_dir


#: Why a directory refused a new file, by errno; any other (/proc answers "No such file or directory"
#: for a directory that is there) is said as "not writable".
_REFUSALS = {errno.EACCES: "permission denied", errno.EPERM: "permission denied",
             errno.EROFS: "read-only file system", errno.ENOSPC: "no space left on the device",
             errno.EDQUOT: "disk quota exceeded"}


def unwritable(out_dir: Path, existing: Path, exc: OSError) -> str:
    """The sentence for an output directory in which no file can be made: ``out_dir`` as given, and the
    real reason, in the directory that refused it (``existing``, the nearest one there).

    >>> unwritable(Path("/proc/foo"), Path("/proc"), FileNotFoundError(errno.ENOENT, "No such file or directory"))
    'cannot create directory /proc/foo: /proc is not writable'
    >>> unwritable(Path("out/x"), Path("out/x"), PermissionError(errno.EACCES, "Permission denied"))
    'cannot write in directory out/x: permission denied'
    """
    why = _REFUSALS.get(exc.errno)
    if existing == out_dir:
        return f"cannot write in directory {out_dir}: {why or 'not writable'}"
    return f"cannot create directory {out_dir}: {existing} is not writable" + (f" ({why})" if why else "")


def write_files_atomic(out_dir: Path, files: dict[str, str]) -> None:
    """Write every ``name: text`` to a temporary file in ``out_dir``, then rename them all into place."""
    out_dir.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            tmp = temporary_of(out_dir / name)
            remove_orphaned_temporaries(out_dir / name)
            temps.append((tmp, out_dir / name))
            write_flushed(tmp, text, shown=out_dir / name)
        for tmp, final in temps:
            os.replace(tmp, final)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)


def temporary_of(path: Path) -> Path:
    """The temporary sibling this process writes ``path`` into before the rename: ``.NAME.PID.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def remove_orphaned_temporaries(path: Path) -> None:
    """Remove the temporary siblings of ``path`` (:func:`temporary_of`) that runs killed outright left: those of
    this user whose process is gone (:func:`bpe.running.leftovers.remove_orphans`)."""
    remove_orphans(path.parent, re.compile(rf"\.{re.escape(path.name)}\.(\d+)\.tmp\Z"))


#: renameat2's flag that swaps the two paths (Linux 3.15, glibc 2.28), and the directory it reads them from.
_RENAME_EXCHANGE, _AT_FDCWD = 2, -100
_renameat2: list = []  # the C function, once looked up (None where there is none)


def exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths in one step, so that no moment sees either name missing: Linux's ``renameat2``
    with ``RENAME_EXCHANGE``.  True once swapped; False where this system or this file system cannot (nothing
    has changed then, and the caller renames twice)."""
    if not _renameat2:
        _renameat2.append(_find_renameat2())
    function = _renameat2[0]
    if function is None:
        return False
    import ctypes  # noqa: PLC0415 (found above: loaded)

    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):  # not here: two renames will do
        return False
    raise OSError(code, os.strerror(code), str(first), None, str(second))


def _find_renameat2():
    """The C library's ``renameat2``, or None (not Linux, an older C library)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes  # noqa: PLC0415 (only where a folder is swapped)

        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (ImportError, OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def write_flushed(path: Path, text: str, *, shown: Path) -> None:
    """Write and flush one file; an OS error (disk full) becomes a :class:`BPEError` naming ``shown``."""
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise BPEError(f"cannot write {shown}: {exc.strerror or exc}") from None


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write one file so that it is either complete or absent (see :func:`write_files_atomic`)."""
    path = Path(path)
    write_files_atomic(path.parent, {path.name: text})


def check_free_space(folder: str | os.PathLike, needed: int, what: str) -> None:
    """A :class:`BPEError` before writing ``needed`` bytes into ``folder`` when its disk has less free."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # cannot tell: the write itself will say if the disk fills
    if needed > free:
        raise BPEError(f"{what} needs {format_size(needed)} but {folder} has only {format_size(free)} free; "
                       "free some space or ask for less")
