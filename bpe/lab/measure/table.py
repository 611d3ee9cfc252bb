"""The measuring commands' one table writer: a table's columns declared once (:class:`Column`: header, the
value of a row, its format, alignment), printed on the terminal (:func:`terminal_lines`) and written as
Markdown (:func:`markdown_lines`) from the same declaration.

>>> cols = [Column("name", lambda r: r[0], align="<"), Column("time", lambda r: r[1], "{:.2f} s")]
>>> terminal_lines(cols, [("v1", 12.5), ("v10", None)])
['name       time', 'v1      12.50 s', 'v10           -']
>>> markdown_lines(cols, [("v1", 12.5)])
['| name | time |', '|---|---:|', '| v1 | 12.50 s |']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Column:
    """One column: its ``header``; ``value(row)``, written with ``format`` (a text as it is; ``None``: ``-``);
    ``align`` ``>`` (right) or ``<`` (left); ``width``: the least it takes on the terminal, which widens it to
    its longest text and a gap of two; ``terminal=False``: in the Markdown alone (a long text, an idea)."""
    header: str
    value: Callable[[Any], Any]
    format: str = "{}"
    align: str = ">"
    width: int = 0
    terminal: bool = True

    def text(self, row) -> str:
        value = self.value(row)
        return "-" if value is None else value if isinstance(value, str) else self.format.format(value)


def terminal_lines(columns: Sequence[Column], rows: Sequence) -> list[str]:
    """The header and a line per row, each column as wide as its widest text and a gap (right-aligned: the gap
    before it; left-aligned: after it); a line's trailing blanks dropped."""
    shown = [c for c in columns if c.terminal]
    lines = [[c.header for c in shown], *([c.text(row) for c in shown] for row in rows)]
    widths = [max(c.width, *(len(line[i]) + 2 for line in lines)) for i, c in enumerate(shown)]
    return ["".join(f"{t:{c.align}{w}}" for t, c, w in zip(line, shown, widths)).rstrip() for line in lines]


def markdown_lines(columns: Sequence[Column], rows: Sequence) -> list[str]:
    """The same table in Markdown: the header, the alignment row (``---:`` right), a line per row."""
    def line(cells) -> str:
        return "| " + " | ".join(cells) + " |"

    return [line(c.header for c in columns), "|" + "|".join("---:" if c.align == ">" else "---" for c in columns) + "|",
            *(line(c.text(row) for c in columns) for row in rows)]
