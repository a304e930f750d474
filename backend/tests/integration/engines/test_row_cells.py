"""Rows that cross a wide gap without a leader read a row to a line: a table of contents' page
numbers, which tesseract read as a column of their own or dropped (app.engines._dropped), go at
the end of their titles (app.engines._row_cells), and a form's answers after their questions.
Lists in two columns, prose in two columns, prose beside a list and the pages the benchmark
reads are left as tesseract reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from app.engines._dropped import dropped_boxes
from app.engines._pages import open_pdf
from app.engines._row_cells import cells_on_rows
from app.engines._stacked import stacked_lines
from app.engines._table_rows import table_rows
from app.engines._tesseract_api import reader
from app.engines._tesseract_exec import words_to_text
from app.engines.tesseract import TesseractEngine, _render, _Rendered
from app.pdf.samples import DPI
from tests.corpus.forms import (
    checkbox_form_image,
    prose_beside_list_image,
    two_column_list_image,
    two_column_prose_image,
)
from tests.corpus.leaders import contents_image
from tests.integration.engines.scans import read_text
from tests.pdf_factories import cer


@pytest.mark.parametrize(
    ("seed", "points", "face"),
    [(1, 9.0, "serif"), (2, 10.0, "sans"), (4, 12.0, "sans"), (5, 13.0, "serif")],
)
def test_a_table_of_contents_without_leaders_is_read_a_title_and_its_number_a_line(
    tmp_path: Path, seed: int, points: float, face: str
) -> None:
    """As tesseract read them: at 10 points the 24 numbers as a column after the titles (23 %
    wrong); at 9, 12 and 13, only 2-4 of them, the rest dropped (12-13 % wrong, and no way to
    tell which page a title is on). ocrmypdf reads them the same."""
    page, text = contents_image(seed, points=points, face=face, style="none")
    read = read_text(page, tmp_path / "contents.pdf")
    assert cer(text, read) < 0.01
    assert sum(1 for line in read.splitlines() if re.fullmatch(r"\d+ .+ \d+", line)) >= 23


@pytest.mark.parametrize(
    ("seed", "points", "face", "style"),
    [(1, 9.0, "serif", "underline"), (4, 12.0, "sans", "midline"), (5, 13.0, "serif", "underline")],
)
def test_a_table_of_contents_with_ruled_leaders_keeps_its_numbers(
    tmp_path: Path, seed: int, points: float, face: str, style: str
) -> None:
    """A line drawn from each title to its number, at the letters' feet or across their middle:
    tesseract read 2-4 of the 24 numbers (12-13 % wrong), and what it dropped, taken with
    the rules, covered more than a tenth of the page, so was taken for a picture."""
    page, text = contents_image(seed, points=points, face=face, style=style)
    read = read_text(page, tmp_path / "contents.pdf")
    assert cer(text, read) < 0.01
    assert sum(1 for line in read.splitlines() if re.fullmatch(r"\d+ .+ \d+", line)) >= 23


def test_a_forms_answers_follow_their_questions(tmp_path: Path) -> None:
    """tesseract read the questions, then the 20 "Yes", then the 20 "No": 53 % wrong (ocrmypdf
    alike); now each question's line ends with its answers."""
    page, text = checkbox_form_image()
    read = read_text(page, tmp_path / "form.pdf")
    questions = {line.removesuffix(" \u2610 Yes \u2610 No") for line in text.splitlines()}
    rows = [line for line in read.splitlines() if any(line.startswith(question) for question in questions)]
    assert len(rows) == 20
    assert all(re.fullmatch(r".+\? .*Yes .*No", row) for row in rows), rows
    assert cer(text, read) < 0.2


@pytest.mark.parametrize(
    "make",
    [two_column_list_image, two_column_prose_image, prose_beside_list_image],
    ids=lambda make: make.__name__,
)
def test_lists_and_prose_in_columns_are_read_as_tesseract_reads_them(make: object, tmp_path: Path) -> None:
    """Nothing is moved; what is dropped and read again (a word "A" in the prose) is not a word."""
    page, _ = make()  # type: ignore[operator]
    page.save(path := tmp_path / "page.pdf", "PDF", resolution=DPI)
    with open_pdf(path.read_bytes()) as document:
        rendered = _render(document, 0, 1)  # what the engine reads
    assert isinstance(rendered, _Rendered)
    words = reader("eng").read(rendered.image, dpi=DPI)
    assert cells_on_rows(words) == words
    (read,) = TesseractEngine().recognize(path.read_bytes(), 1)
    assert read.text == words_to_text(words)


def test_nothing_is_dropped_or_moved_on_the_benchmarks_pages(plain_pages: dict[str, Image.Image]) -> None:
    """Nor read again down the margin (_stacked), nor put in rows as a table (_table_rows)."""
    for name, page in plain_pages.items():
        words = reader("eng").read(page, dpi=DPI)
        assert cells_on_rows(words) == words, name
        assert dropped_boxes(words, page, DPI) == [], name
        assert stacked_lines(words) == [], name
        assert table_rows(words) == words, name
