"""bpe/running/timer.py: a run repeated in one process gets its own peak memory (``reset_peak_rss``)."""

import pytest

from bpe.running.timer import peak_rss_bytes, reset_peak_rss


def test_reset_peak_rss_starts_the_peak_afresh():
    held = b"x" * 200_000_000  # written, so resident; freed at once (a large block goes back to the system)
    del held
    before = peak_rss_bytes()["self"]
    if not reset_peak_rss():
        pytest.skip("the peak RSS cannot be reset here (Linux 4.0+ only)")
    assert peak_rss_bytes()["self"] < before - 100_000_000  # the 200 MB held and freed no longer counts
