"""The glyphless font of invisible text layers, and the codes its text is written in.

A text layer only has to be found, selected and copied, never seen, so its font draws nothing:
a Type0 font (Identity-H: two bytes a code, the code is the CID) over a TrueType CIDFont of two
glyphs that fill nothing, whose CIDToGIDMap sends every CID to glyph 1 (Acrobat refuses to
extract text drawn with glyph 0), every glyph ADVANCE wide. Its ToUnicode CMap gives the text
back. This is the design of tesseract's GlyphLessFont (pdf.ttf), built here with fontTools,
except that glyph 1 is not empty but a line without area (see truetype).

Codes: a character of the Basic Multilingual Plane is its own code (U+0416 is <0416>), and the
ToUnicode CMap maps those codes to themselves. A character beyond it (an emoji, a CJK character
of Extension B) cannot be one UTF-16 code unit: written as its two surrogates, as tesseract
does, PDFium rejoins them but poppler (pdftotext) and pdfminer lose the character, since each
code's Unicode value has to stand alone. So each such character gets a code of its own among
the surrogate codes, which no BMP character uses, assigned in order of first appearance
(Codes), and the ToUnicode CMap names the character of each (<D800> -> <D83DDE00>). One PDF
shares one table; grafting layers into one document renumbers them into one (graft.py). 2,047
such characters fit in one table; past that a character is written as U+FFFD.
"""

from __future__ import annotations

import functools
import io
import zlib
from collections.abc import Mapping

ADVANCE = 500  # every glyph's advance in thousandths of the font size
ASCENT = 800
# The glyph box runs from a fifth of the font size below the baseline to four fifths above it:
# text of size h on a baseline h/5 above a word box's bottom covers exactly the box.
DESCENT = -200
BASE_FONT = b"/GlyphLessFont"

_FIRST_ASTRAL = 0xD800
_REPLACEMENT = 0xDFFF  # the code of U+FFFD, for characters past a full table
_LAST_ASTRAL = _REPLACEMENT - 1
_SPACE = 0x20


class Codes:
    """The codes text is written in, and the characters beyond the BMP that have one."""

    def __init__(self) -> None:
        self._astral: dict[str, int] = {}

    @property
    def astral(self) -> dict[int, str]:
        """Code -> character, for the characters beyond the BMP assigned so far."""
        return {code: char for char, code in self._astral.items()}

    def code(self, char: str) -> int:
        """The code of one character (a BMP character's is itself)."""
        point = ord(char)
        if point < 0x10000:
            return point
        code = self._astral.get(char)
        if code is None:
            code = _FIRST_ASTRAL + len(self._astral)
            if code > _LAST_ASTRAL:
                return _REPLACEMENT
            self._astral[char] = code
        return code

    def encode(self, text: str) -> bytes:
        """text as a string operand: two bytes a character."""
        return b"".join(self.code(char).to_bytes(2, "big") for char in text)


SPACE_CODE = _SPACE.to_bytes(2, "big")


def is_writable(char: str) -> bool:
    """Whether a character can be written: not a surrogate alone (not text) nor a control."""
    point = ord(char)
    return not (0xD800 <= point <= 0xDFFF or point < 0x20 or 0x7F <= point < 0xA0)


@functools.cache
def truetype() -> bytes:
    """The font program: a TrueType font of two glyphs that fill nothing, the same bytes in
    every process (built once a process: under a millisecond, 45 ms with fontTools' import)."""
    from fontTools.fontBuilder import FontBuilder  # only processes that write a layer pay for it
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    builder = FontBuilder(1000, isTTF=True)
    builder.setupGlyphOrder([".notdef", "space"])
    builder.setupCharacterMap({_SPACE: "space"})
    empty = TTGlyphPen(None).glyph()
    # Glyph 1 is a line from corner to corner of its cell: it has no area, so it fills nothing,
    # but it has a box. PDFium leaves a text object out of the page's text when its box is
    # empty, and a word of one letter in a glyph without outline has none.
    pen = TTGlyphPen(None)
    pen.moveTo((0, DESCENT))
    pen.lineTo((ADVANCE, ASCENT))
    pen.closePath()
    builder.setupGlyf({".notdef": empty, "space": pen.glyph()})
    builder.setupHorizontalMetrics({".notdef": (ADVANCE, 0), "space": (ADVANCE, 0)})
    builder.setupHorizontalHeader(ascent=ASCENT, descent=DESCENT)
    builder.setupNameTable({"familyName": "GlyphLessFont", "styleName": "Regular"}, mac=False)
    builder.setupOS2(
        sTypoAscender=ASCENT,
        sTypoDescender=DESCENT,
        sTypoLineGap=0,
        usWinAscent=ASCENT,
        usWinDescent=-DESCENT,
        sxHeight=ASCENT // 2,
        sCapHeight=ASCENT,
    )
    builder.setupPost()
    # Fixed dates: the same layer is the same bytes (and checksum) whenever it is written.
    builder.setupHead(created=0, modified=0)
    builder.font.recalcTimestamp = False
    out = io.BytesIO()
    builder.save(out)
    return out.getvalue()


def to_unicode_cmap(astral: Mapping[int, str]) -> bytes:
    """The ToUnicode CMap: BMP codes to themselves, surrogate codes to their characters."""
    lines = [
        b"/CIDInit /ProcSet findresource begin",
        b"12 dict begin",
        b"begincmap",
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        b"/CMapName /GlyphLessFont-UCS def",
        b"/CMapType 2 def",
        b"1 begincodespacerange",
        b"<0000> <FFFF>",
        b"endcodespacerange",
    ]
    # A range may only vary in its last byte; at most 100 entries a block.
    ranges = [
        b"<%02X00> <%02XFF> <%02X00>" % (high, high, high) for high in range(256) if not 0xD8 <= high <= 0xDF
    ]
    mapped = {**astral, _REPLACEMENT: "\ufffd"}
    chars = [
        b"<%04X> <%s>" % (code, char.encode("utf-16-be").hex().upper().encode())
        for code, char in sorted(mapped.items())
    ]
    for keyword, entries in ((b"bfrange", ranges), (b"bfchar", chars)):
        for start in range(0, len(entries), 100):
            block = entries[start : start + 100]
            lines += [b"%d begin%s" % (len(block), keyword), *block, b"end" + keyword]
    lines += [b"endcmap", b"CMapName currentdict /CMap defineresource pop", b"end", b"end"]
    return b"\n".join(lines) + b"\n"


def astral_from_cmap(cmap: bytes) -> dict[int, str]:
    """The surrogate codes a ToUnicode CMap written by to_unicode_cmap assigns (the inverse)."""
    astral: dict[int, str] = {}
    in_chars = False
    for line in cmap.splitlines():
        if line.endswith(b"beginbfchar"):
            in_chars = True
        elif line == b"endbfchar":
            in_chars = False
        elif in_chars:
            code, char = line.split()
            number = int(code[1:-1], 16)
            if number != _REPLACEMENT:
                astral[number] = bytes.fromhex(char[1:-1].decode()).decode("utf-16-be")
    return astral


def stream(entries: bytes, data: bytes) -> bytes:
    """A Flate-compressed stream object's body."""
    packed = zlib.compress(data, 9)
    return b"<< %s /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream" % (entries, len(packed), packed)


# The objects of the font, in order; FONT is the one a page's resources name.
FONT, CID_FONT, DESCRIPTOR, FONT_FILE, CID_TO_GID, TO_UNICODE = range(6)
FONT_OBJECTS = 6


def font_objects(first: int, astral: Mapping[int, str]) -> list[bytes]:
    """The bodies of the font's FONT_OBJECTS objects, numbered from first in the order above."""
    ref = [b"%d 0 R" % (first + index) for index in range(FONT_OBJECTS)]
    program = truetype()
    return [
        b"<< /Type /Font /Subtype /Type0 /BaseFont %s /Encoding /Identity-H /DescendantFonts [ %s ] "
        b"/ToUnicode %s >>" % (BASE_FONT, ref[CID_FONT], ref[TO_UNICODE]),
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont %s /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor %s /DW %d /CIDToGIDMap %s >>"
        % (BASE_FONT, ref[DESCRIPTOR], ADVANCE, ref[CID_TO_GID]),
        b"<< /Type /FontDescriptor /FontName %s /Flags 5 /FontBBox [ 0 %d %d %d ] /ItalicAngle 0 "
        b"/Ascent %d /Descent %d /CapHeight %d /StemV 80 /FontFile2 %s >>"
        % (BASE_FONT, DESCENT, ADVANCE, ASCENT, ASCENT, DESCENT, ASCENT, ref[FONT_FILE]),
        stream(b"/Length1 %d" % len(program), program),
        stream(b"", b"\x00\x01" * 65536),
        stream(b"", to_unicode_cmap(astral)),
    ]
