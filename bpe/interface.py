"""How a hint names what to type: in the words of the interface in use.

A message that tells the user what to do next ("pass --force", "fetch it with ...") is read by
someone who typed either ``make bench ...`` or ``python -m bpe bench ...``; each takes its own
spelling (``FORCE=1`` against ``--force``, ``LIMIT=100MB`` against ``--limit 100MB``).  The Makefile
exports ``BPE_VIA_MAKE=1``, so the CLI knows it was started by make and words its hints for make.
A hint that proposes other data (a stand-in for a data set that cannot be had offline) repeats the
command the user typed with only the data changed (:func:`typed_with`), so that the variant, vocab,
workers and the rest they chose stay as they were.
"""

from __future__ import annotations

import os
import shlex
from contextlib import contextmanager

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
