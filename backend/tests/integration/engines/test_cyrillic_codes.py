"""Russian in a font whose codes are Windows-1251's and which maps none to Unicode (TeX's T2A
fonts as dvips makes them): PDFium gives the codes as Latin-1, "Ïðåäèñëîâèå" for
"Предисловие", and the page went to OCR in the document's language, which read gibberish."""

from __future__ import annotations

# ruff: noqa: RUF001 - Cyrillic letters that look like Latin ones are the point of a Russian text
from pathlib import Path

import pytest

from app.engines._cyrillic_codes import with_cyrillic_codes
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from tests.integration.engines.test_tex_ligatures import type3_pdf

RUSSIAN = [
    "Предисловие",
    "Глава 6 содержит потенциально опасные сведения о том, как менять",
    "стандартный макет документа LaTeX 2e. Ёлка и ещё чуть-чуть.",
]


def _t2a_pdf(path: Path, lines: list[str]) -> Path:
    """The lines drawn at their Windows-1251 codes in a Type 3 font of 256 glyphs with no Unicode map."""
    return type3_pdf(path, [line.encode("cp1251") for line in lines], glyphs=256)


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
