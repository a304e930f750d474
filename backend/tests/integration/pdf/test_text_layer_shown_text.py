"""The text layer leaves out the words a page shows itself as text (app.pdf.shown_text).

OCR reads a page as drawn, its own text included: a stamp added to a scan, or every word of a
born-digital page read by an engine that OCRs all pages (google-vision in production). Laid over
that text, the layer doubled it for whoever searches, selects or copies. Read back with PDFium
and pdftotext, as a reader gets them.
"""

from __future__ import annotations

import io
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from pikepdf import Name

from app.models.results import PageText
from app.pdf.graft import graft_text_layers
from app.pdf.text_layer import render_text_layer
from tests.layer_pages import Scan, Setup, pdfium_words, scanned_page, to_pixel, vector_page

LETTER = Setup("letter")
STAMP = "EXHIBIT-0042"


def layer_words(layer: bytes) -> list[str]:
    document = pdfium.PdfDocument(layer)
    try:
        return [text for text, _ in pdfium_words(document[0])]
    finally:
        document.close()


def ocr_of(scan: Scan, extra: Sequence[tuple[str, tuple[int, int, int, int]]] = ()) -> PageText:
    return scan.setup.page_text([*scan.words, *extra])


def test_the_words_of_a_born_digital_page_are_not_laid_over_it_again() -> None:
    page = vector_page(LETTER)
    assert layer_words(render_text_layer(page.pdf, [ocr_of(page)])) == []


def test_words_ocr_read_a_little_wrong_are_still_the_pages() -> None:
    page = vector_page(LETTER)
    misread = [(text.replace("o", "0").upper() + ".", box) for text, box in page.words]
    assert layer_words(render_text_layer(page.pdf, [LETTER.page_text(misread)])) == []


def test_words_over_text_that_spells_something_else_stay() -> None:
    """The page's own text extracts as something else (a font without a true ToUnicode, say):
    only the OCR words say it right."""
    page = vector_page(LETTER)
    read = [("".join("q" if char.isalnum() else char for char in text), box) for text, box in page.words]
    assert layer_words(render_text_layer(page.pdf, [LETTER.page_text(read)])) == [text for text, _ in read]


def test_invisible_text_under_the_words_does_not_count() -> None:
    """An earlier OCR's layer (render mode 3) is not shown: the graft removes it, ours stays."""
    page = vector_page(LETTER, mode=3)
    assert layer_words(render_text_layer(page.pdf, [ocr_of(page)])) == [text for text, _ in page.words]


def stamped(scan: Scan) -> tuple[bytes, tuple[int, int, int, int]]:
    """scan with STAMP drawn as text in its bottom margin, and the pixel box OCR finds it in."""
    x, y, size = 400.0, 40.0, 10.0
    with pikepdf.open(io.BytesIO(scan.pdf)) as pdf:
        page = pdf.pages[0]
        font = pdf.make_indirect(
            pikepdf.Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Courier)
        )
        page.obj.Resources.Font = pikepdf.Dictionary(F1=font)
        page.contents_add(pdf.make_stream(b"BT /F1 10 Tf %d %d Td (%s) Tj ET" % (x, y, STAMP.encode())))
        out = io.BytesIO()
        pdf.save(out)
    width = 0.6 * size * len(STAMP)  # Courier's advance
    corners = [to_pixel(scan.setup, px, py) for px in (x, x + width) for py in (y - 2, y + 8)]
    box = (
        round(min(u for u, _ in corners)),
        round(min(v for _, v in corners)),
        round(max(u for u, _ in corners)),
        round(max(v for _, v in corners)),
    )
    return out.getvalue(), box


def test_a_stamp_on_a_scan_is_said_once_and_the_scan_by_the_layer(tmp_path: Path) -> None:
    scan = scanned_page(LETTER, lines=["harbour accounts reviewed"])
    pdf, box = stamped(scan)
    layer = render_text_layer(pdf, [ocr_of(scan, [(STAMP, box)])])
    assert layer_words(layer) == ["harbour", "accounts", "reviewed"]

    original, output = tmp_path / "stamped.pdf", tmp_path / "out.pdf"
    original.write_bytes(pdf)
    graft_text_layers(original, [(1, layer)], output)
    read = subprocess.run(["pdftotext", str(output), "-"], capture_output=True, check=True).stdout.decode()
    assert read.split().count(STAMP) == 1
    assert {"harbour", "accounts", "reviewed"} <= set(read.split())


def test_what_ocr_makes_of_dot_leaders_is_not_laid_over_them() -> None:
    """A table of contents read by OCR: the leaders come back as "eee" or "0.0.0" over dots."""
    page = vector_page(LETTER, lines=["Contents . . . . . . . . 12", "Index . . . . . . 40"])
    misread = ["eee", "0.0.0", "cece", ".", "-"]
    read = [
        (misread[index % len(misread)] if text == "." else text, box)
        for index, (text, box) in enumerate(page.words)
    ]
    assert layer_words(render_text_layer(page.pdf, [LETTER.page_text(read)])) == []


def test_a_word_whose_box_falls_a_little_short_of_its_characters_is_still_the_pages() -> None:
    """Tesseract's box of a one-letter word may stop short of the letter's centre as PDFium puts it."""
    page = vector_page(LETTER, lines=["a b c I a"])
    short = [(text, (x0, y0, x0 + max(1, (x1 - x0) // 4), y1)) for text, (x0, y0, x1, y1) in page.words]
    assert layer_words(render_text_layer(page.pdf, [LETTER.page_text(short)])) == []
