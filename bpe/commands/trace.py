"""``bpe trace``: a small example's merges, one at a time (:mod:`bpe.lab.teach.trace`)."""

from __future__ import annotations

from bpe.commands.arguments import special_tokens
from bpe.lab.teach.trace import run_trace


def run(args) -> int:
    """The command, from its parsed arguments."""
    run_trace(args.variant, args.text, args.words, args.merges, args.top, special_tokens(args),
              pretokenize=args.pretokenize, encode=args.encode)
    return 0
