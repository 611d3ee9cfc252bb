"""How a hint names what to type: in the words of the interface in use.

A message that tells the user what to do next ("pass --force", "fetch it with ...") is read by
someone who typed either ``make bench ...`` or ``python -m bpe bench ...``; each takes its own
spelling (``FORCE=1`` against ``--force``, ``LIMIT=100MB`` against ``--limit 100MB``).  The Makefile
exports ``BPE_VIA_MAKE=1``, so the CLI knows it was started by make and words its hints for make.
A hint that proposes other data (a stand-in for a data set that cannot be had offline) repeats the
command the user typed with only the data changed (:func:`typed_with`), so that the variant, vocab,
workers and the rest they chose stay as they were.

A hint that asks for the project to be installed again (the compiled rungs built where a C compiler
was missing) is worded for how it was installed (:func:`rebuild_hint`): ``make venv`` in a checkout's
own ``.venv``; ``pip install -e`` of the checkout from another environment; ``pip install`` of the
folder it came from, for a copy installed into site-packages, where no Makefile is.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlparse

#: The folder above the package: the top of the checkout where bpe-lab runs from one.
REPO_ROOT = Path(__file__).resolve().parents[1]


def is_checkout(root: Path) -> bool:
    """Whether ``root`` is the top of a bpe-lab checkout: its Makefile, its ``pyproject.toml`` and the ladder
    at the top (``variants/``), beside ``bpe/``.  A copy installed into site-packages has none of them there
    (its ladder is inside the package, ``bpe/variants/``), whatever folder the site-packages sits in."""
    return all((root / name).is_file() for name in ("Makefile", "pyproject.toml", "variants/v1_naive.py"))


#: Whether the package runs from a checkout (an editable install included) rather than from a copy
#: installed into site-packages, where no repository surrounds it.
IN_CHECKOUT = is_checkout(REPO_ROOT)

#: The command-line option -> the Makefile's variable for it (``make help`` lists them; OUT is report's and
#: profile's ``--out-dir`` and the walkthrough's ``--out``).
MAKE_VARIABLES = {"--force": "FORCE", "--vocab-size": "VOCAB", "--limit": "LIMIT", "--variant": "VARIANT",
                  "--data": "DATA", "--workers": "WORKERS", "--repeat": "REPEAT", "--size": "SIZE",
                  "--publish": "PUBLISH", "--json": "JSON", "--peers": "PEERS", "--out-dir": "OUT", "--out": "OUT",
                  "--v1-vocab-size": "V1_VOCAB", "--quick": "QUICK", "--bench": "BENCH"}

#: The command being run, as typed: its subcommand and its options in order, each ``(flag, value or None)``
#: (set by the CLI for the length of a run; empty when the package is called as a library).
_TYPED: list[tuple[str, list[tuple[str, str | None]]]] = []


def via_make() -> bool:
    """Whether this process was started by the Makefile (which sets ``BPE_VIA_MAKE=1``)."""
    return os.environ.get("BPE_VIA_MAKE") == "1"


def option(flag: str, value: str | None = None) -> str:
    """``flag`` as the user types it: ``--force`` / ``--limit 100MB`` on the command line, ``FORCE=1`` /
    ``LIMIT=100MB`` under make (an option without a make variable keeps its flag).

    >>> os.environ.pop("BPE_VIA_MAKE", None) and None
    >>> option("--force"), option("--limit", "100MB")
    ('--force', '--limit 100MB')
    """
    variable = MAKE_VARIABLES.get(flag)
    if value is not None:
        value = shlex.quote(value)  # copied into a shell as it is: a token such as <|endoftext|> quoted
    if via_make() and variable is not None:
        return f"{variable}={'1' if value is None else value}"
    return flag if value is None else f"{flag} {value}"


def command(subcommand: str, *options: tuple[str, str | None]) -> str:
    """A whole command: ``make bench DATA=x`` under make, ``python -m bpe bench --data x`` otherwise.
    ``data`` is ``make data DATA=NAME`` against ``python -m bpe data get NAME``.

    >>> os.environ.pop("BPE_VIA_MAKE", None) and None
    >>> command("data", ("--data", "tinystories-synth"), ("--size", "20MB"))
    'python -m bpe data get tinystories-synth --size 20MB'
    """
    if via_make():
        return " ".join([f"make {subcommand}", *(option(flag, value) for flag, value in options)])
    words = ["python -m bpe", subcommand]
    for flag, value in options:
        words.append(f"get {value}" if subcommand == "data" and flag == "--data" else option(flag, value))
    return " ".join(words)


def typed_options(tokens: list[str], parsed: dict) -> list[tuple[str, str | None]]:
    """The options among ``tokens`` (what followed the subcommand), in the order given, each with its value as
    parsed (``parsed``: the namespace's ``vars``): a flag that takes none ``None``, one given twice once per
    value.  A flag typed short (``--vocab 500``, as argparse allows) gets its whole name.

    >>> typed_options(["--vocab", "500", "--variant=v5", "--force"],
    ...               {"vocab_size": "500", "variant": ["v5"], "force": True, "quiet": False})
    [('--vocab-size', '500'), ('--variant', 'v5'), ('--force', None)]
    """
    options: list[tuple[str, str | None]] = []
    flags = {f"--{dest.replace('_', '-')}": dest for dest in parsed}
    for token in dict.fromkeys(t.split("=", 1)[0] for t in tokens if t.startswith("--") and len(t) > 2):
        named = [flag for flag in flags if flag == token] or [flag for flag in flags if flag.startswith(token)]
        if len(named) != 1:
            continue
        value = parsed[flags[named[0]]]
        for one in value if isinstance(value, list) else [value]:
            if one not in (None, False):
                options.append((named[0], None if one is True else str(one)))
    return options


@contextmanager
def typed(subcommand: str, options: list[tuple[str, str | None]]):
    """Within this block, :func:`typed_with` repeats ``subcommand`` and ``options``: the command being run."""
    _TYPED.append((subcommand, options))
    try:
        yield
    finally:
        _TYPED.pop()


def typed_with(old: str, new: str) -> str | None:
    """The command being run, as typed, with ``new`` for the one option whose value is ``old``, in the words of
    the interface in use; ``None`` where that cannot be said: no command is being run (a library call), no
    option or several hold ``old``, or under make an option has no variable or comes twice.

    >>> os.environ.pop("BPE_VIA_MAKE", None) and None
    >>> with typed("bench", [("--variant", "v5"), ("--data", "tinystories"), ("--vocab-size", "500")]):
    ...     typed_with("tinystories", "tinystories-synth-20MB")
    'python -m bpe bench --variant v5 --data tinystories-synth-20MB --vocab-size 500'
    """
    if not _TYPED:
        return None
    subcommand, options = _TYPED[-1]
    if [value for _, value in options].count(old) != 1:
        return None
    flags = [flag for flag, _ in options]
    if via_make() and any(flag not in MAKE_VARIABLES or flags.count(flag) > 1 for flag in flags):
        return None
    return command(subcommand, *((flag, new if value == old else value) for flag, value in options))


@cache
def rebuild_hint() -> str:
    """What builds the compiled rungs again, for this install: :func:`rebuild_command` given its facts (read
    once: they do not change while the process runs)."""
    if IN_CHECKOUT:
        return rebuild_command(REPO_ROOT, Path(sys.prefix).resolve() == (REPO_ROOT / ".venv").resolve(), None)
    return rebuild_command(None, False, installed_from())


def installed_from() -> dict | None:
    """Where pip installed bpe-lab from: its ``direct_url.json`` (PEP 610: a ``url``, and ``dir_info`` for
    a folder, ``archive_info`` for a file); ``None`` where pip recorded none (an index) or it cannot be read."""
    from importlib import metadata  # noqa: PLC0415 (about 20 ms, off every command's start-up)

    try:
        text = metadata.distribution("bpe-lab").read_text("direct_url.json")
        return json.loads(text) if text else None
    except (metadata.PackageNotFoundError, ValueError, OSError):
        return None


def rebuild_command(checkout: Path | None, in_project_venv: bool, origin: dict | None) -> str:
    """What builds the compiled code again, ending a "needs a C compiler" line: ``make venv`` in the
    checkout's ``.venv`` (the Makefile's); an editable install of ``checkout`` into any other environment;
    outside a checkout, pip again on the folder or archive it was installed from (``origin``, as
    :func:`installed_from` reads it).  A wheel cannot be rebuilt: its source folder is named instead.
    An archive is rebuilt past pip's wheel cache, which would hand back the wheel built without a compiler.

    >>> rebuild_command(Path("/src/bpe-lab"), True, None)
    'run make venv'
    >>> rebuild_command(Path("/src/bpe-lab"), False, None)
    'reinstall bpe-lab: pip install --no-deps -e /src/bpe-lab'
    >>> rebuild_command(None, False, {"url": "file:///src/bpe-lab", "dir_info": {}})
    'reinstall bpe-lab: pip install --force-reinstall --no-deps /src/bpe-lab'
    >>> rebuild_command(None, False, {"url": "file:///d/bpe-lab-0.1.0.tar.gz", "archive_info": {}})
    'reinstall bpe-lab: pip install --force-reinstall --no-deps --no-cache-dir /d/bpe-lab-0.1.0.tar.gz'
    >>> rebuild_command(None, False, None)
    'reinstall bpe-lab from its source folder: pip install --force-reinstall --no-deps /path/to/bpe-lab'
    """
    if checkout is not None:
        if in_project_venv:
            return "run make venv"
        return f"reinstall bpe-lab: pip install --no-deps -e {shlex.quote(str(checkout))}"
    url = urlparse((origin or {}).get("url", ""))
    source = unquote(url.path)
    if url.scheme == "file" and "dir_info" in origin:
        return f"reinstall bpe-lab: pip install --force-reinstall --no-deps {shlex.quote(source)}"
    if url.scheme == "file" and not source.endswith(".whl"):  # an sdist: past the wheel pip cached of it
        return f"reinstall bpe-lab: pip install --force-reinstall --no-deps --no-cache-dir {shlex.quote(source)}"
    return ("reinstall bpe-lab from its source folder: pip install --force-reinstall --no-deps "
            "/path/to/bpe-lab")


def not_built(what: str, needs: str) -> str:
    """The one line that says compiled code is missing, and how to build it for this install.

    >>> not_built("v8 is", "its compiled merge needs").startswith("v8 is not built: its compiled merge needs")
    True
    """
    return (f"{what} not built: {needs} a C compiler when bpe-lab is installed; install gcc or clang "
            f"(apt-get install gcc, xcode-select --install), then {rebuild_hint()}")
