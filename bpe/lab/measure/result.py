"""The bench's result, typed: :class:`BenchResult` (``run_bench``'s, and each table of the report), a
:class:`CandidateResult` per candidate, a :class:`Run` per timed run and their median, a :class:`PeerResult` per
peer.  ``to_json`` writes the shape ``--json`` always wrote (the committed ``docs/*.json`` that pages quote);
``from_json`` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Run:
    """One timed run, or the median of the runs: seconds (``stages``, ``merge_phase``: ``None`` for a
    ``train_bpe`` function), merges, checkpoints ``[merges, seconds]``, peak RSS (``self``, ``children``) and the
    merges' digest; ``facts``: the rest the run said (``workers``, not in a median; v7's ``shards``; ``notes``)."""
    stages: dict[str, float] | None
    merge_phase: float | None
    total: float
    merges: int
    checkpoints: list[list[float]]
    peak_rss: dict[str, float]
    merges_sha256: str
    facts: dict = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: dict) -> Run:
        return cls(**{k: v for k, v in d.items() if k in _RUN}, facts={k: v for k, v in d.items() if k not in _RUN})

    def to_json(self) -> dict:
        return {**self.facts, **{k: v for k, v in vars(self).items() if k != "facts"}}

    def figure(self, name: str) -> float | None:
        """``total``, ``merge_phase`` or a stage's seconds (``None``: a figure a function has not)."""
        return getattr(self, name) if name in ("total", "merge_phase") else (self.stages or {}).get(name)


_RUN = set(Run.__dataclass_fields__) - {"facts"}


@dataclass
class CandidateResult:
    """One candidate: what it is (``kind``, ``spec``, ``idea``), its runs, their median, its notes."""
    kind: str
    spec: str
    idea: str
    runs: list[Run]
    median: Run
    notes: list[str]

    def totals(self) -> list[float]:
        return [r.total for r in self.runs]


@dataclass
class PeerResult:
    """A peer's medians over its ``runs`` (each ``{"total", "merges", "peak_rss"}``), or why it has none:
    ``missing`` (how to install it), ``error``, or ``note`` (it reads no input the data gives); beside a
    time, ``note`` says what it read where that is not the data itself."""
    total: float | None = None
    merges: int | None = None
    peak_rss: float | None = None
    runs: list[dict] | None = None
    missing: str | None = None
    error: str | None = None
    note: str | None = None

    @property
    def why_none(self) -> str | None:
        """Why it has no time (``None`` where it has one)."""
        return None if self.total is not None else self.missing or self.error or self.note


@dataclass
class BenchResult:
    """One bench: the ``machine`` (:func:`bpe.lab.measure.publish.machine_info`) and ``settings`` (data, path,
    corpus_bytes, file_bytes, limit, vocab_size, num_merges, special_tokens, workers, workers_given, workers_from,
    repeat, busy, load) as written; each candidate that ran, those skipped or failed (a line each), the estimates
    (seconds, peak_bytes); whether the rungs' merges agree, the verdicts and their reference
    (:func:`bpe.lab.judge.correctness.check_correctness`), and the peers (``--peers``); a ``None`` is not written."""
    machine: dict
    settings: dict
    variants: dict[str, CandidateResult] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    estimates: dict[str, dict] = field(default_factory=dict)
    merges_identical: bool | None = None
    verdicts: dict[str, dict] | None = None
    reference: dict | None = None
    peers: dict[str, PeerResult] | None = None

    @classmethod
    def from_json(cls, d: dict) -> BenchResult:
        variants = {name: CandidateResult(**{**v, "runs": [Run.from_json(r) for r in v["runs"]],
                                             "median": Run.from_json(v["median"])})
                    for name, v in d["variants"].items()}
        peers = {name: PeerResult(**p) for name, p in d["peers"].items()} if "peers" in d else None
        return cls(**{**d, "variants": variants, "peers": peers})

    def to_json(self) -> dict:
        variants = {name: {**vars(v), "runs": [r.to_json() for r in v.runs], "median": v.median.to_json()}
                    for name, v in self.variants.items()}
        peers = self.peers and {name: {k: v for k, v in vars(p).items() if v is not None}
                                for name, p in self.peers.items()}
        return {k: v for k, v in {**vars(self), "variants": variants, "peers": peers}.items() if v is not None}
