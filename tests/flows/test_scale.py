"""Scale: memory is bounded by the unique pre-tokens, not by the file size (``make test-all`` only).

A ~200 MB file of repeated documents is trained on in a fresh subprocess through the process pool;
the training process's peak RSS plus twice the largest worker's (Linux ``VmHWM`` / ``ru_maxrss``, via
the StageTimer; two workers run at once) must stay under 500 MB.  The serial pre-tokenizer (v1) reads
the file one chunk at a time, so its process alone stays under the same bound.  Reading the whole file at
once would already cost 200 MB of bytes plus 200 MB of decoded text plus the pre-token list.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO_ROOT, pooled_variants

EOT = "<|endoftext|>"
LIMIT_BYTES = 500 * 1024 * 1024
TARGET_BYTES = 200 * 1000 * 1000

MEASURE = """
import json, sys
from bpe import Observer, StageTimer, train_bpe
name = sys.argv[2]
observer = Observer(timer=StageTimer())
vocab, merges = train_bpe(sys.argv[1], 1000, ["<|endoftext|>"], variant=name, workers=2, observer=observer)
print(json.dumps({"variant": name, "merges": len(merges), "peak_rss": observer.timer.peak_rss}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS figures are read the Linux way")
@pytest.mark.parametrize("kind", ["pooled", "serial"])
def test_200mb_file_trains_in_bounded_memory(tmp_path, kind):
    documents = (REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_text(encoding="utf-8").split(EOT)
    block = EOT.join(documents).encode("utf-8") + EOT.encode()
    path = tmp_path / "big.txt"
    with open(path, "wb") as f:
        for _ in range(TARGET_BYTES // len(block) + 1):
            f.write(block)
    size = path.stat().st_size
    assert size >= TARGET_BYTES

    variant = pooled_variants()[0] if kind == "pooled" else "v1"
    result = subprocess.run([sys.executable, "-c", MEASURE, str(path), variant], cwd=REPO_ROOT, capture_output=True,
                            text=True, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)}, timeout=1800)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    print(f"{size / 1e6:.0f} MB with {report['variant']}: peak RSS {report['peak_rss']}")
    assert report["merges"] == 1000 - 257
    peak = report["peak_rss"]
    if kind == "pooled":
        assert peak["children"] > 0  # the pool really ran
    assert peak["self"] + 2 * peak["children"] < LIMIT_BYTES
