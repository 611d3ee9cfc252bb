"""The walkthrough page in a real browser: Playwright driving the system's Chromium, for screenshots and tests.

``python -m bpe.lab.teach.walkthrough.browser PAGE.html --merge 17 --out-dir docs/`` writes
``walkthrough-step.png`` (the page at that merge) and ``walkthrough-summary.png`` (the summary view),
for slides or the docs.  Playwright comes with the ``browser`` extra (``pip install -e '.[browser]'``,
which ``make test`` installs); the browser is the system's (Debian: ``apt-get install chromium``), since
Playwright's own download is not always reachable.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

from bpe.errors import BPEError

#: Where a system Chromium is looked for, in order (``BPE_CHROMIUM`` first when set).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: The size a projector shows.
VIEWPORT = {"width": 1400, "height": 1000}


def chromium_path() -> str | None:
    """The system Chromium's executable, or ``None``."""
    named = os.environ.get("BPE_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    return next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)


def missing() -> str | None:
    """Why no browser can be driven here (one line), or ``None`` when one can."""
    try:
        import playwright.sync_api  # noqa: F401, PLC0415 (an optional dependency: the browser extra)
    except ImportError:
        return "Playwright is not installed (pip install -e '.[browser]'; make test installs it)"
    if chromium_path() is None:
        return "no Chromium on PATH (Debian: apt-get install chromium; or set BPE_CHROMIUM to its executable)"
    return None


@contextmanager
def launched():
    """A headless Chromium, closed on leaving."""
    reason = missing()
    if reason:
        raise BPEError(reason)
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 (an optional dependency: the browser extra)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path())
        try:
            yield browser
        finally:
            browser.close()


def screenshots(page_path: str | Path, merge: int, out_dir: str | Path, browser=None) -> list[Path]:
    """PNGs of the page at merge number ``merge`` and of its summary view, in ``out_dir`` (in ``browser``,
    else one launched)."""
    page_path, out_dir = Path(page_path).resolve(), Path(out_dir)
    if not page_path.is_file():
        raise BPEError(f"no page {page_path}; make one with bpe walkthrough --out PAGE.html")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "walkthrough-step.png", out_dir / "walkthrough-summary.png"]
    if browser is None:
        with launched() as browser:
            return screenshots(page_path, merge, out_dir, browser)
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(f"{page_path.as_uri()}#step={merge}")  # the address keeps its name: saved links
        page.screenshot(path=str(written[0]), full_page=True)
        page.click("nav button[data-view=summary]")
        page.screenshot(path=str(written[1]), full_page=True)
    finally:
        page.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bpe.lab.teach.walkthrough.browser",
                                     description="screenshots of a walkthrough page: one merge and the summary")
    parser.add_argument("page", help="the page bpe walkthrough wrote")
    parser.add_argument("--merge", type=int, default=1, help="the merge to show (default 1)")
    parser.add_argument("--out-dir", default="out", help="where the PNGs go (default out/)")
    args = parser.parse_args(argv)
    try:
        for path in screenshots(args.page, args.merge, args.out_dir):
            print(f"wrote {path}")
    except BPEError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
