"""Word gaps drawn as character spacing read as word gaps (app.engines._glued_text): PDFium's
bounded text ran such words together ("ravenmusic"), and kept a space drawn inside a word whose
advance was taken back ("sn ow").

On the code before, every one of these pages came out with words run together.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.engines._glued_text import drawn_in_touching_pieces, unglued_text
from app.engines._page_chars import rect_count
from app.engines._pages import page_text
from app.engines.base import clean_page_text
from app.engines.text_layer import TextLayerEngine
from tests.corpus import columns, table_cells, word_gaps


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "build", [word_gaps.ghostscript_justified, word_gaps.tc_gaps], ids=["ghostscript", "written_directly"]
)
def test_every_word_gap_of_justified_prose_reads_as_one(
    tmp_path: Path, build: Callable[[Path, int], list[str]], seed: int
) -> None:
    path = tmp_path / "prose.pdf"
    lines = build(path, seed)
    document = pdfium.PdfDocument(path)
    try:
        textpage = document[0].get_textpage()
        stored = str(textpage.get_text_bounded())
        glued = [line for line in _lines(stored) if line not in lines]
        assert len(glued) >= 3  # PDFium's bounded text runs words together on several lines
        assert drawn_in_touching_pieces(textpage, stored, rect_count(textpage))
        assert _lines(page_text(document[0], 1)) == lines
    finally:
        document.close()


@pytest.mark.parametrize("seed", [0, 1])
def test_columns_stored_a_row_at_a_time_keep_their_word_gaps(tmp_path: Path, seed: int) -> None:
    """The column pass reads each column again: from the characters, when the page's text was
    put together from them (it read PDFium's bounded text, which ran the words together again)."""
    path = tmp_path / "columns.pdf"
    lines = word_gaps.tc_gap_columns(path, seed)
    document = pdfium.PdfDocument(path)
    try:
        assert _lines(page_text(document[0], 1)) == lines
    finally:
        document.close()


@pytest.mark.parametrize(("seed", "italic"), [(0, 0.1), (1, 0.1), (0, 0.5)])
def test_groff_prose_printed_by_ghostscript_reads_word_for_word(
    tmp_path: Path, seed: int, italic: float
) -> None:
    """Paragraphs typeset by groff itself, as a manual page is, have their words in order; half
    of them in italics too (each drawn apart: about a quarter of a row's pieces touch)."""
    path = tmp_path / "groff.pdf"
    words = word_gaps.groff_justified(path, seed, italic)
    document = pdfium.PdfDocument(path)
    try:
        stored = clean_page_text(str(document[0].get_textpage().get_text_bounded())).split()
        assert len([word for word in stored if word not in words]) >= 3  # words run together
        assert clean_page_text(page_text(document[0], 1)).split() == words
    finally:
        document.close()


@pytest.mark.parametrize("seed", [0, 1])
def test_small_capitals_keep_their_words_whole(tmp_path: Path, seed: int) -> None:
    """Chromium's small capitals are boxed by their ink, a third of their line's height: a word
    gap measured in a character's own height split them ("loc ke d"); it is measured in its row's."""
    path = tmp_path / "small-caps.pdf"
    words = word_gaps.chromium_small_caps(path, seed)
    document = pdfium.PdfDocument(path)
    try:
        textpage = document[0].get_textpage()
        assert drawn_in_touching_pieces(
            textpage, str(textpage.get_text_bounded()), rect_count(textpage)
        )  # read again
        assert [
            w for i in range(len(document)) for w in clean_page_text(page_text(document[i], i + 1)).split()
        ] == words
    finally:
        document.close()


def test_the_text_layer_engine_reads_ghostscript_prose_word_by_word(tmp_path: Path) -> None:
    path = tmp_path / "prose.pdf"
    lines = word_gaps.ghostscript_justified(path, 2)
    (page,) = TextLayerEngine().recognize(path.read_bytes(), 1)
    assert _lines(page.text) == lines


@pytest.mark.parametrize("spacing", [1.5, 2.5, 4.0])
def test_letter_spaced_text_put_together_again_keeps_its_words_whole(tmp_path: Path, spacing: float) -> None:
    """A gap is a word gap by how much wider it is than the row's usual gap between letters: a
    quarter of an em between every two letters is not a word gap."""
    path = tmp_path / "tracked.pdf"
    lines = word_gaps.tracked(path, 0, spacing)
    document = pdfium.PdfDocument(path)
    try:
        rebuilt = unglued_text(document[0].get_textpage(), document[0].get_bbox())
        assert _lines(rebuilt.text) == lines
        assert rebuilt.respaced == 0
    finally:
        document.close()


def test_pages_drawn_a_line_or_a_word_an_object_are_not_read_character_by_character(tmp_path: Path) -> None:
    """The cheap test turns away prose a line an object, prose a word an object, a table a cell
    an object and letter-spaced lines."""
    builds: list[Callable[[Path], object]] = [
        lambda p: columns.justified_prose(p),
        lambda p: columns.justified_words(p),
        lambda p: table_cells.cells_as_objects(p),
        lambda p: word_gaps.tracked(p),
    ]
    for number, build in enumerate(builds):
        path = tmp_path / f"{number}.pdf"
        build(path)
        document = pdfium.PdfDocument(path)
        try:
            textpage = document[0].get_textpage()
            assert not drawn_in_touching_pieces(
                textpage, str(textpage.get_text_bounded()), rect_count(textpage)
            ), number
        finally:
            document.close()
