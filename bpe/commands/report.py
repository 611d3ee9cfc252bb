"""``bpe report``: every variant benched, written as ``report.md`` with plots (:mod:`bpe.lab.measure.report`);
``--publish`` writes the committed one in docs/, never from a tree with uncommitted changes.
"""

from __future__ import annotations

from bpe.commands.arguments import bench_settings
from bpe.lab.measure import report  # run_report looked up as each run starts: tests replace it
from bpe.lab.measure.publish import output_path


def run(args) -> int:
    """The command, from its parsed arguments."""
    bench = bench_settings(args)
    own = report.ReportSettings(reduced_vocab_size=args.reduced_vocab_size, v1_vocab_size=args.v1_vocab_size,
                                scaling=not args.no_scaling)
    # the committed report names the commit that made it: never a -dirty one
    report.run_report(bench, own, out_dir=output_path(args.out_dir, report.DEFAULT_OUT_DIR, report.DOCS_DIR,
                                                      args.publish, "bpe report --publish"))
    return 0
