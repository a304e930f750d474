"""Text PDFium's bounded text runs together, kept apart: a line break it made on one row, and a
word gap drawn as character spacing.

Rows. PDFium may start a new line inside a row: before a text object of one character (a
table's quantity "1", a tick "X") drawn apart from what comes before it, whose writing direction
it takes from the page's, not from the object. Its whole text keeps that line break ("Part
100", then "1" on a line of its own), but its bounded text, which a page's text is read with,
leaves out a break between two characters on the same height and puts nothing in its place:
"Part 100" and "1" came out "Part 1001", "1.5" and "2" as "1.52", "Item A", "X" and "Y" as "Item
AXY". Each break so left out is two characters (CR, LF) that PDFium counts and its bounded text
does not have, so a page whose bounded text is shorter than its character count by two or more
is the only kind that may have one (a count, no character read).

Word gaps. A writer may draw the gap between two words as character spacing (Tc) instead of a
space: groff's PostScript shows a kerned run across a word gap with `ashow`, and Ghostscript
writes that as a string of two characters ("rm" of "raven music") with the gap as its
character spacing. PDFium makes a space between text objects drawn apart, and inside a TJ where
its offset is wide, but not for character spacing: "raven music" read "ravenmusic", about one
word gap in ten of such justified text. pdftotext places each character where it is drawn and
keeps them apart. Finding such a gap takes each character's place (about 2.5 us a character),
so only pages drawn in pieces that touch are read so: such a writer starts a new text object
wherever the spacing changes, mid-word too, so that many of a row's text rectangles abut the
one before (drawn_in_touching_pieces), where a page written a line an object has one rectangle
a line and a page written a word an object has them a word gap apart.

The same writer may draw a small move inside a word as a space whose advance a negative word
spacing (Tw) takes back: PDFium keeps that space ("riv er"); it is left out.

Either way the page's text is put together from its characters in PDFium's order, as its
bounded text is: the characters whose origin is inside the bounds, a space PDFium made where it
made one, and a line break where PDFium broke the line, except that
- a break between two characters on one row (baselines within a third of a character's height,
  or boxes overlapping by _RAISED_OVERLAP: a superscript or a subscript beside its line) is a
  space, or nothing between characters that touch ("mc2;");
- two characters with nothing between them whose gap is WORD_GAP of a character's height wider
  than their row's usual gap between letters (the median: 0 for most text, the tracking of
  letter-spaced text) have a space put between them, if their drawn boxes are that far apart
  too (so that a font whose widths are missing does not space every letter);
- a space drawn between two characters that touch (_TOUCHING) is left out;
- a space PDFium made between the letters of a letter-spaced word is left out, as each row
  ends (_letter_spacing; a page whose text spells a word out letter by letter is read so too),
  and so is one it made between characters set a fixed step apart and almost touching, as a
  code listing in fixed columns sets them (_join_fixed_pitch).
"""

from __future__ import annotations

import ctypes
import itertools
import re
from typing import NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._letter_spacing import Joined, Separator, join_tracked_letters
from app.engines._page_chars import WORD_GAP, Bounds, RectReader, char_codes

_INK_GAP = 0.1  # and the drawn boxes' gap at least this
# A space drawn between characters this close (in their height; from overlapping to touching)
# is not a word gap: its advance was taken back, as Ghostscript writes a small move in a word.
_TOUCHING = (-0.25, 0.02)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")  # characters past U+FFFF
_MADE = frozenset({0x20, 0x0D, 0x0A})  # what PDFium makes: spaces and line breaks
# A code listing set in fixed columns a little wider than its font's advances (LaTeX's listings
# package does so by default): PDFium made a space between every two characters, 0.03 to 0.1 em
# apart ("@ b o o k { i t k o n e n _ t y p o g r ,"). Such a run is _MIN_PITCHED characters or
# more a fixed step apart (_SAME_PITCH of it), each gap under _PITCH_GAP of the row's height: a
# word gap is wider (a thin space is a sixth of an em), letters of a proportional font are not a
# fixed step apart, and a calendar's or a table's one-digit cells are far apart.
_MIN_PITCHED = 4
_SAME_PITCH = 0.02
_PITCH_GAP = 0.1
_SAME_ROW = 1 / 3  # of a character's height: baselines this close are one row
# Of the smaller of two neighbours' heights: boxes that overlap this much are one row though their
# baselines are apart, a superscript or a subscript beside its line (about 0.6 of a raised 2's
# height in "m2"; the lines of tightly set text overlap by 0.2 at most).
_RAISED_OVERLAP = 0.4
_ABUT = 0.15  # of a rectangle's height: neighbours on a row this close (or overlapping) touch
_MIN_ABUTTING, _ABUTTING_SHARE = 8, 0.2  # sampled neighbours on a row that touch, and their share
_FEW_ABUTTING = 0.15  # a share the first two runs read stop at
_SAMPLED_SIXTHS, _SAMPLE_WIDTH = (1, 4, 0, 2, 3, 5), 16


class _Place(NamedTuple):
    """A place held for a space in a row's text: between two characters (by index) a gap apart
    (in points)."""

    at: int  # in the text's pieces
    gap: float
    before: int
    after: int


class _Row:
    """What a row's word gaps are measured by: its characters' heights and its gaps between
    letters (in points), and its places held for a space."""

    __slots__ = ("before", "heights", "lefts", "letter_gaps", "places", "separators", "start")

    def __init__(self, start: int = 0, before: Joined | None = None) -> None:
        self.start = start  # where the row's text starts (in the text's pieces)
        self.before = before  # what the row before's letter spacing told (_letter_spacing)
        self.heights: list[float] = []
        self.letter_gaps: list[float] = []  # between characters with nothing between
        self.places: list[_Place] = []
        self.separators: list[Separator] = []  # its spaces, made or drawn (_letter_spacing)
        self.lefts: list[tuple[int, float]] = []  # each character written: where (in out), its left side


class Unglued(NamedTuple):
    text: str
    respaced: int  # spaces put where characters were drawn a word gap apart, or left out where
    # a drawn space is between characters that touch


def may_be_glued(textpage: pdfium.PdfTextPage, text: str) -> bool:
    """Whether the page's bounded text (text) may have run a row's characters together (two
    characters or more that PDFium counts are not in it; a character past U+FFFF is two that
    PDFium counts, the halves of its surrogate pair)."""
    missing = int(pdfium_c.FPDFText_CountChars(textpage.raw)) - len(text)
    if missing >= 2 and not text.isascii():
        missing -= len(_ASTRAL.findall(text))
    return missing >= 2


def drawn_in_touching_pieces(textpage: pdfium.PdfTextPage, text: str, count: int) -> bool:
    """Whether the page's rows are drawn in text objects that touch one another, as a writer that
    may draw word gaps as character spacing draws them (the module's doc): half as many
    rectangles again as lines, then six runs of neighbouring rectangles, the last four read only
    when the first two found some that touch. A page of groff's through Ghostscript has 0.25 to
    0.9 of its neighbours on a row touching (fewer where its fonts change between words: an
    italic word is drawn apart), and a sample of 90 of them may find less; pdfTeX's, up to 0.4
    where code and prose alternate: such a page is read character by character for nothing (10
    of the 36 pages of libtasn1's manual), and its text left as it was unless it has a word gap
    PDFium missed. count: the page's rect_count."""
    raw = textpage.raw
    if count < 1.5 * (text.count("\n") + 1):
        return False
    reader = RectReader(raw)
    on_a_row = abutting = 0
    for number, start in enumerate(count * sixth // 6 for sixth in _SAMPLED_SIXTHS):
        if number == 2 and abutting < _FEW_ABUTTING * on_a_row:
            return False
        boxes = [reader.box(index) for index in range(start, min(start + _SAMPLE_WIDTH, count))]
        for a, b in itertools.pairwise(boxes):
            height = max(a.height, b.height)
            if height <= 0 or abs(a.middle - b.middle) > _SAME_ROW * height or b.left < a.left:
                continue
            on_a_row += 1
            abutting += b.left - a.right < _ABUT * height
    return abutting >= _MIN_ABUTTING and abutting >= _ABUTTING_SHARE * on_a_row


def unglued_text(textpage: pdfium.PdfTextPage, bounds: Bounds) -> Unglued:
    """The page's text inside bounds with a space for each line break PDFium made on one row and
    for each word gap it made none for, without a drawn space between letters that touch.

    One call a character, for its advance box: its code comes with the page's whole text (char_codes);
    its origin is that box's left side, on its baseline, so it is read only when the box is not
    inside bounds; whether PDFium made it is asked of spaces and breaks only. A word gap is
    measured from its row's usual gap between letters (their median), so that letter-spaced text
    keeps its words whole: a gap wide enough is held as a place for a space until its row ends."""
    raw = textpage.raw
    left, bottom, right, top = bounds
    box = pdfium_c.FS_RECTF()
    out: list[str] = []
    row = _Row()
    broken = made_space = drawn_space = False  # since the last character written
    last_bottom = last_top = last_end = 0.0
    last = -1  # the last character written, by index
    respaced = 0
    for index, code in enumerate(char_codes(textpage)):
        if code in _MADE and pdfium_c.FPDFText_IsGenerated(raw, index):
            broken |= code != 0x20
            made_space |= code == 0x20
            continue
        if not pdfium_c.FPDFText_GetLooseCharBox(raw, index, box) or not (
            (left <= box.left <= right and bottom <= box.bottom and box.top <= top)
            or _origin_inside(raw, index, bounds)
        ):
            broken = True  # as PDFium's bounded text takes a character it leaves out
            continue
        if code == 0x20:
            drawn_space = True
            continue
        height = box.top - box.bottom
        same_row = height > 0 and (
            abs(box.bottom - last_bottom) <= _SAME_ROW * height
            or min(box.top, last_top) - max(box.bottom, last_bottom)
            >= _RAISED_OVERLAP * min(height, last_top - last_bottom)
        )
        gap = box.left - last_end
        if broken and not made_space and not drawn_space and same_row and gap < WORD_GAP * height:
            broken = False  # a break PDFium made between touching characters of a row: "mc2;"
        if out and not same_row and (broken or made_space):
            spaces, joined = _end_row(raw, out, row)
            respaced += spaces
            out.append("\r\n" if broken else " ")
            row = _Row(len(out), joined)
        elif out and (broken or made_space):
            row.separators.append(Separator(len(out), gap, made=True))
            out.append(" ")
        elif out and drawn_space:
            if same_row and _TOUCHING[0] * height <= gap < _TOUCHING[1] * height:
                respaced += 1  # a space drawn where the characters around it touch
            else:
                if same_row:
                    row.separators.append(Separator(len(out), gap, made=False))
                out.append(" ")
        elif out and same_row:
            row.letter_gaps.append(gap)
            if gap > 0:
                row.places.append(_Place(len(out), gap, last, index))
                out.append("")
        broken = made_space = drawn_space = False
        if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            out.append(chr(code))
            row.lefts.append((len(out) - 1, box.left))
        if height > 0:
            row.heights.append(height)
        # A row's gaps are measured from its furthest right: a character drawn back over the
        # ones before (a Thai syllable's marks, an accent) does not make the next one look apart.
        last_end = max(last_end, box.right) if same_row and out else box.right
        last_bottom, last_top, last = box.bottom, box.top, index
    respaced += _end_row(raw, out, row)[0]
    return Unglued("".join(out), respaced)


def _end_row(raw: pdfium_c.FPDF_TEXTPAGE, out: list[str], row: _Row) -> tuple[int, Joined | None]:
    """The row's word gaps put in (_space_row), then the spaces between its letter-spaced letters
    left out (_letter_spacing); the spaces put or left out, and what the next row is told."""
    spaced = _space_row(raw, out, row) + _join_fixed_pitch(out, row)
    if not row.separators or not row.heights:
        return spaced, None
    gaps = {place.at: place.gap for place in row.places}
    joined = join_tracked_letters(out, row.start, row.separators, _median(row.heights), gaps, row.before)
    return spaced + joined.spaces, joined


def _join_fixed_pitch(out: list[str], row: _Row) -> int:
    """Leave out the spaces PDFium made inside each run of _MIN_PITCHED characters or more set at
    one pitch (their left sides a step apart, give or take _SAME_PITCH of it) with nothing, or a
    space PDFium made for a gap under _PITCH_GAP of the row's height, between each two, and inside
    each shorter run on the row at the pitch of such a run that had spaces made ("a n d" between
    words of a listing; not a word of a monospaced font set as one string); the spaces left out.
    A space set in such a listing is a whole step more, and ends a run."""
    if len(row.lefts) < _MIN_PITCHED or not row.separators or not row.heights:
        return 0
    unit = _median(row.heights)
    made = {separator.at: separator for separator in row.separators if separator.made}
    runs: list[tuple[int, float, list[int]]] = []  # its characters, its pitch, its spaces made (at)
    count, step, spaces = 1, 0.0, []
    for (before, left_before), (after, left) in itertools.pairwise(row.lefts):
        between = [at for at in range(before + 1, after) if out[at]]
        space = made.get(between[0]) if len(between) == 1 else None
        joins = not between or (space is not None and space.gap < _PITCH_GAP * unit)
        pitch = left - left_before
        if joins and count > 1 and abs(pitch - step) <= _SAME_PITCH * step:
            count += 1
            spaces.extend(between)
            continue
        runs.append((count, step, spaces))
        count, step, spaces = (2, pitch, list(between)) if joins and pitch > 0 else (1, 0.0, [])
    runs.append((count, step, spaces))
    pitches = [step for count, step, spaces in runs if count >= _MIN_PITCHED and spaces]
    gone = {
        at
        for count, step, spaces in runs
        if count >= _MIN_PITCHED
        or (count > 1 and any(abs(step - pitch) <= _SAME_PITCH * pitch for pitch in pitches))
        for at in spaces
    }
    for at in gone:
        out[at] = ""
    row.separators = [separator for separator in row.separators if separator.at not in gone]
    return len(gone)


def _space_row(raw: pdfium_c.FPDF_TEXTPAGE, out: list[str], row: _Row) -> int:
    """Put a space in each place held for one on the row whose gap is WORD_GAP of the row's
    character height (the median: a small capital's own box is its ink's, a third of its line's)
    wider than the row's usual gap between letters (the median, or 0), drawn boxes too; the spaces
    put."""
    if not row.places or not row.heights:
        return 0
    unit = _median(row.heights)
    row.letter_gaps.sort()
    usual = max(0.0, row.letter_gaps[len(row.letter_gaps) // 2])
    spaced = 0
    for place in row.places:
        if place.gap >= usual + WORD_GAP * unit and _inked_apart(
            raw, place.before, place.after, usual + _INK_GAP * unit
        ):
            out[place.at] = " "
            spaced += 1
    return spaced


def _median(values: list[float]) -> float:
    values.sort()
    return values[len(values) // 2]


def _origin_inside(raw: pdfium_c.FPDF_TEXTPAGE, index: int, bounds: Bounds) -> bool:
    x, y = ctypes.c_double(), ctypes.c_double()
    if not pdfium_c.FPDFText_GetCharOrigin(raw, index, ctypes.byref(x), ctypes.byref(y)):
        return False
    left, bottom, right, top = bounds
    return left <= x.value <= right and bottom <= y.value <= top


def _inked_apart(raw: pdfium_c.FPDF_TEXTPAGE, before: int, after: int, gap: float) -> bool:
    """Whether the drawn boxes of the characters before and after (by index) are gap apart too."""
    sides = [ctypes.c_double() for _ in range(4)]  # left, right, bottom, top
    refs = [ctypes.byref(side) for side in sides]
    if not pdfium_c.FPDFText_GetCharBox(raw, before, *refs):
        return False
    ink_end = sides[1].value
    if not pdfium_c.FPDFText_GetCharBox(raw, after, *refs):
        return False
    return sides[0].value - ink_end >= gap
