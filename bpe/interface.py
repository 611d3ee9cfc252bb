"""How a hint names what to type: in the words of the interface in use.

A message that tells the user what to do next ("pass --force", "fetch it with ...") is read by
someone who typed either ``make bench ...`` or ``python -m bpe bench ...``; each takes its own
spelling (``FORCE=1`` against ``--force``, ``LIMIT=100MB`` against ``--limit 100MB``).  The Makefile
exports ``BPE_VIA_MAKE=1``, so the CLI knows it was started by make and words its hints for make.
"""

from __future__ import annotations

import os

#: The command-line option -> the Makefile's variable for it (``make help`` lists them).
MAKE_VARIABLES = {"--force": "FORCE", "--vocab-size": "VOCAB", "--limit": "LIMIT", "--variant": "VARIANT",
                  "--data": "DATA", "--workers": "WORKERS", "--repeat": "REPEAT", "--size": "SIZE",
                  "--publish": "PUBLISH", "--json": "JSON"}


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
