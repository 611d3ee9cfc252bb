"""The walkthrough page in a real browser (Chromium driven by Playwright; one launch for the module): it opens
from a file with no request leaving it, the arrow keys and ``#step=K`` (merge K; the address keeps its name for
saved links) move ``data-step``, its merges are train_bpe's, its running totals and encoder agree with the data,
the pre-tokenization text keeps its runs of spaces, and the summary's charts never draw a stopped rung falling
and label each rung with its table figures.
Without a browser the module is skipped with the reason, except under CI (``CI=true``), where that is a failure."""

import io
import json
import os

import pytest

from bpe import train_bpe
from bpe.io.byte_unicode import decode_token, encode_token
from bpe.lab.teach.text_trace import applied_merges
from bpe.lab.teach.walkthrough import WalkthroughSettings, render_page, run_walkthrough
from bpe.lab.teach.walkthrough.browser import VIEWPORT, launched, missing, screenshots
from conftest import REPO_ROOT

SPECIAL = ["<|endoftext|>"]
VOCAB = 290
#: 243 merges: the per-merge chart's points are means of 2 merges; v1 stops at STOPPED_AT, as a budget stops it.
LONGER_VOCAB, STOPPED_AT = 500, 100


@pytest.fixture(scope="module")
def browser():
    reason = missing()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs the browser tests: {reason}")
        pytest.skip(reason)
    with launched() as launched_browser:
        yield launched_browser


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    corpus = folder / "small.txt"
    corpus.write_bytes((REPO_ROOT / "tests" / "fixtures" / "corpus.en").read_bytes()[:20_000])
    page = folder / "walkthrough.html"
    data = run_walkthrough(WalkthroughSettings(str(corpus), VOCAB, SPECIAL, str(page)), out=io.StringIO())
    return corpus, page, data


@pytest.fixture(scope="module")
def longer(made, tmp_path_factory):
    """A page of more merges than the chart has points, where v1 was counted for the first STOPPED_AT alone."""
    page = tmp_path_factory.mktemp("longer") / "walkthrough.html"
    data = run_walkthrough(WalkthroughSettings(str(made[0]), LONGER_VOCAB, SPECIAL, str(page)), out=io.StringIO())
    data["work"]["v1"] = data["work"]["v1"][:STOPPED_AT]  # what the budget leaves of a slow rung's work
    page.write_text(render_page(data), encoding="utf-8")
    return page, data


@pytest.fixture
def page(browser, made):
    """A fresh tab that records every request and lets none but the pages' own files through."""
    tab = browser.new_page(viewport=VIEWPORT)
    tab.requests = []
    tab.pages = {made[1].resolve().as_uri()}
    errors = []

    def route(request_route):
        tab.requests.append(request_route.request.url)
        if request_route.request.url.split("#")[0] in tab.pages:
            request_route.continue_()
        else:
            request_route.abort()

    tab.route("**/*", route)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert errors == [], "the page's script failed"


def merge_shown(tab) -> int:
    return int(tab.get_attribute("#step", "data-step"))


def test_the_page_opens_from_a_file_before_any_merge_and_no_request_leaves_it(page, made):
    page.goto(made[1].resolve().as_uri())
    assert merge_shown(page) == 0
    page.click("nav button[data-view=summary]")
    page.click("nav button[data-view=pretok]")
    page.keyboard.press("End")
    page.wait_for_timeout(100)
    assert set(page.requests) == {made[1].resolve().as_uri()}


def test_the_arrow_keys_move_a_merge_and_the_address_follows(page, made):
    page.goto(made[1].resolve().as_uri())
    page.keyboard.press("ArrowRight")
    assert merge_shown(page) == 1
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert merge_shown(page) == 2 and page.evaluate("location.hash") == "#step=2"
    page.click("#next")
    assert merge_shown(page) == 3
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert merge_shown(page) == 0  # never below 0
    page.keyboard.press("End")
    assert merge_shown(page) == len(made[2]["merges"])
    page.keyboard.press("ArrowRight")
    assert merge_shown(page) == len(made[2]["merges"])  # nor past the last merge
    page.focus("#slider")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert merge_shown(page) == 1  # the slider moves once, not once more by the page's own keys


def test_the_merge_in_the_address_opens_there(page, made):
    page.goto(made[1].resolve().as_uri() + "#step=17")
    assert merge_shown(page) == 17
    pair = made[2]["merges"][16]
    assert "Merge 17: the most frequent pair" in page.inner_text("#merge")
    assert page.locator("#merge .pair .tok").all_inner_texts() == [*pair, "".join(pair)]
    page.evaluate("location.hash = '#step=5'")
    page.wait_for_function("document.getElementById('step').dataset.step === '5'")


def test_the_merges_in_the_page_are_train_bpes(page, made):
    corpus = made[0]
    page.goto(made[1].resolve().as_uri())
    shown = json.loads(page.text_content("#walkthrough-data"))
    _, merges = train_bpe(corpus, VOCAB, SPECIAL)
    assert shown["merges"] == [[encode_token(a), encode_token(b)] for a, b in merges]
    assert page.evaluate("N") == len(merges)


def test_the_running_totals_shown_are_the_sums_of_the_counted_work(page, made):
    data, k = made[2], 20
    page.goto(made[1].resolve().as_uri() + f"#step={k}")
    rows = {row.split("\t")[0].strip(): row.split("\t")[1:] for row in page.inner_text("#work table").splitlines()}
    for rung in data["rungs"]:
        counted = [sum(v for name, v in zip(data["metrics"][rung], row) if name not in data["parts"])
                   for row in data["work"][rung]]
        this_merge, so_far = (int(cell.replace(",", "")) for cell in rows[rung])
        assert (this_merge, so_far) == (counted[k - 1], sum(counted[:k])), rung
    # v1: every word, every merge
    assert int(rows["words rewritten"][1].replace(",", "")) == k * data["start"]["n_words"]


def test_the_encoder_uses_the_merges_made_so_far(page, made):
    data, k = made[2], 30
    page.goto(made[1].resolve().as_uri() + f"#step={k}")
    page.fill("#word", " together")
    merges = [tuple(decode_token(t) for t in pair) for pair in data["merges"][:k]]
    applied = applied_merges(" together".encode(), merges)
    expected = ([encode_token(t) for t in applied[-1][2]] if applied
                else [encode_token(bytes([b])) for b in b" together"])
    assert json.loads(page.get_attribute("#encoded-tokens", "data-tokens")) == expected


def test_the_summary_draws_a_line_per_rung(page, made):
    page.goto(made[1].resolve().as_uri())
    page.click("nav button[data-view=summary]")
    charts = page.locator("#chart svg")
    assert charts.count() == 2  # cumulative, and per merge
    for i in range(2):
        assert charts.nth(i).locator("polyline").evaluate_all("lines => lines.map(l => l.dataset.rung)") \
            == made[2]["rungs"]
    assert "Measured: stage times" in page.inner_text("#bench")


def test_screenshots_of_a_merge_and_of_the_summary(browser, made, tmp_path):
    written = screenshots(made[1], 3, tmp_path, browser)
    assert [p.name for p in written] == ["walkthrough-step.png", "walkthrough-summary.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def open_summary(tab, path):
    uri = path.resolve().as_uri()
    tab.pages.add(uri)
    tab.goto(uri)
    tab.click("nav button[data-view=summary]")


def test_the_pretokenization_text_keeps_its_runs_of_spaces_as_its_pieces_do(page, made):
    text = made[2]["pretokenize"]["text"]
    assert "don't   stop" in text  # the sample's whitespace lesson: a run of three spaces
    page.goto(made[1].resolve().as_uri())
    page.click("nav button[data-view=pretok]")
    shown = page.locator("#pretok-text")
    assert shown.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    assert json.loads(shown.inner_text()) == text  # the text as rendered, spaces not collapsed
    pieces = [piece.split("\n")[0] for piece in page.locator("#pretok .piece").all_inner_texts()]
    assert "".join(pieces).replace("\u2423", " ").replace("\u21b5", "\n").replace("\u21e5", "\t") == text


def drawn(tab, chart: int, selector: str) -> list[list[float]]:
    """The (x, y) points of each element of the summary's chart number ``chart`` that ``selector`` picks."""
    return tab.evaluate("""([chart, selector]) =>
        [...document.querySelectorAll("#chart svg")[chart].querySelectorAll(selector)]
        .map(e => e.tagName === "polyline" ? [...e.points].map(p => [p.x, p.y])
             : [[e.x1.baseVal.value, e.y1.baseVal.value],
                [e.x2.baseVal.value, e.y2.baseVal.value]])""", [chart, selector])


def test_a_rung_that_stopped_is_drawn_flat_or_stopped_never_falling(page, longer):
    data = longer[1]
    open_summary(page, longer[0])
    (left, _), (edge, _) = drawn(page, 0, "line.x-axis")[0]
    stop = left + (edge - left) * STOPPED_AT / len(data["merges"])  # v1's last merge counted
    for rung in data["rungs"]:  # cumulative: no point lower than one to its left, whether counted or carried on
        points = sorted(p for element in drawn(page, 0, f'[data-rung="{rung}"]') for p in element)
        assert all(later[1] <= earlier[1] + 0.01 for earlier, later in zip(points, points[1:])), rung
    v1 = sorted(p for element in drawn(page, 0, '[data-rung="v1"]') for p in element)
    after = [p for p in v1 if p[0] > stop + 0.5]
    assert after and max(x for x, _ in after) == pytest.approx(edge)  # carried on to the chart's edge...
    at_stop = [y for x, y in v1 if abs(x - stop) < 0.5]
    assert at_stop and all(y == pytest.approx(at_stop[-1]) for _, y in after)  # ...flat at its last total
    per_merge = [p for element in drawn(page, 1, '[data-rung="v1"]') for p in element]
    assert per_merge and max(x for x, _ in per_merge) <= stop + 0.5  # per merge: the line ends where counting did
    for chart in (0, 1):  # and no straight line slants across the plot (a label's leader stays in the margin)
        for (x1, y1), (x2, y2) in drawn(page, chart, "line"):
            assert min(x1, x2) >= edge - 0.01 or x1 == x2 or y1 == y2, (chart, x1, y1, x2, y2)


def test_the_summary_labels_give_the_tables_figures(page, longer):
    data = longer[1]
    open_summary(page, longer[0])
    table = {row["rung"]: row for row in page.evaluate("""() => [...document.querySelectorAll("#totals tr[data-rung]")]
        .map(tr => ({rung: tr.dataset.rung, total: tr.querySelector(".total").innerText,
                     mean: tr.querySelector(".mean").innerText}))""")}
    assert sorted(table) == sorted(data["rungs"])
    for chart, column in ((0, "total"), (1, "mean")):
        labels = page.evaluate("""chart =>
            [...document.querySelectorAll("#chart svg")[chart].querySelectorAll("text[data-rungs]")]
            .map(t => ({rungs: t.dataset.rungs.split(" "), value: t.querySelector(".value").textContent,
                        text: t.textContent}))""", chart)
        labelled = {rung: label for label in labels for rung in label["rungs"]}
        assert sorted(labelled) == sorted(data["rungs"])
        for rung, label in labelled.items():
            assert label["value"] == table[rung][column], (chart, rung)
        assert labelled["v1"]["text"].endswith(f"(to {STOPPED_AT})")
    counted = [sum(v for name, v in zip(data["metrics"]["v2"], row) if name not in data["parts"])
               for row in data["work"]["v2"]]
    total = sum(counted)  # the table's own figures are the data's
    assert table["v2"]["total"] == f"{total:,}" and table["v2"]["mean"] == f"{round(total / len(counted)):,}"
    assert ("mean per merge over all the merges it was counted for, as in the table"
            in page.inner_text("#per-merge-measure"))


def test_the_per_merge_heading_reads_right_for_one_merge_and_for_many(page, made, longer):
    open_summary(page, made[1])  # 33 merges: a point for each
    assert page.inner_text("#per-merge-heading") == "Counted work per merge (a point for each merge)"
    open_summary(page, longer[0])  # 243: a point for each 2
    assert page.inner_text("#per-merge-heading") == "Counted work per merge (each point the mean of 2 merges)"
