"""A page's characters as PDFium's text page holds them, each with where it is, line by line, for
the passes that rebuild a line's order from where its characters are (_rtl_order, and
_vertical_order for columns of vertical writing); and its text rectangles (one for each run of a
text object's characters), for the passes that first ask whether a page needs them."""

from __future__ import annotations

import ctypes
import math
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

BREAKS = frozenset({"\r", "\n"})
Bounds = tuple[float, float, float, float]  # left, bottom, right, top
_MARKS = frozenset({"NSM"})
_LEVEL = 0.05  # radians (about 3 degrees) from level
# Of a row's character height (ascent to descent): a gap between two characters this much wider
# than the row's usual gap between letters is a gap between words (_glued_text, _letter_spacing).
WORD_GAP = 0.15
# PDFium's mark where it joined a word broken across lines at a hyphen: U+0002 in its bounded text
# and its characters one by one (FPDFText_GetUnicode), U+FFFE in its whole text (FPDFText_GetText),
# which a U+FFFE the page draws (a broken ToUnicode map's) is everywhere else. whole_text, and
# char_codes from it, give the mark as U+0002.
HYPHEN_MARK = 0x02
_HYPHEN_CODE = 0xFFFE
_PASSED_OVER = 200  # characters of PDFium's not in the text (outside the page's box) at most


def bounded_text(textpage: pdfium.PdfTextPage, bounds: Bounds | None = None) -> str:
    """The text inside bounds (left, bottom, right, top; None: the page's box), as pypdfium2's
    get_text_bounded, but whole. PDFium's first call counts characters, not the UTF-16 units
    it writes: each character past U+FFFF (mathematical italic letters, emoji) takes two, so a
    buffer of that count lost the page's last characters, one per such character ("4 Copy"
    where the page ends "4 Copyright (c) 2022 by ASME")."""
    left, bottom, right, top = bounds if bounds is not None else textpage.page.get_bbox()
    args = (textpage.raw, left, top, right, bottom)
    count = pdfium_c.FPDFText_GetBoundedText(*args, None, 0)
    if count <= 0:
        return ""
    room = 2 * count + 1  # every character two units at most, and a terminator
    buffer = (ctypes.c_ushort * room)()
    written = pdfium_c.FPDFText_GetBoundedText(*args, buffer, room)
    units = bytes(memoryview(buffer).cast("B")[: 2 * max(0, min(written, room))])
    return units.decode("utf-16-le", errors="ignore").rstrip("\0")


@dataclass(slots=True)
class PageChar:
    text: str  # the character, with the combining marks that follow it
    x: float  # its box's middle: left to right
    y: float  # and bottom to top
    generated: bool  # a space or break PDFium made between words or lines (no box of its own)
    bidi: str  # its Unicode bidirectional class


Pair = tuple["PageChar", "PageChar"]


def page_lines(textpage: pdfium.PdfTextPage, bounds: Bounds | None, turn: int = 0) -> list[list[PageChar]]:
    """The text page's characters in its order, a list a line (a line ends with its break). With
    bounds, a character whose box's middle is outside is left out, as PDFium's bounded text
    leaves it out. turn: the page's /Rotate (clockwise degrees); x and y are where a character is
    on the page as it is shown (a page turned 90 degrees shows what runs down its box as a line
    running right)."""
    raw = textpage.raw
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    box = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
    lines: list[list[PageChar]] = [[]]
    for index, code in enumerate(char_codes(textpage)):
        if code <= 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        generated = bool(pdfium_c.FPDFText_IsGenerated(raw, index))
        x = y = 0.0
        if not generated and pdfium_c.FPDFText_GetCharBox(raw, index, *box):
            x, y = (left.value + right.value) / 2, (bottom.value + top.value) / 2
            if bounds is not None and not (bounds[0] <= x <= bounds[2] and bounds[1] <= y <= bounds[3]):
                continue
            x, y = _shown(x, y, turn)
        bidi = unicodedata.bidirectional(char)
        line = lines[-1]
        if bidi in _MARKS and line and not line[-1].generated:
            line[-1].text += char
            continue
        line.append(PageChar(char, x, y, generated, bidi))
        if char in BREAKS:
            lines.append([])
    return lines


def sampled_pairs(
    textpage: pdfium.PdfTextPage, turn: int = 0, windows: int = 8, width: int = 12
) -> list[Pair]:
    """Neighbouring characters (neither made by PDFium nor a break) from `windows` runs of `width`
    characters spread over the page: enough to tell how its lines run, at a fraction of reading
    every character (page_lines costs about 4 us a character)."""
    raw = textpage.raw
    count = pdfium_c.FPDFText_CountChars(raw)
    pairs: list[Pair] = []
    for start in sorted({count * number // windows for number in range(windows)}):
        previous: PageChar | None = None
        for index in range(start, min(start + width, count)):
            code = pdfium_c.FPDFText_GetUnicode(raw, index)
            drawn = 0x20 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF
            where = (
                char_middle(textpage, index, turn)
                if drawn and not pdfium_c.FPDFText_IsGenerated(raw, index)
                else None
            )
            if where is None:
                previous = None
                continue
            current = PageChar(chr(code), *where, False, unicodedata.bidirectional(chr(code)))
            if previous is not None:
                pairs.append((previous, current))
            previous = current
    return pairs


def level_text(textpage: pdfium.PdfTextPage, samples: int = 16) -> bool:
    """Whether the page's text is drawn level in its own space (not turned by its content), judged
    by the angle of up to `samples` characters spread over it (three quarters of them level)."""
    raw = textpage.raw
    count = pdfium_c.FPDFText_CountChars(raw)
    angles = [
        pdfium_c.FPDFText_GetCharAngle(raw, index)
        for index in range(0, count, max(1, count // samples))
        if not pdfium_c.FPDFText_IsGenerated(raw, index)
    ]
    level = sum(1 for angle in angles if 0 <= angle < _LEVEL or angle > 2 * math.pi - _LEVEL)
    return bool(angles) and level >= 0.75 * len(angles)


def char_middle(textpage: pdfium.PdfTextPage, index: int, turn: int = 0) -> tuple[float, float] | None:
    """Where the character at index is on the page as shown, or None when it has no box."""
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    box = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
    if not pdfium_c.FPDFText_GetCharBox(textpage.raw, index, *box):
        return None
    return _shown((left.value + right.value) / 2, (bottom.value + top.value) / 2, turn)


def char_codes(textpage: pdfium.PdfTextPage) -> list[int]:
    """Each character's code: from the page's whole text in one call when it has one character
    a character (UTF-16 decoded; PDFium may leave a character out or put one in, which a length
    that differs, or one of 8 characters spread over it checked one by one, shows), else one call
    a character. A character past U+FFFF (a mathematical italic letter, a Han character of
    extension B) is two of PDFium's, the halves of its UTF-16 surrogate pair, with one box: its
    code is the first's, and the second's is 0 (no character). PDFium's hyphenation mark is
    HYPHEN_MARK whichever call gave it; a U+FFFE the page draws stays U+FFFE (not text)."""
    raw = textpage.raw
    count = pdfium_c.FPDFText_CountChars(raw)
    text = whole_text(textpage, count)
    if len(text) == count and all(
        ord(text[index]) == pdfium_c.FPDFText_GetUnicode(raw, index)
        for index in {count * eighth // 8 for eighth in range(8)} | {count - 1}
        if index >= 0
    ):
        return [ord(char) for char in text]
    codes = [pdfium_c.FPDFText_GetUnicode(raw, index) for index in range(count)]
    for index in range(count - 1):
        high, low = codes[index], codes[index + 1]
        if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
            codes[index] = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            codes[index + 1] = 0
    return codes


def whole_text(textpage: pdfium.PdfTextPage, count: int = -1) -> str:
    """The page's whole text (its first count characters; -1: all), as pypdfium2's get_text_range
    gives it, but with PDFium's hyphenation marks as its bounded text and its characters one by
    one have them. Its whole text has U+FFFE for the mark, and leaves out a U+FFFE the page draws."""
    return str(textpage.get_text_range(0, count)).replace(chr(_HYPHEN_CODE), chr(HYPHEN_MARK))


def stored_text(line: list[PageChar]) -> str:
    """The line as PDFium stores it."""
    return "".join(char.text for char in line)


def _shown(x: float, y: float, turn: int) -> tuple[float, float]:
    """(x, y) of the page's box as it is shown turned clockwise by turn degrees (up to where the
    origin is: only the order of positions matters here)."""
    turn %= 360
    if turn == 90:
        return y, -x
    if turn == 180:
        return -x, -y
    if turn == 270:
        return -y, x
    return x, y


class TextRect(NamedTuple):
    """One of PDFium's text rectangles, numbered in stored order."""

    stored: int  # its place in PDFium's order
    left: float
    bottom: float
    right: float
    top: float

    @property
    def middle(self) -> float:
        return (self.bottom + self.top) / 2

    @property
    def height(self) -> float:
        return self.top - self.bottom


def rect_count(textpage: pdfium.PdfTextPage) -> int:
    """How many text rectangles the page has (one for each run of a text object's characters),
    computed by PDFium in C (about 10 us for a page of 600 characters), which RectReader then
    reads. Taken once a page: the tests that read them are handed it."""
    return int(pdfium_c.FPDFText_CountRects(textpage.raw, 0, -1))


class RectReader:
    """PDFium's text rectangles, as the last FPDFText_CountRects of the page computed them
    (rect_count; reading characters does not change them)."""

    def __init__(self, raw: pdfium_c.FPDF_TEXTPAGE) -> None:
        self.raw = raw
        self._left, self._top, self._right, self._bottom = sides = [ctypes.c_double() for _ in range(4)]
        self._refs = [ctypes.byref(side) for side in sides]

    def box(self, index: int) -> TextRect:
        pdfium_c.FPDFText_GetRect(self.raw, index, *self._refs)
        return TextRect(index, self._left.value, self._bottom.value, self._right.value, self._top.value)


def char_places(codes: list[int], text: str) -> dict[int, int] | None:
    """Where each of PDFium's characters (by index) is in text, matched in order, spaces and line
    breaks aside (the bounded text leaves out a character outside the page's box: it is passed
    over); None when text is not PDFium's characters in PDFium's order."""
    places: dict[int, int] = {}
    index = passed = 0
    for at, char in enumerate(text):
        if char.isspace():
            continue
        code = ord(char)
        while index < len(codes) and codes[index] != code:
            passed += not chr(codes[index]).isspace() if 0 < codes[index] <= 0x10FFFF else 1
            index += 1
        if index == len(codes) or passed > _PASSED_OVER:
            return None
        places[index] = at
        index += 1
    return places
