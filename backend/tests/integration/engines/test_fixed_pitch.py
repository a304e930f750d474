"""A code listing set in fixed columns reads as its code, not a character at a time
(app.engines._glued_text._join_fixed_pitch); cells a fixed step apart but far apart stay apart."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.engines._pages import page_text
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from tests.corpus.listings import LISTING, calendar_row, fixed_column_listing


def _lines(path: Path) -> list[str]:
    document = pdfium.PdfDocument(path)
    try:
        return [line.strip() for line in page_text(document[0], 1).split("\n")]
    finally:
        document.close()


@pytest.mark.parametrize("step", [60, 128])
def test_a_listing_in_fixed_columns_reads_as_its_code(tmp_path: Path, step: int) -> None:
    """Words of one to six characters, digits, brackets and operators, and the listing's own
    spaces (a whole column each) kept."""
    path = tmp_path / "listing.pdf"
    fixed_column_listing(path, step=step)
    assert _lines(path) == list(LISTING)


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_the_engines_read_it(tmp_path: Path, engine: TextLayerEngine | AutoEngine) -> None:
    path = tmp_path / "listing.pdf"
    fixed_column_listing(path)
    (page,) = engine.recognize(path.read_bytes(), 1)
    assert (page.source, [line.strip() for line in page.text.split("\n")]) == ("text-layer", list(LISTING))


def test_cells_a_fixed_step_apart_and_far_apart_stay_apart(tmp_path: Path) -> None:
    path = tmp_path / "calendar.pdf"
    cells = calendar_row(path)
    assert _lines(path) == [cells]
