"""Letter-spaced words read as words (app.engines._letter_spacing): PDFium's bounded text, and
pdftotext, spaced them out letter by letter ("A i r P o l l u t i o n"); single-letter words
and one-character cells stay apart.

On the code before, every letter-spaced page here came out spaced out.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.engines._letter_spacing import may_be_letter_spaced
from app.engines._pages import page_text
from app.engines.auto import AutoEngine
from app.engines.text_layer import TextLayerEngine
from tests.corpus import letter_spacing
from tests.corpus.word_gaps import font_page, pdf_string


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _read(path: Path) -> tuple[str, str]:
    """The page's text (page_text) and PDFium's bounded text."""
    document = pdfium.PdfDocument(path)
    try:
        return page_text(document[0], 1), str(document[0].get_textpage().get_text_bounded())
    finally:
        document.close()


@pytest.mark.parametrize(("seed", "spacing"), [(0, 0.25), (1, 0.3), (2, 0.5), (3, 0.8)])
def test_letter_spaced_headings_and_a_phrase_in_a_paragraph_printed_by_chromium_read_as_words(
    tmp_path: Path, seed: int, spacing: float
) -> None:
    """A heading of several words, a one-word heading in capitals on its own row, a phrase inside
    a justified paragraph (it may wrap, leaving a short word alone on a row); the paragraphs
    around them have runs of single-letter words, which stay apart."""
    path = tmp_path / "tracked.pdf"
    words = letter_spacing.chromium_tracked(path, seed, spacing)
    text, stored = _read(path)
    assert may_be_letter_spaced(stored)
    assert len(stored.split()) > len(words) + 20  # PDFium spaced the letters out
    assert text.split() == words


@pytest.mark.parametrize("spaces_drawn", [True, False], ids=["spaces_drawn", "word_gap_an_offset"])
@pytest.mark.parametrize(("seed", "tracking"), [(0, 200), (1, 350), (2, 600)])
def test_lines_tracked_by_an_offset_after_every_character_read_line_for_line(
    tmp_path: Path, seed: int, tracking: float, spaces_drawn: bool
) -> None:
    """Tracking a fifth of an em and more, at 16, 12 and 10 points, a word gap drawn as a space
    or left to a wider offset; the last line of the tracked paragraph may be one word with its
    full stop ("years.")."""
    path = tmp_path / "tracked.pdf"
    lines = letter_spacing.tj_tracked(path, seed, tracking, spaces_drawn)
    text, stored = _read(path)
    spaced_out = [line for line in _lines(stored) if line not in lines]
    assert len(spaced_out) >= 3
    assert _lines(text) == lines


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_letter_words_and_one_character_cells_stay_apart(tmp_path: Path, seed: int) -> None:
    """Prose drawn a word at a time with runs of single-letter words ("sets a e k r"), which
    sends the page to be read character by character, and table rows of one-character cells an
    em and more apart: nothing is joined."""
    path = tmp_path / "words.pdf"
    lines = letter_spacing.positioned_words(path, seed)
    text, stored = _read(path)
    assert may_be_letter_spaced(stored)
    assert _lines(text) == lines


def test_the_engines_read_letter_spaced_text_as_words(tmp_path: Path) -> None:
    path = tmp_path / "tracked.pdf"
    lines = letter_spacing.tj_tracked(path, 4, 300)
    for engine in (TextLayerEngine(), AutoEngine()):
        (page,) = engine.recognize(path.read_bytes(), 1)
        assert _lines(page.text) == lines, type(engine).__name__


@pytest.mark.parametrize(
    ("text", "spaced"),
    [
        ("A i r P o l l u t i o n", True),
        ("C O N T E N T S\r\nIntroduction", True),
        ("sets a b c d here", True),  # found, then read: single-letter words stay apart
        ("the sets a b c here", False),
        ("for (i = 0 ; i < n ; i ++)", False),
        ("x + y = z and a - b", False),
        ("Plain prose, with words of every length: a, I, an, is, to.", False),
    ],
)
def test_pages_that_may_have_letter_spacing_are_found_by_their_text(text: str, spaced: bool) -> None:
    assert may_be_letter_spaced(text) is spaced


def test_words_next_to_a_letter_spaced_heading_stay_apart(tmp_path: Path) -> None:
    """What a probe found joined on an earlier version: after a letter-spaced heading tracked
    about a word space, at body size, a line starting with single-letter words, one-digit cells
    after a label, an equation, all drawn a word at a time (as TeX and Chromium draw them)."""
    space = 278  # Helvetica's, thousandths of an em
    lines = ["a b are the cases.", "Dan 1 0 1 1", "we have x + y = z here.", "I A M not here"]
    content = [
        "BT",
        f"/F1 10 Tf 1 0 0 1 72 740 Tm {letter_spacing.tracked_tj('NOTES AND CASES', 280, False)}",
    ]
    for number, line in enumerate(lines):
        words = " ".join(pdf_string(word) for word in line.split()).replace(") (", f") -{space} (")
        content.append(f"1 0 0 1 72 {722 - 16 * number} Tm [{words}] TJ")
    content.append("ET")
    font_page(content, tmp_path / "page.pdf")
    text, stored = _read(tmp_path / "page.pdf")
    assert "N O T E S" in stored
    assert _lines(text) == ["NOTES AND CASES", *lines]
