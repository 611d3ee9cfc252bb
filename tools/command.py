"""How a tool runs from the shell: its parser's arguments handed to its ``run``, and what goes wrong said as
``bpe``'s commands say it (one line naming the problem, status 2; Ctrl-C: ``interrupted``, 130), with the
tool's name in front.

Example: ``sys.exit(tool_main(parser, run))`` at the foot of ``tools/figures.py``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from bpe.console import console, failure, tell
from bpe.errors import BPEError


def tool_main(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace], int | None],
              argv: Sequence[str] | None = None) -> int:
    """``run(args)``'s status (``None``: 0), or a failure's one line and status."""
    args = parser.parse_args(argv)
    with console():
        try:
            return run(args) or 0
        except (BPEError, KeyboardInterrupt, MemoryError, OSError) as exc:
            line, status = failure(exc)
            tell(parser.prog + line.removeprefix("bpe"))
            return status
