"""Accents drawn as characters of their own put back on their letters: "Expériences" read
whole, not as "Exp", a spacing acute, "eriences".

TeX's older fonts (OT1, the default of LaTeX without fontenc T1) have no accented letters: an
accented letter is drawn as two characters, the accent placed over or under the letter. Their
maps give the accent its spacing character (the acute U+00B4, diaeresis U+00A8, caron U+02C7,
ogonek U+02DB, ...), so PDFium's text has the accent before or after its letter, and sometimes
at the end of the line ("(fur die Version 2.5e)" then a diaeresis), where PDFium put it by its
height. pdftotext puts the two together. A probe of real TeX documents in French, German,
Polish, Czech and Turkish found them on about 300 pages of 20 files.

An accent is put back on the letter it is drawn on: the letter, among the 60 characters on
either side of it in PDFium's order (PDFium may put the accent of a capital on a line of its
own, or at the end of its line), whose box holds the accent's middle across (_MARGIN in from
its sides) and which it sits on (the accent's bottom within _ABOVE of the letter's height from
the letter's top) or under (cedilla and ogonek: its top near the letter's bottom); the nearest
if several. The accent becomes its combining mark after the letter (NFC composes the two when
the page is cleaned, app.engines.base), a dotless i or j under it a plain one, and it leaves
its place, with a space PDFium put before it when the line's end or a space follows, and one
before or after it between two letters that touch (PDFium spaced the first two letters of
"ÉLÉMENTAIRES" from the rest, the accent of its capital drawn after its second). A spacing
accent drawn in a cell of its own (a grave in code, an acute for an apostrophe) is over no
letter, and stays.
The ASCII caret and tilde are not read as accents: code draws them beside letters, and TeX's
mathematics maps its vector arrow to the tilde.

Only pages whose text has one of these characters are read so (a search of the text: 9 us for
3,000 characters, and none for an ASCII page without a grave), and of those only the accents'
neighbours (a grave, which code has as a backquote, only its next neighbours and capitals).
The page's text is then changed where its characters are PDFium's in PDFium's order (the
bounded text, and what the other passes make of it, keep that order: spaces and line breaks
aside); on a page read in another order the text is left as it was.
"""

from __future__ import annotations

import ctypes
import re
import unicodedata

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import char_codes, char_places

# Spacing accents, as the maps of TeX's fonts (and others) give them, and their combining marks.
_MARKS = {
    "\u00b4": "\u0301",  # acute
    "\u02ca": "\u0301",
    "`": "\u0300",  # grave
    "\u02cb": "\u0300",
    "\u00a8": "\u0308",  # diaeresis
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u02c7": "\u030c",  # caron
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u02da": "\u030a",  # ring above
    "\u02dd": "\u030b",  # double acute
    "\u00af": "\u0304",  # macron
    "\u02c9": "\u0304",
    "\u00b8": "\u0327",  # cedilla
    "\u02db": "\u0328",  # ogonek
}
_SPACING_CODES = frozenset(map(ord, _MARKS))
_BELOW = frozenset({"\u00b8", "\u02db"})
_DOTLESS = {"\u0131": "i", "\u0237": "j"}  # TeX's dotless i and j, for an accent above
_SPACING_ACCENT = re.compile("[" + re.escape("".join(_MARKS)) + "]")
_NEAR = 60  # characters on either side of an accent, in PDFium's order, that may be its letter
_LINE = 300  # for one PDFium put at a line's end: its line's capitals, this far back
_NEXT_TO = 2  # looked at first
_GRAVE = ord("`")
_LETTERS = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo"})
_CAPITALS = frozenset({"Lu", "Lt"})
_ABOVE = (-0.35, 0.8)  # of the letter's height: where an accent's bottom may be from its top
_MARGIN = 0.15  # of the letter's width: an accent's middle is further in than this (a slanted
# capital's accent sits right of its middle)
_WORD_GAP = 0.15  # of a letter's height: closer than this to the character before, it is in its word
# Accents on a page at most: a page of prose has a few hundred; one of a million (a hostile
# file) would take minutes here, and is left as PDFium reads it.
_MAX_ACCENTS = 5000

_Box = tuple[float, float, float, float]  # left, right, bottom, top


def may_have_spacing_accents(text: str) -> bool:
    if text.isascii():  # the only one in ASCII (a C search)
        return "`" in text
    return _SPACING_ACCENT.search(text) is not None


def accents_on_letters(textpage: pdfium.PdfTextPage, text: str) -> str:
    """text (the page's text, from its characters in PDFium's order) with each spacing accent
    drawn on a letter put on that letter (the module's doc); text itself when none is, or when
    text is not in PDFium's order."""
    codes = char_codes(textpage)
    spacing = [index for index, code in enumerate(codes) if code in _SPACING_CODES]
    if len(spacing) > _MAX_ACCENTS:
        return text
    boxes = _Boxes(textpage)
    on: dict[int, list[tuple[float, int]]] = {}  # letter index: (distance, accent index)
    for index in spacing:
        if (box := boxes.get(index)) is None:
            continue
        under = _letter_under(codes, boxes, index, box)
        if under is not None:
            on.setdefault(under[1], []).append((under[0], index))
    if not on:
        return text
    places = char_places(codes, text)
    if places is None:
        return text
    out = list(text)
    at_place = {at: index for index, at in places.items()}
    moved: list[int] = []  # where the accents put on their letters were in text
    for letter, accents in on.items():
        if letter not in places or any(accent not in places for _, accent in accents):
            continue
        base = out[places[letter]]
        marks = "".join(_MARKS[chr(codes[accent])] for _, accent in sorted(accents))
        below_only = all(chr(codes[accent]) in _BELOW for _, accent in accents)
        out[places[letter]] = (base if below_only else _DOTLESS.get(base, base)) + marks
        for _, accent in accents:
            out[places[accent]] = ""
            moved.append(places[accent])
    for at in sorted(moved):
        # the spaces around it between two letters or digits that touch (inside a word, where the
        # accent was drawn; PDFium may have put one on either side, "THEOR ' EME" in small
        # capitals); else the space PDFium put before an accent drawn apart, at a line's end
        # (where it took the accent) or beside another space
        spaces = [space for space in (at - 1, at + 1) if 0 <= space < len(out) and out[space] == " "]
        if spaces and _inside_a_word(out, boxes, at_place, spaces[0], spaces[-1]):
            for space in spaces:
                out[space] = ""
            continue
        after = _next_kept(out, at)
        if at > 0 and out[at - 1] == " " and (after is None or out[after][0] in " \r\n"):
            out[at - 1] = ""
    return "".join(out)


def _inside_a_word(out: list[str], boxes: _Boxes, at_place: dict[int, int], first: int, last: int) -> bool:
    """Whether the characters kept on either side of out[first:last + 1] are letters or digits
    that touch."""
    left, right = _next_kept(out, first, back=True), _next_kept(out, last)
    return (
        left is not None
        and right is not None
        and out[left][0].isalnum()
        and out[right][0].isalnum()
        and _touching(boxes, at_place.get(left), at_place.get(right))
    )


def _next_kept(out: list[str], at: int, *, back: bool = False) -> int | None:
    """The next place after (or before) at in out that still holds something."""
    step = -1 if back else 1
    at += step
    while 0 <= at < len(out) and not out[at]:
        at += step
    return at if 0 <= at < len(out) else None


class _Boxes:
    """Characters' drawn boxes and, across, their advances (loose boxes: a narrow letter's ink, an
    i's, is narrower than the accent over it), read as asked for."""

    def __init__(self, textpage: pdfium.PdfTextPage) -> None:
        self.raw = textpage.raw
        self.known: dict[int, _Box | None] = {}
        self.sides = [ctypes.c_double() for _ in range(4)]  # left, right, bottom, top
        self.refs = [ctypes.byref(side) for side in self.sides]
        self.loose = pdfium_c.FS_RECTF()

    def get(self, index: int) -> _Box | None:
        """(left, right) of its advance, (bottom, top) of its ink."""
        if index not in self.known:
            drawn = (
                not pdfium_c.FPDFText_IsGenerated(self.raw, index)
                and pdfium_c.FPDFText_GetCharBox(self.raw, index, *self.refs)
                and pdfium_c.FPDFText_GetLooseCharBox(self.raw, index, self.loose)
            )
            bottom, top = self.sides[2].value, self.sides[3].value
            left, right = self.loose.left, self.loose.right
            self.known[index] = (
                (left, right, bottom, top) if drawn and top > bottom and right > left else None
            )
        return self.known[index]


def _letter_under(codes: list[int], boxes: _Boxes, index: int, accent: _Box) -> tuple[float, int] | None:
    """(how far, the letter's index): the letter the accent at index is drawn on (or under), the
    nearest; None when it is on none. Its neighbours are looked at first (an accent is next to
    its letter but where PDFium moved it, the accent of a capital), and further on for a grave (a
    backquote in code) only its capitals."""
    found = _nearest_under(codes, boxes, index, accent, _NEXT_TO)
    if found is None:
        found = _nearest_under(codes, boxes, index, accent, _NEAR, capitals=codes[index] == _GRAVE)
    if found is None and _ends_a_line(codes, index):
        # PDFium put a capital's accent at the end of its line: the capital may be further back
        # than _NEAR on a long line ("Edouard" at the start of a 90-character reference)
        found = _nearest_under(codes, boxes, index, accent, _LINE, capitals=True)
    return found


def _ends_a_line(codes: list[int], index: int) -> bool:
    """Whether only spaces are between the character at index and a line break after it."""
    for code in codes[index + 1 : index + 4]:
        if code in (0x0D, 0x0A):
            return True
        if code != 0x20:
            return False
    return index + 1 >= len(codes)


def _nearest_under(
    codes: list[int], boxes: _Boxes, index: int, accent: _Box, near: int, *, capitals: bool = False
) -> tuple[float, int] | None:
    middle = (accent[0] + accent[1]) / 2
    below = chr(codes[index]) in _BELOW
    letters = _CAPITALS if capitals else _LETTERS
    found: tuple[float, int] | None = None
    for other in range(max(0, index - near), min(len(codes), index + near + 1)):
        code = codes[other]
        if other == index or not 0 < code <= 0x10FFFF or unicodedata.category(chr(code)) not in letters:
            continue
        box = boxes.get(other)
        if box is None:
            continue
        left, right, bottom, top = box
        width, height = right - left, top - bottom
        if not left + _MARGIN * width <= middle <= right - _MARGIN * width:
            continue
        # above: the accent's bottom from the letter's top; below: the letter's bottom from the accent's top
        distance = accent[2] - top if not below else bottom - accent[3]
        if not _ABOVE[0] * height <= distance <= _ABOVE[1] * height:
            continue
        if found is None or abs(distance) < found[0]:
            found = (abs(distance), other)
    return found


def _touching(boxes: _Boxes, before: int | None, after: int | None) -> bool:
    """Whether the character before (by index) ends where the one after begins: one word."""
    first = boxes.get(before) if before is not None else None
    second = boxes.get(after) if after is not None else None
    if first is None or second is None:
        return False
    return second[0] - first[1] < _WORD_GAP * (second[3] - second[2])
