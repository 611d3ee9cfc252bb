"""The walkthrough's HTML page: ``page.html`` (style and script inline) with the data put in its place.

The data go into ``<script type="application/json" id="walkthrough-data">`` as JSON; ``</`` is written
``<\\/`` there (the same string to JSON), so no token, however odd its bytes, can end the element.

>>> page = render_page({"merges": [["</script>", "x"]]})
>>> '<\\\\/script>' in page and page.count("</script>") == 2
True
"""

from __future__ import annotations

import json
from pathlib import Path

TEMPLATE = Path(__file__).with_name("page.html")
PLACEHOLDER = "/*WALKTHROUGH-DATA*/"


def render_page(data: dict) -> str:
    """The page, self-contained, with ``data`` inline."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "<\\u0021--")
    return TEMPLATE.read_text(encoding="utf-8").replace(PLACEHOLDER, text, 1)
