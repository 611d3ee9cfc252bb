"""``bpe walkthrough`` (``make walkthrough``): BPE training taught on a projector, in one HTML page.

The page goes through the merges one by one (buttons, the arrow keys, a slider; ``#step=K`` in the address
opens it after merge K) and shows, at each merge, the pair chosen and its count, the tie and how it was
broken, the words holding the pair before and after, the pair counts that changed, and for each rung the
work it did for that merge, counted on the rung's own code (:mod:`.counting`) with a running total.  A
summary view draws each rung's cumulative counted work over all the merges beside the stage times of a
bench result, for a corpus too big to go through by hand.  A pre-tokenization trace and the page's own
encoder (any word, encoded with the merges made so far) are the lecture's other half.

Everything is inline (data, script, style): the page opens from disk with no network, and no request
leaves it.  Its data are in ``<script type="application/json" id="walkthrough-data">``: ``merges``
(each pair as two strings, bytes as GPT-2's printable characters), ``records`` (one record per merge,
:func:`record_merges`), ``work`` (per rung, one entry per merge counted: the counts of its ``metrics``) and
the rest listed by :func:`page_data`.  ``</`` is written ``<\\/`` there (the same string to JSON), so no
token, however odd its bytes, can end the element.

Each rung runs on the same pre-token counts (the plain counter, ``count_file_serial``) and must make
the recorded merges, merge by merge.  A rung slower than ``budget`` seconds (v1 on a real corpus) is
counted for the merges it made in that time, and the page says where it stopped.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bpe.counting.plain import count_file_serial
from bpe.data.datasets import REPO_ROOT, resolve_data
from bpe.errors import BPEError
from bpe.io.byte_unicode import byte_to_unicode, encode_token
from bpe.lab.measure.estimate import (
    MODELS,
    SERIAL_BYTES_PER_SECOND,
    STARTUP_SECONDS,
    corpus_shape,
    format_duration,
    merge_seconds,
)
from bpe.lab.rungs import rung_with
from bpe.lab.teach.recorder import Recorder, ranked
from bpe.lab.teach.text_trace import DEFAULT_TEXT, LABEL_MEANINGS, pretokenize_pieces
from bpe.lab.teach.walkthrough.counting import MEANINGS, METRICS, PARTS, counted_merger, not_counted
from bpe.running.files import write_text_atomic
from bpe.training.registry import VARIANTS
from bpe.training.train import check_vocab_size

DEFAULT_RUNGS = tuple(METRICS)
#: The page made when no data is named: the class page, the CS336 test corpus at a vocab whose 143 merges
#: a lecture goes through, in seconds (a corpus such as gutenberg-sample at 10,000 takes minutes).
CLASS_DATA, CLASS_VOCAB = "corpus-en", 400
#: Seconds each rung is counted for at most (the counting twins make a rung several times slower).
DEFAULT_BUDGET = 60.0
#: The committed bench result the summary shows when no --bench is given.
DEFAULT_BENCH = REPO_ROOT / "docs" / "report-bench.json"
TEMPLATE = Path(__file__).with_name("page.html")
#: How many words, changed pairs and tied pairs a merge's record lists (the totals are always given).
WORDS_SHOWN, CHANGES_SHOWN, TIES_SHOWN, START_SHOWN = 6, 10, 6, 16


@dataclass
class WalkthroughSettings:
    data: str | None
    vocab_size: int
    special_tokens: list[str]
    out: str
    variants: list[str] = field(default_factory=lambda: list(DEFAULT_RUNGS))
    bench: str | None = None
    text: str | None = None
    budget: float = DEFAULT_BUDGET


def parse_rungs(spec: str | list[str] | None) -> list[str]:
    """``--variant v1,v4`` (repeatable; ``all``: v1-v6) as rung names, or the one line saying what is counted.

    >>> parse_rungs(["v2,v1", "v6"])
    ['v2', 'v1', 'v6']
    """
    if spec is None:
        return list(DEFAULT_RUNGS)
    entries = [s.strip() for item in ([spec] if isinstance(spec, str) else spec) for s in item.split(",") if s.strip()]
    rungs = []
    for entry in entries:
        for name in DEFAULT_RUNGS if entry == "all" else [entry]:
            if name not in METRICS:
                raise BPEError(not_counted(name))
            if name not in rungs:
                rungs.append(name)
    if not rungs:
        raise BPEError("--variant is empty; name rungs such as v1,v2,v6")
    return rungs


def shown(tokens) -> list[str]:
    return [encode_token(t) for t in tokens]


def _start(state: dict) -> dict:
    words, counts = state["words"], state["pair_counts"]
    order = sorted(range(len(words)), key=lambda i: -words[i][1])
    return {"n_words": len(words), "n_pretokens": sum(count for _, count in words), "n_pairs": len(counts),
            "words": [[shown(words[i][0]), words[i][1]] for i in order[:START_SHOWN]],
            "pairs": [[*shown(pair), count] for pair, count in ranked(counts)[:START_SHOWN]]}


def record_merges(pretoken_counts: Mapping[bytes, int], num_merges: int) -> tuple[list, list[dict], dict]:
    """``(merges, records, start)``: the merges, one record per merge (the pair's count, the tie, the words
    holding it, the counts it changed: :class:`~bpe.lab.teach.recorder.Recorder`'s, on v5's merger, read in
    place), and the words before any merge.

    >>> counts = {b"low": 5, b"lower": 2, b"widest": 3, b"newest": 6, b"es": 2, b"st": 2}
    >>> merges, records, start = record_merges(counts, 2)
    >>> merges[0], records[0]["count"], records[0]["tie"]["pairs"]
    ((b's', b't'), 11, [['s', 't'], ['e', 's']])
    >>> records[0]["changed"][:2]
    [['s', 't', 11, 0], ['e', 's', 11, 2]]
    """
    recorder = Recorder(VARIANTS[rung_with("records")].Merger(pretoken_counts), live=True)
    start, records = _start(recorder.state), []
    for _ in range(num_merges):
        merge = recorder.step()
        if merge.pair is None:
            break
        tied, held = merge.tied, sorted(merge.words, key=lambda word: (-word[3], word[0]))
        records.append({
            "count": merge.count,
            "tie": {"pairs": [shown(p) for p in tied[:TIES_SHOWN]], "n": len(tied)} if len(tied) > 1 else None,
            "words": [[shown(old), shown(new), count] for _, old, new, count in held[:WORDS_SHOWN]],
            "n_words": len(merge.words),
            "changed": [[*shown(p), old, new] for p, old, new in merge.changed[:CHANGES_SHOWN]],
            "n_changed": len(merge.changed),
        })
    return recorder.merges, records, start


def count_work(rung: str, pretoken_counts, merges: list, budget: float, clock=time.monotonic) -> dict:
    """The work ``rung`` does for each merge, counted on its own code, until the merges or the budget end."""
    merger, tally = counted_merger(rung, pretoken_counts)
    metrics = METRICS[rung]
    build = [tally[m] for m in metrics]
    per_merge = []
    deadline = clock() + budget
    try:
        for number, expected in enumerate(merges, 1):
            before = dict(tally)
            pair = merger.select_best_pair()
            if pair != expected:
                raise BPEError(f"{rung} chose {pair!r} at merge {number}, where the record has {expected!r}: "
                               f"the rung and the walkthrough disagree")
            merger.merge(pair)
            per_merge.append([tally[m] - before.get(m, 0) for m in metrics])
            if clock() > deadline:
                break
    finally:
        close = getattr(merger, "close", None)  # v6: undo gc.freeze()
        if close is not None:
            close()
    return {"metrics": list(metrics), "build": build, "per_merge": per_merge}


def load_bench(path: str | Path | None, vocab_size: int) -> dict | None:
    """The stage times (medians) of the bench table at ``vocab_size`` (else the nearest) in a bench or
    report JSON; ``None`` when no path is given and the committed result is absent."""
    if path is None:
        if not DEFAULT_BENCH.is_file():
            return None
        path = DEFAULT_BENCH
    try:
        result = json.loads(Path(path).read_text())
    except OSError as exc:
        raise BPEError(f"--bench {path}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise BPEError(f"--bench {path} is not JSON: {exc}") from None
    tables = result.get("tables", [result]) if isinstance(result, dict) else None
    tables = [t for t in tables or [] if isinstance(t, dict) and isinstance(t.get("variants"), dict)
              and "vocab_size" in t.get("settings", {})]
    if not tables:
        raise BPEError(f"--bench {path} holds no bench table (make it with bpe bench --json FILE)")
    table = min(tables, key=lambda t: abs(t["settings"]["vocab_size"] - vocab_size))
    stages = {name: variant["median"]["stages"] for name, variant in table["variants"].items()
              if isinstance(variant.get("median"), dict) and "stages" in variant["median"]}
    return {"source": Path(path).name, "data": table["settings"].get("data"),
            "vocab_size": table["settings"]["vocab_size"], "machine": table.get("machine", {}), "stages": stages}


def page_data(settings: WalkthroughSettings, pretoken_counts, out=None) -> dict:
    """Everything the page shows, as JSON-able data (see the module docstring)."""
    num_merges = check_vocab_size(settings.vocab_size, settings.special_tokens)
    merges, records, start = record_merges(pretoken_counts, num_merges)
    work, by_merger = {}, {}
    for rung in settings.variants:
        began, merger = time.monotonic(), VARIANTS[rung].Merger
        same = by_merger.setdefault(merger, rung)
        if same != rung:  # v3 runs v2's merger, the same class: the same work, merge for merge
            work[rung] = work[same]
            print(f"  {rung}: {same}'s merger, so {same}'s work", file=out or sys.stdout)
            continue
        work[rung] = count_work(rung, pretoken_counts, merges, settings.budget)
        counted = len(work[rung]["per_merge"])
        print(f"  {rung}: {counted:,} of {len(merges):,} merges counted in {time.monotonic() - began:.1f} s"
              + ("" if counted == len(merges) else f" (stopped at the {settings.budget:g} s budget)"),
              file=out or sys.stdout)
    text = DEFAULT_TEXT if settings.text is None else settings.text
    return {
        "data": str(settings.data), "vocab_size": settings.vocab_size, "special_tokens": settings.special_tokens,
        "merges": [shown(pair) for pair in merges], "records": records, "start": start,
        "rungs": settings.variants, "ideas": {rung: VARIANTS[rung].IDEA for rung in settings.variants},
        "work": {rung: w["per_merge"] for rung, w in work.items()},
        "metrics": {rung: w["metrics"] for rung, w in work.items()},
        "build": {rung: w["build"] for rung, w in work.items()},
        "meanings": MEANINGS, "parts": sorted(PARTS), "budget": settings.budget,
        "pretokenize": {"text": text, "pieces": pretokenize_pieces(text, settings.special_tokens),
                        "meanings": LABEL_MEANINGS},
        "byte_chars": [byte_to_unicode()[b] for b in range(256)],
        "special_shown": [encode_token(t.encode("utf-8")) for t in settings.special_tokens],
        "bench": load_bench(settings.bench, settings.vocab_size),
    }


def render_page(data: dict) -> str:
    """The page, self-contained: ``page.html`` (style and script inline) with ``data`` in its place.

    >>> page = render_page({"merges": [["</script>", "x"]]})
    >>> '<\\\\/script>' in page and page.count("</script>") == 2
    True
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    return TEMPLATE.read_text(encoding="utf-8").replace("/*WALKTHROUGH-DATA*/", text, 1)


def planned_seconds(settings: WalkthroughSettings, path: Path) -> float:
    """How long the page takes as the cost model has it (:mod:`bpe.lab.measure.estimate`): the plain counter
    over the text, the recording (v5's merges, each with its record), then each rung's merges counted, for
    at most the budget (a rung that runs another's merger is not counted again)."""
    shape = corpus_shape(path, settings.special_tokens)
    merges = check_vocab_size(settings.vocab_size, settings.special_tokens)
    counted: dict = {}  # one rung per merger class, as page_data counts them
    for rung in settings.variants:
        counted.setdefault(VARIANTS[rung].Merger, rung)
    recording = merge_seconds(MODELS[rung_with("records")], shape, merges)
    return (STARTUP_SECONDS + shape.bytes / SERIAL_BYTES_PER_SECOND + recording
            + sum(min(settings.budget, merge_seconds(MODELS[rung], shape, merges)) for rung in counted.values()))


def run_walkthrough(settings: WalkthroughSettings, out=None) -> dict:
    """Count, record and write the page; returns its data."""
    out = out or sys.stdout
    if not settings.out.endswith((".html", ".htm")):
        raise BPEError(f"--out {settings.out}: the page is an HTML file; name it PAGE.html")
    if settings.budget <= 0:
        raise BPEError(f"--budget must be more than 0 seconds, got {settings.budget:g}")
    path = resolve_data(settings.data)
    print(f"walkthrough of {path} at vocab {settings.vocab_size:,}: {', '.join(settings.variants)}; about "
          f"{format_duration(planned_seconds(settings, path))} (estimated from the cost model)", file=out)
    data = page_data(settings, count_file_serial(path, settings.special_tokens), out)
    write_text_atomic(settings.out, render_page(data))
    print(f"wrote {settings.out} ({len(data['merges']):,} merges); open it in a browser (no network needed)",
          file=out)
    return data
