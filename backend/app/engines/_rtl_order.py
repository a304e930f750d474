"""Hebrew and Arabic text stored in visual order, read in reading order.

A PDF may store right-to-left text in the order it is drawn, left to right, instead of the order
it is read: older Hebrew and Arabic software stores whole lines so, and some writers shape each
word with HarfBuzz and store its glyphs left to right. PDFium's text follows the stored order, so
every such word came out backwards ("םידדצה" for "הצדדים"). poppler's pdftotext orders a line by
where its characters are, and reads such files right.

A line is taken as stored in visual order when, of the neighbouring pairs of right-to-left
letters in it, more go rightwards than leftwards (read right to left, each letter is left of
the one before). Such a line is rebuilt from where its characters are: its words left to right,
each word's characters left to right (a combining mark kept with its letter), then read as the
Unicode bidirectional algorithm displays a line: for a line mostly of right-to-left letters, the
whole is reversed and each run of left-to-right letters and digits in it ("ACME Ltd", "2024")
turned back; for a line mostly left to right, each run of right-to-left letters is reversed.
Every other line, and every page without right-to-left letters, keeps PDFium's text.
"""

from __future__ import annotations

import ctypes
import itertools
import re
import unicodedata
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_RIGHT_TO_LEFT = frozenset({"R", "AL"})
_LEFT_TO_RIGHT = frozenset({"L", "EN", "AN"})
_MARKS = frozenset({"NSM"})
_BREAKS = frozenset({"\r", "\n"})
# The blocks of right-to-left scripts: Hebrew to Arabic Extended (Syriac, Thaana, NKo, Samaritan,
# Mandaic), the Hebrew and Arabic presentation forms, and the right-to-left blocks past U+FFFF.
_RTL_BLOCKS = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def may_have_rtl(text: str) -> bool:
    """Whether text may have a right-to-left letter (a search at C speed: most pages have none)."""
    return _RTL_BLOCKS.search(text) is not None


@dataclass(slots=True)
class _Char:
    text: str  # the character, with the combining marks that follow it
    x: float  # its box's middle, left to right
    generated: bool  # a space or break PDFium made between words or lines
    bidi: str


def reading_order(
    textpage: pdfium.PdfTextPage, bounds: tuple[float, float, float, float] | None
) -> str | None:
    """The page's text with each line stored in visual order rebuilt in reading order, or None when
    no line is (PDFium's text stands). bounds (left, bottom, right, top): only characters whose
    box's middle is inside are read, as PDFium's bounded text reads them; None: all."""
    lines = _lines(textpage, bounds)
    if not any(_stored_visually(line) for line in lines):
        return None
    return "".join(
        _reading(line) if _stored_visually(line) else "".join(c.text for c in line) for line in lines
    )


def _lines(
    textpage: pdfium.PdfTextPage, bounds: tuple[float, float, float, float] | None
) -> list[list[_Char]]:
    raw = textpage.raw
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    lines: list[list[_Char]] = [[]]
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        if code <= 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        generated = bool(pdfium_c.FPDFText_IsGenerated(raw, index))
        x = 0.0
        box = (ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top))
        if not generated and pdfium_c.FPDFText_GetCharBox(raw, index, *box):
            x = (left.value + right.value) / 2
            if bounds is not None and not (
                bounds[0] <= x <= bounds[2] and bounds[1] <= (bottom.value + top.value) / 2 <= bounds[3]
            ):
                continue
        bidi = unicodedata.bidirectional(char)
        line = lines[-1]
        if bidi in _MARKS and line and not line[-1].generated:
            line[-1].text += char
            continue
        line.append(_Char(char, x, generated, bidi))
        if char in _BREAKS:
            lines.append([])
    return lines


def _stored_visually(line: list[_Char]) -> bool:
    rightwards = leftwards = 0
    for before, after in itertools.pairwise(line):
        if before.bidi in _RIGHT_TO_LEFT and after.bidi in _RIGHT_TO_LEFT and not after.generated:
            if after.x > before.x:
                rightwards += 1
            elif after.x < before.x:
                leftwards += 1
    return rightwards > leftwards


def _reading(line: list[_Char]) -> str:
    ending = "".join(c.text for c in line if c.text in _BREAKS)
    words: list[list[_Char]] = [[]]
    for char in line:
        if char.text in _BREAKS:
            continue
        if char.text.isspace():
            words.append([])
        else:
            words[-1].append(char)
    drawn = [sorted(word, key=lambda c: c.x) for word in words if word]
    drawn.sort(key=lambda word: (word[0].x + word[-1].x) / 2)
    visual: list[_Char] = []
    for number, word in enumerate(drawn):
        if number:
            visual.append(_Char(" ", 0.0, True, "WS"))
        visual.extend(word)
    strong_rtl = sum(c.bidi in _RIGHT_TO_LEFT for c in visual)
    strong_ltr = sum(c.bidi == "L" for c in visual)
    if strong_rtl >= strong_ltr:
        ordered = _runs_turned(visual[::-1], _LEFT_TO_RIGHT)
    else:
        ordered = _runs_turned(visual, _RIGHT_TO_LEFT)
    return "".join(c.text for c in ordered) + ending


def _runs_turned(chars: list[_Char], kinds: frozenset[str]) -> list[_Char]:
    """chars with each run of kinds (and of what lies between two of them, spaces and punctuation,
    but no letter of the other direction) reversed."""
    out = list(chars)
    index = 0
    while index < len(out):
        if out[index].bidi not in kinds:
            index += 1
            continue
        end = index  # the last character of kinds in the run
        probe = index + 1
        while probe < len(out) and out[probe].bidi not in _opposite(kinds):
            if out[probe].bidi in kinds:
                end = probe
            probe += 1
        out[index : end + 1] = out[index : end + 1][::-1]
        index = end + 1
    return out


def _opposite(kinds: frozenset[str]) -> frozenset[str]:
    return _RIGHT_TO_LEFT if kinds is _LEFT_TO_RIGHT else frozenset({"L"})
