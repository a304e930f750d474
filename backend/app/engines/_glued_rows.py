"""Text PDFium's bounded text runs together across a line break it made on one row, kept apart.

PDFium may start a new line inside a row: before a text object of one character (a table's
quantity "1", a tick "X") drawn apart from what comes before it, whose writing direction it
takes from the page's, not from the object. Its whole text keeps that line break ("Part 100",
then "1" on a line of its own), but its bounded text, which a page's text is read with, leaves
out a break between two characters on the same height and puts nothing in its place: "Part 100"
and "1" came out "Part 1001", "1.5" and "2" as "1.52", "Item A", "X" and "Y" as "Item AXY".
pdftotext keeps them apart.

Each break so left out is two characters (CR, LF) that PDFium counts and its bounded text does
not have, so a page whose bounded text is shorter than its character count by two or more is
the only kind that may have one (a count, no character read). Its text is then put together
from its characters in PDFium's order, as its bounded text is: the characters whose origin is
inside the bounds, a space PDFium made where it made one, and a line break where PDFium broke the
line, except that a break between two characters on one row (baselines within a third of the
font size) is a space.
"""

from __future__ import annotations

import ctypes

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import Bounds

_BREAKS = frozenset({0x0D, 0x0A})
_SAME_ROW = 1 / 3  # of the font size: baselines this close are one row


def may_be_glued(textpage: pdfium.PdfTextPage, text: str) -> bool:
    """Whether the page's bounded text (text) may have run characters together (two characters
    or more that PDFium counts are not in it)."""
    return int(pdfium_c.FPDFText_CountChars(textpage.raw)) - len(text) >= 2


def unglued_text(textpage: pdfium.PdfTextPage, bounds: Bounds) -> str:
    """The page's text inside bounds with a space for each line break PDFium made on one row."""
    raw = textpage.raw
    left, bottom, right, top = bounds
    x, y = ctypes.c_double(), ctypes.c_double()
    origin = (ctypes.byref(x), ctypes.byref(y))
    out: list[str] = []
    broken = spaced = False  # since the last character written
    last_y = 0.0
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        if pdfium_c.FPDFText_IsGenerated(raw, index):
            broken |= code in _BREAKS
            spaced |= code == 0x20
            continue
        if not pdfium_c.FPDFText_GetCharOrigin(raw, index, *origin) or not (
            left <= x.value <= right and bottom <= y.value <= top
        ):
            broken = True  # as PDFium's bounded text takes a character it leaves out
            continue
        if code == 0x20:
            spaced = True
            continue
        if out and broken:
            size = float(pdfium_c.FPDFText_GetFontSize(raw, index))
            out.append(" " if abs(y.value - last_y) <= _SAME_ROW * size else "\r\n")
        elif out and spaced:
            out.append(" ")
        broken = spaced = False
        if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            out.append(chr(code))
        last_y = y.value
    return "".join(out)
