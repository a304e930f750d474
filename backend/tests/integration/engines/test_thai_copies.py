"""A Thai syllable drawn in several glyphs, each mapped to the syllable's whole text, as Chromium
(Skia) writes it: PDFium read the syllable again after the next letter ("ที่ตั้งตั้ อยู่ใยู่" for
"ที่ตั้งอยู่"). The copy is drawn back over the syllable, and is left out
(app.engines._cluster_text); a syllable a word writes twice is drawn forwards, and kept."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Dictionary, Name

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine

# Codes of a Helvetica whose text map gives Thai: A is the syllable ตั้ (its consonant's glyph and
# its marks' glyph alike), E the syllable ยู่.
MAP = {"A": "ตั้", "B": "ง", "D": "อ", "E": "ยู่", "F": "ใ", "G": "น", "H": "นา"}
WIDTHS = {"A": 667, "B": 667, "D": 722, "E": 667, "F": 611, "G": 778, "H": 722}  # Helvetica's
# A, B, back into A, A again (its marks, set higher), on past B; D E F, back into E, E again, on
# past F; then G and the word นานา, its syllable written twice, drawn forwards.
SHOW = "[(AB) 1067] TJ 4 Ts (A) Tj 0 Ts [-345 (DEF) 1078] TJ 4 Ts (E) Tj 0 Ts [-411 (GHH)] TJ"
# A row below whose last cell, one character drawn apart, PDFium's bounded text runs into the cell
# before ("Part 1001"): the page is put together again from its characters (_glued_text), where a
# gap after a copy drawn back was measured from the copy, and made a word gap ("ตั้ง อยู่").
ROW = "BT /F2 12 Tf 72 650 Td (Part 100) Tj ET BT /F2 12 Tf 300 650 Td (1) Tj ET"
EXPECTED = ["ตั้งอยู่ในนานา", "Part 100 1"]


def _cmap() -> bytes:
    entries = "\n".join(
        f"<{ord(code):02X}> <{text.encode('utf-16-be').hex().upper()}>" for code, text in MAP.items()
    )
    return (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Thai def "
        "/CMapType 2 def 1 begincodespacerange <00> <FF> endcodespacerange "
        f"{len(MAP)} beginbfchar\n{entries}\nendbfchar endcmap "
        "CMapName currentdict /CMap defineresource pop end end"
    ).encode()


def _thai_pdf(path: Path) -> Path:
    pdf = pikepdf.new()
    first = ord("A")
    font = Dictionary(
        Type=Name.Font,
        Subtype=Name.Type1,
        BaseFont=Name.Helvetica,
        FirstChar=first,
        LastChar=ord("H"),
        Widths=[WIDTHS.get(chr(code), 0) for code in range(first, ord("H") + 1)],
        ToUnicode=pdf.make_stream(_cmap()),
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    plain = Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font, F2=plain))
    page.obj.Contents = pdf.make_stream(f"BT /F1 14 Tf 72 700 Td {SHOW} ET {ROW}".encode())
    pdf.save(path)
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_a_syllable_drawn_back_over_itself_is_read_once(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    (page,) = engine.recognize(_thai_pdf(tmp_path / "thai.pdf").read_bytes(), 1)
    assert page.source == "text-layer"
    assert [line.strip() for line in page.text.splitlines()] == EXPECTED
