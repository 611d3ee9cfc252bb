"""One benchmark per rung per regime (``test_ladder``), and one per peer per regime (``test_peer``).

Each is grouped by its regime's setting (``benchmark.group``), so the table shows one regime's ladder
and its peers together.  A rung's every round must make the reference merges (``references.json``:
v1's); a peer, whose pre-tokenization differs in details, as many merges.  ``extra_info`` holds the
median round's stage times (``train_bpe``'s own ``StageTimer``), its checkpoints, the merges' digest,
the peak memory of the round, the commit, and the data's name and size.
"""

from __future__ import annotations

import statistics
from importlib.util import find_spec

import pytest

from bpe.defaults import SPECIAL_TOKENS
from bpe.lab.judge.diagnose import merges_digest
from bpe.lab.measure import peers
from bpe.lab.measure.spread import median_run
from bpe.running.timer import StageTimer, peak_rss_bytes, reset_peak_rss
from bpe.training.observer import Observer
from bpe.training.train import train_bpe
from tools.benchmarks.regimes import PEERS, REGIMES

RUNGS = [pytest.param(regime.name, rung, id=f"{regime.name}-{rung}") for regime in REGIMES for rung in regime.rungs]
PEER_RUNS = [pytest.param(regime.name, peer, id=f"{regime.name}-{peer}") for regime in REGIMES for peer in PEERS]


def median_peak(peaks: list[int | None]) -> int | None:
    """The median of the rounds' peak RSS of this process (its workers' figure is the whole session's, so it
    is left out); ``None`` where the peak could not be reset before a round (not Linux)."""
    return None if None in peaks else int(statistics.median(peaks))


@pytest.mark.parametrize(("regime", "rung"), RUNGS)
def test_ladder(benchmark, trials, rounds, commit, regime, rung):
    trial = trials[regime]
    benchmark.group = trial.group
    finished = []  # (timer, merges, peak reset?) of each round

    def setup():
        return (Observer(timer=StageTimer()), reset_peak_rss()), {}

    def one_round(observer, reset):
        _, merges = train_bpe(trial.path, trial.setting.vocab_size, list(SPECIAL_TOKENS), variant=rung,
                              observer=observer)
        finished.append((observer.timer, merges, reset))

    benchmark.pedantic(one_round, setup=setup, rounds=rounds)
    runs, peaks = [], []
    for timer, merges, reset in finished:
        runs.append({**timer.as_dict(), "merges_sha256": merges_digest(merges), "peak_rss": {}})
        peaks.append(timer.peak_rss["self"] if reset else None)
        assert runs[-1]["merges_sha256"] == trial.reference["digest"], (
            f"{rung}'s merges on {trial.setting.key} differ from the reference (v1's): digest "
            f"{runs[-1]['merges_sha256']}, reference {trial.reference['digest']}; if a data generator changed, "
            "re-make the references: python -m tools.benchmarks.references")
    median = median_run(runs)
    benchmark.extra_info.update(trial.describe(commit), rung=rung, stages=median["stages"],
                                merge_phase=median["merge_phase"], stage_total=median["total"],
                                merges=median["merges"], merges_digest=median["merges_sha256"],
                                checkpoints=median["checkpoints"], peak_rss_bytes=median_peak(peaks))


@pytest.mark.parametrize(("regime", "peer"), PEER_RUNS)
def test_peer(benchmark, trials, rounds, commit, regime, peer):
    if find_spec(peers.PEERS[peer]) is None:
        pytest.skip(peers.missing_message(peer))
    trial = trials[regime]
    benchmark.group = trial.group
    finished = []  # (merges made, peak RSS) of each round

    def one_round(reset):
        merges = peers.train_peer(peer, str(trial.path), trial.setting.vocab_size, list(SPECIAL_TOKENS))
        finished.append((merges, peak_rss_bytes()["self"] if reset else None))

    benchmark.pedantic(one_round, setup=lambda: ((reset_peak_rss(),), {}), rounds=rounds)
    for merges, _ in finished:
        assert merges == trial.reference["merges"], (
            f"{peer} made {merges:,} merges on {trial.setting.key}, the ladder {trial.reference['merges']:,}")
    benchmark.extra_info.update(trial.describe(commit), peer=peer, stages=None, merges=finished[0][0],
                                peak_rss_bytes=median_peak([peak for _, peak in finished]))
