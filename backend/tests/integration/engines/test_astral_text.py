"""Characters past U+FFFF (mathematical italic letters, emoji) in a text layer: PDFium counts each
as one character and writes it as two UTF-16 units, so a buffer of its count lost as many
characters off the end of the page's text (app.engines._page_chars.bounded_text)."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine

LAST_LINE = "Copyright 2022 by ASME"


def _math_pdf(path: Path, letters: int) -> Path:
    """A page whose first line has `letters` mathematical italic x's (U+1D465, named by glyph, as
    TeX's math fonts name theirs) and whose last line is LAST_LINE."""
    pdf = pikepdf.new()
    encoding = Dictionary(
        Type=Name.Encoding, BaseEncoding=Name.WinAnsiEncoding, Differences=Array([126, Name("/u1D465")])
    )
    font = Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica, Encoding=encoding)
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font))
    first = b"Let " + b" ".join(b"~" * 3 for _ in range(letters // 3)) + b" be given"
    page.obj.Contents = pdf.make_stream(
        b"BT /F1 11 Tf 72 700 Td (" + first + b") Tj 0 -20 Td (" + LAST_LINE.encode() + b") Tj ET"
    )
    pdf.save(path)
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_the_end_of_a_page_with_letters_past_the_basic_plane_is_kept(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    pdf = _math_pdf(tmp_path / "math.pdf", letters=24)
    (page,) = engine.recognize(pdf.read_bytes(), 1)
    assert page.source == "text-layer"
    lines = page.text.splitlines()
    assert lines[0] == "Let " + " ".join(["\U0001d465" * 3] * 8) + " be given"
    assert lines[-1] == LAST_LINE  # it was lost: the text came 24 units short, one per x
