"""A one-character cell drawn apart from the cell before it reads as its own word
(app.engines._glued_rows): PDFium's bounded text ran the two together ("Part 1001", "6.00X").

On the code before, every row of these tables but the header came out with its cells run
together where a quantity or a tick is one character.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.engines._glued_text import may_be_glued
from app.engines._pages import page_text
from app.engines.text_layer import TextLayerEngine
from tests.corpus import columns, table_cells


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "build", [table_cells.cells_as_objects, table_cells.cells_moved_to], ids=["objects", "moved_to"]
)
def test_each_cell_of_a_row_reads_as_its_own_word(
    tmp_path: Path, build: Callable[[Path, int], list[str]], seed: int
) -> None:
    path = tmp_path / "table.pdf"
    rows = build(path, seed)
    document = pdfium.PdfDocument(path)
    try:
        stored = str(document[0].get_textpage().get_text_bounded())
        assert _lines(stored) != rows  # PDFium's bounded text runs cells together
        assert _lines(page_text(document[0], 1)) == rows
    finally:
        document.close()


def test_the_text_layer_engine_reads_each_cell(tmp_path: Path) -> None:
    path = tmp_path / "table.pdf"
    rows = table_cells.cells_moved_to(path, 2)
    (page,) = TextLayerEngine().recognize(path.read_bytes(), 1)
    assert _lines(page.text) == rows


def test_pages_whose_bounded_text_is_whole_are_not_read_again(tmp_path: Path) -> None:
    """The test is a count: prose, columns and a table of longer cells keep PDFium's bounded
    text as it is."""
    builds: list[Callable[[Path], object]] = [
        lambda p: columns.justified_prose(p),
        lambda p: columns.two_columns(p),
        lambda p: columns.key_values(p),
    ]
    for number, build in enumerate(builds):
        path = tmp_path / f"{number}.pdf"
        build(path)
        document = pdfium.PdfDocument(path)
        try:
            textpage = document[0].get_textpage()
            assert not may_be_glued(textpage, str(textpage.get_text_bounded()))
        finally:
            document.close()
