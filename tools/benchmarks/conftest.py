"""pytest-benchmark's side of the suite: when it times, the data of each regime, each round's record.

pytest-benchmark times each round of a benchmark (``benchmark.pedantic``, as many rounds as
``--benchmark-min-rounds`` asks); inside a rung's round the harness's own :class:`StageTimer`, passed to
``train_bpe`` through an ``Observer`` as ``bpe bench`` passes it, times the stages.  No other clock runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from bpe.errors import BPEError
from tools.benchmarks.references import reference
from tools.benchmarks.regimes import REGIMES, Regime, Setting, chosen_size, make_data

#: Options that ask for timed results; any of them overrides the ``--benchmark-disable`` that pyproject's
#: addopts gives the test suite (as ``--benchmark-enable`` would), so ``pytest tools/benchmarks --benchmark-only``
#: times without more ado.
_TIMING_OPTIONS = ("benchmark_only", "benchmark_autosave", "benchmark_save", "benchmark_json", "benchmark_compare",
                   "benchmark_histogram")


@pytest.hookimpl(tryfirst=True)  # before pytest-benchmark's own pytest_configure reads the options
def pytest_configure(config):
    if any(config.getoption(name, None) for name in _TIMING_OPTIONS):
        config.option.benchmark_enable = True
    json_out = config.getoption("benchmark_json", None)
    if json_out:  # pytest-benchmark opens it only at the end, in a folder it does not make (out/ in a fresh clone)
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
    try:
        chosen_size(timed=True)  # a wrong $BPE_BENCH_SIZE is one line, before anything runs
    except BPEError as exc:
        raise pytest.UsageError(str(exc)) from None
    # HF tokenizers, once it has run threads, warns at each later fork (the pools of v3+) unless told
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")


@dataclass(frozen=True)
class Trial:
    """What one benchmark trains on: the regime, its setting at the size chosen, the file, the reference."""

    regime: Regime
    size: str
    setting: Setting
    path: Path
    reference: dict  # {"merges": count, "digest": ...}: benchmarks/references.py

    @property
    def group(self) -> str:
        """The benchmark group: one regime's ladder and peers, on one setting, in one table."""
        return f"{self.regime.name}: {self.setting.label} at vocab {self.setting.vocab_size:,}"

    def describe(self, commit: str | None) -> dict:
        """What every benchmark of the trial records in ``extra_info`` besides its own results."""
        return {"regime": self.regime.name, "size": self.size, "data": self.setting.label,
                "data_bytes": self.path.stat().st_size, "vocab_size": self.setting.vocab_size, "commit": commit}


@pytest.fixture(scope="session")
def size(request) -> str:
    """``tiny`` when the benchmarks are not timed, else ``$BPE_BENCH_SIZE`` (``full`` by default)."""
    disabled = request.config.getoption("benchmark_disable") and not request.config.getoption("benchmark_enable")
    return chosen_size(timed=not disabled)


@pytest.fixture(scope="session")
def rounds(request) -> int:
    """Rounds per benchmark: pytest-benchmark's own ``--benchmark-min-rounds`` (``make benchmark``: ``ROUNDS``)."""
    return request.config.getoption("benchmark_min_rounds")


@pytest.fixture(scope="session")
def commit() -> str | None:
    """The checkout's commit, ``-dirty`` with uncommitted changes (pytest-benchmark's ``commit_info`` has it too)."""
    from bpe.lab.measure.publish import git_commit

    return git_commit()


@pytest.fixture(scope="session")
def trials(size, tmp_path_factory) -> dict[str, Trial]:
    """Each regime's data, made once per session by the project's own code, and its reference merges."""
    folder = tmp_path_factory.mktemp("benchmark-data")
    made = {}
    for regime in REGIMES:
        setting = regime.setting(size)
        try:
            made[regime.name] = Trial(regime, size, setting, make_data(setting, folder), reference(setting))
        except (BPEError, LookupError) as exc:
            pytest.fail(f"benchmark data for {regime.name}: {exc}", pytrace=False)
    return made
