"""v5 (variants/v5_heap.py): the heap's byte-order tie rule, and stale entries skipped and counted.
Its counts and index after every merge are checked with v4's in test_v4.py."""

from bpe import VARIANTS
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import run_merges
from conftest import REPEATS, TIES, v1_merges_and_words


def test_heap_tie_rule_is_exact_byte_order():
    # Every pair has count 3 (abcd adds 1 to ab, bc, cd: so ab and cd reach 4 and tie there).
    merger = VARIANTS["v5"].Merger(TIES)
    expected, _ = v1_merges_and_words(TIES, 20)
    assert run_merges(merger, 20, NullTimer()) == expected
    assert expected[0] == (b"c", b"d")  # (a, b) and (c, d) both at 4: larger bytes win


def test_heap_skips_stale_entries_and_counts_them():
    merger = VARIANTS["v5"].Merger(REPEATS)
    assert merger.stale_pops == 0
    run_merges(merger, 100, NullTimer())
    assert isinstance(merger.stale_pops, int) and merger.stale_pops > 0
    live = {pair: count for pair, count in merger.pair_counts.items()}
    entries = {(entry[3], -entry[0]) for entry in merger.heap}
    assert all((pair, count) in entries for pair, count in live.items())  # every live count is in the heap
