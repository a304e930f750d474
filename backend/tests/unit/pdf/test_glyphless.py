"""The glyphless font: a real TrueType program that draws nothing, and codes that read back."""

from __future__ import annotations

import io
import zlib

import pypdfium2 as pdfium
from fontTools.ttLib import TTFont
from pdfminer.high_level import extract_text

from app.pdf import glyphless
from app.pdf._writer import write_pdf


def test_the_font_program_is_two_glyphs_of_one_advance_and_the_same_bytes_every_time() -> None:
    font = TTFont(io.BytesIO(glyphless.truetype()))
    assert font.getGlyphOrder() == [".notdef", "space"]
    assert {name: font["hmtx"][name][0] for name in font.getGlyphOrder()} == {".notdef": 500, "space": 500}
    assert (font["hhea"].ascent, font["hhea"].descent) == (glyphless.ASCENT, glyphless.DESCENT)
    glyph = font["glyf"]["space"]
    glyph.recalcBounds(font["glyf"])
    assert (glyph.xMin, glyph.yMin, glyph.xMax, glyph.yMax) == (0, -200, 500, 800)  # a box for PDFium
    assert glyphless.truetype() == glyphless.truetype.__wrapped__()  # no timestamps: same checksum


def test_codes_are_utf16_in_the_bmp_and_one_surrogate_code_per_character_beyond() -> None:
    codes = glyphless.Codes()
    assert codes.encode("Aж中") == bytes.fromhex("0041 0436 4E2D")
    assert codes.encode("😀𠀋😀") == bytes.fromhex("D800 D801 D800")
    assert codes.astral == {0xD800: "😀", 0xD801: "𠀋"}


def test_a_full_table_writes_further_characters_as_the_replacement_character() -> None:
    codes = glyphless.Codes()
    emoji = [chr(0x1F000 + index) for index in range(2048)]
    written = [codes.code(char) for char in emoji]
    assert written[:2047] == list(range(0xD800, 0xDFFF))
    assert written[2047] == 0xDFFF
    assert glyphless.to_unicode_cmap(codes.astral).count(b"<DFFF> <FFFD>") == 1


def test_the_to_unicode_cmap_gives_back_the_table() -> None:
    codes = glyphless.Codes()
    codes.encode("a😀b𠀋")
    assert glyphless.astral_from_cmap(glyphless.to_unicode_cmap(codes.astral)) == codes.astral


def _pdf_with_text(content: bytes, astral: dict[int, str]) -> bytes:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [ 9 0 R ] /Count 1 >>"]
    objects += glyphless.font_objects(3, astral)
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [ 0 0 612 792 ] "
        b"/Resources << /Font << /GL 3 0 R >> >> /Contents 10 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
    ]
    return write_pdf(objects, root=1)


def test_text_in_the_font_paints_nothing_even_when_filled() -> None:
    """Render mode 0 (fill), not the layer's 3: the glyphs have no area, so a viewer that
    ignored the render mode would still show nothing."""
    codes = glyphless.Codes()
    text = codes.encode("Hello 😀 世界")
    pdf = _pdf_with_text(b"BT 0 Tr /GL 48 Tf 72 600 Td <%s> Tj ET" % text.hex().encode(), codes.astral)
    document = pdfium.PdfDocument(pdf)
    try:
        image = document[0].render(scale=2).to_pil().convert("L")
        assert image.getextrema() == (255, 255)
        assert document[0].get_textpage().get_text_bounded() == "Hello 😀 世界"
    finally:
        document.close()


def test_poppler_and_pdfminer_read_characters_beyond_the_bmp(tmp_path) -> None:
    import subprocess

    codes = glyphless.Codes()
    text = codes.encode("rare 𠀋 smile 😀")
    pdf = _pdf_with_text(b"BT 3 Tr /GL 24 Tf 72 600 Td <%s> Tj ET" % text.hex().encode(), codes.astral)
    (tmp_path / "a.pdf").write_bytes(pdf)
    poppler = subprocess.run(["pdftotext", str(tmp_path / "a.pdf"), "-"], capture_output=True, check=True)
    assert poppler.stdout.decode().strip() == "rare 𠀋 smile 😀"
    assert extract_text(io.BytesIO(pdf)).strip() == "rare 𠀋 smile 😀"


def test_the_cid_to_gid_map_sends_every_cid_to_glyph_one() -> None:
    body = glyphless.font_objects(1, {})[glyphless.CID_TO_GID]
    data = zlib.decompress(body.split(b"stream\n", 1)[1].rsplit(b"\nendstream", 1)[0])
    assert data == b"\x00\x01" * 65536
