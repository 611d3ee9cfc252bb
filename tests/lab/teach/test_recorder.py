"""The one recorder of a run's merges: its merges are train_bpe's, and each merge's record (count, tie, words,
changed counts) is what a recount of the words before and after it says, read in snapshots or in place."""

import pytest

from bpe import train_bpe
from bpe.counting.plain import count_file_serial
from bpe.lab.teach.recorder import Recorder, ranked
from bpe.lab.teach.trace import traced
from bpe.training.registry import VARIANTS
from conftest import CORPUS_EN

SPECIAL = ["<|endoftext|>"]
VOCAB = 300


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("recorder") / "small.txt"
    path.write_bytes(CORPUS_EN.read_bytes()[:20_000])
    return path


def recount(words) -> dict:
    counts = {}
    for word, count in words:
        for pair in zip(word, word[1:]):
            counts[pair] = counts.get(pair, 0) + count
    return counts


@pytest.mark.parametrize("rung, live", [("v1", False), ("v2", False), ("v6", False), ("v5", True), ("v2", True)])
def test_each_merge_is_recorded_as_a_recount_says(corpus, rung, live):
    _, expected = train_bpe(corpus, VOCAB, SPECIAL)
    recorder = Recorder(traced(rung)(count_file_serial(corpus, SPECIAL)), live=live)
    words = list(recorder.state["words"])  # (word, count), numbered as the merger numbers them
    for _ in expected:
        before = recount(words)
        merge = recorder.step()
        best = ranked(before)[0]
        assert (merge.pair, merge.count) == best
        assert merge.tied == sorted((p for p, c in before.items() if c == best[1]), reverse=True)
        holders = [i for i, (word, _) in enumerate(words) if merge.pair in zip(word, word[1:])]
        assert [i for i, *_ in merge.words] == holders
        for i, old, new, count in merge.words:
            assert (old, count) == words[i] and b"".join(new) == b"".join(old) and len(new) < len(old)
            words[i] = (new, count)
        after = recount(words)
        assert merge.changed == sorted(((p, before.get(p, 0), after.get(p, 0)) for p in before.keys() | after.keys()
                                        if before.get(p, 0) != after.get(p, 0)),
                                       key=lambda change: (-abs(change[2] - change[1]), change[0]))
    assert recorder.merges == expected


def test_no_pair_left_is_recorded_as_none():
    recorder = Recorder(VARIANTS["v2"].Merger({b"ab": 3}))
    assert recorder.step().changed == [((b"a", b"b"), 3, 0)]
    merge = recorder.step()
    assert merge.pair is None and merge.words is None and recorder.merges == [(b"a", b"b")]
