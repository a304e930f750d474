"""PDFium's hyphenation mark against a U+FFFE the page draws.

Where a line ends in a hyphen, PDFium joins the word's halves around a mark: U+0002 in its
bounded text and its characters one by one, U+FFFE in its whole text. A glyph whose ToUnicode
entry is U+FFFE (a noncharacter: a broken map's) is U+FFFE in its characters and bounded text. The mark joins the word
(and stays a hyphen before a capital); the drawn U+FFFE is not text and joins nothing. On the
code before, the drawn one at a line's end ran the two lines together and put a hyphen between
"Anglo" and "Saxon" on every path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest

from app.engines._glued_text import unglued_text
from app.engines._page_chars import char_codes, page_lines, stored_text, whole_text
from app.engines._pages import page_text
from app.engines.base import clean_page_text

HYPHENATED = ("Anglo-", "Saxon law was written", "in a scienti-", "fique manner.")
JOINED = ["Anglo-Saxon law was written", "in a scientifique manner."]
# The same lines with a tilde at each line's end, which the font's ToUnicode map gives as U+FFFE.
DRAWN = tuple(line.replace("-", "~") for line in HYPHENATED)
KEPT_APART = ["Anglo", "Saxon law was written", "in a scienti", "fique manner."]

# How each pass reads a page's text: PDFium's bounded text (page_text), its whole text (what a
# page turned a quarter is read from), the glued-text pass and the line-by-line pass.
Reader = Callable[[pdfium.PdfPage], str]
READERS: dict[str, Reader] = {
    "page_text": lambda page: page_text(page, 1),
    "whole_text": lambda page: whole_text(page.get_textpage()),
    "unglued_text": lambda page: unglued_text(page.get_textpage(), page.get_bbox()).text,
    "page_lines": lambda page: "".join(stored_text(line) for line in page_lines(page.get_textpage(), None)),
}


def _page(path: Path, lines: tuple[str, ...], *, turned: bool = False) -> Path:
    """lines in Helvetica, the tilde mapped to U+FFFE by the font's ToUnicode map (every other
    code to itself); turned: on a portrait sheet with /Rotate 90, drawn turned back, as a
    print-to-PDF driver writes a landscape page."""
    pdf = pikepdf.new()
    entries = [f"<{code:02X}> <{code:04X}>" for code in range(0x20, 0x7E)] + ["<7E> <FFFE>"]
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <00> <FF> endcodespacerange\n"
        f"{len(entries)} beginbfchar\n" + "\n".join(entries) + "\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    )
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.Type1,
        BaseFont=pikepdf.Name.Helvetica,
        Encoding=pikepdf.Name.WinAnsiEncoding,
        ToUnicode=pdf.make_stream(cmap.encode("ascii")),
    )
    rows = b" ".join(b"(" + line.encode("ascii") + b") '" for line in lines)
    turn = b"0 1 -1 0 612 0 cm " if turned else b""
    content = b"q " + turn + b"BT /F1 14 Tf 72 560 Td 20 TL " + rows + b" ET Q"
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Rotate=90 if turned else 0,
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))
    pdf.save(path)
    return path


def _read(path: Path, reader: Reader) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [line.strip() for line in clean_page_text(reader(document[0])).splitlines() if line.strip()]
    finally:
        document.close()


@pytest.mark.parametrize("reader", READERS, ids=list(READERS))
def test_pdfiums_mark_joins_the_word_on_every_path(tmp_path: Path, reader: str) -> None:
    path = _page(tmp_path / "hyphenated.pdf", HYPHENATED)
    assert _read(path, READERS[reader]) == JOINED


@pytest.mark.parametrize("reader", READERS, ids=list(READERS))
def test_a_drawn_u_fffe_at_a_lines_end_joins_nothing_and_is_left_out(tmp_path: Path, reader: str) -> None:
    path = _page(tmp_path / "drawn.pdf", DRAWN)
    assert _read(path, READERS[reader]) == KEPT_APART


def test_on_a_page_turned_a_quarter(tmp_path: Path) -> None:
    """A page turned a quarter over turned text is read from PDFium's whole text."""
    assert _read(_page(tmp_path / "hyphenated.pdf", HYPHENATED, turned=True), READERS["page_text"]) == JOINED
    assert _read(_page(tmp_path / "drawn.pdf", DRAWN, turned=True), READERS["page_text"]) == KEPT_APART


@pytest.mark.parametrize("before", range(6))
def test_the_characters_tell_the_mark_from_the_drawn_u_fffe(tmp_path: Path, before: int) -> None:
    """PDFium's whole text has U+FFFE for its mark, its characters one by one U+0002; char_codes
    reads them from the whole text when the two agree where it samples them: each is U+0002
    there, wherever the marks fall (a line or more of other text before them moves them)."""
    prose = ("Text before the hyphenated words.",) * before
    for lines, marks, drawn in ((HYPHENATED, 2, 0), (DRAWN, 0, 2)):
        document = pdfium.PdfDocument(_page(tmp_path / "page.pdf", (*prose, *lines)))
        try:
            codes = char_codes(document[0].get_textpage())
        finally:
            document.close()
        assert (codes.count(0x02), codes.count(0xFFFE)) == (marks, drawn)
