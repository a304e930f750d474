"""A code listing set in fixed columns, as LaTeX's listings package sets one: each character at
the column's step, which is a little wider than the font's advance, the difference a TJ offset
after each character (here with the font condensed to 80 %, as a listing in a real manual was).
PDFium makes a space at each such offset: "@ b o o k { i t k o n e n _ t y p o g r ,"."""

from __future__ import annotations

from pathlib import Path

from tests.corpus.word_gaps import font_page, pdf_string

LISTING = (
    "@book{itkonen_typogr,",
    "title = {Typografian kasikirja},",
    "date = {2019},",
    "for (i = 0; i < n; i++) x += a[i];",
    "if x and y: return z",
)


def fixed_column_listing(path: Path, lines: tuple[str, ...] = LISTING, *, step: int = 128) -> None:
    """lines in Courier at 10 pt condensed to 80 %, each character followed by a TJ offset of
    step thousandths of an em (a space is a character like the others)."""
    content = ["BT", "/F1 10 Tf"]
    for number, line in enumerate(lines):
        parts = " ".join(f"{pdf_string(char)} {-step}" for char in line)
        content.append(f"0.8 0 0 1 72 {700 - 14 * number} Tm [{parts}] TJ")
    content.append("ET")
    font_page(content, path, base_font="Courier")


def calendar_row(path: Path) -> str:
    """A row of one-digit cells a fixed step apart, far apart: their spaces are word gaps."""
    cells = "1 2 3 4 5 6 7"
    parts = " ".join(f"{pdf_string(cell)} -1500" for cell in cells.split())
    font_page(["BT", "/F1 10 Tf", f"1 0 0 1 72 700 Tm [{parts}] TJ", "ET"], path, base_font="Courier")
    return cells
