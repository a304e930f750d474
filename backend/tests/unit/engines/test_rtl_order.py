"""A line stored in visual order, read back in reading order (app.engines._rtl_order).

Each line here is given as it is drawn, left to right, one character a point wide; what comes
back is the order a reader reads it in, as the Unicode bidirectional algorithm displays it."""

# ruff: noqa: RUF001 - Hebrew letters that look like Latin ones are the point of these lines

from __future__ import annotations

import unicodedata

import pytest

from app.engines._page_chars import PageChar
from app.engines._rtl_order import _reading, _stored_visually, may_have_rtl


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
