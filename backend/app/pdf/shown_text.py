"""The text a page shows itself, so the text layer does not say it twice.

OCR reads the page as drawn, text and all: a stamp or a page header added as text to a scan,
and every word of a born-digital page when an engine that reads all pages (google-vision,
tesseract) is asked for. The page's own text is already found, selected and copied in a viewer;
an OCR word laid over it doubled it. A word is left out of the layer when the characters the
page shows where the word lies (their centres inside its box, widened by MARGIN) spell it, or
all but what OCR may have misread (MISREAD): the page says it already. So is a word over shown
characters none of which is a letter or a digit: OCR's reading of dot leaders or a rule
("0.0.0", "eee"), or a mark over a mark. A word over characters that spell something else (a
font whose text extracts as garbage) stays, since only the word says it right. Characters in
render mode 3, and those drawn before an opaque image over the whole page, are not counted:
they are an earlier OCR's layer, which the graft removes (prior_text).
"""

from __future__ import annotations

import ctypes
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.models.results import WordBox
from app.pdf._pdfium import PDFIUM_LOCK, shown_chars
from app.pdf.page_space import Affine

MISREAD = 0.3  # of a word's letters and digits the shown ones may not give back (one, from 3 on)
MARGIN = 0.25  # of a word box's height, around it, where the characters it read may lie
_ROW = 12.0  # points: characters are looked up by rows of their centres this high


@dataclass(frozen=True, slots=True)
class _Char:
    x: float  # its box's centre, in user space
    y: float
    text: str


class ShownText:
    """The characters one page shows, by rows of their centres."""

    def __init__(self, chars: Sequence[_Char]) -> None:
        self._rows: dict[int, list[tuple[int, _Char]]] = defaultdict(list)
        for order, char in enumerate(chars):
            self._rows[int(char.y // _ROW)].append((order, char))

    def says(self, word: WordBox, to_page: Affine) -> bool:
        """Whether the page shows word's text where the word lies (to_page: its pixels to user space)."""
        x0, y0, x1, y1 = word.bbox
        corners = [to_page.apply(x, y) for x in (x0, x1) for y in (y0, y1)]
        left, right = min(x for x, _ in corners), max(x for x, _ in corners)
        bottom, top = min(y for _, y in corners), max(y for _, y in corners)
        points_per_pixel = abs(to_page.a * to_page.d - to_page.b * to_page.c) ** 0.5
        margin = max(1.0, MARGIN * (y1 - y0) * points_per_pixel)  # OCR's box is tight, or off
        left, right, bottom, top = left - margin, right + margin, bottom - margin, top + margin
        inside = sorted(
            (order, char.text)
            for row in range(int(bottom // _ROW), int(top // _ROW) + 1)
            for order, char in self._rows.get(row, ())
            if left <= char.x <= right and bottom <= char.y <= top
        )
        if not inside:
            return False
        wanted, shown = _letters(word.text), _letters("".join(text for _, text in inside))
        if not wanted or not shown:  # a mark over shown characters, or what OCR made of dot leaders
            return True
        matcher = SequenceMatcher(None, wanted, shown, autojunk=False)
        misread = max(int(MISREAD * len(wanted)), 1 if len(wanted) >= 3 else 0)
        return sum(block.size for block in matcher.get_matching_blocks()) >= len(wanted) - misread


def shown_text(pdf: bytes, indexes: Sequence[int]) -> dict[int, ShownText]:
    """The pages (of indexes, from 0) of pdf that show text, and their text; {} when pdf cannot
    be opened by PDFium (the layer is made without this check)."""
    found: dict[int, ShownText] = {}
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(pdf)
        except pdfium.PdfiumError:
            return found
        try:
            for index in indexes:
                chars = list(_shown_chars(document, index))
                if chars:
                    found[index] = ShownText(chars)
        finally:
            document.close()
    return found


def _shown_chars(document: pdfium.PdfDocument, index: int) -> Iterator[_Char]:
    try:
        page = document[index]
    except pdfium.PdfiumError:
        return
    try:
        textpage = page.get_textpage()
        try:
            yield from _chars(textpage)
        finally:
            textpage.close()
    finally:
        page.close()


def _chars(textpage: pdfium.PdfTextPage) -> Iterator[_Char]:
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    for index, code in shown_chars(textpage):
        if pdfium_c.FPDFText_GetCharBox(textpage.raw, index, left, right, bottom, top):
            yield _Char((left.value + right.value) / 2, (bottom.value + top.value) / 2, chr(code))


def _letters(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())
