"""A column of items stacked down the margin that tesseract read as vertical writing is read
again across (app.engines._stacked), through the engine and real tesseract; a label truly set
up the margin is read as tesseract reads it (the pages the benchmark reads: test_row_cells)."""

from __future__ import annotations

from pathlib import Path

from app.engines._stacked import stacked_lines
from app.engines._tesseract_api import reader
from app.pdf.samples import DPI
from tests.corpus.margins import margin_label_image, pleading_image
from tests.integration.engines.scans import read_text
from tests.pdf_factories import cer


def test_a_pleadings_line_numbers_are_read_every_one(tmp_path: Path) -> None:
    """As tesseract read them: "ON DH FF WwW NY" (confidence 0-68) for the numbers 2 to 7, and
    nothing for the other 22."""
    page, text = pleading_image()
    words = reader("eng").read(page, dpi=DPI)
    assert len(stacked_lines(words)) == 1  # the page as the test means it: tesseract reads it so
    read = read_text(page, tmp_path / "pleading.pdf")
    assert read.splitlines()[:28] == [str(number) for number in range(1, 29)]
    assert cer(text, read) < 0.01


def test_a_label_set_up_the_margin_is_read_as_vertical_writing(tmp_path: Path) -> None:
    """tesseract reads it well turned (confidence 95 or so): read again across, it is not."""
    page, text = margin_label_image()
    words = reader("eng").read(page, dpi=DPI)
    assert len(stacked_lines(words)) == 1
    read = read_text(page, tmp_path / "label.pdf")
    assert read.splitlines()[0] == text.splitlines()[0]
    assert cer(text, read) < 0.01
