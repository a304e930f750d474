"""Pages whose accented letters are drawn as TeX's older fonts draw them: the letter, and the
accent as a character of its own (a spacing acute, diaeresis, caron, cedilla, ogonek, ...)
placed over or under it. The accent is drawn before its letter (as TeX draws a lowercase
one), after it, or after the rest of its line; each glyph is its own text object, placed by
the font's widths, with no space drawn between words (TeX draws none)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from reportlab.lib.pagesizes import letter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen import canvas

from tests.corpus.text_layers import _unicode_font

SIZE = 12
LINES = (
    "Une expérience scientifique implique en général le contrôle des paramètres.",
    "Le garçon a été à la fête de Noël, où il a mangé une crêpe.",
    "Für die Größe der Stücke müssen Sie Übung haben.",
    "Zażółć gęślą jaźń: pięć złotych, treść wyjaśniającą.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "ÉCOLE ÉLÉMENTAIRE DE L'ÉTÉ, Árvíztűrő tükörfúrógép.",
)
# accent character (spacing) for each combining mark, and whether it is drawn under the letter
_SPACING = {
    "\u0301": ("\u00b4", False),
    "\u0300": ("`", False),
    "\u0308": ("\u00a8", False),
    "\u0302": ("\u02c6", False),
    "\u030c": ("\u02c7", False),
    "\u030a": ("\u02da", False),
    "\u030b": ("\u02dd", False),
    "\u0307": ("\u02d9", False),
    "\u0327": ("\u00b8", True),
    "\u0328": ("\u02db", True),
}
ORDERS = ("before", "after", "delayed", "line-end")
_DELAY = 5  # glyphs drawn between a delayed accent and its letter


def accented_page(path: Path, lines: tuple[str, ...] = LINES, *, order: str = "before") -> None:
    """Each line drawn a glyph at a time, its accented letters as letter and spacing accent (an i
    under an accent as a dotless i, as TeX draws it). order: where the accent is drawn in the
    content stream, before its letter, after it, five glyphs later, or after the rest of its line."""
    font = _unicode_font()
    pdf = canvas.Canvas(str(path), pagesize=letter, pageCompression=1, invariant=1)
    for number, line in enumerate(lines):
        y = 720 - 24 * number
        x = 60.0
        held: list[tuple[float, float, str]] = []  # accents drawn at the line's end
        delayed: list[tuple[int, tuple[float, float, str]]] = []  # (drawn after this many glyphs, accent)
        drawn = 0
        for char in line:
            if char == " ":
                x += pdfmetrics.stringWidth(" ", font, SIZE)
                continue
            base, *marks = unicodedata.normalize("NFD", char)
            accents = [_SPACING[mark] for mark in marks if mark in _SPACING]
            if accents and base == "i" and not accents[0][1]:
                base = "\u0131"
            width = pdfmetrics.stringWidth(base, font, SIZE)
            placed = []
            for accent, below in accents:
                accent_width = pdfmetrics.stringWidth(accent, font, SIZE)
                raise_by = 0.0 if below or not base.isupper() else 0.22 * SIZE
                placed.append((x + (width - accent_width) / 2, y + raise_by, accent))
            if order == "before":
                for at in placed:
                    _glyph(pdf, font, *at)
            _glyph(pdf, font, x, y, base)
            if order == "after":
                for at in placed:
                    _glyph(pdf, font, *at)
            if order == "delayed":
                for due in [item for item in delayed if item[0] <= drawn]:
                    _glyph(pdf, font, *due[1])
                    delayed.remove(due)
                delayed.extend((drawn + _DELAY, at) for at in placed)
            drawn += 1
            held.extend(placed if order == "line-end" else [])
            x += width
        held.extend(at for _, at in delayed)
        for at in held:
            _glyph(pdf, font, *at)
    pdf.save()


def _glyph(pdf: canvas.Canvas, font: str, x: float, y: float, char: str) -> None:
    text = pdf.beginText(x, y)
    text.setFont(font, SIZE)
    text.textOut(char)
    pdf.drawText(text)
