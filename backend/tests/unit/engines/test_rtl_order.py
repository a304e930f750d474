"""A line stored in visual order, read back in reading order (app.engines._rtl_order).

Each line here is given as it is drawn, left to right, one character a point wide; what comes
back is the order a reader reads it in, as the Unicode bidirectional algorithm displays it."""

# ruff: noqa: RUF001 - Hebrew letters that look like Latin ones are the point of these lines

from __future__ import annotations

import unicodedata

import pytest

from app.engines._page_chars import PageChar, stored_text
from app.engines._rtl_order import _misordered, _reading, _stored_visually, may_have_rtl


def drawn(visual: str) -> list[PageChar]:
    """Characters at increasing x, as a producer that stores visual order stores them."""
    return [
        PageChar(char, float(x), 0.0, char == " ", unicodedata.bidirectional(char))
        for x, char in enumerate(visual)
    ]


@pytest.mark.parametrize(
    ("visual", "reading"),
    [
        ("םולש", "שלום"),
        ("יאמב 15 םויב", "ביום 15 במאי"),  # a number keeps its digits' order
        ("ACME 15 םולש", "שלום ACME 15"),  # a left-to-right run (letters, then its number) stays whole
        ("Signed by מעב הרבח Ltd", "Signed by חברה בעמ Ltd"),  # mostly left to right: the Hebrew run turns
    ],
)
def test_a_line_drawn_left_to_right_is_read_as_displayed(visual: str, reading: str) -> None:
    line = drawn(visual)
    assert _stored_visually(line)
    assert _reading(line) == reading


def test_a_line_stored_in_reading_order_is_left_as_it_is() -> None:
    """Each letter left of the one before: reading order already (PDFium's text stands)."""
    line = [
        PageChar(char, float(-x), 0.0, char == " ", unicodedata.bidirectional(char))
        for x, char in enumerate("שלום עולם")
    ]
    assert not _stored_visually(line)


def test_a_combining_mark_stays_with_its_letter() -> None:
    """Points (niqqud) have their letter's box; they follow it in reading order."""
    line = drawn("םולש")
    line[3] = PageChar("ש\u05c1", 3.0, 0.0, False, "R")  # shin with its shin dot, as page_lines joins them
    assert _reading(line) == "ש\u05c1לום"


def test_only_pages_with_right_to_left_letters_are_looked_at() -> None:
    assert may_have_rtl("Contract שלום")
    assert may_have_rtl("وقع")
    assert not may_have_rtl("Plain English, Ελληνικά, Русский, 日本語")


def stored(words: list[tuple[str, float, bool]]) -> list[PageChar]:
    """A line in stored order: each word as drawn (left to right) at its left side's x, stored
    rightwards (in the order drawn) or leftwards (right to left), with a space PDFium made after."""
    line: list[PageChar] = []
    for drawn_word, left, rightwards in words:
        places = list(enumerate(drawn_word))
        for x, char in places if rightwards else places[::-1]:
            line.append(PageChar(char, left + x, 0.0, False, unicodedata.bidirectional(char)))
        line.append(PageChar(" ", 0.0, 0.0, True, "WS"))
    return line[:-1]


# "בשם Linux Mint גרסה" as displayed: "הסרג Linux Mint םשב", left to right.
HEBREW_WITH_NAME = [("םשב", 16, False), ("Mint", 11, True), ("Linux", 5, True), ("הסרג", 0, False)]


def test_a_run_of_left_to_right_words_turned_round_is_put_back() -> None:
    """PDFium orders a right-to-left line by turning it, and a run of English words with spaces
    between turns with it: "בשם Mint Linux גרסה". Where the words stand says the order."""
    line = stored(HEBREW_WITH_NAME)
    assert stored_text(line) == "בשם Mint Linux גרסה"
    assert not _stored_visually(line)
    assert _misordered(line)
    assert _reading(line) == "בשם Linux Mint גרסה"


def test_a_run_of_left_to_right_words_in_order_is_left_as_it_is() -> None:
    in_order = [HEBREW_WITH_NAME[0], HEBREW_WITH_NAME[2], HEBREW_WITH_NAME[1], HEBREW_WITH_NAME[3]]
    line = stored(in_order)
    assert stored_text(line) == "בשם Linux Mint גרסה"
    assert not _misordered(line)


def test_an_english_line_turning_back_for_a_new_line_is_not_misordered() -> None:
    """Words of a line without right-to-left letters are never taken for a turned run."""
    assert not _misordered(stored([("Mint", 11, True), ("Linux", 5, True)]))


def test_one_word_stored_in_visual_order_among_words_that_are_not() -> None:
    """Chromium stores some Arabic words of a line as drawn and others as read: most of the
    line's letter pairs run leftwards, so the line is not taken as stored visually, but one word
    read as stored would be backwards."""
    line = stored([("سيئر", 12, False), ("قيرف", 6, False), ("لوأ", 0, True)])
    assert stored_text(line) == "رئيس فريق لوأ"
    assert not _stored_visually(line)
    assert _misordered(line)
    assert _reading(line) == "رئيس فريق أول"
