"""Every rung gives exactly v1's merges with each option of training on (bpe/training/options.py):
``min_frequency``, ``max_token_length`` and continued training (``initial_merges``), on both kinds of text,
Gutenberg-like and web-like, and on generated corpora; v1 itself is held to the options' plain definition.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ladder.test_equivalence import SPECIAL_SETS, corpora

from bpe import VARIANTS, Tokenizer, train_bpe
from bpe.counting.plain import count_file_serial
from bpe.errors import BPEError
from bpe.running.timer import NullTimer
from bpe.training.merge_loop import Rules, run_merges
from bpe.training.observer import Observer
from bpe.training.options import stopped_early
from bpe.variants import _v7_policy as shard_policy
from conftest import DEFAULT_CORPUS

EOT = "<|endoftext|>"
SIZE = 30_000  # bytes of each kind of text: v1 trains 143 merges on it in about a second
VOCAB = 400


@pytest.fixture(scope="module", params=["gutenberg", "webtext"])
def text_path(request, tmp_path_factory):
    """About 30 KB of each kind of text, cut at a document's end."""
    path = tmp_path_factory.mktemp(request.param) / f"{request.param}.txt"
    if request.param == "gutenberg":
        text = DEFAULT_CORPUS.read_text(encoding="utf-8")
        path.write_text(text[:text.index(EOT, SIZE)], encoding="utf-8")
    else:
        from bpe.data.webtext import generate

        generate(path, SIZE)
    return path


@pytest.fixture(scope="module")
def v1s(text_path) -> dict:
    """v1's results on the text, made once: with no option, with each option, and the stop it says."""
    observer = Observer()
    return {"plain": train_bpe(text_path, VOCAB, [EOT], variant="v1"),
            "max_token_length": train_bpe(text_path, VOCAB, [EOT], variant="v1", max_token_length=4),
            "min_frequency": train_bpe(text_path, VOCAB, [EOT], variant="v1", min_frequency=40, observer=observer),
            "stopped": observer.stopped}


def others() -> list[str]:
    return [name for name in VARIANTS if name != "v1"]


def plain_definition(counts: dict[bytes, int], num_merges: int, min_frequency=None, max_token_length=None):
    """The options as stated, with nothing shared with the rungs: recount every pair, keep those short
    enough, stop at a best count below the minimum, merge the best (ties to the larger pair)."""
    words = {tuple(bytes([b]) for b in token): count for token, count in counts.items()}
    merges = []
    while len(merges) < num_merges:
        pairs = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        allowed = [p for p in pairs if max_token_length is None or len(p[0] + p[1]) <= max_token_length]
        if not allowed:
            break
        best = max(allowed, key=lambda p: (pairs[p], p))
        if min_frequency is not None and pairs[best] < min_frequency:
            break
        merges.append(best)
        merged_words = Counter()
        for word, count in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i:i + 2] == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged_words[tuple(out)] += count
        words = merged_words
    return merges


RELAXED = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
OPTIONS = st.fixed_dictionaries({}, optional={"min_frequency": st.integers(1, 4),
                                              "max_token_length": st.integers(1, 6)})


@settings(max_examples=200, **RELAXED)
@given(text=corpora, specials=st.sampled_from(SPECIAL_SETS), extra_merges=st.integers(0, 40), options=OPTIONS)
def test_v1_is_the_plain_definition_and_every_rung_is_v1(tmp_path_factory, text, specials, extra_merges, options):
    path = tmp_path_factory.mktemp("options") / "corpus.txt"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    vocab_size = 256 + len(specials) + extra_merges
    expected = train_bpe(path, vocab_size, specials, variant="v1", **options)
    assert expected[1] == plain_definition(count_file_serial(path, specials), extra_merges, **options)
    for name in others():
        assert train_bpe(path, vocab_size, specials, variant=name, workers=1, **options) == expected, name


@pytest.mark.parametrize("name", others())
def test_max_token_length_gives_v1s_merges_on_every_rung(text_path, v1s, name):
    expected, unlimited = v1s["max_token_length"], v1s["plain"][1]
    assert max(len(a + b) for a, b in unlimited) > 4  # the limit changes what is learned here
    assert len(expected[1]) == VOCAB - 257 and max(len(a + b) for a, b in expected[1]) <= 4
    assert train_bpe(text_path, VOCAB, [EOT], variant=name, workers=1, max_token_length=4) == expected


@pytest.mark.parametrize("name", others())
def test_min_frequency_gives_v1s_merges_on_every_rung_and_stops_early(text_path, v1s, name):
    expected = v1s["min_frequency"]
    assert 0 < len(expected[1]) < VOCAB - 257
    assert expected[1] == v1s["plain"][1][:len(expected[1])]  # a prefix: the best count only falls
    assert v1s["stopped"].startswith("the most frequent pair left is counted ")
    assert v1s["stopped"].endswith(" times, fewer than the minimum frequency 40")
    mine = Observer()
    assert train_bpe(text_path, VOCAB, [EOT], variant=name, workers=1, min_frequency=40, observer=mine) == expected
    assert mine.stopped == v1s["stopped"]


def test_the_stopped_early_line_names_the_option():
    assert stopped_early(12, 243, 5000, "the most frequent pair left is counted 1 time, fewer than the minimum "
                                        "frequency 2") == ("stopped early: 12 of 243 merges: the most frequent pair "
                                                           "left is counted 1 time, fewer than the minimum frequency 2")
    rules = Rules(max_token_length=1)
    assert run_merges(VARIANTS["v1"].Merger({b"ab": 2}), 5, NullTimer(), rules=rules) == []
    assert rules.why == "no pair left that makes a token of at most 1 byte (the maximum token length)"
    plain = Rules(max_token_length=3)  # nothing too long was ever passed over: the usual reason, not the option's
    assert run_merges(VARIANTS["v1"].Merger({b"ab": 2}), 5, NullTimer(), rules=plain) == [(b"a", b"b")]
    assert plain.why is None


@pytest.mark.parametrize("name", list(VARIANTS))
def test_continued_training_on_the_same_corpus_is_one_run(text_path, v1s, name):
    """Trained to 300 and saved, continued to VOCAB: one run's vocab and merges to VOCAB, whether the merges
    come as a list or as the saved tokenizer."""
    one_run = v1s["plain"]
    vocab, merges = train_bpe(text_path, 300, [EOT], variant=name, workers=1)
    assert train_bpe(text_path, VOCAB, [EOT], variant=name, workers=1, initial_merges=merges) == one_run
    tokenizer = Tokenizer(vocab, merges, [EOT])
    assert train_bpe(text_path, VOCAB, [EOT], variant=name, workers=1, initial_merges=tokenizer) == one_run


def test_continued_training_on_another_corpus_keeps_every_id_and_merge(tmp_path):
    """On other text the kept merges come first, as they are, then what that text teaches; every rung agrees."""
    books = tmp_path / "books.txt"
    text = DEFAULT_CORPUS.read_text(encoding="utf-8")
    books.write_text(text[:text.index(EOT, SIZE)], encoding="utf-8")
    web = tmp_path / "web.txt"
    from bpe.data.webtext import generate

    generate(web, SIZE)
    vocab, merges = train_bpe(books, 350, [EOT], variant="v1")
    expected = train_bpe(web, VOCAB, [EOT], variant="v1", initial_merges=Tokenizer(vocab, merges, [EOT]))
    assert expected[1][:len(merges)] == merges and all(expected[0][i] == token for i, token in vocab.items())
    assert expected[1][len(merges):] != train_bpe(web, VOCAB - len(merges), [EOT], variant="v1")[1]
    for name in others():
        assert train_bpe(web, VOCAB, [EOT], variant=name, workers=1, initial_merges=merges) == expected, name


def test_a_tokenizer_laid_out_otherwise_keeps_its_ids(tmp_path):
    """The special token last (ids as another trainer lays them out): kept, and the new tokens after it."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower lowest newer newest " * 20 + EOT + "wider widest")
    _, merges = train_bpe(corpus, 260, [EOT], variant="v1")
    vocab = {i: bytes([i]) for i in range(256)} | {256 + i: a + b for i, (a, b) in enumerate(merges)}
    vocab[len(vocab)] = EOT.encode()
    got, more = train_bpe(corpus, 262, [EOT], variant="v1", initial_merges=Tokenizer(vocab, merges, [EOT]))
    assert more[:3] == merges and len(more) == 5
    assert got == vocab | {260: more[3][0] + more[3][1], 261: more[4][0] + more[4][1]}
    extra = vocab | {len(vocab): b"zz"}  # a token no merge made: the new merges fill the vocab to its size all the same
    got, more = train_bpe(corpus, 263, [EOT], variant="v1", initial_merges=Tokenizer(extra, merges, [EOT]))
    assert len(got) == 263 and len(more) == 5 and got[260] == b"zz"


def test_v7_in_shard_processes_follows_the_options(monkeypatch):
    """v7 with its words in a shard process: the options are answered by the parent's heap and counts."""
    monkeypatch.setattr(shard_policy, "MIN_WORDS_PER_SHARD", 1)
    counts = count_file_serial(DEFAULT_CORPUS, [EOT], end=SIZE)
    v1, v7 = VARIANTS["v1"].Merger, VARIANTS["v7"].Merger
    for rules in (dict(max_token_length=4), dict(min_frequency=40)):
        expected = run_merges(v1(counts), 150, NullTimer(), rules=Rules(**rules))
        merger = v7(counts, workers=2)
        assert merger.summary()["shards"] == 2
        assert run_merges(merger, 150, NullTimer(), rules=Rules(**rules)) == expected
    first = run_merges(v1(counts), 60, NullTimer())
    merger = v7(counts, workers=2)
    assert run_merges(merger, 150, NullTimer(), initial=first) == run_merges(v1(counts), 150, NullTimer())


@pytest.mark.parametrize("value", [0, -1, 2.0, "3", True])
@pytest.mark.parametrize("option", ["min_frequency", "max_token_length"])
def test_a_bad_value_is_one_line_naming_the_option(option, value):
    what = "a count" if option == "min_frequency" else "a number of bytes"
    with pytest.raises(BPEError, match=rf"^{option} must be {what} of at least 1, got {value!r}$"):
        train_bpe(DEFAULT_CORPUS, 300, [EOT], **{option: value})


def test_initial_merges_that_cannot_be_continued_are_one_line(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("low lower")
    with pytest.raises(BPEError, match=r"^initial_merges\[1\] \(b'x', b'ow'\) uses b'ow', which is neither a byte"):
        train_bpe(corpus, 300, [EOT], initial_merges=[(b"l", b"o"), (b"x", b"ow")])
    with pytest.raises(BPEError, match=r"^initial_merges\[0\] must be a pair of bytes, got \('l', 'o'\)$"):
        train_bpe(corpus, 300, [EOT], initial_merges=[("l", "o")])
    with pytest.raises(BPEError, match=r"^vocab_size 258 is smaller than the tokenizer being continued, which "
                                       r"holds 259 tokens"):
        train_bpe(corpus, 258, [EOT], initial_merges=[(b"l", b"o"), (b"lo", b"w")])
    tokenizer = Tokenizer(*train_bpe(corpus, 259, [EOT]), [EOT])
    with pytest.raises(BPEError, match=r"^special_tokens \['<\|x\|>'\] differ from those of the tokenizer being "
                                       r"continued, \['<\|endoftext\|>'\]"):
        train_bpe(corpus, 300, ["<|x|>"], initial_merges=tokenizer)
