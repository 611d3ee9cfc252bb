"""``bpe profile``: one variant's training under scalene, summarized (:mod:`bpe.lab.measure.profiling`)."""

from __future__ import annotations

from bpe.commands.arguments import show_progress, special_tokens, vocab_size
from bpe.lab.measure.profiling import clean_files, run_profile, summarize_file


def run(args) -> int:
    """The command, from its parsed arguments: a profile, a saved one summarized, or saved ones cleaned."""
    if args.clean:
        for cleaned in clean_files(args.clean):
            print(f"cleaned {cleaned}")
    elif args.summarize is not None:
        print(summarize_file(args.summarize, args.top), end="")
    else:
        run_profile(args.variant, args.data, vocab_size(args), special_tokens(args), args.workers, args.out_dir,
                    args.top, publish=args.publish, force=args.force, progress=show_progress(args))
    return 0
