"""``bpe estimate``: each candidate's estimated time and peak memory on some data, without training.

A rung's figures come from the cost model (:mod:`bpe.lab.estimate`); your own trainer (a candidate
that is not a rung, :mod:`bpe.lab.candidates`) has no model, so it is timed on a prefix of the data
and scaled up (:func:`bpe.lab.bench.estimate_candidates`).  ``--size 2.1GB`` asks about a bigger
corpus that goes on like the data given.  The table marks each run that would need ``--force``;
``--json`` also writes the figures, which are a model's and not a timing: the same code and data give
the same file anywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bpe.data.datasets import data_label, resolve_data
from bpe.lab.candidates import parse_variants
from bpe.lab.estimate import LONG_RUN_SECONDS, corpus_shape, estimate_file, format_duration
from bpe.training.sizes import format_size, parse_size


def run_estimate(data: str | None, variants: str | None, vocab_size: int, special_tokens: list[str],
                 workers: int | None = None, limit: str | None = None, size: str | None = None,
                 json_out: str | None = None, out=None) -> list:
    """Print the estimate of each candidate ``variants`` names (a ``--variant`` comma list; default every
    rung); return them."""
    out = out or sys.stdout
    path = resolve_data(data)
    candidates = parse_variants(variants or "all")
    assumed = parse_size(size) if size else None
    ladder = [c.spec for c in candidates if c.is_variant]
    estimates = estimate_file(path, ladder, vocab_size, special_tokens, workers, limit, assumed)
    own = [c for c in candidates if not c.is_variant]
    if own:  # your own trainer: timed on a prefix of the data, then scaled
        from bpe.lab.probes import estimate_candidates
        from bpe.training.train import check_vocab_size

        end = min(parse_size(limit), path.stat().st_size) if limit is not None else None
        shape = corpus_shape(path, special_tokens, end, assumed)
        found = estimate_candidates(own, path, special_tokens, shape, check_vocab_size(vocab_size, special_tokens),
                                    workers, end, log=sys.stderr)
        by_label = {e.variant: e for e in estimates}
        estimates = [by_label.get(c.spec) or found[c.label] for c in candidates]
    corpus = (f"{format_size(assumed)} of text like {data_label(data)}" if assumed else
              f"{data_label(data)} ({path.stat().st_size:,} bytes)")
    print(f"cost estimate: {corpus}, vocab {vocab_size:,}, special {special_tokens}, "
          f"workers {workers or os.cpu_count()}", file=out)
    print(f"{'variant':<10}{'time':>12}{'peak memory':>14}", file=out)
    for e in estimates:
        note = f"   needs --force (over {format_duration(LONG_RUN_SECONDS)})" if e.seconds > LONG_RUN_SECONDS else ""
        print(f"{e.variant:<10}{format_duration(e.seconds):>12}{format_size(int(e.peak_bytes)):>14}{note}", file=out)
    if json_out:
        from bpe.lab.publish import check_json_path, write_json_atomic

        write_json_atomic(check_json_path(json_out), {
            "corpus": corpus, "vocab_size": vocab_size, "workers": workers,
            "variants": {e.variant: {"seconds": e.seconds, "peak_bytes": e.peak_bytes,
                                     "time": format_duration(e.seconds), "memory": format_size(int(e.peak_bytes))}
                         for e in estimates}})
        print(f"wrote {Path(json_out)}", file=out)
    return estimates
