"""Hebrew and Arabic text stored in visual order, read in reading order.

A PDF may store right-to-left text in the order it is drawn, left to right, instead of the order
it is read: older Hebrew and Arabic software stores whole lines so, and some writers shape each
word with HarfBuzz and store its glyphs left to right. PDFium's text follows the stored order, so
every such word came out backwards ("םידדצה" for "הצדדים"). poppler's pdftotext orders a line by
where its characters are, and reads such files right.

A line is rebuilt when its stored order is not its reading order somewhere (_misordered): stored
in visual order (of the neighbouring pairs of right-to-left letters in it, more go rightwards
than leftwards; read right to left, each letter is left of the one before); one right-to-left
word stored so among words that are not (Chromium stores some of a line's Arabic words so); or,
in a line with right-to-left letters, two left-to-right words in a row of which the second
stands left of the first ("בשם Mint Linux גרסה" for "Linux Mint", from PDFium's own ordering of a
right-to-left line, which turns a run of words with spaces between as it turns the line).
Such a line is rebuilt from where its characters are: its words left to right,
each word's characters left to right (a combining mark kept with its letter), then read as the
Unicode bidirectional algorithm displays a line: for a right-to-left line, the whole is
reversed and each run of left-to-right letters and digits in it ("ACME Ltd", "2024") turned
back; for a left-to-right line, each run of right-to-left letters is reversed. A line stored in
visual order is right to left when most of its letters are; one stored in reading order but for
a word or a run, when its first letter is (the rule of UAX #9, P2).
Every other line, and every page without right-to-left letters, keeps PDFium's text.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

import pypdfium2 as pdfium

from app.engines._page_chars import BREAKS, Bounds, PageChar, char_middle, page_lines, stored_text

_RIGHT_TO_LEFT = frozenset({"R", "AL"})
_LEFT_TO_RIGHT = frozenset({"L", "EN", "AN"})
# The blocks of right-to-left scripts: Hebrew to Arabic Extended (Syriac, Thaana, NKo, Samaritan,
# Mandaic), the Hebrew and Arabic presentation forms, and the right-to-left blocks past U+FFFF.
MAX_ASKED = 256
_RTL_PAIR = re.compile(
    "(?=[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]{2})"
)
_LEFT_TO_RIGHT_LETTER = re.compile("[A-Za-z\u00c0-\u024f]")  # a page that may have words of both
_RTL_BLOCKS = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def may_have_rtl(text: str) -> bool:
    """Whether text may have a right-to-left letter (a search at C speed: most pages have none)."""
    return _RTL_BLOCKS.search(text) is not None


def reading_order(textpage: pdfium.PdfTextPage, bounds: Bounds | None, turn: int = 0) -> str | None:
    """The page's text with each line stored in visual order rebuilt in reading order, or None when
    no line is (PDFium's text stands). bounds: only the characters inside are read, as PDFium's
    bounded text reads them; None: all. turn: the page's /Rotate (page_lines)."""
    text = str(textpage.get_text_range())
    if _LEFT_TO_RIGHT_LETTER.search(text) is None and not _some_run_rightwards(textpage, text, turn):
        return None
    lines = page_lines(textpage, bounds, turn)
    misordered = [_misordered(line) for line in lines]
    if not any(misordered):
        return None
    return "".join(
        _reading(line) if wrong else stored_text(line) for line, wrong in zip(lines, misordered, strict=True)
    )


def _misordered(line: list[PageChar]) -> bool:
    """Whether the line's stored order is not its reading order somewhere: stored in visual order
    (_stored_visually), a right-to-left word stored so (its letters run rightwards) among words that
    are not, or a run of left-to-right words turned round inside a right-to-left line ("בשם Mint
    Linux גרסה" for "Linux Mint", as PDFium's own ordering of such a line turns a run of words
    with spaces between)."""
    if _stored_visually(line):
        return True
    words = _words(line)
    for word in words:
        pairs = [
            (a, b)
            for a, b in itertools.pairwise(word)
            if a.bidi in _RIGHT_TO_LEFT and b.bidi in _RIGHT_TO_LEFT
        ]
        if len(pairs) >= 2 and all(b.x > a.x for a, b in pairs):
            return True
    if not any(c.bidi in _RIGHT_TO_LEFT for c in line):
        return False
    for before, after in itertools.pairwise(words):
        if _direction(before) == _direction(after) == "L" and max(c.x for c in after) < min(
            c.x for c in before
        ):
            return True
    return False


def _words(line: list[PageChar]) -> list[list[PageChar]]:
    """The line's words (drawn characters between spaces), in its stored order."""
    words: list[list[PageChar]] = [[]]
    for char in line:
        if char.text in BREAKS or char.text.isspace():
            words.append([])
        elif not char.generated:
            words[-1].append(char)
    return [word for word in words if word]


def _direction(word: list[PageChar]) -> str:
    """R for a word with a right-to-left letter, L for one with a left-to-right letter and none of
    those, else N (digits and punctuation)."""
    if any(c.bidi in _RIGHT_TO_LEFT for c in word):
        return "R"
    return "L" if any(c.bidi == "L" for c in word) else "N"


def _some_run_rightwards(textpage: pdfium.PdfTextPage, text: str, turn: int) -> bool:
    """Whether two neighbouring right-to-left letters run rightwards, of up to MAX_ASKED pairs
    spread over the page (the rest is read only then: page_lines costs 4 us a character). text:
    the page's whole text."""
    if len(text) != textpage.count_chars():  # a character past U+FFFF: indexes differ, read all
        return True
    starts = [
        match.start()
        for match in _RTL_PAIR.finditer(text)
        if unicodedata.bidirectional(text[match.start()]) in _RIGHT_TO_LEFT
    ]
    step = max(1, len(starts) // MAX_ASKED)
    return any(_rightwards(textpage, index, turn) for index in starts[::step])


def _rightwards(textpage: pdfium.PdfTextPage, index: int, turn: int) -> bool:
    first, second = char_middle(textpage, index, turn), char_middle(textpage, index + 1, turn)
    return first is not None and second is not None and second[0] > first[0]


def _stored_visually(line: list[PageChar]) -> bool:
    rightwards = leftwards = 0
    for before, after in itertools.pairwise(line):
        if before.bidi in _RIGHT_TO_LEFT and after.bidi in _RIGHT_TO_LEFT and not after.generated:
            if after.x > before.x:
                rightwards += 1
            elif after.x < before.x:
                leftwards += 1
    return rightwards > leftwards


def _reading(line: list[PageChar]) -> str:
    ending = "".join(c.text for c in line if c.text in BREAKS)
    words: list[list[PageChar]] = [[]]
    for char in line:
        if char.text in BREAKS:
            continue
        if char.text.isspace():
            words.append([])
        else:
            words[-1].append(char)
    drawn = [sorted(word, key=lambda c: c.x) for word in words if word]
    drawn.sort(key=lambda word: (word[0].x + word[-1].x) / 2)
    visual: list[PageChar] = []
    for number, word in enumerate(drawn):
        if number:
            visual.append(PageChar(" ", 0.0, 0.0, True, "WS"))
        visual.extend(word)
    if _stored_visually(line):  # the stored order says nothing of the line's direction
        right_to_left = sum(c.bidi in _RIGHT_TO_LEFT for c in visual) >= sum(c.bidi == "L" for c in visual)
    else:  # stored in reading order but for a word or a run: its first letter's direction (UAX #9 P2)
        first = next((c.bidi for c in line if c.bidi in _RIGHT_TO_LEFT or c.bidi == "L"), "L")
        right_to_left = first in _RIGHT_TO_LEFT
    if right_to_left:
        ordered = _runs_turned(visual[::-1], _LEFT_TO_RIGHT)
    else:
        ordered = _runs_turned(visual, _RIGHT_TO_LEFT)
    return "".join(c.text for c in ordered) + ending


def _runs_turned(chars: list[PageChar], kinds: frozenset[str]) -> list[PageChar]:
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
