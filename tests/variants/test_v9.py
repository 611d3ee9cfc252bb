"""v9: the compiled scanner counts exactly what ``Counter(regex.findall(GPT2_PATTERN, piece))`` counts.

Held three ways: the character classes against ``regex`` on every code point; the scanner against the
plain counter on every code point in the contexts that decide a pre-token, and on generated text from
every Unicode category (hypothesis); and whole files cut into many chunks across threads, with special
tokens at the chunk edges, bad bytes and both error modes.  The merges are held to v1's by the ladder's
tests (tests/ladder/), which run every rung.
"""

from __future__ import annotations

import threading

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpe.counting.plain import count_file_serial, count_text
from bpe.errors import BPEError
from bpe.running import cores
from bpe.running.threads import run_threads
from bpe.split import gpt2_classes
from bpe.training import registry
from bpe.training.train import train_bpe
from bpe.variants import v1_naive, v8_compiled
from bpe.variants import v9_counting_compiled as v9
from conftest import CORPUS_EN, OVERLAPS, REPEATS, TIES, cs336_merges, sigint_on_first_bytes

built = pytest.mark.skipif(v9.UNAVAILABLE is not None, reason=str(v9.UNAVAILABLE))
pytestmark = built
EOT = "<|endoftext|>"


def scanned(text: str, special_tokens=()) -> dict[bytes, int]:
    return dict(v9.count_bytes(text.encode("utf-8"), special_tokens))


def assert_exact(text: str, special_tokens=()) -> None:
    assert scanned(text, special_tokens) == dict(count_text(text, special_tokens))


# --- The classes ----------------------------------------------------------------------------------------

def test_the_class_of_every_code_point_is_regexs():
    every = [chr(c) for c in range(gpt2_classes.CODE_POINTS) if not 0xD800 <= c < 0xE000]
    expected = "".join("L" if regex.match(r"\p{L}", c) else "N" if regex.match(r"\p{N}", c)
                       else "S" if regex.match(r"\s", c) else "O" for c in every)
    assert gpt2_classes.classify("".join(every)) == expected  # through both stages of the table


def test_the_classes_regex_and_python_disagree_on():
    # \x1c-\x1f: str.isspace says space, regex's \s does not; U+0085, U+2028, U+3000: spaces to both
    assert gpt2_classes.classify("\x1c\x1d\x1e\x1f") == "OOOO" and all(c.isspace() for c in "\x1c\x1d\x1e\x1f")
    assert gpt2_classes.classify("\x85\u2028\u3000\xa0\x0b") == "SSSSS"
    # a letter-number (Roman numeral one), other-script digits, a combining mark, an unassigned code point
    assert gpt2_classes.classify("\u2160\u0663\u0967\u0301\u0378") == "NNNOO"


# --- The scanner against the plain counter --------------------------------------------------------------

CONTEXTS = ["{c}", "a{c}", "{c}a", " {c}", "{c} ", "  {c}", "{c}  x", "1{c}2", "'{c}", "{c}'s", "{c}{c}{c}",
            "x {c}\n", "{c}\r\n", "\u00a0{c}"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_every_code_point_in_each_context(context):
    text = " ".join(context.format(c=chr(c)) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    assert_exact(text)


TRICKY = ("'sdmtlvre SDMT\u2019 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2009\u200b\u2028\u2029"
          "\u202f\u205f\u3000a1\u00e9\u0301\u2160\u0663\u0967\u4e2d\u3042\U0001f600\u200d\ufe0f\u0378\ue000"
          "\ufffd!.,-")
pieces = st.one_of(
    st.text(min_size=1, max_size=8),  # every category hypothesis knows, surrogates aside
    st.text(alphabet=TRICKY, min_size=1, max_size=12),
    st.sampled_from(["'s", "'ll", "'ve", "'re", "'d", "'m", "'t", "''s", " 's", "x's", "!'ll", "'S", "'LL",
                     "\r\n", " \r\n ", "  \n", "\n\n", "don\u2019t", "1\u20142", EOT, "<|endoftext", "|>"]),
    st.text(alphabet=" \t\n\r\x0b\x0c\x85\xa0\u2009\u3000\u2028xy1'", min_size=1, max_size=16),
)


@settings(max_examples=600, deadline=None)
@given(st.lists(pieces, max_size=24).map("".join))
@example("x \u00a0 y")
@example("a  \t\u3000b")
@example(" 's'll''t")
@example("\u0663\u0664 \u2160x")
def test_generated_text_from_every_category(text):
    assert_exact(text, [EOT])


@settings(max_examples=200, deadline=None)
@given(st.lists(pieces, max_size=12).map("".join),
       st.sampled_from([["<|a|>", "<|a|><|b|>"], ["aa"], ["\u00e9t\u00e9", " "]]))
def test_generated_text_with_overlapping_and_non_ascii_special_tokens(text, special_tokens):
    assert_exact(text, special_tokens)


def test_the_same_scanner_at_every_position_of_a_line():
    line = "He said: \u201cdon't\u201d \u2014 it's 42\u00a0km, caf\u00e9s\u3000\u4e2d\u6587 \U0001f600!\r\n"
    for i in range(len(line) + 1):
        assert_exact(line[:i] + "\u2019s " + line[i:])


# --- Whole files: chunks, threads, special tokens at the edges, bad bytes -------------------------------

@pytest.fixture
def many_chunks(monkeypatch):
    """Cut every file into up to 64 chunks, whatever its size: the edges land everywhere, and a file of a few
    hundred bytes has chunks enough for 3 threads.  The plan is read twice, by how many threads count
    (``cores.workers_for``) and by where the file is cut (v9's own name for it): both are replaced."""
    plan = lambda size, workers: max(1, min(64, size // 8))  # noqa: E731
    monkeypatch.setattr(v9, "plan_chunk_count", plan)
    monkeypatch.setattr(cores, "plan_chunk_count", plan)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_file_in_many_chunks_on_threads(write_corpus, many_chunks, threads_ran, workers):
    text = ("one two<|endoftext|>three\r\n four   five\u00a0six's\n" * 30 + "<|endoftext|>" * 3
            + "caf\u00e9 \u4e2d\u6587  \n\n 42 " * 40)
    path = write_corpus(text)
    got = v9.count_pretokens(path, [EOT], workers=workers)
    assert dict(got) == dict(count_text(text, [EOT]))
    assert got.total() == sum(count_text(text, [EOT]).values()) and len(got) == len(count_text(text, [EOT]))
    assert threads_ran == [workers] * 3  # counting, then the parts merged and written, each on every thread


def test_the_fixtures_and_the_shipped_corpus(tmp_path, many_chunks, threads_ran):
    from conftest import DEFAULT_CORPUS, FIXTURES, TINYSTORIES_SAMPLE

    for path in (CORPUS_EN, TINYSTORIES_SAMPLE, FIXTURES / "german.txt", FIXTURES / "address.txt", DEFAULT_CORPUS):
        threads_ran.clear()
        assert dict(v9.count_pretokens(path, [EOT], workers=2)) == dict(count_file_serial(path, [EOT])), path
        assert threads_ran == [2, 2, 2], path


def test_bad_utf8_is_the_plain_counters_one_line_naming_the_first_bad_byte(write_corpus, many_chunks, threads_ran):
    path = write_corpus(b"fine text here " * 40 + b"bad \xe2\x82 byte " + b"more text " * 40 + b"\xff end")
    with pytest.raises(BPEError) as plain:
        count_file_serial(path, [EOT])
    for workers in (1, 2, 3):
        with pytest.raises(BPEError) as compiled:
            v9.count_pretokens(path, [EOT], workers=workers)
        assert str(compiled.value) == str(plain.value) and "byte offset 604" in str(plain.value)
    assert threads_ran == [1, 2, 3]  # each count failed on its threads, before any merge


@pytest.mark.parametrize("data", [b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x80\x80", b"\xf8",
                                  b"ab\xc3", b"\x80x", b"\xf0\x9f\x98"])
def test_each_kind_of_bad_sequence_is_found_where_python_finds_it(write_corpus, data):
    path = write_corpus(b"ok " + data + b" ok")
    with pytest.raises(BPEError) as plain:
        count_file_serial(path, [])
    with pytest.raises(BPEError) as compiled:
        v9.count_pretokens(path, [])
    assert str(compiled.value) == str(plain.value)


def test_errors_replace_counts_what_the_plain_counter_counts(write_corpus, many_chunks, threads_ran):
    path = write_corpus(b"caf\xc3\xa9 \xff\xfe ok<|endoftext|>\xe2\x82 x\xed\xa0\x80y " * 20 + b"clean tail " * 20)
    got = v9.count_pretokens(path, [EOT], workers=2, errors="replace")
    assert dict(got) == dict(count_file_serial(path, [EOT], errors="replace"))
    assert threads_ran == [2, 2, 2]


def test_empty_and_hidden_content_files(write_corpus):
    assert dict(v9.count_pretokens(write_corpus(""), [EOT])) == {}
    cpuinfo = "/proc/cpuinfo"
    assert dict(v9.count_pretokens(cpuinfo, [])) == dict(count_file_serial(cpuinfo, []))


def test_a_limit_counts_only_its_bytes(write_corpus):
    text = "alpha beta<|endoftext|>gamma delta<|endoftext|>epsilon"
    path = write_corpus(text)
    assert dict(v9.count_pretokens(path, [EOT], end=23)) == dict(count_text(text[:23], [EOT]))


# --- The counts into v8's merge, as arrays ---------------------------------------------------------------

def test_the_arrays_give_the_merges_the_dict_gives(threads_ran):
    counts = v9.count_pretokens(CORPUS_EN, [EOT], workers=2)
    assert isinstance(counts, v9.CompiledCounts) and threads_ran == [2, 2, 2]  # the file is two chunks
    from conftest import v1_merges_and_words

    as_dict = dict(counts)
    for merger in (v9.Merger(counts), v9.Merger(as_dict)):
        made = []
        for _ in range(200):
            pair = merger.select_best_pair()
            merger.merge(pair)
            made.append(pair)
        assert made == v1_merges_and_words(as_dict, 200)[0]
    # the first Merger took the arrays over and let them go: the counts still say how many, not what
    counts.close()  # and a second close, as train_bpe's clean-up may make, changes nothing
    assert len(counts) == len(as_dict) and counts.total() == sum(as_dict.values())
    with pytest.raises(ValueError, match="taken them over"):
        dict(counts)


@pytest.mark.parametrize("counts", [OVERLAPS, REPEATS, TIES])
def test_small_counts_through_the_arrays(counts):
    keys = b"".join(counts)
    ends = v9.int64s(list(__import__("itertools").accumulate(map(len, counts))))
    arrays = v9.CompiledCounts(keys, ends, v9.int64s(list(counts.values())), sum(counts.values()))
    merger, reference = v9.Merger(arrays), v1_naive.Merger(counts)
    for _ in range(8):
        pair = reference.select_best_pair()
        assert merger.select_best_pair() == pair
        if pair is None:
            break
        merger.merge(pair), reference.merge(pair)


@pytest.mark.parametrize("keys, ends, counts, message", [(b"ab", [3, 2], [1, 1], "ends at 2, not after 3"),
                                                          (b"abcdef", [3, 6], [1, 0], "must be positive"),
                                                          (b"abcdef", [3, 6], [1], "2 ends but 1 counts"),
                                                          (b"abcdef", [3, 5], [1, 1], "does not end where")])
def test_bad_arrays_are_refused_before_the_merge(keys, ends, counts, message):
    arrays = v9.CompiledCounts(keys, v9.int64s(ends), v9.int64s(counts), 2)
    with pytest.raises(ValueError, match=message):
        v8_compiled.MergeState(arrays)


def test_cs336_merges_and_the_default(threads_ran):
    _, merges = train_bpe(CORPUS_EN, 500, [EOT], variant="v9", workers=2)
    assert merges == cs336_merges() and threads_ran == [2, 2, 2]
    assert registry.best_variant() == "v10"  # the default counts with v9's code


# --- Threads: the first failure, and a stop ---------------------------------------------------------------

def test_the_earliest_failure_is_raised_however_the_threads_race():
    release = threading.Event()

    def work(thread, item):
        if item == 1:
            release.wait(5)  # the later item fails first
            raise ValueError("item 1")
        if item == 3:
            release.set()
            raise ValueError("item 3")
        return item

    with pytest.raises(ValueError, match="item 1"):
        run_threads(work, range(6), threads=2)


def test_a_thread_the_system_refuses_is_one_line_and_the_others_are_joined(monkeypatch):
    """Under an address-space limit a thread's stack may not fit (Python: "can't start new thread"): one
    clear error, and the thread already running finishes and is joined, none is left."""
    real_start, stops = threading.Thread.start, []

    def second_refused(self):
        if self.name == "bpe-thread-1":
            raise RuntimeError("can't start new thread")
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", second_refused)
    with pytest.raises(BPEError) as raised:
        run_threads(lambda thread, item: item, range(6), threads=2, stop=lambda: stops.append(1))
    assert str(raised.value).startswith("could not start a thread (can't start new thread; 1 of 2 running): ")
    assert "--workers" not in str(raised.value)  # a run on fewer threads meets the same limit: no way out
    assert stops == [1] and not [t for t in threading.enumerate() if t.name.startswith("bpe-thread")]


@pytest.mark.parametrize("limit, stack, line", [
    (180_000 << 10, 8 << 20, "the address-space limit, 175 MiB (ulimit -v 180000), leaves no room for its stack; "
                             "raise the limit or lift it, or give each thread a smaller stack (ulimit -s 1024: 1 "
                             "MiB, where each reserves 8 MiB now)"),
    (180_000 << 10, 1 << 20, "the address-space limit, 175 MiB (ulimit -v 180000), leaves no room for its stack; "
                             "raise the limit or lift it"),
    (None, 8 << 20, "the system gives no more threads: this user's processes and threads are limited (ulimit -u), "
                    "or memory is short; raise that limit or free some memory"),
], ids=["address space, 8 MiB stacks", "address space, small stacks", "no limit"])
def test_a_refused_thread_is_told_what_helps(monkeypatch, limit, stack, line):
    """The advice is what let the run go on when it was tried (under ``ulimit -v 180000``, v9 on 2 threads:
    ``ulimit -s 1024`` trained, a larger ``ulimit -v`` trained), never fewer ``--workers``: there, 1 worker
    failed on its one thread as 2 had on their second."""
    from bpe.running import threads as threads_module

    monkeypatch.setattr(threads_module, "address_space_limit", lambda: limit)
    monkeypatch.setattr(threads_module, "_stack_bytes", lambda: stack)
    said = threads_module._no_thread(0, 1, RuntimeError("can't start new thread"))
    assert said == f"could not start a thread (can't start new thread; 0 of 1 running): {line}"


@pytest.mark.parametrize("where", ["after start", "before start"])
def test_an_interrupt_as_a_thread_starts_leaves_no_thread(monkeypatch, where):
    """Python's handler runs in this thread whichever thread the kernel chose (the stop signals held here do
    not hold it), so a Ctrl-C can land as ``start()`` returns or before it: every thread that started is
    stopped and joined, and one never started is not waited for."""
    real_start, stops = threading.Thread.start, []
    release = threading.Event()

    def interrupted(self):
        if self.name == "bpe-thread-1":
            if where == "after start":
                real_start(self)
            raise KeyboardInterrupt
        real_start(self)

    def work(thread, item):
        release.wait()  # the threads run until the stop
        return item

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_threads(work, range(6), threads=2, stop=lambda: (stops.append(1), release.set()))
    assert stops == [1] and not [t for t in threading.enumerate() if t.name.startswith("bpe-thread")]


@pytest.mark.parametrize("text", [b"word " * 100_000, b"a short document<|endoftext|>" * 10_000],
                         ids=["one long piece", "short documents"])
def test_a_stop_ends_a_count_under_way(text):
    counter = v9.Counter(1, [EOT], *gpt2_classes.class_tables())
    counter.stop()
    with pytest.raises(KeyboardInterrupt):
        counter.count(0, text)  # checked every 64 KB of a piece, and between pieces


def test_not_built_says_why_in_one_line(monkeypatch):
    monkeypatch.setattr(v9, "UNAVAILABLE", v9.NOT_BUILT)
    for call in (lambda: v9.count_pretokens(CORPUS_EN, []), lambda: v9.Merger({b"ab": 1}),
                 lambda: v9.count_bytes(b"x")):
        with pytest.raises(BPEError) as error:
            call()
        assert str(error.value) == v9.NOT_BUILT and "\n" not in v9.NOT_BUILT


def test_ctrl_c_while_counting_stops_every_thread(write_corpus, many_chunks, threads_ran):
    """The interrupt is sent from the progress callback, which runs in the main thread once the first chunk
    is counted: the other chunks are under way then, and their threads must stop and be joined."""
    path = write_corpus("plenty of words to count here, " * 20_000)
    on_bytes, sent = sigint_on_first_bytes()
    with pytest.raises(KeyboardInterrupt):
        v9.count_pretokens(path, [EOT], workers=2, on_bytes=on_bytes)
    assert sent and not [t for t in threading.enumerate() if t.name.startswith("bpe-thread")]
    assert threads_ran == [2]  # both threads were counting when the interrupt came


def test_a_clusters_parts_sum_to_the_counts_of_the_whole():
    """count_parts, sum_parts and joined_parts (bpe/corpus/cluster.py's map, reduce and join for v9): the
    parts of several texts, summed part by part and joined, are the counts of all the texts."""
    texts = [CORPUS_EN.read_text(encoding="utf-8")[i::3] for i in range(3)]
    expected = count_text("<|endoftext|>".join(texts), ["<|endoftext|>"])
    for parts in (1, 2, 5):
        counted = [v9.count_parts([text, text.encode("utf-8")], ["<|endoftext|>"], parts) for text in texts]
        joined = v9.joined_parts([v9.sum_parts(*(c[p] for c in counted)) for p in range(parts)])
        assert dict(joined) == {token: 2 * n for token, n in expected.items()}, parts
        assert joined.total() == 2 * sum(expected.values())


def test_add_counts_refuses_arrays_that_are_not_counts():
    counter = v9.Counter(1, [], *gpt2_classes.class_tables())
    try:
        counter.add_counts(0, b"lowlower", v9.int64s([3, 8]), v9.int64s([2, 1]))
        for keys, ends, counts, entry in [(b"low", [4], [1], 0), (b"low", [3, 3], [1, 1], 1), (b"low", [3], [0], 0),
                                          (b"low", [2, 1], [1, 1], 1)]:
            with pytest.raises(ValueError, match=f"^entry {entry} of the counts' arrays is not a pre-token"):
                counter.add_counts(0, keys, v9.int64s(ends), v9.int64s(counts))
        with pytest.raises(ValueError, match="^1 ends but 2 counts$"):
            counter.add_counts(0, b"low", v9.int64s([3]), v9.int64s([1, 1]))
        with pytest.raises(IndexError):
            counter.add_counts(1, b"low", v9.int64s([3]), v9.int64s([1]))
        assert counter.totals() == ([2], 3)
    finally:
        counter.release()
    with pytest.raises(ValueError, match="spread must be 1 with several tables"):
        v9.Counter(2, [], *gpt2_classes.class_tables(), spread=3)


# --- The Counter's life: a call out of turn is an error, never a read of freed or unmade tables ---------------

def new_counter(threads: int = 1):
    counter = v9.Counter(threads, [EOT], *gpt2_classes.class_tables())
    counter.count(0, b"low lower lowest<|endoftext|>low")
    return counter


RELEASED = "^this Counter was released \\(release\\(\\)\\): its tables are gone; make a new Counter$"


@pytest.mark.parametrize("threads", [1, 2], ids=["one table", "two tables"])
def test_a_released_counter_refuses_every_use(threads):
    """Each of these read freed tables before (exit 139); ``release()`` itself may come twice, as the rung's
    own clean-up makes it."""
    counter = new_counter(threads)
    counter.release()
    counter.release()
    calls = [lambda: counter.count(0, b"more words"), lambda: counter.merge_part(0),
             lambda: counter.write_part(0, bytearray(64), v9.int64s(8), v9.int64s(8), 0, 0),
             lambda: counter.add_counts(0, b"low", v9.int64s([3]), v9.int64s([1])), counter.totals,
             lambda: counter.first_invalid(b"abc"), lambda: counter.part_state(0)]
    for call in calls:
        with pytest.raises(RuntimeError, match=RELEASED):
            call()
    counter.stop()  # still answers: a Ctrl-C's clean-up may call it at any time


@pytest.mark.parametrize("threads", [1, 2], ids=["one table", "two tables"])
def test_each_part_is_merged_once_and_written_only_once_merged(threads):
    counter = new_counter(threads)
    try:
        with pytest.raises(RuntimeError, match="^part 0 is not merged: call merge_part\\(0\\) first$"):
            counter.write_part(0, bytearray(64), v9.int64s(8), v9.int64s(8), 0, 0)
        assert counter.part_state(0) == "open"
        distinct, size = counter.merge_part(0)
        assert counter.part_state(0) == "merged"
        with pytest.raises(RuntimeError, match="^part 0 is merged already: each part is merged once$"):
            counter.merge_part(0)  # with one table this read the table the first call had taken over (exit 139)
        for call in (lambda: counter.count(0, b"more"), lambda: counter.add_counts(0, b"low", v9.int64s([3]),
                                                                                      v9.int64s([1]))):
            with pytest.raises(RuntimeError, match="^this Counter's tables are being merged into parts"):
                call()
        keys, ends, counts = bytearray(size), v9.int64s(distinct), v9.int64s(distinct)
        assert counter.write_part(0, keys, ends, counts, 0, 0) == distinct
        if threads == 1:
            assert dict(v9.CompiledCounts(keys, ends, counts, 0)) == {b"low": 2, b" lower": 1, b" lowest": 1}
    finally:
        counter.release()


@pytest.mark.parametrize("threads", [1, 2], ids=["one table", "two tables"])
def test_the_threads_slots_go_once_every_part_is_merged(threads):
    """``release_thread_slots`` frees the threads' tables before the arrays are made: refused while a part is
    open, and after it the parts are written whole, the totals still answer, and no part is merged again."""
    counter = new_counter(threads)
    try:
        merged = [counter.merge_part(0)]
        if threads == 2:
            with pytest.raises(RuntimeError, match="^part 1 is not merged: the threads' slots still hold its keys$"):
                counter.release_thread_slots()
            merged.append(counter.merge_part(1))
        counter.release_thread_slots()
        assert counter.totals()[1] == 4
        distinct, size = sum(n for n, _ in merged), sum(b for _, b in merged)
        keys, ends, counts = bytearray(size), v9.int64s(distinct), v9.int64s(distinct)
        first = at = 0
        for part, (n, b) in enumerate(merged):
            assert counter.write_part(part, keys, ends, counts, first, at) == first + n
            first, at = first + n, at + b
        assert dict(v9.CompiledCounts(keys, ends, counts, 4)) == {b"low": 2, b" lower": 1, b" lowest": 1}
        with pytest.raises(RuntimeError, match="^part 0 is merged already"):
            counter.merge_part(0)
    finally:
        counter.release()
    with pytest.raises(RuntimeError, match=RELEASED):
        counter.release_thread_slots()


def test_a_part_whose_merge_failed_may_be_merged_again():
    """A stop (or memory running out) leaves the part whole in the threads' tables: it is open again."""
    counter = new_counter(2)
    try:
        counter.stop()
        with pytest.raises(KeyboardInterrupt):
            counter.merge_part(0)
        assert counter.part_state(0) == "open"
    finally:
        counter.release()


def test_a_release_racing_a_count_on_another_thread_is_refused_or_refuses_the_count():
    """A count runs without the GIL; a ``release()`` from another thread meanwhile would free its table under
    it.  Whichever comes first, the other is a ``RuntimeError``: the release while the count runs, or the count
    once the tables are gone."""
    counter = v9.Counter(1, [], *gpt2_classes.class_tables())
    text = b"word " * 2_000_000
    started, outcome = threading.Event(), {}

    def count() -> None:
        started.set()
        try:
            outcome["result"] = counter.count(0, text)
        except RuntimeError as exc:
            outcome["refused"] = str(exc)

    runner = threading.Thread(target=count)
    runner.start()
    started.wait()
    try:
        counter.release()
        released = None
    except RuntimeError as exc:
        released = str(exc)
    runner.join()
    if released is None:  # the release came first: the count found no tables
        assert outcome == {"refused": "this Counter was released (release()): its tables are gone; make a new "
                                      "Counter"}
    else:
        assert released.startswith("this Counter is in use (1 call(s) under way on other threads)")
        assert outcome == {"result": -1}
    counter.release()
