"""The plan of ``python -m tools.reproduce`` (:mod:`tools.reproduce`): each step of the articles, the
two rungs that make it and the stage both sides time, the data sets and vocabs they run on (the full plan, and
the same on tiny inputs for ``--quick``), the one line that says why the articles' ratio and the ladder's
differ, and the articles' ratios themselves (:data:`THEIRS`).

The articles' published seconds live in one file, ``docs/articles-figures.json``, each group with the
article, part and table it comes from; ``docs/articles.md`` quotes them through figure markers, and a
ratio here names two key paths into it (as :func:`tools.keypath.lookup` reads them: a median of three
runs is ``median(...*)``).  The articles' machines are not ours, so their seconds are never compared with
ours, only ratios.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache

from bpe.data.datasets import REPO_ROOT
from bpe.errors import BPEError
from tools.keypath import lookup


@dataclass(frozen=True)
class RunSet:
    """One data set at one vocab, the rungs run on it, interleaved, ``repeat`` times."""

    name: str
    data: str
    vocab_size: int
    variants: tuple[str, ...]
    note: str = ""
    limit: str | None = None
    real: bool = False  # a downloaded data set: run only when present


#: The stage a C++ merge program's total times: its update plus its max(), no initial pair count; on the ladder,
#: select + update, the merge phase less its initial pair count (``pair_count``).
SELECT_UPDATE = "select+update"


@dataclass(frozen=True)
class Step:
    """One step of the articles and the rungs that make it: ``before`` -> ``after`` on ``stage``."""

    name: str
    run_set: str
    before: str
    after: str
    stage: str  # "total", "merge_phase", SELECT_UPDATE, or a StageTimer stage: pretokenize, pair_count, select, update
    theirs: tuple[str, ...]  # the articles' ratios of the same step and stage (THEIRS), if any
    why: str  # one line: why their ratio and the ladder's differ ({data}, {size}, {vocab}, {merges}: the set's own)
    no_gain: str = ""  # why, when the ladder's ratio is below 1 or within the spread
    article_vocab: int = 0  # the vocab the article ran the step's data at, for a name that says {at_vocab}

    def title(self, vocab_size: int) -> str:
        """The step's name for a set run at ``vocab_size``: ``{at_vocab}`` says that vocab, and calls it the
        article's only where it is :attr:`article_vocab` (a quick run's sets run at smaller ones).

        >>> step = Step("v5 -> v7 {at_vocab}: total", "s", "v5", "v7", "total", (), "", article_vocab=10_000)
        >>> step.title(10_000), step.title(600)
        ("v5 -> v7 at vocab 10,000, the article's: total", "v5 -> v7 at vocab 600 (the article's: 10,000): total")
        """
        at_vocab = f"at vocab {vocab_size:,}"
        if self.article_vocab:
            at_vocab += (", the article's" if vocab_size == self.article_vocab
                         else f" (the article's: {self.article_vocab:,})")
        return self.name.format(at_vocab=at_vocab)


FULL = [
    RunSet("cs336-speed", "corpus-en", 500, ("v1", "v2"),
           "corpus.en at vocab 500: the fixture and vocab of CS336's train_bpe tests, test_train_bpe_speed among them"),
    RunSet("tinystories", "tinystories-synth-50MB", 10_000, ("v5", "v6", "v7", "v8", "v9")),
    RunSet("tinystories-reduced", "tinystories-synth-50MB", 2_000, ("v2", "v3", "v4", "v5", "v8"),
           "v2-v4 scan every pair with max() once per merge: at vocab 10,000 that is a minute or more per run "
           "even on this text, so they run at vocab 2,000 (1,743 merges) on the same 50 MB"),
    RunSet("tinystories-v1", "tinystories-synth-10MB", 1_000, ("v1", "v2"),
           "v1 recounts every pair after every merge: at vocab 10,000 on 50 MB that is minutes per run, so "
           "v1 -> v2 runs on 10 MB at vocab 1,000 (743 merges)"),
    RunSet("web", "webtext-synth-20MB", 32_000, ("v6", "v7", "v8", "v9", "v10"),
           "v5 takes minutes per run at this vocab, so v5 -> v6 is measured on the reduced set"),
    RunSet("web-reduced", "webtext-synth-2MB", 500, ("v2", "v3", "v4", "v5", "v6", "v8"),
           "v2-v4 scan every pair with max() once per merge: on web text at vocab 32,000 that is days, "
           "so they run on 2 MB at vocab 500 (243 merges)"),
    RunSet("real-tinystories", "tinystories", 10_000, ("v5", "v6", "v7", "v8"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-tinystories-reduced", "tinystories", 2_000, ("v2", "v3", "v4", "v5"),
           "the first 50 MB of TinyStoriesV2-GPT4-train.txt", limit="50MB", real=True),
    RunSet("real-owt", "owt", 32_000, ("v6", "v7", "v8"), "the first 20 MB of owt_train.txt",
           limit="20MB", real=True),
]

#: The same plan on tiny inputs (the real data sets cut to 300KB): each set's (data, vocab) in FULL's order.
QUICK = [replace(run, data=data or run.data, vocab_size=vocab, note="", limit="300KB" if run.real else None)
         for run, (data, vocab) in zip(FULL, [(None, 300), ("tinystories-synth-300KB", 600),
                                              ("tinystories-synth-300KB", 400), ("tinystories-synth-100KB", 300),
                                              ("webtext-synth-300KB", 600), ("webtext-synth-100KB", 300),
                                              (None, 600), (None, 400), (None, 600)])]

# Why a step's two ratios differ, shared by the steps that run on more than one set.
_COUNTING = ("their 8 counting processes against this machine's cores: the ratio is bounded by the cores "
             "given, less the pool's start-up and the counts sent back")
_COUNTING_NO_GAIN = ("on a small file ({data} is {size}), one core or a busy machine, starting the pool and "
                     "sending the counts back cost more than counting in one process")
_HEAP_SELECT = ("no article times the select stage across a heap: Part 9, the series' heap, is not among the parts "
                "quoted, and Koschei gives only the whole merge; the ladder's ratio grows with the live pairs the "
                "scan visits, hence with the vocab")
_PYTHON_ONLY = ("no article step: the parts quoted time no Python trainer past bpe_v5, and the series' C++ and "
                "compiled steps stand beside v8 (below); v6 stays in pure Python")
_OMP_MERGE = ("their OpenMP threads (32) split the max() scan; v7's processes split the words, so the update, over "
              "this machine's cores; after v5's heap there is no scan left to split")
_OMP_MERGE_PHASE = ("no article figure for the merge phase: their OpenMP program's total is its update and max() "
                    "alone, with no initial pair count, so it stands beside select + update; v7's processes split "
                    "the words, so the update, over this machine's cores")
_V7_NO_GAIN = ("each merge is a round trip to the shard processes: on a 2-core machine the gain can sink into the "
               "spread, and on a busy one v7 gathers its shards back and runs as v6")
_V7_SAME_CODE = ("on TinyStories-like text (few distinct words) v7 runs v6's code in one process: the two rungs run "
                 "the same code, so any difference is noise")
_COMPILED_MERGE = ("Part 5 (a C++ merge equal to the Python one) is not among the parts quoted; the C++ ratio they "
                   "give for this stage (a program's total: its update and max(), no initial pair count) is the flat "
                   "hash map's (Part 7's step, timed in Part 8's section 5 table, whose data set is not named there), "
                   "a swap of tables inside C++ that mostly speeds its max() scan; v8 is v6's algorithm (heap, grouped "
                   "diff, lazy index) moved from CPython objects to C arrays, with no scan left, so the ladder's ratio "
                   "is compiled code against interpreted, the algorithm unchanged")
_COMPILED_MERGE_PHASE = ("no article figure: Part 5 (a C++ merge equal to the Python one) is not among the parts "
                         "quoted, and the C++ programs quoted time their update and max() alone, with no initial pair "
                         "count (their totals stand beside select + update); v8 compiles v6's algorithm, initial "
                         "pair count included, so the ladder's ratio is compiled code against interpreted")

_COMPILED_COUNTING = ("Koschei's Rust pre-tokenizer was twice as slow as Python's regex (their ratio, below 1; the "
                      "article puts it on the regex libraries); v9 runs no regex engine: the pattern written out "
                      "as a scanner, counted into C tables on threads, so its ratio is a scanner and compiled "
                      "counting against v8's Python counter in processes, on this machine's cores against their 24")
_THREADED_MERGE = ("their OpenMP threads (32) split the max() scan, the cost of their serial program; v10's threads "
                   "split the update's rewrites over this machine's cores, one thread replaying the pair counts' "
                   "changes in order, and v10 also keeps the state compact, so its ratio holds both ideas")

# Each step of the articles, in their order, with the rungs that make it and the stage compared on both
# sides; ``theirs`` names the articles' ratios (THEIRS below), or is empty where none exists.
# The articles' C++ and compiled steps stand beside v8, the ladder's compiled rung: against v6, whose
# algorithm it compiles, or against the rung whose algorithm the article's starting program has.
STEPS = [
    Step("the CS336 speed test: v1 -> v2 on its fixture", "cs336-speed", "v1", "v2", "total", ("speed_test",),
         "{data} at vocab {vocab} (CS336's train_bpe tests: corpus.en at 500); their seconds are the time the test "
         "prints, ours a fresh process's whole run, start-up included, which weighs more in v2's short run"),
    Step("incremental pair counts and the inverted index (bpe_v1 -> bpe_v2): merge phase",
         "tinystories-v1", "v1", "v2", "merge_phase", ("v1_v2_merge",),
         "their 9,743 merges over 2.2 GB against {merges} over {size}: v1's recount costs about the same at every "
         "merge, v2's max() grows with the live pairs, so the ratio depends on how many merges are made"),
    Step("counting in parallel processes (bpe_v2 -> bpe_v3): counting", "tinystories-reduced", "v2", "v3",
         "pretokenize", ("counting_tinystories",), _COUNTING, _COUNTING_NO_GAIN),
    Step("counting in parallel processes (bpe_v2 -> bpe_v3): counting, web-like", "web-reduced", "v2", "v3",
         "pretokenize", ("counting_owt",), _COUNTING, _COUNTING_NO_GAIN),
    Step("fine-grained pair-count updates in Python (Part 8): update, web-like", "web-reduced", "v3", "v4", "update",
         ("fine_python_update",),
         "the same change and stage, both in Python; their figure is OpenWebText at vocab 32,000, the ladder's {size} "
         "at {vocab}; Part 8's C++ ports of the change stand beside v8 (v3 -> v8, below)",
         "the update is a small part of v3's merge phase here; its gain can sink into the spread"),
    Step("fine-grained pair-count updates in Python (Part 8): update, TinyStories-like", "tinystories-reduced", "v3",
         "v4", "update", (),
         "no article figure: Part 8's bpe_v3 TinyStories row prints no update time",
         "on TinyStories-like text the update is a small stage (as in bpe_v5's TinyStories row of Part 8), so a "
         "gain is hard to see"),
    Step("fine-grained pair-count updates in Python (Part 8): merge phase, web-like", "web-reduced", "v3", "v4",
         "merge_phase", ("fine_python_merge",),
         "in the article the update gained but the max() took longer and the whole OpenWebText run slowed; it "
         "gives no reason; v4 keeps v3's max() scan, so its merge phase moves by the update's gain at most",
         "v4 keeps v3's max() scan, most of the merge phase; the update's gain can sink into the scan's spread"),
    Step("a heap replaces the max() scan: select, TinyStories-like", "tinystories-reduced", "v4", "v5", "select",
         (), _HEAP_SELECT),
    Step("a heap replaces the max() scan: select, web-like", "web-reduced", "v4", "v5", "select", (), _HEAP_SELECT),
    Step("a heap replaces the max() scan, in Python: merge phase, TinyStories-like", "tinystories-reduced", "v4", "v5",
         "merge_phase", (),
         "no article times a heap alone across a whole merge: Part 9 is not among the parts quoted, and Koschei's "
         "merges are C++ (they stand beside v4 -> v8, below); v4 already updates incrementally, so only the heap "
         "differs between the ladder's rungs"),
    Step("constant factors in pure Python: merge phase, TinyStories-like", "tinystories", "v5", "v6",
         "merge_phase", (), _PYTHON_ONLY),
    Step("constant factors in pure Python: update, TinyStories-like", "tinystories", "v5", "v6", "update", (),
         _PYTHON_ONLY),
    Step("constant factors in pure Python: total, TinyStories-like", "tinystories", "v5", "v6", "total", (),
         _PYTHON_ONLY),
    Step("constant factors in pure Python: total, web-like", "web-reduced", "v5", "v6", "total", (), _PYTHON_ONLY),
    Step("merging in parallel (v7 shards the words): merge phase, web-like", "web", "v6", "v7", "merge_phase",
         (), _OMP_MERGE_PHASE, _V7_NO_GAIN),
    Step("merging in parallel (v7 shards the words): select + update, web-like", "web", "v6", "v7", SELECT_UPDATE,
         ("omp_merge",), _OMP_MERGE, _V7_NO_GAIN),
    Step("merging in parallel: update, web-like", "web", "v6", "v7", "update", ("omp_update",),
         "in their table the OpenMP program's update is slower than the serial one's; v7 parallelizes the update "
         "itself, so this is where its gain should show", _V7_NO_GAIN),
    Step("merging in parallel: select, web-like", "web", "v6", "v7", "select", ("omp_max",),
         "their 32 threads split the max() scan; v7 keeps v6's heap in one process and does not split the selection",
         "expected: v7's selection is v6's heap, unchanged; a ratio near 1 is the design"),
    Step("merging in parallel: merge phase, TinyStories-like (v7 is v6 below two shards of words)",
         "tinystories", "v6", "v7", "merge_phase", (), _V7_SAME_CODE, "expected: a ratio near 1 is the design"),
    Step("v5 -> v7 {at_vocab}: total, TinyStories-like", "tinystories", "v5", "v7", "total", (),
         "the last two ladder steps together; the parts quoted time no Python trainer past bpe_v5",
         article_vocab=10_000),
    Step("compiled: a C++ merge (Part 5) -> v8: merge phase, TinyStories-like", "tinystories", "v6", "v8",
         "merge_phase", (), _COMPILED_MERGE_PHASE),
    Step("compiled: a C++ merge (Part 5) -> v8: merge phase, web-like", "web", "v6", "v8", "merge_phase", (),
         _COMPILED_MERGE_PHASE),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: select + update, TinyStories-like",
         "tinystories", "v6", "v8", SELECT_UPDATE, ("flat_maps_merge",), _COMPILED_MERGE),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: select + update, web-like", "web", "v6",
         "v8", SELECT_UPDATE, ("flat_maps_merge",), _COMPILED_MERGE),
    Step("compiled: flat hash maps under the max() scan (Part 7) -> v8: select, web-like", "web", "v6", "v8",
         "select", ("flat_maps_max",),
         "their flat map speeds a scan of every pair at every merge; v6 and v8 both pop a lazy-deletion heap, v8's an "
         "array in C, so no scan is left for a flatter table to speed; Part 9 (the series' heap) is not among the "
         "parts quoted"),
    Step("compiled: flat hash maps (Part 7), flat sets in the index (Part 8) -> v8: update, web-like", "web", "v6",
         "v8", "update", ("flat_maps_update", "flat_sets_update"),
         "their steps change the containers under a C++ update and keep its algorithm (the maps in Part 7's step, "
         "the index's sets in Part 8's section 6); v8 keeps v6's update and moves its counts, index and words from "
         "CPython objects to C arrays, so the ladder's ratio also holds what compiling gains"),
    Step("compiled: the fine-grained update in C++ (Part 8) -> v8: update, web-like", "web-reduced", "v3", "v8",
         "update", ("fine_cpp_update", "fine_cpp_flat_update"),
         "both their programs are C++, so their ratio is the finer diff alone; the ladder starts from v3, the coarse "
         "update of their starting program, in Python, and v8 adds compiled code and v6's grouped diff and lazy "
         "index, so its ratio is larger by what those gain; in the same table the fine-grained program's whole "
         "merge was slower than bpe_train_updater's (its max() took longer), the article gives no reason"),
    Step("compiled: Koschei's C++ merge with a lazy-deletion heap -> v8: merge phase, TinyStories-like",
         "tinystories-reduced", "v4", "v8", "merge_phase", ("koschei_merge",),
         "Koschei times a C++ 'optimized merge' (a lazy-deletion heap, incremental updates through a pair_positions "
         "index) against a C++ 'unoptimized merge' it does not describe, pre-tokenizing in Python on both, as v4 "
         "and v8 do; the ladder starts from v4, incremental updates without a heap, in Python, so its ratio also "
         "holds what compiling gains"),
    Step("compiled: Cython (Part 10) -> v8: total, TinyStories-like", "tinystories", "v6", "v8", "total", (),
         "no article figure: Part 10 (Cython and PyPy) and Part 11 (C++ wrapped with Cython) are known from the "
         "series' contents alone; v8 compiles the merge and pre-tokenizes with v6's Python, so the whole run gains "
         "at most the merge's share",
         "where pre-tokenizing and start-up, the same code on both rungs, are most of the run, the merge's gain can "
         "sink into their spread"),
    Step("counting compiled: Koschei's Rust pre-tokenizer -> v9's scanner: pretokenize, TinyStories-like",
         "tinystories", "v8", "v9", "pretokenize", ("koschei_rust_pretokenize",), _COMPILED_COUNTING),
    Step("counting compiled -> v9: pretokenize, web-like", "web", "v8", "v9", "pretokenize",
         ("koschei_rust_pretokenize",), _COMPILED_COUNTING),
    Step("counting compiled -> v9: total, web-like", "web", "v8", "v9", "total", (),
         "no article compiles the counting and times a whole run with it; v9 keeps v8's merge, so the whole run "
         "gains what the pre-tokenizing was of it"),
    Step("the merge on threads: OpenMP (Part 6) -> v10: select + update, web-like", "web", "v9", "v10",
         SELECT_UPDATE, ("omp_merge",), _THREADED_MERGE),
    Step("counting in parallel: counting, real TinyStories", "real-tinystories-reduced", "v2", "v3", "pretokenize",
         ("counting_tinystories",), _COUNTING, _COUNTING_NO_GAIN),
    Step("a heap replaces the max() scan: select, real TinyStories", "real-tinystories-reduced", "v4", "v5",
         "select", (), _HEAP_SELECT),
    Step("constant factors in pure Python: total, real TinyStories", "real-tinystories", "v5", "v6", "total", (),
         _PYTHON_ONLY),
    Step("merging in parallel: select + update, real OpenWebText", "real-owt", "v6", "v7", SELECT_UPDATE,
         ("omp_merge",), _OMP_MERGE, _V7_NO_GAIN),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: select + update, real TinyStories",
         "real-tinystories", "v6", "v8", SELECT_UPDATE, ("flat_maps_merge",), _COMPILED_MERGE),
    Step("compiled: a C++ merge, then flat hash maps (Parts 5 and 7) -> v8: select + update, real OpenWebText",
         "real-owt", "v6", "v8", SELECT_UPDATE, ("flat_maps_merge",), _COMPILED_MERGE),
]

FIGURES_FILE = REPO_ROOT / "docs" / "articles-figures.json"


@dataclass(frozen=True)
class Theirs:
    """One ratio the articles publish or imply: ``before / after`` (key paths into FIGURES_FILE), of
    ``stage`` (named as the ladder names it: their counting is ``pretokenize``, their max ``select``, the
    merge time ``merge_phase``, and a C++ merge program's total, its update plus its max() with no initial
    pair count, :data:`SELECT_UPDATE`)."""

    what: str
    before: str
    after: str
    source: str
    stage: str


def _cpp(what: str, before: str, after: str, figure: str, section: int = 5) -> Theirs:
    """A ratio of two of Part 8's C++ ports (``bpe_train_updater`` and a suffix), each a median of three runs; a
    program's ``total`` is its update plus its max(), so it stands beside the ladder's :data:`SELECT_UPDATE`."""
    program = "median(lili_part8.cpp.bpe_train_updater{}." + figure + ".*)"
    return Theirs(f"C++ {what}", program.format(before), program.format(after), f"lili Part 8, section {section} table",
                  {"total": SELECT_UPDATE, "max": "select", "update": "update"}[figure])


THEIRS = {
    "speed_test": Theirs("CS336's test_train_bpe_speed, bpe_v1 -> bpe_v2: the time the test prints",
                         "lili_part1.speed_test", "lili_part2.speed_test", "lili Parts 1 and 2, section 3.1", "total"),
    "v1_v2_merge": Theirs("bpe_v1 -> bpe_v2, TinyStories: merge time (1,565 s -> 118 s)",
                          "lili_part2.v1_merge_tinystories", "lili_part2.tinystories.merge.0",
                          "lili Part 2, section 3.2 (its own 13x)", "merge_phase"),
    "counting_tinystories": Theirs("bpe_v2 -> bpe_v3 (8 counting processes), TinyStories: counting",
                                   "median(lili_part2.tinystories.counting.*)",
                                   "median(lili_part8.v3_tinystories.counting.*)",
                                   "lili Part 2 section 4 table, Part 8 section 4 table", "pretokenize"),
    "counting_owt": Theirs("bpe_v2 -> bpe_v3 (8 counting processes), OpenWebText: counting",
                           "median(lili_part2.openwebtext.counting.*)", "median(lili_part8.v3_openwebtext.counting.*)",
                           "lili Part 2 section 4 table, Part 8 section 4 table", "pretokenize"),
    "fine_python_update": Theirs("bpe_v3 -> bpe_v5 (fine-grained), OpenWebText: update",
                                 "lili_part8.v3_openwebtext.update", "median(lili_part8.v5_openwebtext.update.*)",
                                 "lili Part 8, section 4 table", "update"),
    "fine_python_merge": Theirs("bpe_v3 -> bpe_v5 (fine-grained), OpenWebText: merge (max + update)",
                                "lili_part8.v3_openwebtext.merge", "median(lili_part8.v5_openwebtext.merge.*)",
                                "lili Part 8, section 4 table", "merge_phase"),
    "fine_cpp_update": _cpp("bpe_train_updater -> _fine_grained (the fine-grained update): update", "",
                            "_fine_grained", "update"),
    "fine_cpp_flat_update": _cpp("_emhash8 -> _fine_grained_emhash8 (the fine-grained update, on flat hash maps): "
                                 "update", "_emhash8", "_fine_grained_emhash8", "update"),
    "flat_sets_update": _cpp("_fine_grained_emhash8 -> _fine_grained_emhash8_set9 (flat sets in the index): update",
                             "_fine_grained_emhash8", "_fine_grained_emhash8_set9", "update", section=6),
    # Flat hash maps are Part 7's step (the series' contents); the figures quoted for it are the emhash8 programs
    # of Part 8's table, whose maps are emhash8::HashMap instead of bpe_train_updater's.
    "flat_maps_merge": _cpp("bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): merge (the program's "
                            "total, update + max)", "", "_emhash8", "total"),
    "flat_maps_max": _cpp("bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): max", "", "_emhash8", "max"),
    "flat_maps_update": _cpp("bpe_train_updater -> _emhash8 (flat hash maps, Part 7's step): update", "", "_emhash8",
                             "update"),
    "koschei_merge": Theirs("Koschei, C++ 'unoptimized merge' -> 'optimized merge', TinyStories: merge",
                            "koschei.cpp_unoptimized_merge.merge", "koschei.cpp_optimized_merge.merge",
                            "Koschei, the performance comparison table", "merge_phase"),
    "koschei_rust_pretokenize": Theirs("Koschei, Python pre-tokenizing ('C++ optimized merge' row) -> its Rust "
                                       "pre-tokenizer ('Rust optimized pre-tokenization' row), TinyStories",
                                       "koschei.cpp_optimized_merge.pretokenize", "koschei.rust_pretokenize",
                                       "Koschei, the performance comparison table", "pretokenize"),
    "omp_merge": _cpp("bpe_train_updater -> _omp_v7, 32 OpenMP threads: merge (the program's total, update + max)",
                      "", "_omp_v7_32", "total"),
    "omp_update": _cpp("bpe_train_updater -> _omp_v7, 32 OpenMP threads: update", "", "_omp_v7_32", "update"),
    "omp_max": _cpp("bpe_train_updater -> _omp_v7, 32 OpenMP threads: max", "", "_omp_v7_32", "max"),
}


@cache
def article_figures() -> dict:
    """The articles' figures (docs/articles-figures.json)."""
    try:
        return json.loads(FIGURES_FILE.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise BPEError(f"cannot read the articles' figures {FIGURES_FILE}: {e}") from None


def their_ratio(name: str) -> dict:
    """``{"what", "source", "before", "after", "ratio"}`` of one ratio of :data:`THEIRS`."""
    theirs, figures = THEIRS[name], article_figures()
    before, after = lookup(figures, theirs.before), lookup(figures, theirs.after)
    return {"what": theirs.what, "source": theirs.source, "before": before, "after": after, "ratio": before / after}
