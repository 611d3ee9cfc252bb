"""The packages bpe-lab needs at run time, and the one line that says why one cannot be imported: it is
missing (and how to get it), or the memory it needs is not there (and how much is).

``python -m bpe`` checks them before anything else, so a Python without them (the system one instead
of the project's ``.venv``) gets ``bpe: error: ...`` with the command to fix it, not an import
traceback from deep inside the package.  The light ones are imported; numpy, which takes a tenth of a second
and starts OpenBLAS's threads, and tqdm, which reads its own version from the installed metadata, are only looked for
(``find_spec``): the command that needs one imports it, and
``bpe train`` on the compiled rungs never does.

Under an address-space limit (``ulimit -v``, ``prlimit --as``) an import can fail for memory alone, in
three ways: the loader cannot map a library (an ``ImportError`` such as "failed to map segment from shared
object", which would read as a missing package), Python raises ``MemoryError``, or numpy's OpenBLAS, whose
buffers do not fit, prints "OpenBLAS error: Memory allocation still failed" and ends the process from
inside the loader, where no Python code can catch it.  So under such a limit (unless it is well above the
need) the modules are first imported in a forked copy of this process, its stderr kept from the terminal:
the copy has this process's address space, so what fails there for memory would fail here, and is said in
one line instead, with the limit and about how much bpe-lab needs to start.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import sys
import threading

from bpe.errors import BPEError

REQUIRED = ("regex", "tqdm", "numpy")
#: Of those, what is only looked for where no address-space limit asks for the import to be tried first.
LOOKED_FOR = ("numpy", "tqdm")

#: What importing each module adds to the address space, in MiB: VmSize before and after, with numpy 2.4 and
#: its OpenBLAS on x86-64 Linux, rounded up with room to spare (numpy's libraries take about 40); and every
#: OpenBLAS thread (one a core, or what OPENBLAS_NUM_THREADS asks) a 32 MiB buffer and an 8 MiB stack.
IMPORT_MIB = {"regex": 4, "tqdm": 8, "numpy": 48}
BLAS_THREAD_MIB = 40
#: What a loader says when it cannot map a library: for lack of memory under an address-space limit (without
#: one, a file system mounted noexec says the same).
_LOADER_COULD_NOT_MAP = ("failed to map segment", "cannot map zero-fill pages")


def dependency_problem() -> str | None:
    """The one sentence that says why a required module cannot be imported here, or None when all can."""
    pending = [name for name in REQUIRED if name not in sys.modules]
    limit = address_space_limit()
    needed = _needed_mib(pending) if limit is not None else None
    # Under a limit that may be too small (below twice the estimate, or any without one): a copy tries first
    if pending and limit is not None and (needed is None or limit < 2 * (needed << 20)):
        too_big = _fails_for_memory_in_a_copy(pending)
        if too_big is not None:
            return out_of_memory_message(too_big, limit, needed)
    missing = []
    for name in pending:
        if limit is None and name in LOOKED_FOR:  # found, not imported: the command that needs it imports it
            if importlib.util.find_spec(name) is None:
                missing.append(name)
            continue
        try:
            __import__(name)
        except (ImportError, MemoryError) as exc:
            if _for_memory(exc, limit):
                return out_of_memory_message(name, limit, needed)
            missing.append(name)
    return missing_dependency_message(missing) if missing else None


def missing_dependency_message(missing: list[str]) -> str:
    """One sentence: what is missing and the two ways to get an interpreter that has it."""
    names = ", ".join(repr(m) for m in missing)
    return (f"this Python lacks the package(s) {names} that bpe-lab needs; use the project's venv "
            f"(make venv, then .venv/bin/bpe ... or: source .venv/bin/activate) or install them into "
            f"this one: pip install -e .")


def out_of_memory_message(name: str, limit: int | None, needed: int | None) -> str:
    """One sentence: ``name`` did not fit, the limit it met (bytes; None: the machine's memory) and the need."""
    if limit is None:
        return f"not enough memory to import {name}; free some memory (or close other programs) and run again"
    if needed is None:
        return (f"not enough memory to import {name}: the address-space limit is {limit >> 20} MiB "
                f"(ulimit -v {limit >> 10}); raise the limit or lift it")
    return (f"not enough memory to import {name}: the address-space limit is {limit >> 20} MiB (ulimit -v "
            f"{limit >> 10}) and bpe-lab needs about {needed} MiB to start; raise the limit (ulimit -v "
            f"{needed * 1024}) or lift it")


def address_space_limit() -> int | None:
    """This process's address-space limit (``RLIMIT_AS``, soft) in bytes; None when there is none."""
    try:
        import resource  # noqa: PLC0415 (absent off POSIX, as caught below)
    except ImportError:  # not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def _needed_mib(pending: list[str]) -> int | None:
    """The address space bpe-lab needs to start, in MiB rounded up to ten: what is in use now and what
    importing ``pending`` adds.  None where the use cannot be read (not Linux)."""
    in_use = vm_status_bytes("VmSize")
    if in_use is None:
        return None
    adds = sum(IMPORT_MIB[name] for name in pending)
    if "numpy" in pending:
        adds += BLAS_THREAD_MIB * _blas_threads()
    return -(-((in_use >> 20) + adds) // 10) * 10


def _blas_threads() -> int:
    """The threads OpenBLAS starts as numpy loads it: one a core this process may run on, or fewer if asked."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    for variable in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        asked = os.environ.get(variable, "").strip()
        if asked.isdigit() and int(asked) > 0:
            return min(int(asked), cores)
    return cores


def _for_memory(exc: BaseException, limit: int | None) -> bool:
    """Whether ``exc``, or an exception it came from, is a failed allocation: a ``MemoryError``, ENOMEM's
    "Cannot allocate memory", or (under an address-space limit) a loader that could not map a library."""
    while exc is not None:
        said = str(exc).lower()
        if isinstance(exc, MemoryError) or ("cannot allocate memory" in said and "static tls" not in said):
            return True  # (a full static TLS block is not a lack of memory)
        if limit is not None and any(text in said for text in _LOADER_COULD_NOT_MAP):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _fails_for_memory_in_a_copy(names: list[str]) -> str | None:
    """Import ``names`` in a forked copy of this process (its stderr kept, so OpenBLAS's line is not shown):
    the first that fails there for lack of memory, or None.  A copy that ends inside an import (OpenBLAS
    exits from its loader) failed for memory when what it printed says so.  Without ``fork``, or with other
    threads running (a copy of a threaded process can hang on a lock one of them held), nothing is tried."""
    import tempfile  # noqa: PLC0415 (about 3 ms of every command's start-up, needed only under a limit)

    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:  # the copy: one line per module, "name ok" or "name memory" or "name other"
            try:
                os.close(read_end)
                os.dup2(stderr.fileno(), 2)
                limit = address_space_limit()
                for name in names:
                    try:
                        __import__(name)
                        outcome = "ok"
                    except (ImportError, MemoryError) as exc:
                        outcome = "memory" if _for_memory(exc, limit) else "other"
                    os.write(write_end, f"{name} {outcome}\n".encode())
            finally:
                os._exit(0)  # no clean-up of the parent's: its buffers, its atexit hooks are not the copy's
        os.close(write_end)
        try:
            os.waitpid(pid, 0)
        except BaseException:  # a Ctrl-C while waiting: the copy goes too
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        with open(read_end, "rb") as answers:
            outcomes = dict(line.split() for line in answers.read().decode().splitlines())
        stderr.seek(0)
        said = stderr.read().decode(errors="replace").lower()
    for name in names:
        if outcomes.get(name) == "memory":
            return name
        if name not in outcomes:  # the copy ended while importing it
            return name if "memory" in said or "alloc" in said else None
    return None


def optional_module(name: str, needed_for: str, extra: str, package: str | None = None):
    """The optional module ``name`` imported, or a :class:`~bpe.errors.BPEError` in one line: what needs it
    and the pip command that installs it (``bpe-lab[extra]``, or the package alone).

    >>> optional_module("json", "reading JSON", "corpora").__name__
    'json'
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        package = package or name.split(".")[0]
        raise BPEError(f"{needed_for} needs {package}, which this Python lacks: pip install 'bpe-lab[{extra}]' "
                       f"(or: pip install '{package}')") from None


def vm_status_bytes(field: str = "VmHWM") -> int | None:
    """One of Linux's per-process memory figures in ``/proc/self/status``, in bytes; None elsewhere.  ``VmHWM``:
    the high-water RSS (unlike ru_maxrss, not inherited from the parent across exec); ``VmSize``: the address
    space in use, which ``RLIMIT_AS`` bounds."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
