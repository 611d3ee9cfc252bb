"""``bpe walkthrough``: the class page, one HTML page through the merges (:mod:`bpe.lab.teach.walkthrough`)."""

from __future__ import annotations

from bpe.commands.arguments import special_tokens, vocab_size
from bpe.lab.teach import walkthrough


def run(args) -> int:
    """The command, from its parsed arguments: with no ``--data``, the class page."""
    if args.data is None:
        args.data, args.vocab_size = walkthrough.CLASS_DATA, args.vocab_size or walkthrough.CLASS_VOCAB
    walkthrough.run_walkthrough(walkthrough.WalkthroughSettings(
        args.data, vocab_size(args), special_tokens(args), args.out, walkthrough.parse_rungs(args.variant),
        args.bench, args.text, args.budget))
    return 0
