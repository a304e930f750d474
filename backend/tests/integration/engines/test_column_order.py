"""Columns of prose stored a row at a time are read column by column (app.engines._column_order);
pages whose lines have gaps for other reasons (tables, forms, terms and their text) keep PDFium's
order, a row at a time.

On the code before, every layout in tests.corpus.columns came out a row at a time: the first
line of each column, then the second of each ("Findings ... Her brother ... the water ...").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.engines._column_order import may_have_columns
from app.engines._page_chars import rect_count
from app.engines._pages import page_text
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from tests.corpus import columns


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _read(path: Path) -> str:
    document = pdfium.PdfDocument(path)
    try:
        return page_text(document[0], 1)
    finally:
        document.close()


def _stored_order(path: Path) -> str:
    """PDFium's own text of the page: its stored order, a row at a time."""
    document = pdfium.PdfDocument(path)
    try:
        textpage = document[0].get_textpage()
        return str(textpage.get_text_bounded())
    finally:
        document.close()


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("layout", sorted(columns.COLUMNS))
def test_columns_stored_a_row_at_a_time_are_read_column_by_column(
    tmp_path: Path, layout: str, seed: int
) -> None:
    path = tmp_path / f"{layout}.pdf"
    expected = columns.COLUMNS[layout](path, seed)
    assert _lines(_stored_order(path)) != expected.splitlines()  # PDFium's order is a row at a time
    text = _read(path)
    assert _lines(text) == expected.splitlines()
    assert not [line for line in text.splitlines() if line.endswith(" ")]  # no space left from the row


@pytest.mark.parametrize(
    "build",
    [lambda p: columns.table(p), lambda p: columns.form(p), lambda p: columns.key_values(p)],
    ids=["table", "form", "key_values"],
)
def test_rows_with_gaps_that_are_not_columns_are_read_a_row_at_a_time(
    tmp_path: Path, build: Callable[[Path], list[str]]
) -> None:
    path = tmp_path / "rows.pdf"
    rows = build(path)
    assert _lines(_read(path)) == rows  # each row on its own line, whole


def test_prose_stored_column_by_column_is_not_measured_again(tmp_path: Path) -> None:
    """PDFium's order is the reading order; the cheap test turns such pages away (no rectangle
    is read), as it does a page of one justified column, each word drawn on its own."""
    builds: list[Callable[[Path], str]] = [
        lambda p: columns.two_columns(p, by_column=True),
        lambda p: columns.justified_prose(p),
    ]
    for number, build in enumerate(builds):
        path = tmp_path / f"{number}.pdf"
        expected = build(path)
        document = pdfium.PdfDocument(path)
        try:
            textpage = document[0].get_textpage()
            assert not may_have_columns(textpage, str(textpage.get_text_bounded()), rect_count(textpage))
            assert _lines(page_text(document[0], 1)) == expected.splitlines()
        finally:
            document.close()


@pytest.mark.parametrize("engine", [TextLayerEngine(), AutoEngine()], ids=["text-layer", "auto"])
def test_the_engines_read_the_columns_in_order(tmp_path: Path, engine: object) -> None:
    path = tmp_path / "titled.pdf"
    expected = columns.titled_with_footnote(path, 3)
    (page,) = engine.recognize(path.read_bytes(), 1)  # type: ignore[attr-defined]
    assert page.source == "text-layer"
    assert _lines(page.text) == expected.splitlines()
