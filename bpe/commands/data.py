"""``bpe data``: ``list`` the data sets, ``get`` one (:mod:`bpe.data.download`)."""

from __future__ import annotations

from bpe.commands.arguments import show_progress
from bpe.data.download import get_dataset, print_datasets


def run(args) -> int:
    """The command, from its parsed arguments."""
    if args.data_command == "get":
        get_dataset(args.name, args.size, progress=show_progress(args))
    else:
        print_datasets()
    return 0
