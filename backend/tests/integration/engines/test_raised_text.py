"""Superscripts and subscripts drawn as runs of their own, smaller and raised or lowered, as
HTML-to-PDF writers draw <sup> and <sub> (WeasyPrint, MathML in Chromium): the line they stand
in stays one line.

PDFium makes a line break after such a character (its baseline is apart) and leaves the break
out of its bounded text, so the page is put together again from its characters
(app.engines._glued_text), which took each raised or lowered character for a row of its own:
"E = mc2" then "; see note12." on the next line, "x2" then "+ y2" then "= 1".
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from app.pdf.samples import FONT_CANDIDATES

SIZE, SMALL, RISE, DROP = 12.0, 10.67, 5.33, -3.0  # WeasyPrint's <sup> in 12 pt DejaVu

# Each line: (text, size, rise) runs, set one after the other in one text object.
LINES: list[list[tuple[str, float, float]]] = [
    [("Einstein wrote E = mc", SIZE, 0), ("2", SMALL, RISE), ("; see note", SIZE, 0), ("12", SMALL, RISE)],
    [(". Area is 4 m", SIZE, 0), ("2", SMALL, RISE), (" in total, and x", SIZE, 0), ("2", SMALL, RISE)],
    [
        (" + y", SIZE, 0),
        ("2", SMALL, RISE),
        (" = 1 holds; H", SIZE, 0),
        ("2", SMALL, DROP),
        ("O is water.", SIZE, 0),
    ],
    [("The next line stays its own.", SIZE, 0)],
]
EXPECTED = [
    "Einstein wrote E = mc2; see note12",
    ". Area is 4 m2 in total, and x2",
    "+ y2 = 1 holds; H2O is water.",
    "The next line stays its own.",
]


def _raised_pdf(path: Path) -> Path:
    font = next(p for p in FONT_CANDIDATES if p.endswith("DejaVuSans.ttf"))
    pdfmetrics.registerFont(TTFont("DejaVuSans", font))
    drawing = canvas.Canvas(str(path))
    text = drawing.beginText()
    for number, line in enumerate(LINES):
        x, baseline = 72.0, 700.0 - 16 * number  # 16 pt apart: 4 pt of leading on 12 pt type
        for run, size, rise in line:
            text.setTextOrigin(x, baseline + rise)
            text.setFont("DejaVuSans", size)
            text.textOut(run)
            x += pdfmetrics.stringWidth(run, "DejaVuSans", size)
    drawing.drawText(text)
    drawing.save()
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_a_raised_or_lowered_character_stays_in_its_line(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    path = _raised_pdf(tmp_path / "raised.pdf")
    document = pdfium.PdfDocument(path)
    try:  # PDFium's own text breaks the line after a raised 2 (the page is put together again)
        assert "mc2\r\n;" in document[0].get_textpage().get_text_bounded()
    finally:
        document.close()
    (page,) = engine.recognize(path.read_bytes(), 1)
    assert page.source == "text-layer"
    assert [line.strip() for line in page.text.splitlines()] == EXPECTED
