"""``python -m bpe`` and the ``bpe`` command (pyproject's ``[project.scripts]``): the stop signals taken in hand
first, before the command line's modules are imported (:func:`bpe.console.handle_from_the_start`), then
:func:`bpe.cli.main`, whose status the process exits with (:func:`bpe.console.exit_with`)."""

import sys

from bpe.console import exit_with, handle_from_the_start, started_for_tests


def run() -> None:
    handle_from_the_start()
    exit_with(_main, _debugging)


def _main() -> int:
    started_for_tests()
    from bpe import cli  # noqa: PLC0415 (after the signals are in hand: a signal meanwhile is one line)

    return cli.main()


def _debugging() -> bool:
    cli = sys.modules.get("bpe.cli")
    return bool(cli is not None and cli._debugging[0])


if __name__ == "__main__":
    run()
