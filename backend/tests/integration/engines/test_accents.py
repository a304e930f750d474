"""Accents drawn as characters of their own, as TeX's older fonts draw them, are read on their
letters (app.engines._accents); spacing accents that are over no letter stay as they are."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from reportlab.lib.pagesizes import letter
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas

from app.engines._accents import _MAX_ACCENTS, may_have_spacing_accents
from app.engines._pages import page_text
from app.engines.auto import AutoEngine
from app.engines.base import clean_page_text
from app.engines.text_layer import TextLayerEngine
from tests.corpus.accents import LINES, ORDERS, accented_page
from tests.corpus.text_layers import _unicode_font
from tests.corpus.word_gaps import font_page, pdf_string


def _read(path: Path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return clean_page_text(page_text(document[0], 1)).split("\n")
    finally:
        document.close()


@pytest.mark.parametrize("order", ORDERS)
def test_accents_are_put_on_their_letters(tmp_path: Path, order: str) -> None:
    """French, German, Polish, Czech and Hungarian, capitals and a dotless i, accents above and
    below, drawn before the letter, after it, or after the rest of the line."""
    path = tmp_path / f"{order}.pdf"
    accented_page(path, order=order)
    assert _read(path) == list(LINES)


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_the_engines_read_them(tmp_path: Path, engine: TextLayerEngine | AutoEngine) -> None:
    path = tmp_path / "page.pdf"
    accented_page(path, order="line-end")
    (page,) = engine.recognize(path.read_bytes(), 1)
    assert (page.source, page.text.split("\n")) == ("text-layer", list(LINES))


CONTROLS = (
    "He wrote don\u00b4t with an acute, and `ls -l` in backquotes.",
    "A spacing diaeresis \u00a8 and a caron \u02c7 alone, a cedilla \u00b8 too.",
    "Precomposed: expérience, Größe, gęślą, kůň, tükörfúrógép.",
)


def test_spacing_accents_over_no_letter_stay(tmp_path: Path) -> None:
    """Drawn in a cell of their own, as a word processor draws them: over no letter."""
    path = tmp_path / "controls.pdf"
    pdf = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    pdf.setFont(_unicode_font(), 12)
    for number, line in enumerate(CONTROLS):
        pdf.drawString(60, 720 - 24 * number, line)
    pdf.save()
    assert _read(path) == list(CONTROLS)


def test_the_gate() -> None:
    assert may_have_spacing_accents("Exp\u00b4eriences")
    assert may_have_spacing_accents("param`etres")
    assert not may_have_spacing_accents("plain ASCII text with ^ and ~")
    assert not may_have_spacing_accents("précomposé, Größe")


def test_a_page_of_more_accents_than_prose_has_is_left_as_pdfium_reads_it(tmp_path: Path) -> None:
    """Past _MAX_ACCENTS (a hostile page: a million would take minutes) nothing is put together."""
    path = tmp_path / "many.pdf"
    accented_page(path, tuple("\u00e9" * 40 for _ in range(_MAX_ACCENTS // 40 + 1)))
    text = _read(path)
    assert "\u00e9" not in "".join(text)
    assert "\u00b4" in "".join(text)


def test_accents_on_a_page_with_a_word_broken_across_lines(tmp_path: Path) -> None:
    """PDFium marks a word broken at a line's end with U+0002 in its bounded text and U+FFFE in
    its characters: the two are the same character when the text is matched to them."""
    path = tmp_path / "hyphen.pdf"
    accented_page(path, ("Une expérience scienti-", "fique à l'été, après la fête."))
    assert _read(path) == ["Une expérience scientifique à l'été, après la fête."]


def _acute_drawn_back(
    path: Path, head: str, over: int, rest: str = "", *, size: float = 12.0, rise: float = 2.6
) -> Path:
    """A line of Helvetica: `head`, then an acute drawn back over its letter at `over` (raised by
    `rise`), then `rest` right after `head`, all in one text object, as TeX draws a capital's accent."""
    y, x = 700.0, 72.0
    letter_at = x + stringWidth(head[:over], "Helvetica", size)
    width = stringWidth(head[over], "Helvetica", size) - stringWidth("\u00b4", "Helvetica", size)
    content = [
        "BT",
        f"/F1 {size} Tf",
        f"1 0 0 1 {x} {y} Tm {pdf_string(head)} Tj",
        f"1 0 0 1 {letter_at + width / 2:.2f} {y + rise:.2f} Tm {pdf_string(chr(0xB4))} Tj",
    ]
    if rest:
        content.append(f"1 0 0 1 {x + stringWidth(head, 'Helvetica', size):.2f} {y} Tm {pdf_string(rest)} Tj")
    font_page([*content, "ET"], path)
    return path


def test_a_capital_whose_accent_is_drawn_after_the_next_letter(tmp_path: Path) -> None:
    """As TeX draws a capital's accent in a heading: "UNE EC", the acute back over the E, then
    "OLE", in one text object. PDFium keeps that order and puts a space after the accent,
    between the C and the O, which touch: it is left out with the accent."""
    path = _acute_drawn_back(tmp_path / "heading.pdf", "UNE EC", 4, "OLE")
    assert _read(path) == ["UNE \u00c9COLE"]


def test_a_capital_s_accent_put_at_the_end_of_a_long_line(tmp_path: Path) -> None:
    """PDFium puts a capital's accent drawn after its line at the line's end: on a reference 90
    characters long the capital was further back than the accent's neighbours were looked for,
    and the line read "Masterly Edouard. ... 1988." and an acute."""
    line = "Masterly Edouard. Mastering Thesis Writing: Master's thesis; Stanford University, 1988."
    path = _acute_drawn_back(tmp_path / "reference.pdf", line, len("Masterly "), size=10.0, rise=2.2)
    assert _read(path) == [line.replace("Edouard", "\u00c9douard")]


def test_an_accent_drawn_back_between_two_touching_letters_leaves_no_space(tmp_path: Path) -> None:
    """Small capitals as a TeX heading sets them: "THEOR", the acute back over the first E, then
    "EME" right after the R. PDFium put a space on either side of the accent, and one stayed:
    "THÉOR ÈME"."""
    path = _acute_drawn_back(tmp_path / "small-capitals.pdf", "THEOR", 2, "EME")
    assert _read(path) == ["TH\u00c9OREME"]
