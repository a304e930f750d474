"""A line tesseract read as vertical writing down a column of stacked items is found, the strip
down the page around it is what is read again, and the new reading takes its place only when
it is more confident (app.engines._stacked)."""

from __future__ import annotations

from app.engines._stacked import replaced, stacked_lines, strip_of
from app.engines._tesseract_exec import TsvWord, words_to_text


def _prose() -> list[TsvWord]:
    """Six lines of prose, 40 pixels tall, from 450 pixels in."""
    return [
        TsvWord(2, 1, row + 1, word, 95.0, 450 + 200 * index, 300 + 90 * row, 180, 40)
        for row in range(6)
        for index, word in enumerate(("the", "contract", "was", "signed"))
    ]


def _vertical() -> list[TsvWord]:
    """What tesseract made of numbers stacked in the margin: one line, 40 wide and 500 tall."""
    return [
        TsvWord(1, 1, 1, "ON", 0.0, 300, 700, 40, 100),
        TsvWord(1, 1, 1, "DH", 47.0, 300, 550, 40, 120),
        TsvWord(1, 1, 1, "NY", 22.0, 300, 300, 40, 100),
    ]


def test_a_tall_narrow_line_is_stacked_and_lines_of_prose_are_not() -> None:
    words = _vertical() + _prose()
    (line,) = stacked_lines(words)
    assert line.key == (1, 1, 1)
    assert stacked_lines(_prose()) == []


def test_a_line_short_of_three_usual_lines_is_not_stacked() -> None:
    """A word as tall as two lines (a drop capital) is not a column."""
    words = [TsvWord(1, 1, 1, "T", 90.0, 300, 300, 40, 100), *_prose()]
    assert stacked_lines(words) == []


def test_the_strip_runs_down_the_page_a_usual_line_either_side_and_blanks_the_rest() -> None:
    words = _vertical() + _prose()
    (line,) = stacked_lines(words)
    box, others = strip_of(line, words, (2550, 3300))
    assert box == (260, 0, 380, 3300)
    assert others == _prose()


def test_a_more_confident_reading_takes_the_lines_place() -> None:
    numbers = [TsvWord(9, 1, row + 1, str(row + 2), 93.0, 310, 300 + 90 * row, 20, 40) for row in range(6)]
    words = _vertical() + _prose()
    (line,) = stacked_lines(words)
    out = replaced(words, line, numbers)
    assert out == numbers + _prose()
    assert words_to_text(out).startswith("2\n3\n4\n5\n6\n7\n\nthe contract")


def test_a_less_confident_reading_or_none_leaves_the_line() -> None:
    """A label truly set up the margin reads well turned, and badly across."""
    label = [
        TsvWord(1, 1, 1, word, 96.0, 300, 300 + 300 * index, 40, 250)
        for index, word in enumerate(("Downloaded", "from", "the"))
    ]
    words = label + _prose()
    (line,) = stacked_lines(words)
    across = [TsvWord(9, 1, 1, "Dow", 61.0, 300, 300, 40, 40)]
    assert replaced(words, line, across) == words
    assert replaced(words, line, []) == words
