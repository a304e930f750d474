"""Footnote marks set smaller and raised (app.engines._superscripts): PDFium ran a note's mark
into the note's first word ("1http://...", "bBook") and ended the line at a mark that ends a
sentence, its full stop on a line of its own ("language2" then ".")."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Dictionary, Name

from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine

# Each line: Helvetica at 10 (notes at 8), marks at 7 (6) raised by Ts; a subscript lowered.
CONTENT = b"""BT 0 Ts /F1 10 Tf 72 700 Td (The macros for the Piedmontese language) Tj
7 Tf 3.5 Ts (2) Tj 10 Tf 0 Ts (.) Tj ET
BT 0 Ts /F1 10 Tf 72 686 Td (Put the class file in your directory) Tj 7 Tf 3.5 Ts (3) Tj
10 Tf 0 Ts ( in order to compile it.) Tj ET
BT 0 Ts /F1 10 Tf 72 672 Td (Water is H) Tj 7 Tf -2 Ts (2) Tj 10 Tf 0 Ts (O and CO) Tj 7 Tf -2 Ts (2) Tj ET
BT 0 Ts /F1 10 Tf 72 658 Td (emissions of the 3rd edition.) Tj ET
BT 0 Ts /F1 10 Tf 72 644 Td (3rd edition notes.) Tj ET
BT 0 Ts /F1 6 Tf 72 102.5 Td (1) Tj 8 Tf -2.5 Ts (http://ctan.org/pkg/ednotes) Tj ET
BT 0 Ts /F1 6 Tf 72 92.5 Td (b) Tj 8 Tf -2.5 Ts (Book Report Article) Tj ET
BT 0 Ts /F1 6 Tf 72 82.5 Td (\\206) Tj 8 Tf -2.5 Ts (Corresponding author.) Tj ET
"""
EXPECTED = [
    "The macros for the Piedmontese language2.",
    "Put the class file in your directory3 in order to compile it.",
    "Water is H2O and CO2",  # a subscript ending a line is no mark: the next line stays its own
    "emissions of the 3rd edition.",
    "3rd edition notes.",  # a line starting with a number set as the text is: no mark
    "1 http://ctan.org/pkg/ednotes",
    "b Book Report Article",
    "\u2020 Corresponding author.",
]


def _notes_pdf(path: Path) -> Path:
    pdf = pikepdf.new()
    font = Dictionary(
        Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica, Encoding=Name.WinAnsiEncoding
    )
    page = pdf.add_blank_page(page_size=(612, 792))
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font))
    page.obj.Contents = pdf.make_stream(CONTENT)
    pdf.save(path)
    return path


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_footnote_marks_are_set_apart_and_their_lines_kept_whole(
    tmp_path: Path, engine: TextLayerEngine | AutoEngine
) -> None:
    (page,) = engine.recognize(_notes_pdf(tmp_path / "notes.pdf").read_bytes(), 1)
    assert page.source == "text-layer"
    assert page.text.splitlines() == EXPECTED
