"""Footnote marks: set smaller and raised, PDFium runs them into the text beside them.

A note's mark at the start of its line touches the note's first word, so PDFium gives
"1http://ctan.org/pkg/ednotes" (the URL broken) and "bBook" for a table's note b; a reader sees
the mark apart, as pdftotext gives it. And a mark that ends a sentence is on a higher baseline
than the full stop after it, so PDFium ends the line at the mark and puts the rest of the line
(the full stop, or the rest of the sentence) on a line of its own: "the Piedmontese language2"
then ".". A probe of TeX documents found the first on 58 pages of 33 files, the second on about
20 pages.

A mark is one to three digits or note symbols (* † ‡ § ¶ ‖), or at a line's start one letter
before a capital, set at most _SMALLER of the size of the character it is read against and
raised from its baseline by at least _RAISED of that size. Only pages whose text has the
pattern of either case are looked at (a search of the text), and only the characters there: a
mark at a line's start is given a space after it, and a line break after a mark is taken out
when the next character is on the baseline of the character before the mark, to its right
(the same line).

The page's text is changed where its characters are PDFium's in PDFium's order (spaces and line
breaks aside): on a page read in another order, it is left as it was.
"""

from __future__ import annotations

import ctypes
import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import char_codes, char_places

_SIGNS = r"[0-9*†‡§¶‖]{1,3}"  # a note's number or symbol
# A mark at a line's start run into a word (a letter, as a table's notes are marked, only before
# a capital: "bBook"); a line that ends in a mark right after a word, the next line starting
# with punctuation or a lower-case letter.
_AT_LINE_START = re.compile(rf"(?:^|\n)({_SIGNS}(?=[A-Za-z(\[])|[a-z](?=[A-Z]))")
_AT_LINE_END = re.compile(rf"[A-Za-z)\]]({_SIGNS})(\r\n)(?=[.,;:)\](a-z])")
_CLOSING = frozenset(".,;:)]")
_SMALLER = 0.85  # a mark's size at most this of the text's
_RAISED = 0.15  # its baseline at least this (of the text's size) above the text's
_SAME_LINE = 0.2  # of the size: baselines this close are one line's
_MAX_CANDIDATES = 2000  # places on one page looked at: more, and the page is left as it is


# What either pattern needs, found with a literal first (about 1 us a page where the patterns'
# own start, a line's start or a character class, cost 15 us each).
_START_HINT = re.compile(r"\n(?:[0-9*†‡§¶‖][A-Za-z(\[]|[a-z][A-Z])")
_END_HINT = re.compile(r"(?<=[0-9*†‡§¶‖])\r\n[.,;:)\](a-z]")


def may_have_marks(text: str) -> bool:
    hinted = (
        _START_HINT.search(text) is not None
        or _START_HINT.match("\n" + text[:2]) is not None
        or _END_HINT.search(text) is not None
    )
    return hinted and (_AT_LINE_START.search(text) is not None or _AT_LINE_END.search(text) is not None)


def marks_apart(textpage: pdfium.PdfTextPage, text: str) -> str:
    """text (the page's text, in PDFium's order) with the footnote marks PDFium ran into the text
    beside them set apart (the module's doc); text itself when there are none, or when text is in
    another order."""
    starts = list(_AT_LINE_START.finditer(text))
    ends = list(_AT_LINE_END.finditer(text))
    if (not starts and not ends) or len(starts) + len(ends) > _MAX_CANDIDATES:
        return text
    chars = _Chars(textpage)
    places = char_places(chars.codes, text)
    if places is None:
        return text
    index_at = {at: index for index, at in places.items()}  # text position: character index
    edits: dict[int, str] = {}  # text position: what replaces the character there
    for match in starts:
        first, last = match.start(1), match.end(1) - 1
        after = last + 1
        if all(at in index_at for at in (first, last, after)) and chars.raised_above(
            range(index_at[first], index_at[last] + 1), index_at[after]
        ):
            edits[last] = text[last] + " "
    for match in ends:
        first, last = match.start(1), match.end(1) - 1
        before, after = first - 1, match.end(2)
        if not all(at in index_at for at in (before, first, last, after)):
            continue
        mark = range(index_at[first], index_at[last] + 1)
        if chars.raised_above(mark, index_at[before]) and chars.continues(
            index_at[before], index_at[last], index_at[after]
        ):
            # the full stop after the mark is set against it; the rest of a sentence a space on
            edits[match.start(2)] = "" if text[after] in _CLOSING else " "
            edits[match.start(2) + 1] = ""
    if not edits:
        return text
    return "".join(edits.get(at, char) for at, char in enumerate(text))


class _Chars:
    """The text page's characters: codes, and sizes and baselines as asked for."""

    def __init__(self, textpage: pdfium.PdfTextPage) -> None:
        self.raw = textpage.raw
        self.codes = char_codes(textpage)
        self._x, self._y = ctypes.c_double(), ctypes.c_double()

    def size(self, index: int) -> float:
        return float(pdfium_c.FPDFText_GetFontSize(self.raw, index))

    def origin(self, index: int) -> tuple[float, float] | None:
        if not pdfium_c.FPDFText_GetCharOrigin(self.raw, index, ctypes.byref(self._x), ctypes.byref(self._y)):
            return None
        return self._x.value, self._y.value

    def raised_above(self, mark: range, text: int) -> bool:
        """Whether each character of mark is set smaller than the character at text, and higher."""
        size, origin = self.size(text), self.origin(text)
        if size <= 0 or origin is None:
            return False
        for index in mark:
            at = self.origin(index)
            if at is None or pdfium_c.FPDFText_IsGenerated(self.raw, index):
                return False
            if self.size(index) > _SMALLER * size or at[1] - origin[1] < _RAISED * size:
                return False
        return True

    def continues(self, before: int, mark_end: int, after: int) -> bool:
        """Whether the character at after is on the line of the one at before, right of the mark."""
        size, line, mark, next_one = (
            self.size(before),
            self.origin(before),
            self.origin(mark_end),
            self.origin(after),
        )
        if size <= 0 or line is None or mark is None or next_one is None:
            return False
        return abs(next_one[1] - line[1]) <= _SAME_LINE * size and next_one[0] >= mark[0]
