"""Russian in a font whose codes are Windows-1251's and which maps none to Unicode (TeX's T2A
fonts as dvips makes them): PDFium gives the codes as Latin-1, "Ïðåäèñëîâèå" for
"Предисловие", and the page went to OCR in the document's language, which read gibberish."""

from __future__ import annotations

# ruff: noqa: RUF001 - Cyrillic letters that look like Latin ones are the point of a Russian text
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name

from app.engines._cyrillic_codes import with_cyrillic_codes
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine

RUSSIAN = [
    "Предисловие",
    "Глава 6 содержит потенциально опасные сведения о том, как менять",
    "стандартный макет документа LaTeX 2e. Ёлка и ещё чуть-чуть.",
]


def _t2a_pdf(path: Path, lines: list[str]) -> Path:
    """A page of lines in a Type 3 font of 256 box glyphs named /g0 to /g255 (no ToUnicode), each
    line's characters drawn at their Windows-1251 codes."""
    pdf = pikepdf.new()
    procs = Dictionary(
        {f"/g{code}": pdf.make_stream(b"500 0 0 0 420 640 d1 40 0 380 640 re f") for code in range(256)}
    )
    procs[Name("/g32")] = pdf.make_stream(b"500 0 d0")
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=[0, 0, 500, 700],
            FontMatrix=[0.001, 0, 0, 0.001, 0, 0],
            CharProcs=procs,
            Encoding=Dictionary(
                Type=Name.Encoding, Differences=Array([0, *(Name(f"/g{c}") for c in range(256))])
            ),
            FirstChar=0,
            LastChar=255,
            Widths=[500] * 256,
            Resources=Dictionary(),
        )
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = Dictionary(Font=Dictionary(T3=font))
    shown = b"".join(b"<" + line.encode("cp1251").hex().encode() + b"> Tj T*\n" for line in lines)
    page.obj.Contents = pdf.make_stream(b"BT /T3 9 Tf 12 TL 40 740 Td\n" + shown + b"ET\n")
    pdf.save(path)
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_russian_drawn_at_windows_1251_codes_is_read_as_russian(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    (page,) = engine.recognize(_t2a_pdf(tmp_path / "t2a.pdf", RUSSIAN).read_bytes(), 1)
    assert page.source == "text-layer"  # auto read it from the layer, not OCR in English
    assert page.text.splitlines() == RUSSIAN


@pytest.mark.parametrize(
    "text",
    [
        "Les élèves étudient à l'école près de la forêt, où il fait très beau en été.",
        "Ærøskøbing på Ærø: Ægir og Åse så én ørn over Øresund.",
        "Größe, Übermaß und Äpfel: Österreichs Bäume blühen früh.",
        "Éé",  # a few letters prove nothing
    ],
)
def test_latin_text_with_accents_is_left_as_it_is(text: str) -> None:
    assert with_cyrillic_codes(text) == text
