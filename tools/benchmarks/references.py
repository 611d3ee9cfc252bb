"""The merges every benchmark must make: v1's, per regime and size, kept as digests in ``references.json``.

A benchmark compares the digest of its merges (``bpe/lab/judge/diagnose.py`` ``merges_digest``) with the
reference of its setting; a peer, whose pre-tokenization differs in details, must make as many merges.
The references are committed because v1 takes minutes on the full sizes.  After a change of a
regime's setting or of a data generator, re-make them (v1 on every setting; minutes)::

    python -m tools.benchmarks.references            # both sizes
    python -m tools.benchmarks.references --size tiny
    python -m tools.benchmarks.references --rung v6  # in seconds: every rung makes v1's merges (tests/ladder/)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bpe.lab.rungs import rung_with
from tools.benchmarks.regimes import REGIMES, SIZES, Setting, make_data

REFERENCES = Path(__file__).with_name("references.json")
#: The rung whose merges are the reference: the algorithm as the handout states it (its row in the lab's table).
REFERENCE_RUNG = rung_with("reference")


def reference(setting: Setting) -> dict:
    """``{"merges": count, "digest": ...}`` of ``setting``, or a ``LookupError`` saying how to make it."""
    known = json.loads(REFERENCES.read_text(encoding="utf-8"))
    if setting.key not in known:
        raise LookupError(f"no reference merges for {setting.key} in {REFERENCES.name}; "
                          "make them with: python -m tools.benchmarks.references")
    return known[setting.key]


def reference_merges(setting: Setting, folder: Path, rung: str = REFERENCE_RUNG) -> dict:
    """v1's merges (or ``rung``'s) on ``setting``, as they are stored: their count and digest."""
    from bpe.defaults import SPECIAL_TOKENS
    from bpe.lab.judge.diagnose import merges_digest
    from bpe.training.train import train_bpe

    path = make_data(setting, folder)
    _, merges = train_bpe(path, setting.vocab_size, list(SPECIAL_TOKENS), variant=rung)
    return {"merges": len(merges), "digest": merges_digest(merges)}


def main(argv: list[str] | None = None) -> int:
    from bpe.lab.measure.publish import write_json_atomic

    parser = argparse.ArgumentParser(prog="python -m tools.benchmarks.references", description=__doc__.split("\n")[0])
    parser.add_argument("--size", choices=SIZES, action="append", help="only this size (repeatable); default: both")
    parser.add_argument("--rung", default=REFERENCE_RUNG, help=f"the rung that makes them (default {REFERENCE_RUNG})")
    args = parser.parse_args(argv)
    known = json.loads(REFERENCES.read_text(encoding="utf-8")) if REFERENCES.exists() else {}
    with tempfile.TemporaryDirectory() as folder:
        for size in args.size or SIZES:
            for regime in REGIMES:
                setting = regime.setting(size)
                print(f"{setting.key}: {args.rung} ...", file=sys.stderr, flush=True)
                known[setting.key] = reference_merges(setting, Path(folder), args.rung)
    current = {regime.setting(size).key for regime in REGIMES for size in SIZES}  # a setting no regime has is dropped
    write_json_atomic(REFERENCES, {key: known[key] for key in sorted(known) if key in current}, log=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
