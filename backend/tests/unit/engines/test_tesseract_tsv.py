"""Reading tesseract's TSV: words per page, text rebuilt with tesseract's line and paragraph breaks."""

from __future__ import annotations

import pytest

from app.engines._tesseract_exec import tsv_words, words_to_text
from app.engines.errors import TesseractFailedError

HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"


def row(
    level: int,
    page: int,
    block: int = 0,
    par: int = 0,
    line: int = 0,
    word: int = 0,
    conf: float = -1,
    text: str = "",
) -> str:
    return f"{level}\t{page}\t{block}\t{par}\t{line}\t{word}\t10\t20\t30\t40\t{conf}\t{text}"


TWO_PAGES = "\n".join(
    [
        HEADER,
        row(1, 1),
        row(5, 1, 1, 1, 1, 1, 96.5, "Hello"),
        row(5, 1, 1, 1, 1, 2, 91.0, 'world,"quoted"'),
        row(5, 1, 1, 1, 2, 1, 88.0, "again"),
        row(5, 1, 1, 2, 1, 1, 90.0, "New"),
        row(5, 1, 1, 2, 1, 2, 90.0, "   "),  # blank words are dropped
        row(5, 1, 2, 1, 1, 1, 90.0, "Block"),
        row(1, 2),
        row(5, 2, 1, 1, 1, 1, -1, "odd"),  # a negative confidence reads as 0
    ]
)


def test_words_per_page_and_text() -> None:
    first, second = tsv_words(TWO_PAGES, 2)
    assert [w.text for w in first] == ["Hello", 'world,"quoted"', "again", "New", "Block"]
    assert words_to_text(first) == 'Hello world,"quoted"\nagain\n\nNew\n\nBlock'
    assert first[0].confidence == 96.5
    assert (first[0].left, first[0].top, first[0].width, first[0].height) == (10, 20, 30, 40)
    assert [(w.text, w.confidence) for w in second] == [("odd", 0.0)]


def test_a_page_without_words_is_still_a_page() -> None:
    assert tsv_words("\n".join([HEADER, row(1, 1)]), 1) == [[]]


def test_missing_pages_are_an_error() -> None:
    with pytest.raises(TesseractFailedError):
        tsv_words("\n".join([HEADER, row(1, 1)]), 2)
