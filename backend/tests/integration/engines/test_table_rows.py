"""Tables without rules read a row to a line (app.engines._table_rows), through the engine and
real tesseract; lists and prose set in columns are left as tesseract reads them (a list and
prose in two columns, and the pages the benchmark reads, in test_row_cells)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.engines._pages import open_pdf
from app.engines._row_cells import cells_on_rows
from app.engines._table_rows import table_rows
from app.engines._tesseract_api import reader
from app.engines.tesseract import _render, _Rendered
from app.pdf.samples import DPI
from tests.corpus.tables import (
    PAYEES,
    account_details_image,
    bank_statement_image,
    prose_columns_image,
    sidebar_image,
    word_columns_image,
    wrapped_table_image,
)
from tests.integration.engines.scans import read_text
from tests.pdf_factories import cer


def _rows_read(text: str, read: str) -> int:
    """How many of text's lines are lines of read, as they are."""
    lines = set(read.splitlines())
    return sum(1 for line in text.splitlines() if line in lines)


@pytest.mark.parametrize(("points", "face"), [(9.0, "sans"), (10.0, "serif")])
def test_a_bank_statement_is_read_a_row_to_a_line(tmp_path: Path, points: float, face: str) -> None:
    """As tesseract read them: the dates, then the payees, then the balances, 68 % of the page
    wrong at 9 points (ocrmypdf 73 %); at 10 points the dates apart from the rest, 32 %."""
    page, text = bank_statement_image(points=points, face=face)
    read = read_text(page, tmp_path / "statement.pdf")
    assert cer(text, read) < 0.01
    assert _rows_read(text, read) >= 24  # of 25, the header with them


def test_a_scanned_statement_is_read_a_row_to_a_line(tmp_path: Path, bench_samples: ModuleType) -> None:
    """Through the benchmark's economy scanner (tilted up to 0.7 degrees, blurred, specks):
    69 % wrong as tesseract read it; what is left is its misreading of a few figures."""
    page, text = bank_statement_image()
    read = read_text(bench_samples.degrade_scan(page, 1), tmp_path / "statement.pdf")
    assert cer(text, read) < 0.04
    rows = [line for line in read.splitlines() if re.search(rf"\S\S Mar ({'|'.join(PAYEES)}) ", line)]
    assert len(rows) == 24, read  # each date, its payee and its figures on one line


def test_a_tables_wrapped_cells_follow_their_rows(tmp_path: Path) -> None:
    """tesseract read the references, then the descriptions, then the amounts: 30 % wrong
    (ocrmypdf alike)."""
    page, text = wrapped_table_image()
    read = read_text(page, tmp_path / "wrapped.pdf")
    assert cer(text, read) < 0.01
    assert _rows_read(text, read) >= 23  # of 25


def test_an_accounts_labels_and_values_are_read_a_pair_to_a_line(tmp_path: Path) -> None:
    """tesseract read the labels, then the values: 62 % wrong (ocrmypdf alike)."""
    page, text = account_details_image()
    read = read_text(page, tmp_path / "details.pdf")
    assert cer(text, read) < 0.01
    assert _rows_read(text, read) == 8


@pytest.mark.parametrize(
    "make",
    [word_columns_image, sidebar_image, prose_columns_image],
    ids=lambda make: make.__name__,
)
def test_lists_and_prose_in_columns_are_not_tables(
    make: Callable[[], tuple[Image.Image, str]], tmp_path: Path
) -> None:
    page, _ = make()
    page.save(path := tmp_path / "page.pdf", "PDF", resolution=DPI)
    with open_pdf(path.read_bytes()) as document:
        rendered = _render(document, 0, 1)  # what the engine reads
    assert isinstance(rendered, _Rendered)
    words = cells_on_rows(reader("eng").read(rendered.image, dpi=DPI))
    assert table_rows(words) == words
