"""Pages of prose in columns stored a row at a time across the page, and pages with gaps in their
lines that are not columns (tables, forms, key and value lists, justified prose).

A row-at-a-time writer stores the first line of every column, then the second of every column,
and so on. Each builder returns the page's text in reading order (the title, each column top to
bottom, left to right, what is set across the page below), which is what a reader of the page
expects, whatever the order it was stored in. Layouts: a plain two-column page, a title and a
footnote across the page, the right column's baselines off the left's (its own leading), three
columns, every word drawn on its own and the lines justified, paragraphs with an indent and a
short last line, and a page that returns to one column between two runs of columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from app.pdf.samples import page_text

FONT, SIZE = "Helvetica", 10
LEADING = 12.5
TOP, MARGIN = 740.0, 54.0


def wrap(text: str, width: float, indent: float = 0.0) -> list[str]:
    """text broken into lines that fit width points (the first line indent points less)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        room = width - (indent if not lines else 0.0)
        if line and stringWidth(candidate, FONT, SIZE) > room:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines


@dataclass
class _Line:
    x: float
    y: float
    text: str
    width: float | None = None  # justified to this width (every word drawn on its own)


@dataclass
class _Page:
    """Lines to draw, and the order they are stored in (by height, then left to right)."""

    lines: list[_Line] = field(default_factory=list)

    def draw(self, path: Path, *, per_word: bool = False, by_column: bool = False) -> None:
        """Stored a row at a time, or (by_column) each column top to bottom, left to right."""
        pdf = canvas.Canvas(str(path), pagesize=letter, pageCompression=1)
        pdf.setFont(FONT, SIZE)
        order = (lambda line: (line.x, -line.y)) if by_column else (lambda line: (-round(line.y, 3), line.x))
        for line in sorted(self.lines, key=order):
            if per_word or line.width is not None:
                _draw_words(pdf, line)
            else:
                pdf.drawString(line.x, line.y, line.text)
        pdf.save()


def _draw_words(pdf: canvas.Canvas, line: _Line) -> None:
    words = line.text.split()
    widths = [stringWidth(word, FONT, SIZE) for word in words]
    space = stringWidth(" ", FONT, SIZE)
    if line.width is not None and len(words) > 1:
        space = (line.width - sum(widths)) / (len(words) - 1)
    x = line.x
    for word, width in zip(words, widths, strict=True):
        pdf.drawString(x, line.y, word)
        x += width + space


def _column(
    page: _Page,
    text: str,
    x: float,
    top: float,
    width: float,
    *,
    leading: float = LEADING,
    justified: bool = False,
    paragraphs: int = 1,
) -> tuple[list[str], float]:
    """text set in a column at x from top down, as `paragraphs` paragraphs (an indent of 12
    points, a line between them); its lines in reading order, and the height below it."""
    words = text.split()
    per = max(1, len(words) // paragraphs)
    chunks = [" ".join(words[i : i + per]) for i in range(0, len(words), per)]
    read: list[str] = []
    y = top
    for chunk in chunks:
        indent = 12.0 if paragraphs > 1 else 0.0
        lines = wrap(chunk, width, indent)
        for number, line in enumerate(lines):
            at = x + (indent if number == 0 else 0.0)
            last = number == len(lines) - 1
            page.lines.append(_Line(at, y, line, None if last or not justified else width - (at - x)))
            read.append(line)
            y -= leading
        y -= leading if paragraphs > 1 else 0.0
    return read, y


def _text(seed: int, sentences: int) -> str:
    return page_text(seed, seed, sentences=sentences)


def two_columns(path: Path, seed: int = 0, *, by_column: bool = False) -> str:
    """Two columns, nothing else (by_column: stored one after the other, as most writers do)."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 24) / 2
    left, _ = _column(page, _text(seed, 6), MARGIN, TOP, width)
    right, _ = _column(page, _text(seed + 1, 6), MARGIN + width + 24, TOP, width)
    page.draw(path, by_column=by_column)
    return "\n".join(left + right)


def titled_with_footnote(path: Path, seed: int = 0) -> str:
    """A title and an opening line across the page, two columns, a footnote across the page."""
    page = _Page()
    title = "Findings of the annual review of regional water supply"
    opening = wrap(_text(seed + 7, 2), letter[0] - 2 * MARGIN)
    page.lines.append(_Line(MARGIN, TOP, title))
    y = TOP - 2 * LEADING
    for line in opening:
        page.lines.append(_Line(MARGIN, y, line))
        y -= LEADING
    width = (letter[0] - 2 * MARGIN - 24) / 2
    left, below_left = _column(page, _text(seed, 5), MARGIN, y - LEADING, width)
    right, below_right = _column(page, _text(seed + 1, 5), MARGIN + width + 24, y - LEADING, width)
    footnote = wrap("1. " + _text(seed + 9, 1), letter[0] - 2 * MARGIN)
    y = min(below_left, below_right) - LEADING
    for line in footnote:
        page.lines.append(_Line(MARGIN, y, line))
        y -= LEADING
    page.draw(path)
    return "\n".join([title, *opening, *left, *right, *footnote])


def offset_baselines(path: Path, seed: int = 0) -> str:
    """Two columns whose baselines do not line up: the right one has its own leading."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 30) / 2
    left, _ = _column(page, _text(seed, 6), MARGIN, TOP, width)
    right, _ = _column(page, _text(seed + 1, 5), MARGIN + width + 30, TOP - 5, width, leading=14.0)
    page.draw(path)
    return "\n".join(left + right)


def three_columns(path: Path, seed: int = 0) -> str:
    """Three narrow columns, as a newsletter sets them."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 2 * 18) / 3
    read: list[str] = []
    for number in range(3):
        lines, _ = _column(page, _text(seed + number, 4), MARGIN + number * (width + 18), TOP, width)
        read += lines
    page.draw(path)
    return "\n".join(read)


def justified_words(path: Path, seed: int = 0) -> str:
    """Two justified columns, every word drawn on its own (PDFium keeps each as a text run)."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 14) / 2
    left, _ = _column(page, _text(seed, 6), MARGIN, TOP, width, justified=True)
    right, _ = _column(page, _text(seed + 1, 6), MARGIN + width + 14, TOP, width, justified=True)
    page.draw(path)
    return "\n".join(left + right)


def paragraphs(path: Path, seed: int = 0) -> str:
    """Two columns of three paragraphs each: indented first lines, short last lines, gaps."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 24) / 2
    left, _ = _column(page, _text(seed, 8), MARGIN, TOP, width, paragraphs=3)
    right, _ = _column(page, _text(seed + 1, 8), MARGIN + width + 24, TOP, width, paragraphs=3)
    page.draw(path)
    return "\n".join(left + right)


def columns_then_one_then_columns(path: Path, seed: int = 0) -> str:
    """Two columns, a paragraph across the page, two more columns below it."""
    page = _Page()
    width = (letter[0] - 2 * MARGIN - 24) / 2
    read: list[str] = []
    top = TOP
    for block in range(2):
        left, below_left = _column(page, _text(seed + 4 * block, 3), MARGIN, top, width)
        right, below_right = _column(page, _text(seed + 4 * block + 1, 3), MARGIN + width + 24, top, width)
        read += left + right
        top = min(below_left, below_right) - LEADING
        if block == 0:
            across = wrap(_text(seed + 2, 2), letter[0] - 2 * MARGIN)
            for line in across:
                page.lines.append(_Line(MARGIN, top, line))
                top -= LEADING
            read += across
            top -= LEADING
    page.draw(path)
    return "\n".join(read)


COLUMNS = {
    "two_columns": two_columns,
    "titled_with_footnote": titled_with_footnote,
    "offset_baselines": offset_baselines,
    "three_columns": three_columns,
    "justified_words": justified_words,
    "paragraphs": paragraphs,
    "columns_then_one_then_columns": columns_then_one_then_columns,
}


# Pages whose lines have gaps in them and are read a row at a time, as they are stored.


def table(path: Path, seed: int = 0) -> list[str]:
    """A price table of four columns; returns its rows."""
    page = _Page()
    rows = [["Item", "Quantity", "Unit price", "Total"]]
    for number in range(18):
        quantity, price = (seed + number) % 7 + 1, 3.25 * (number + 2)
        rows.append([f"Part {100 + number}", str(quantity), f"{price:.2f}", f"{quantity * price:.2f}"])
    for row_number, row in enumerate(rows):
        for column, cell in enumerate(row):
            page.lines.append(_Line(MARGIN + 130 * column, TOP - row_number * LEADING, cell))
    page.draw(path)
    return [" ".join(row) for row in rows]


def form(path: Path) -> list[str]:
    """A filled form: two label and value pairs a row."""
    pairs = [
        ("Name: Jane Doe", "Date: 2026-03-14"),
        ("Account: 4471-22", "Branch: Leeds"),
        ("Phone: 0113 496 0000", "Fax: none"),
        ("Email: jane@example.org", "Ref: A-77"),
        ("City: Leeds", "Postcode: LS1 4AP"),
        ("Country: UK", "Region: Yorkshire"),
    ]
    page = _Page()
    for number, (first, second) in enumerate(pairs):
        page.lines.append(_Line(MARGIN, TOP - number * 2 * LEADING, first))
        page.lines.append(_Line(320, TOP - number * 2 * LEADING, second))
    page.draw(path)
    return [f"{first} {second}" for first, second in pairs]


def key_values(path: Path, seed: int = 0) -> list[str]:
    """Short terms on the left, a line of prose each on the right."""
    page = _Page()
    rows = []
    values = wrap(_text(seed, 24), 300)
    for number in range(12):
        term, value = f"Clause {number + 1}", values[number]
        page.lines.append(_Line(MARGIN, TOP - number * LEADING, term))
        page.lines.append(_Line(200, TOP - number * LEADING, value))
        rows.append(f"{term} {value}")
    page.draw(path)
    return rows


def justified_prose(path: Path, seed: int = 0) -> str:
    """One justified column across the page, every word drawn on its own."""
    page = _Page()
    lines, _ = _column(page, _text(seed, 14), MARGIN, TOP, letter[0] - 2 * MARGIN, justified=True)
    page.draw(path)
    return "\n".join(lines)
