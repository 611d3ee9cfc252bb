"""The walkthrough page in a real browser (Chromium driven by Playwright; one launch for the module): it opens
from a file with no request leaving it, the arrow keys and ``#step=K`` move ``data-step``, its merges are
train_bpe's, its running totals and encoder agree with the data.  Without a browser the module is skipped
with the reason, except under CI (``CI=true``), where that is a failure."""

import io
import json
import os

import pytest

from bpe import train_bpe
from bpe.io.byte_unicode import decode_token, encode_token
from bpe.lab.text_trace import encode_steps
from bpe.lab.walkthrough import WalkthroughSettings, run_walkthrough
from bpe.lab.walkthrough.browser import VIEWPORT, launched, missing, screenshots
from conftest import REPO_ROOT

SPECIAL = ["<|endoftext|>"]
VOCAB = 290


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


@pytest.fixture
def page(browser, made):
    """A fresh tab that records every request and lets none but the page's own file through."""
    tab = browser.new_page(viewport=VIEWPORT)
    tab.requests = []
    errors = []

    def route(request_route):
        tab.requests.append(request_route.request.url)
        if request_route.request.url.split("#")[0] == made[1].resolve().as_uri():
            request_route.continue_()
        else:
            request_route.abort()

    tab.route("**/*", route)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    yield tab
    tab.close()
    assert errors == [], "the page's script failed"


def step_of(tab) -> int:
    return int(tab.get_attribute("#step", "data-step"))


def test_the_page_opens_from_a_file_at_step_0_and_no_request_leaves_it(page, made):
    page.goto(made[1].resolve().as_uri())
    assert step_of(page) == 0
    page.click("nav button[data-view=summary]")
    page.click("nav button[data-view=pretok]")
    page.keyboard.press("End")
    page.wait_for_timeout(100)
    assert set(page.requests) == {made[1].resolve().as_uri()}


def test_the_arrow_keys_step_and_the_address_follows(page, made):
    page.goto(made[1].resolve().as_uri())
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 1
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == 2 and page.evaluate("location.hash") == "#step=2"
    page.click("#next")
    assert step_of(page) == 3
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert step_of(page) == 0  # never below 0
    page.keyboard.press("End")
    assert step_of(page) == len(made[2]["merges"])
    page.keyboard.press("ArrowRight")
    assert step_of(page) == len(made[2]["merges"])  # nor past the last merge
    page.focus("#slider")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert step_of(page) == 1  # the slider steps once, not once more by the page's own keys


def test_the_step_in_the_address_opens_there(page, made):
    page.goto(made[1].resolve().as_uri() + "#step=17")
    assert step_of(page) == 17
    pair = made[2]["merges"][16]
    assert f"Merge 17: the most frequent pair" in page.inner_text("#merge")
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
    assert int(rows["words rewritten"][1].replace(",", "")) == k * data["start"]["n_words"]  # v1: every word, every merge


def test_the_encoder_uses_the_merges_made_so_far(page, made):
    data, k = made[2], 30
    page.goto(made[1].resolve().as_uri() + f"#step={k}")
    page.fill("#word", " together")
    merges = [tuple(decode_token(t) for t in pair) for pair in data["merges"][:k]]
    steps = encode_steps(" together".encode(), merges)
    expected = [encode_token(t) for t in steps[-1][2]] if steps else [encode_token(bytes([b])) for b in b" together"]
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


def test_screenshots_of_a_step_and_of_the_summary(browser, made, tmp_path):
    written = screenshots(made[1], 3, tmp_path, browser)
    assert [p.name for p in written] == ["walkthrough-step.png", "walkthrough-summary.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)
