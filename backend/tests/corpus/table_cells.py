"""Tables whose cells are drawn one by one, some of them a single character: PDFium's bounded text
ran such a cell into the one before it ("Part 1001" for "Part 100" and "1", "Item AXY").

Two writers: every cell a text object of its own (BT ... ET, as reportlab's drawString writes
it), and every row one text object that moves to each cell with Td (as many report writers
do). Each builder returns the table's rows, cells joined by a space, which is how a reader
expects each row to read.
"""

from __future__ import annotations

from pathlib import Path

import pikepdf
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

TOP, LEFT, PITCH, LEADING = 720, 54, 120, 14


def _rows(seed: int) -> list[list[str]]:
    rows = [["Item", "Qty", "Unit", "Total", "Paid"]]
    for number in range(12):
        quantity = (seed + number) % 9 + 1
        price = 1.5 * (number + 1)
        tick = "X" if (seed + number) % 3 else "-"
        rows.append([f"Part {100 + number}", str(quantity), f"{price:.1f}", f"{quantity * price:.2f}", tick])
    return rows


def cells_as_objects(path: Path, seed: int = 0) -> list[str]:
    """Each cell its own text object."""
    rows = _rows(seed)
    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setFont("Helvetica", 10)
    for number, row in enumerate(rows):
        for column, cell in enumerate(row):
            pdf.drawString(LEFT + column * PITCH, TOP - number * LEADING, cell)
    pdf.save()
    return [" ".join(row) for row in rows]


def cells_moved_to(path: Path, seed: int = 0) -> list[str]:
    """Each row one text object, moving to each cell with Td."""
    rows = _rows(seed)
    content = ["BT /F1 10 Tf"]
    for number, row in enumerate(rows):
        content.append(f"1 0 0 1 {LEFT} {TOP - number * LEADING} Tm")
        for column, cell in enumerate(row):
            if column:
                content.append(f"{PITCH} 0 Td")
            content.append(f"({cell}) Tj")
    content.append("ET")
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type1,
            BaseFont=pikepdf.Name.Helvetica,
            Encoding=pikepdf.Name.WinAnsiEncoding,
        )
    )
    page = pdf.add_blank_page(page_size=letter)
    page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    page.Contents = pdf.make_stream("\n".join(content).encode())
    pdf.save(path)
    return [" ".join(row) for row in rows]
