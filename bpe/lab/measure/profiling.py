"""Profile one variant's training under scalene and summarise where the time and memory go.

``python -m bpe profile --variant v2 --data gutenberg-sample --vocab-size 2000`` runs ``scalene run
--program-path <repo>`` on a three-line script calling :func:`bpe.training.train.train_bpe`, and writes
``<variant>-<data>-<vocab>.json`` (scalene's own, compact, without stack samples or this machine's
paths: :func:`shorten_paths`) and ``.md``: the lines with the most CPU time and memory, with their
code, so "profile first, then optimize the line it points at" is visible for each rung.
``--summarize`` re-makes the summary from a JSON; ``--clean`` rewrites an old profile's paths.
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path

from bpe.data.datasets import REPO_ROOT, data_label, resolve_data
from bpe.errors import BPEError
from bpe.lab.fresh_process import lab_tempdir, running, start_child, wait_alive
from bpe.lab.measure.estimate import check_affordable, estimate_file, format_duration
from bpe.lab.measure.plan import plan
from bpe.lab.measure.publish import RESULT_DIRS, git_commit, installed_version, made_by, output_path
from bpe.running.files import write_text_atomic
from bpe.running.leftovers import LEFTOVERS
from bpe.training.registry import get_variant

PROFILES_DIR = REPO_ROOT / "profiles"
#: Where ``bpe profile`` writes unless told to rewrite the committed profiles (``--publish``).
DEFAULT_OUT_DIR = REPO_ROOT / "out" / "profiles"

# scalene runs the target in a child of its own, which goes when scalene, its session's leader, goes (SIGKILL:
# scalene handles SIGTERM; if scalene is gone already, it exits, and scalene's exit removes its files).  Killed,
# it leaves its files in /tmp under its pid: said in LEFTOVERS, for the next run if bpe was killed outright.
_TARGET = """\
import json, os, signal, sys
from bpe.running.workers import die_with_parent
die_with_parent(os.getsid(0), signal.SIGKILL)
with open(os.path.join(os.path.dirname(__file__), "LEFTOVERS"), "a") as f:
    f.write(f"{os.getpid()} {os.path.join('/tmp', 'scalene-*[!0-9]')}{os.getpid()}\\n")  # no path in a profiled line
from bpe.training.train import train_bpe
settings = json.loads(sys.argv[1])
train_bpe(settings["path"], settings["vocab_size"], settings["special_tokens"],
          variant=settings["variant"], workers=settings["workers"])
"""


def profile_stem(variant: str, data: str | None, vocab_size: int) -> str:
    """``v2-gutenberg-sample-2000``: the name both profile files share."""
    return f"{variant}-{data_label(data)}-{vocab_size}"


# Library files: .../lib/python3.X/site-packages/... (or dist-packages) and .../lib/python3.X/...
_SITE_PACKAGES = re.compile(r"[^\s\"';:]*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"[^\s\"';:]*/lib/python3\.\d+/")
# The three-line target script lives in a temporary directory named by run_scalene.
_TARGET_DIR = re.compile(r"[^\s\"';:]*/bpe-profile-[^/\s\"';:]+(?=/|$|[\s\"';:])")


def shorten_paths(text: str, roots: list[str]) -> str:
    """``text`` with machine-specific paths replaced: a file under one of ``roots`` (repo roots, as
    absolute paths) by its path relative to the root, library files by ``<stdlib>/...`` and
    ``<site-packages>/...``, the temporary target script by ``<target>/...``.

    >>> shorten_paths("CLONE/bpe/cli.py main:3;", ["CLONE"])
    'bpe/cli.py main:3;'
    >>> shorten_paths("/usr/lib/python3.11/site-packages/regex/regex.py", [])
    '<site-packages>/regex/regex.py'
    >>> shorten_paths("/opt/py/lib/python3.11/re/__init__.py", [])
    '<stdlib>/re/__init__.py'
    """
    for root in sorted(roots, key=len, reverse=True):
        root = root.rstrip("/")
        if text.rstrip("/") == root:
            return "."
        if root:
            text = re.sub(re.escape(root) + r"(?:/|(?=$|[\s\"';:]))", "", text)
    text = _SITE_PACKAGES.sub("<site-packages>/", text)
    text = _STDLIB.sub("<stdlib>/", text)
    return _TARGET_DIR.sub("<target>", text)


def clean_profile(profile: dict) -> dict:
    """The profile with every path shortened (:func:`shorten_paths`), keys and values alike; scalene's
    ``filename`` (its ``--program-path``) is a root too, so a profile made in another checkout is cleaned."""
    roots = [str(REPO_ROOT)]
    if isinstance(profile.get("filename"), str) and profile["filename"].startswith("/"):
        roots.append(profile["filename"])

    def clean(value):
        if isinstance(value, str):
            return shorten_paths(value, roots)
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {clean(key): clean(item) for key, item in value.items()}
        return value

    return clean(profile)


#: Files scalene's native library makes in /tmp whatever TMPDIR says, named by the pid of the process it
#: profiles (scalene-malloc-, scalene-memcpy- with -init, -lock, -signal, then the pid: the target's record of
#: them globs ``[!0-9]`` before its pid, not to match a pid that ends in its digits); scalene removes some when
#: it ends on its own, none when it is ended by a signal.
SCALENE_FILES = "/tmp/scalene-*[0-9]"


def run_scalene(settings: dict, alive=None, every: float = 10.0) -> dict:
    """Run one training under scalene; its profile, with ``settings`` under ``bpe_lab``.  ``alive`` as for
    :func:`~bpe.lab.fresh_process.wait_alive`, so a long profile says it is still going."""
    with lab_tempdir("profile") as tmp:
        target = Path(tmp) / "train_for_profile.py"
        target.write_text(_TARGET.replace("LEFTOVERS", LEFTOVERS))
        raw = Path(tmp) / "profile.json"
        cmd = [sys.executable, "-m", "scalene", "run", "-o", str(raw), "--program-path", str(REPO_ROOT),
               str(target), "---", json.dumps(settings)]
        before = set(glob.glob(SCALENE_FILES))
        try:
            # TMPDIR: scalene makes a temporary folder of its own and leaves it behind; inside ours, it goes with ours.
            proc = start_child(cmd, {"TMPDIR": tmp}, cwd=REPO_ROOT)
        except FileNotFoundError as exc:
            raise BPEError(f"cannot run scalene: {exc}") from None
        try:
            stdout, stderr = wait_alive(proc, alive, every)
        finally:  # the new files whose process has ended: the run's, once its group is gone, or another run's
            for path in sorted(set(glob.glob(SCALENE_FILES)) - before):
                pid = re.search(r"(\d+)$", path)
                if pid is not None and not running(int(pid.group(1))):
                    with suppress(OSError):
                        os.remove(path)
        if proc.returncode != 0 or not raw.exists():
            if "No module named scalene" in stderr:
                raise BPEError("scalene is not installed; it is a dev extra: pip install -e '.[dev]'")
            raise BPEError(f"scalene failed (exit {proc.returncode}):\n{(stderr or stdout).strip()[-2000:]}")
        profile = json.loads(raw.read_text())
    # The stack samples (scalene's flame-graph data) are most of the file and not used by the summary;
    # dropping them keeps committed profiles small while `scalene view` still shows every line.
    for key in ("combined_stacks", "combined_stacks_timeline"):
        if key in profile:
            profile[key] = []
    profile["bpe_lab"] = settings
    return profile


def write_profile(json_out: Path, profile: dict, top: int = 10) -> Path:
    """Write ``profile`` with its paths cleaned (:func:`clean_profile`), compact, and its summary beside it
    (``.md``); the summary's path."""
    profile = clean_profile(profile)
    write_text_atomic(json_out, json.dumps(profile, separators=(",", ":")) + "\n")
    write_text_atomic(json_out.with_suffix(".md"), summarize(profile, top))
    return json_out.with_suffix(".md")


def _relative(path: str) -> str:
    return shorten_paths(path, [str(REPO_ROOT)])


def profile_lines(profile: dict) -> list[dict]:
    """Every profiled line with its CPU share (% of the run) and memory figures."""
    rows = []
    for filename, data in profile.get("files", {}).items():
        for line in data.get("lines", []):
            cpu = line.get("n_cpu_percent_python", 0.0) + line.get("n_cpu_percent_c", 0.0) + line.get(
                "n_sys_percent", 0.0)
            rows.append({"where": f"{_relative(filename)}:{line['lineno']}", "code": line.get("line", "").strip(),
                         "cpu": cpu, "cpu_python": line.get("n_cpu_percent_python", 0.0),
                         "malloc_mb": line.get("n_malloc_mb", 0.0), "peak_mb": line.get("n_peak_mb", 0.0)})
    return rows


def _code(text: str, width: int = 70) -> str:
    # scalene keeps some characters of the source as JSON-style escapes (``->`` as ``-\\u003e``)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def summarize(profile: dict, top: int = 10) -> str:
    """The markdown summary: settings, then the top lines by CPU and by memory."""
    settings = profile.get("bpe_lab", {})
    rows = profile_lines(profile)
    by_cpu = sorted((r for r in rows if r["cpu"] > 0), key=lambda r: -r["cpu"])[:top]
    by_mem = sorted((r for r in rows if r["malloc_mb"] > 0 or r["peak_mb"] > 0),
                    key=lambda r: (-r["malloc_mb"], -r["peak_mb"]))[:top]
    title = settings.get("stem", "profile")
    out = [f"# Profile {title}", ""]
    if settings:
        out.append(f"`{settings['variant']}` on `{settings['data']}` (vocab {settings['vocab_size']:,}, "
                   f"special {settings['special_tokens']}); profiled {settings.get('date', '?')} "
                   f"at {made_by({**settings, 'git_commit': settings.get('commit')})}.")
    out.append(f"Elapsed under scalene: {profile.get('elapsed_time_sec', 0):.2f} s (profiling slows the run; "
               f"use `make bench` for timings). Peak footprint: {profile.get('max_footprint_mb', 0):.1f} MB at "
               f"`{_relative(profile.get('max_footprint_fname', '?'))}:{profile.get('max_footprint_lineno', '?')}`.")
    out += ["", "Generated by `make profile` (`python -m bpe profile`) from the JSON beside this file; "
            "open that with `scalene view --cli <file>`.", ""]
    out += [f"## Top {len(by_cpu)} lines by CPU time", "",
            "| % CPU (all) | % CPU (Python) | line | code |", "|---:|---:|---|---|"]
    out += [f"| {r['cpu']:.1f} | {r['cpu_python']:.1f} | `{r['where']}` | {_code(r['code'])} |" for r in by_cpu]
    out += ["", f"## Top {len(by_mem)} lines by memory allocated", "",
            "| MB allocated | peak MB | line | code |", "|---:|---:|---|---|"]
    out += [f"| {r['malloc_mb']:.1f} | {r['peak_mb']:.1f} | `{r['where']}` | {_code(r['code'])} |" for r in by_mem]
    if not by_mem:
        out.append("| - | - | (no allocation reached scalene's sampling threshold) | |")
    return "\n".join(out) + "\n"


def summarize_file(json_file: str | Path, top: int = 10) -> str:
    """``profile --summarize FILE.json``: the markdown summary of a saved profile."""
    source = Path(json_file)
    if not source.is_file():
        raise BPEError(f"no such profile: {source}")
    return summarize(json.loads(source.read_text()), top)


def run_profile(variant: str | None, data: str | None, vocab_size: int, special_tokens: list[str],
                workers: int | None = None, out_dir: str | Path | None = None, top: int = 10, *,
                publish: bool = False, force: bool = False, progress: bool = False, out=None) -> tuple[Path, Path]:
    """Profile ``variant``'s training into ``out_dir`` (default ``out/profiles/``; with ``publish``, the
    committed ``profiles/``, refused from a checkout with uncommitted code); the two files written."""
    if variant is None:
        raise BPEError("bpe profile needs --variant vN (e.g. --variant v2), or --summarize FILE.json")
    get_variant(variant)
    path = plan(resolve_data(data), vocab_size, special_tokens, workers).path
    # a committed profile names the commit that made it: never a -dirty one
    out_dir = output_path(out_dir, DEFAULT_OUT_DIR, PROFILES_DIR, publish, "bpe profile --publish")
    out = out or sys.stdout
    estimate, = estimate_file(path, [variant], vocab_size, special_tokens, workers)
    print(f"bpe-lab profile: {variant} on {data_label(data)} ({path.stat().st_size:,} bytes), vocab {vocab_size:,}, "
          f"special {special_tokens}; estimate without scalene {estimate.describe()}", file=out, flush=True)
    check_affordable([estimate], f"profiling {variant} on {data_label(data)} at vocab {vocab_size:,}", force)
    stem = profile_stem(variant, data, vocab_size)
    settings = {"stem": stem, "variant": variant, "data": data_label(data), "path": str(path.resolve()),
                "vocab_size": vocab_size, "special_tokens": special_tokens, "workers": workers,
                "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"), "commit": git_commit(exclude=RESULT_DIRS),
                "version": installed_version()}
    json_out = out_dir / f"{stem}.json"
    out_dir.mkdir(parents=True, exist_ok=True)

    def alive(seconds: float) -> None:
        print(f"  profiling {variant} under scalene: {seconds:.0f} s so far (estimated "
              f"{format_duration(estimate.seconds)} without scalene, which slows a run several times)",
              file=sys.stderr if progress else out, flush=True)

    md_out = write_profile(json_out, run_scalene(settings, alive=alive, every=10.0 if progress else 60.0), top)
    if progress:
        print(f"  profiled {variant} under scalene", file=sys.stderr, flush=True)
    print(f"wrote {_relative(str(json_out))} and {_relative(str(md_out))}", file=out)
    return json_out, md_out


def clean_files(json_files) -> list[Path]:
    """Rewrite each saved profile's machine paths as repo-relative ones, and its summary beside it."""
    paths = [Path(json_file) for json_file in json_files]
    for json_file in paths:
        if not json_file.exists():
            raise BPEError(f"no such profile: {json_file}")
        write_profile(json_file, json.loads(json_file.read_text()))
    return paths
