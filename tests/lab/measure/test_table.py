"""The one table writer (bpe/lab/measure/table.py): a column declared once gives the terminal's line and the
Markdown's cell; widths follow the longest text, a missing figure is `-`, a Markdown-only column stays off the
terminal."""

from bpe.lab.measure.table import Column, markdown_lines, terminal_lines

COLUMNS = [Column("name", lambda row: row[0], align="<", width=8),
           Column("idea", lambda row: row[1], align="<", terminal=False),
           Column("total", lambda row: row[2], "{:.3f} s"),
           Column("memory", lambda row: row[3], "{:,.1f} MB", width=12)]
ROWS = [("v1", "a first idea", 12.3456, 1234.5), ("a-long-name", "another", None, 0.5)]


def test_the_terminal_table_lines_up_under_its_headers():
    assert terminal_lines(COLUMNS, ROWS) == [
        "name              total      memory",
        "v1             12.346 s  1,234.5 MB",
        "a-long-name           -      0.5 MB"]


def test_the_markdown_table_has_every_column_and_its_alignment():
    assert markdown_lines(COLUMNS, ROWS) == [
        "| name | idea | total | memory |",
        "|---|---|---:|---:|",
        "| v1 | a first idea | 12.346 s | 1,234.5 MB |",
        "| a-long-name | another | - | 0.5 MB |"]


def test_a_text_is_written_as_it_is_and_trailing_blanks_go():
    columns = [Column("a", lambda row: row, align="<"), Column("b", lambda row: "", align="<")]
    assert terminal_lines(columns, ["why: not installed"]) == ["a                   b", "why: not installed"]
