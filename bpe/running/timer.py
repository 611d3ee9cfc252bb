"""The stage timer the harness injects into training.

Algorithms never time themselves: :func:`bpe.training.train.train_bpe` and :func:`bpe.training.merge_loop.run_merges`
call the timer at stage boundaries, so the same variant code runs timed (bench) or untimed (library).

Stages, in the order they run:

=============  =====================================================================
``pretokenize``  read the file, split on special tokens, GPT-2 regex, count pre-tokens
``pair_count``   build the variant's structures: word list, initial pair counts, index, heap
``select``       summed over merges: find the most frequent pair
``update``       summed over merges: apply the merge, keep counts/index/heap up to date
=============  =====================================================================

Every 100 merges (every twentieth of the run when it makes fewer than 2,000) a checkpoint records
the elapsed time since training began, so a curve of time against merges shows whether per-merge
cost grows (v1/v2/v4: the ``max()`` scan) or stays flat (v5+).

>>> timer = StageTimer()
>>> with timer.stage("select"):
...     pass
>>> sorted(timer.stages)
['select']
"""

from __future__ import annotations

import resource
import sys
from time import perf_counter

from bpe.dependencies import vm_status_bytes

STAGES = ("pretokenize", "pair_count", "select", "update")
CHECKPOINT_EVERY = 100


def peak_rss_bytes() -> dict[str, int]:
    """Peak resident set size of this process and of its largest finished child (e.g. a pool worker).

    A forked worker's figure includes the pages it shares with the parent at fork time.
    """
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    own = vm_status_bytes() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale
    return {"self": own, "children": children}


def reset_peak_rss() -> bool:
    """Start this process's peak RSS afresh from what it holds now (Linux 4.0+: ``/proc/self/clear_refs``),
    so runs repeated in one process (``tools/benchmarks/``) each get their own peak.  ``False`` where it cannot
    be reset: the peak is then the process's whole life's.  The children's figure cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return vm_status_bytes() is not None


class _Stage:
    """A reusable context manager: cheaper than contextlib in a loop that runs once per merge."""

    __slots__ = ("timer", "name", "started")

    def __init__(self, timer: StageTimer, name: str):
        self.timer, self.name, self.started = timer, name, 0.0

    def __enter__(self):
        self.started = perf_counter()
        return self

    def __exit__(self, *exc):
        stages = self.timer.stages
        stages[self.name] = stages.get(self.name, 0.0) + perf_counter() - self.started
        return False


class StageTimer:
    """Accumulates seconds per stage, checkpoints every 100 merges (finer on small runs), and peak memory."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.checkpoints: list[tuple[int, float]] = []  # (merges done, seconds since start)
        self.started = perf_counter()
        self.total = 0.0
        self.merges = 0
        self.peak_rss: dict[str, int] = {}
        self._stage_objects: dict[str, _Stage] = {}
        self.checkpoint_every = CHECKPOINT_EVERY

    def start(self) -> None:
        """Mark the start of training (the bench may build the timer a little earlier)."""
        self.started = perf_counter()

    def stage(self, name: str) -> _Stage:
        stage = self._stage_objects.get(name)
        if stage is None:
            stage = self._stage_objects[name] = _Stage(self, name)
        return stage

    def expect_merges(self, num_merges: int) -> None:
        """Called before merging: a run of fewer than 20 x 100 merges gets about 20 checkpoints."""
        self.checkpoint_every = max(1, min(CHECKPOINT_EVERY, num_merges // 20))

    def merge_done(self, merges_done: int) -> None:
        self.merges = merges_done
        if merges_done % self.checkpoint_every == 0:
            self.checkpoints.append((merges_done, perf_counter() - self.started))

    def finish(self) -> None:
        self.total = perf_counter() - self.started
        if not self.checkpoints or self.checkpoints[-1][0] != self.merges:
            self.checkpoints.append((self.merges, self.total))
        self.peak_rss = peak_rss_bytes()

    def as_dict(self) -> dict:
        return {
            "stages": {name: self.stages.get(name, 0.0) for name in STAGES},
            "merge_phase": sum(self.stages.get(name, 0.0) for name in STAGES[1:]),
            "total": self.total,
            "merges": self.merges,
            "checkpoints": [list(c) for c in self.checkpoints],
            "peak_rss": self.peak_rss,
        }


class _NullStage:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class NullTimer:
    """The timer used when nobody is measuring: every call is a no-op."""

    _stage = _NullStage()

    def stage(self, name: str) -> _NullStage:
        return self._stage

    def start(self) -> None:
        pass

    def expect_merges(self, num_merges: int) -> None:
        pass

    def merge_done(self, merges_done: int) -> None:
        pass

    def finish(self) -> None:
        pass
