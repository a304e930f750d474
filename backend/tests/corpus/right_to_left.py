"""Hebrew text layers as producers store them: in reading order with each letter placed left of
the one before, and in the order they are drawn.

The first line stores each word's letters in reading order in one TJ whose adjustments move each
letter left of the one before (as PyMuPDF writes right-to-left text): PDFium takes such a word for
visual order and turns it around, so every word came out backwards. The second stores each
word's letters in the order they are drawn, left to right, which PDFium turns around itself.
Both are read right to left: the expected text is in reading order. The font is DejaVu Sans as a
Type0 font (Identity-H) with a ToUnicode map, built with fontTools and pikepdf.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pikepdf
from fontTools.ttLib import TTFont
from pikepdf import Array, Dictionary, Name

from app.pdf.samples import FONT_CANDIDATES
from tests.corpus import Fixture

KERNED = "הצדדים חתמו על ההסכם ביום 15 במאי עם ACME"
DRAWN = "התשלום יבוצע תוך שלושים יום"
SIZE = 16


class _Font:
    def __init__(self) -> None:
        self.path = next(p for p in FONT_CANDIDATES if p.endswith("DejaVuSans.ttf"))
        font = TTFont(self.path)
        self._cmap = font.getBestCmap()
        self._order = {name: number for number, name in enumerate(font.getGlyphOrder())}
        self._advance = font["hmtx"].metrics
        self._units = font["head"].unitsPerEm

    def glyph(self, char: str) -> int:
        return self._order[self._cmap[ord(char)]]

    def width(self, char: str) -> float:
        """Advance in thousandths of the font size."""
        return self._advance[self._cmap[ord(char)]][0] * 1000 / self._units

    def points(self, text: str) -> float:
        return sum(self.width(char) for char in text) * SIZE / 1000

    def hex(self, text: str) -> str:
        return "".join(f"{self.glyph(char):04X}" for char in text)

    def pdf_font(self, pdf: pikepdf.Pdf, chars: set[str]) -> pikepdf.Dictionary:
        mapping = "".join(f"<{self.glyph(c):04X}> <{ord(c):04X}>\n" for c in sorted(chars))
        to_unicode = (
            "/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def "
            "/CMapName /Adobe-Identity-UCS def /CMapType 2 def "
            "1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
            f"{len(chars)} beginbfchar\n{mapping}endbfchar "
            "endcmap CMapName currentdict /CMap defineresource pop end end"
        )
        descriptor = Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/DejaVuSans"),
            Flags=32,
            FontBBox=Array([-1021, -463, 1793, 1232]),
            ItalicAngle=0,
            Ascent=928,
            Descent=-236,
            CapHeight=729,
            StemV=80,
            FontFile2=pdf.make_stream(Path(self.path).read_bytes()),
        )
        widths = Array([value for c in sorted(chars) for value in (self.glyph(c), Array([self.width(c)]))])
        descendant = Dictionary(
            Type=Name.Font,
            Subtype=Name.CIDFontType2,
            BaseFont=Name("/DejaVuSans"),
            CIDSystemInfo=Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
            FontDescriptor=pdf.make_indirect(descriptor),
            CIDToGIDMap=Name.Identity,
            W=widths,
        )
        return pdf.make_indirect(
            Dictionary(
                Type=Name.Font,
                Subtype=Name.Type0,
                BaseFont=Name("/DejaVuSans"),
                Encoding=Name("/Identity-H"),
                DescendantFonts=Array([pdf.make_indirect(descendant)]),
                ToUnicode=pdf.make_stream(to_unicode.encode()),
            )
        )


def _right_to_left(word: str) -> bool:
    return any("\u0590" <= char <= "\u05ff" for char in word)


def hebrew_lines(directory: Path) -> Fixture:
    font = _Font()
    shows: list[str] = []
    for line, y, kerned in ((KERNED, 700, True), (DRAWN, 660, False)):
        right = 540.0
        for word in line.split():
            left = right - font.points(word)
            if _right_to_left(word) and kerned:  # reading order, each letter moved left of the last
                parts = [f"<{font.hex(word[0])}>"]
                for before, char in itertools.pairwise(word):
                    parts += [f"{font.width(before) + font.width(char):.0f}", f"<{font.hex(char)}>"]
                start = right - font.points(word[0])
                shows.append(f"BT /F0 {SIZE} Tf {start:.2f} {y} Td [{' '.join(parts)}] TJ ET")
            else:  # drawn order: a right-to-left word's letters left to right
                drawn = word[::-1] if _right_to_left(word) else word
                shows.append(f"BT /F0 {SIZE} Tf {left:.2f} {y} Td <{font.hex(drawn)}> Tj ET")
            right = left - font.points(" ")
    path = directory / "hebrew-lines.pdf"
    with pikepdf.new() as pdf:
        page = pdf.add_blank_page(page_size=(612, 792))
        chars = set((KERNED + DRAWN).replace(" ", ""))
        page.obj.Resources = Dictionary(Font=Dictionary(F0=font.pdf_font(pdf, chars)))
        page.obj.Contents = pdf.make_stream("\n".join(shows).encode())
        pdf.save(path)
    return Fixture("hebrew-lines", path, (f"{KERNED}\n{DRAWN}",), "Hebrew in reading order placed leftwards")
