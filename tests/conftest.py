"""Shared test helpers: fixture paths, the CS336 assignment's expected merges and vocab decoded to bytes,
small tricky corpora.

Test modules in every folder import them as ``from conftest import ...`` (``tests/`` is on the path:
pyproject.toml's ``pythonpath``).
"""

from __future__ import annotations

import glob
import json
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bpe.io.byte_unicode import decode_token

# `make test-debug`: a debug build of the compiled modules (tools/builds.py) stands in for the rungs'
# own in this process, put first on bpe.variants' path before any test imports them.
if os.environ.get("BPE_COMPILED_FROM"):
    from tools.builds import use_compiled_from

    use_compiled_from(os.environ["BPE_COMPILED_FROM"])

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS_EN = FIXTURES / "corpus.en"
TINYSTORIES_SAMPLE = FIXTURES / "tinystories_sample.txt"
REPO_ROOT = Path(__file__).parent.parent
DEFAULT_CORPUS = REPO_ROOT / "corpora" / "gutenberg-sample.txt"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
# `make test` exports BPE_VIA_MAKE=1; the tests read the command line's wording unless they set it themselves.
os.environ.pop("BPE_VIA_MAKE", None)
# tiktoken's loader, which the tests call on their exports, caches each file it reads in $TMPDIR/data-gym-cache
# unless this is empty: the tests leave nothing behind.
os.environ["TIKTOKEN_CACHE_DIR"] = ""


def cs336_merges() -> list[tuple[bytes, bytes]]:
    lines = (FIXTURES / "train-bpe-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    return [tuple(decode_token(part) for part in line.split(" ")) for line in lines if line]


def cs336_vocab() -> dict[int, bytes]:
    raw = json.loads((FIXTURES / "train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    return {index: decode_token(token) for token, index in raw.items()}


# Small pre-token counts that exercise overlapping, repeated and tied pairs (ladder and v6 tests).
OVERLAPS = {b"aaa": 3, b"aaaa": 2, b"aaaaa": 1, b"abab": 5, b"ababab": 1, b"xabababy": 2}
REPEATS = {b"abcabcabc": 2, b"bcbcb": 3, b"cabca": 1, b"abab": 4, b"zaaz": 2, b"aazaa": 3}
TIES = {b"ab": 3, b"ba": 3, b"cd": 3, b"dc": 3, b"a\x00": 3, b"\x00a": 3, b"abcd": 1}


def v1_merges_and_words(pretoken_counts, num_merges):
    """v1's merges, and its words after each merge (the ground truth, recomputed from scratch)."""
    from bpe.training.registry import VARIANTS

    merger = VARIANTS["v1"].Merger(pretoken_counts)
    merges, words_after = [], []
    for _ in range(num_merges):
        pair = merger.select_best_pair()
        if pair is None:
            break
        merger.merge(pair)
        merges.append(pair)
        words_after.append([word for word, _ in merger.words])
    return merges, words_after


def pytest_configure(config):
    # A shell starts background jobs with SIGINT ignored and children inherit that, so the Ctrl-C tests
    # would send a signal nobody can receive: give this process (and so its children) the default back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: The browser tests' module: skipped as a whole where no browser can be driven (its ``browser`` fixture).
BROWSER_TESTS = "lab/teach/test_walkthrough_browser.py"


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """One line at the end when the browser tests were skipped, and why (no Chromium, no Playwright): among
    the other skips each is a line of its own, and only under ``-rs``.  The outermost wrapper, so that the
    line comes after pytest's short summary, just above its count."""
    yield
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if BROWSER_TESTS in report.nodeid.replace("\\", "/") and isinstance(report.longrepr, tuple):
            reason = report.longrepr[2].removeprefix("Skipped: ")
            reasons[reason] = reasons.get(reason, 0) + 1
    for reason, count in reasons.items():
        terminalreporter.write_line(f"{count} browser test{'s' if count != 1 else ''} skipped: {reason}")


@pytest.fixture
def write_corpus(tmp_path):
    """Write bytes or text to a fresh file and return its path."""
    counter = iter(range(10**9))

    def write(content: str | bytes) -> Path:
        path = tmp_path / f"corpus{next(counter)}.txt"
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return write


def pooled_variants() -> list[str]:
    """Variants whose pre-tokenizer is the process pool (v3 onward): every counter but the serial one
    (:func:`bpe.training.rung.pooled`)."""
    from bpe.training.registry import VARIANTS
    from bpe.training.rung import pooled

    names = [name for name, module in VARIANTS.items() if pooled(module)]
    assert names, "no variant uses the process pool"
    return names


@pytest.fixture
def pool_variant_names() -> list[str]:
    return pooled_variants()


@pytest.fixture
def compiled_unbuilt(monkeypatch):
    """v8, v9 and v10 as an install without a C compiler leaves them: none built, each saying why; the
    registry's list of what runs made again on the way in and out."""
    from bpe.training import registry
    from bpe.variants import v8_compiled, v9_counting_compiled, v10_threads_compact

    monkeypatch.setattr(v8_compiled, "UNAVAILABLE", v8_compiled.NOT_BUILT)
    monkeypatch.setattr(v8_compiled, "MergeState", None)
    monkeypatch.setattr(v9_counting_compiled, "UNAVAILABLE", v9_counting_compiled.NEITHER_BUILT)
    monkeypatch.setattr(v10_threads_compact, "UNAVAILABLE", v10_threads_compact.NONE_BUILT)
    monkeypatch.setattr(registry.VARIANTS, "_runnable", None)
    yield
    monkeypatch.undo()
    registry.VARIANTS._runnable = None


def live_processes(*, parent: int | None = None, session: int | None = None) -> list[int]:
    """Pids of non-zombie processes with this parent or in this session, read from /proc (Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state ppid pgrp session ...
        state, ppid, sid = fields[0], int(fields[1]), int(fields[3])
        if state in "ZX":
            continue
        if (parent is not None and ppid == parent) or (session is not None and sid == session):
            found.append(int(entry.name))
    return found


#: Subprocess timeouts in the fault tests only guard against a hang; nothing asserts a duration.
HANG_GUARD_SECONDS = 120


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python that imports this checkout, plus ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def sigint_on_first_bytes() -> tuple:
    """``(on_bytes, sent)``: a progress callback that sends SIGINT to this process the first time it is
    called (Python's own handler then raises KeyboardInterrupt in the main thread, where the callback runs,
    once the first chunk is done and others are under way), and the list it notes that in."""
    sent: list[int] = []

    def on_bytes(n: int) -> None:
        if not sent:
            sent.append(n)
            os.kill(os.getpid(), signal.SIGINT)

    return on_bytes, sent


def wait_for(condition, what: str, proc: subprocess.Popen | None = None) -> None:
    """Poll until ``condition()`` holds: the event a test waits for (a line printed, a file or a process
    appearing, a process gone), never a fixed pause.  The deadline only guards against a hang
    (:data:`HANG_GUARD_SECONDS`); nothing measures a duration.  With ``proc``, its ending first fails at once."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not condition():
        assert proc is None or proc.poll() is None, f"{what}: it ended first (exit {proc.returncode})"
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie), read from /proc (Linux)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in "ZX"


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, ...), read from /proc."""
    found, todo = [], [pid]
    while todo:
        children = live_processes(parent=todo.pop())
        found += children
        todo += children
    return found


def workers_running(proc: subprocess.Popen) -> bool:
    """Whether ``proc`` has children yet (its pool's workers, its timed child, scalene)."""
    return bool(live_processes(parent=proc.pid))


@pytest.fixture
def threads_ran(monkeypatch) -> list[int]:
    """For each :func:`bpe.running.threads.run_threads` call while the test runs, in order, how many of its
    threads handled an item: what a multi-thread test asserts, since a run asked for N threads may start fewer
    (a file of one chunk) and one fast thread could take every item before the next starts.  So each thread
    waits at its first item until every thread it runs has one (a barrier): a run of N threads over N items or
    more shows N, whatever the timing.  Every module's own reference to the function is replaced."""
    import sys
    import threading

    from bpe.running import threads as threads_module

    real, seen = threads_module.run_threads, []

    def spy(work, items, *, threads, **keywords):
        barrier = threading.Barrier(max(1, min(threads, len(items))), timeout=HANG_GUARD_SECONDS)
        ran: set[int] = set()

        def first_waits(thread, item):
            if thread not in ran:
                ran.add(thread)
                barrier.wait()
            return work(thread, item)

        try:
            return real(first_waits, items, threads=threads, **keywords)
        finally:
            seen.append(len(ran))

    for module in list(sys.modules.values()):
        if getattr(module, "run_threads", None) is real:
            monkeypatch.setattr(module, "run_threads", spy)
    return seen


def threads_running(proc: subprocess.Popen, at_least: int = 3) -> bool:
    """Whether ``proc`` runs ``at_least`` threads (its main thread and the compiled encoder's), read from /proc."""
    try:
        return len(os.listdir(f"/proc/{proc.pid}/task")) >= at_least
    except OSError:
        return False


def write_letter_runs(path: Path, runs: int, run_bytes: int) -> Path:
    """A text of ``runs`` lines, each one pre-token of ``run_bytes`` random letters: no cut inside a line, no
    cache for a pre-token that long, so each chunk is BPE on a long word (slow enough to be caught mid-way)."""
    import random

    letters = bytes.maketrans(bytes(range(256)), b"etaoinshrdlucmfw" * 16)
    rng = random.Random(7)
    with open(path, "wb") as f:
        for _ in range(runs):
            f.write(rng.randbytes(run_bytes).translate(letters) + b"\n")
    return path


def timed_child_has_workers(proc: subprocess.Popen) -> bool:
    """Whether the bench ``proc``'s timed child (a fresh process) runs its pool's workers."""
    return any(len(live_processes(parent=child)) >= 2 for child in live_processes(parent=proc.pid))


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def scalene_files(pids) -> list[str]:
    """The files in /tmp named as scalene's native library names its own (``scalene-`` + anything + the pid of the
    process it profiles) that carry one of ``pids``."""
    pids = {int(pid) for pid in pids}
    return [path for path in glob.glob("/tmp/scalene-*")
            if (pid := re.search(r"(\d+)$", path)) and int(pid.group(1)) in pids]


def scalene_runs_the_training(proc: subprocess.Popen) -> bool:
    """Whether ``bpe profile`` ``proc``'s scalene (its child) runs the training in a child of its own (a
    command line naming the target script), whose scalene files are in /tmp."""
    runs = [grandchild for child in live_processes(parent=proc.pid) for grandchild in live_processes(parent=child)
            if "train_for_profile" in cmdline(grandchild)]
    return bool(scalene_files(runs))


def sleeping(pid: int) -> bool:
    """Whether ``pid`` sits in ``time.sleep`` (the kernel's wait channel, /proc/PID/wchan): a worker stalled
    by the pool's test hook has written half an answer and waits there for good."""
    try:
        return "nanosleep" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def a_worker_stalled(proc: subprocess.Popen) -> bool:
    """Whether a worker of ``proc``'s pool sleeps: the pool's stall hook (``STALL_MID_ANSWER_ENV``) has fired."""
    return any(sleeping(worker) for worker in live_processes(parent=proc.pid))


def read_stderr_until(proc: subprocess.Popen, text: str) -> str:
    """Read ``proc``'s stderr (a pipe) until ``text`` has appeared in it: what was read, newlines as text mode
    gives them (``\\r`` too becomes a line end), to put in front of what ``communicate()`` returns later.
    Fails if stderr closes first; the deadline only guards against a hang."""
    fd, seen, wanted = proc.stderr.fileno(), b"", text.encode()
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while wanted not in seen:
        assert time.monotonic() < deadline, f"{text!r} never appeared on stderr: {seen[-1000:]!r}"
        if select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"stderr closed before {text!r} appeared: {seen[-1000:]!r}"
            seen += chunk
    return seen.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def without_bars(err: str) -> str:
    """``err`` without the progress bars ``--progress`` draws (each redraw a line in text mode)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if line.strip() and not line.startswith(("pre-tokenizing", "merging")))


def ctrl_c(proc, times: int = 1) -> tuple[str, str]:
    """Ctrl-C ``proc``'s process group as a terminal would, ``times`` times a few ms apart (an impatient
    user); its (stdout, stderr).  Whatever happens, the group is gone afterwards."""
    try:
        assert proc.poll() is None, "it finished before it could be interrupted"
        for i in range(times):
            if i:
                time.sleep(0.002)  # the gap between an impatient user's Ctrl-Cs, not a wait for an event
            os.killpg(proc.pid, signal.SIGINT)
        return proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def interrupt(argv, *, times: int, env: dict[str, str] | None = None, ready=workers_running,
              stderr_shows: str | None = None):
    """Start ``argv`` in its own session; once it is where the test wants it (``ready(proc)`` holds: by default
    its workers exist; and, with ``stderr_shows``, that text is on its stderr: a progress bar's name),
    Ctrl-C its process group ``times`` times.  (proc, stdout, stderr), stderr whole."""
    proc = subprocess.Popen(argv, cwd=REPO_ROOT, env=env or child_env(), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_for(lambda: ready(proc), "it never got where it is interrupted", proc)
        seen = read_stderr_until(proc, stderr_shows) if stderr_shows else ""
        out, err = ctrl_c(proc, times)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, out, seen + err


#: The source folders of the installed packages: ``variants/`` installs as ``bpe.variants``
#: (pyproject.toml's package-dir).
SOURCE_FOLDERS = {"bpe": REPO_ROOT / "bpe", "bpe.variants": REPO_ROOT / "variants", "tools": REPO_ROOT / "tools"}


def project_modules() -> dict[str, Path]:
    """Every module of the source tree, by its import name (``bpe.variants.v1_naive``) -> its file."""
    modules = {}
    for package, folder in SOURCE_FOLDERS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [*package.split("."), *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


@pytest.fixture
def sighup_not_ignored():
    """SIGHUP at its default for the test and the processes it starts.  Under ``nohup``, or a runner that
    ignores SIGHUP, it arrives ignored, every child inherits that, and the CLI rightly keeps it ignored:
    the tests of what a SIGHUP does need one that is not."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGHUP, previous)

