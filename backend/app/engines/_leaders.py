"""Dotted leaders taken off a scan before tesseract reads it (and put back in its text after:
_leader_lines).

A table of contents, an index, a price list, a statement or a form leads the eye from a title
to its number, or from a label to its field, along a row of dots. tesseract cannot read such a
line: it takes the dots for small letters, so it guesses the line's size from them, reads the
title's letters as capitals, the dots as runs of "e" and the number as more of them. Tables of
contents of 24 entries at 9-13 points read with 50-84 % of their characters wrong (ocrmypdf
reads them as badly), and most page numbers were lost. So the leaders are found and painted
with the paper before the page is read.

A leader is found in two steps. Cheaply, on the page's ink sampled at COLUMN_DPI across and
ROW_DPI down: the ink closed along rows across gaps of GAP_INCHES, what of it is thinner than
DOT_INCHES up and down and clear of anything thicker for CLEAR_INCHES above and below (a row of
dots closes into a thin bar; letters into thick ones, and their i's dots and ascenders into thin
bars just over them), and of that, bars at least LEADER_INCHES long. Most pages have none, and
cost about 9 ms at 300 DPI. Then on the page itself each bar's marks are measured: a leader is
MIN_DOTS or more dots in a row, each no larger than DOT_INCHES, at an even pitch (each within
PITCH_SPREAD of the row's), level, with no ink within CLEAR_INCHES above or below them (a dotted
underline has its words over it), at least LEADER_INCHES long: an ellipsis is too short. A
leader of dashes ("- - -") is found the same way, its marks each at least twice as wide as they
are tall and no wider than DASH_INCHES (tesseract read such tables of contents 35-76 % wrong, as
runs of "-", "e" and "+"); a row's marks are all dots or all dashes. Pieces
of a row that a speck broke are one leader. A page with more than MAX_LEADERS, or MAX_BARS
places to look, is a pattern (a coarse screen, noise) and is left as it is.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise

from PIL import Image, ImageChops

from app.engines._morphology import darkest, level_at, lightest, paper_level
from app.engines._text_lines import merged

INK = 128  # levels darker than this are ink
SAMPLE_DROP = 32  # a sample (8 x 2 pixels at 300 DPI) this much darker than the paper holds ink
COLUMN_DPI = 37.5  # the cheap look's resolution across (8 pixels to a column at 300 DPI)
ROW_DPI = 150  # and down (2 pixels to a row)
GAP_INCHES = 0.2  # the widest gap between a leader's dots (typeset leaders: 0.02-0.1 inch)
DOT_INCHES = 0.035  # a dot is no wider or taller than this (a period of 14 point type: 0.027)
SPECK_INCHES = 0.005  # and at least this across (a pixel or two of dust is not a dot)
LEADER_INCHES = 0.25  # a leader is at least this long
MIN_DOTS = 5  # and has at least this many dots: an ellipsis has three
PITCH_SPREAD = 0.3  # each dot's distance from the one before within this share of the pitch
CLEAR_INCHES = 0.04  # no ink this far above or below a leader's dots
BLEMISH = 4  # pitches: pieces of a row of dots this near each other are one leader
SPACED = 2.5  # a leader whose gaps are this many times its dots' width is set with spaces
DASH_INCHES = 0.1  # a dash is no wider than this, and at least twice as wide as it is tall
DASH_SPACED = 0.6  # a leader of dashes whose gaps are this share of their width: "- - -"
MAX_LEADERS = 200  # more than this on a page is a pattern, not leaders
MAX_BARS = 2 * MAX_LEADERS  # and more places to look for them than this (a page of noise)
INK_LEVELS = [255 if level < INK else 0 for level in range(256)]
_IS_INK = bytes(1 if level else 0 for level in range(256))
_MARKS = re.compile(rb"\x01+")


@dataclass(frozen=True, slots=True)
class Leader:
    """A row of dots, in pixels of the page image (right and bottom exclusive)."""

    left: int
    top: int
    right: int
    bottom: int
    dots: int
    spaced: bool  # set with a space between its dots (". . . ."), not close ("....")
    first: float  # the middle row of its first dot
    last: float  # and of its last (a leader tilts with its page)
    mark: str = "."  # what each of its marks is: a dot, or a dash ("-")

    @property
    def text(self) -> str:
        return (" " if self.spaced else "").join(self.mark * self.dots)

    @property
    def dot_height(self) -> float:
        return max(1.0, self.bottom - self.top - abs(self.last - self.first))

    def middle_at(self, x: float) -> float:
        """The row of its dots' middle at column x (on along its tilt past its ends)."""
        if self.right - self.left <= 1:
            return self.first
        return self.first + (self.last - self.first) * (x - self.left) / (self.right - self.left)

    def turned(self, width: int, height: int) -> Leader:
        """The leader on its page image (width x height) turned upside down."""
        return Leader(
            width - self.right,
            height - self.bottom,
            width - self.left,
            height - self.top,
            self.dots,
            self.spaced,
            height - self.last,
            height - self.first,
            self.mark,
        )


@dataclass(frozen=True, slots=True)
class _Mark:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def centre(self) -> float:
        return (self.left + self.right) / 2


def without_leaders(image: Image.Image, dpi: int) -> tuple[Image.Image, tuple[Leader, ...]]:
    """The page with its dotted leaders painted with its paper, and the leaders (if none, the
    page itself, unchanged). Only 8-bit gray images are looked at."""
    if image.mode != "L" or min(image.size) < 8:
        return image, ()
    bars = _bars(image, dpi)
    if len(bars) > MAX_BARS:  # measuring each costs about a millisecond: a page of noise had 1,189
        return image, ()
    found: list[tuple[Leader, list[_Mark]]] = []
    for box in bars:
        found.extend(_measured(image, box, dpi))
        if len(found) > MAX_LEADERS:
            return image, ()
    if not found:
        return image, ()
    found = _joined(found)
    clean = image.copy()
    blur = max(1, round(dpi / 300))  # a dot's edge lighter than INK, painted with it
    for leader, dots in found:
        around = image.crop((leader.left, leader.top, leader.right, leader.bottom))
        paper = level_at(around.histogram(), around.width * around.height / 2)  # mostly paper between dots
        for dot in dots:
            clean.paste(
                paper,
                (
                    max(0, dot.left - blur),
                    max(0, dot.top - blur),
                    min(image.width, dot.right + blur),
                    min(image.height, dot.bottom + blur),
                ),
            )
    return clean, tuple(leader for leader, _ in found)


def _bars(image: Image.Image, dpi: int) -> list[tuple[int, int, int, int]]:
    """Boxes (left, top, right, bottom, in page pixels) of the thin bars the page's ink closes
    into along its rows: where its leaders may be."""
    across, down = max(1, round(dpi / COLUMN_DPI)), max(1, round(dpi / ROW_DPI))
    columns, rows = image.width // across, image.height // down
    if columns < 1 or rows < 1:
        return []
    small = image.reduce((across, down), box=(0, 0, columns * across, rows * down))
    faint = paper_level(small) - SAMPLE_DROP
    small = small.point(lambda v: 255 if v < faint else 0)
    gap = _odd(GAP_INCHES * dpi / across)
    closed = darkest(lightest(small, gap, 1), gap, 1)
    tall = _odd(DOT_INCHES * dpi / down + 1)
    thick = lightest(darkest(closed, 1, tall), 1, tall)
    # Thin, and clear of anything thick above and below it (not the dots of a line's i's, or
    # its ascenders, which close into a thin bar just over the line).
    clear = _odd(2 * CLEAR_INCHES * dpi / down)
    thin = ImageChops.subtract(closed, lightest(thick, 1, clear))
    if thin.getbbox() is None:
        return []
    long = re.compile(rb"\xff{%d,}" % math.ceil(LEADER_INCHES * dpi / across))
    data = thin.tobytes()
    pieces: list[list[int]] = []  # [left, top, right, bottom] in sampled columns and rows
    for row in range(rows):
        line = data[row * columns : (row + 1) * columns]
        if 255 not in line:
            continue
        for run in long.finditer(line):
            joined = next(
                (p for p in pieces if p[3] >= row - 1 and p[0] <= run.end() and run.start() <= p[2]), None
            )
            if joined is None:
                pieces.append([run.start(), row, run.end(), row])
            else:
                joined[:] = [min(joined[0], run.start()), joined[1], max(joined[2], run.end()), row]
    reach = math.ceil(DOT_INCHES * dpi)
    return [
        (
            max(0, (left - 1) * across),
            max(0, top * down - reach),
            min(image.width, (right + 1) * across),
            min(image.height, (bottom + 1) * down + reach),
        )
        for left, top, right, bottom in merged([(p[0], p[1], p[2], p[3]) for p in pieces], gap=1)
    ]


def _ink(image: Image.Image, box: tuple[int, int, int, int]) -> Image.Image:
    """255 where the page is ink within box, else 0."""
    return image.crop(box).point(INK_LEVELS)


def _measured(
    image: Image.Image, box: tuple[int, int, int, int], dpi: int
) -> list[tuple[Leader, list[_Mark]]]:
    """The leaders among the marks in box (runs of dots at an even pitch), with their dots."""
    reach = math.ceil(CLEAR_INCHES * dpi)
    # The ink of the box and of CLEAR_INCHES above and below it, where its dots must have none.
    top = max(0, box[1] - reach)
    around = _ink(image, (box[0], top, box[2], min(image.height, box[3] + reach)))
    band = around.crop((0, box[1] - top, around.width, box[3] - top))
    columns = band.reduce((1, band.height)).tobytes().translate(_IS_INK)
    largest, smallest = DOT_INCHES * dpi, SPECK_INCHES * dpi
    gap = GAP_INCHES * dpi
    leaders: list[tuple[Leader, list[_Mark]]] = []
    row: list[_Mark] = []
    for found in _MARKS.finditer(columns):
        bounds = band.crop((found.start(), 0, found.end(), band.height)).getbbox()
        if bounds is None:
            continue
        mark = _Mark(box[0] + found.start(), box[1] + bounds[1], box[0] + found.end(), box[1] + bounds[3])
        kind = _kind(mark, box, largest, smallest, DASH_INCHES * dpi)
        if kind is None or not _clear(around, (box[0], top), mark, reach):
            leaders.extend(_leader(row, dpi))
            row = []
        elif row and _kind(row[-1], box, largest, smallest, DASH_INCHES * dpi) != kind:
            leaders.extend(_leader(row, dpi))  # dots, then dashes: two leaders, each of one kind
            row = [mark]
        elif row and not _in_step(row, mark, gap):
            leaders.extend(_leader(row, dpi))
            row = [row[-1], mark] if _level(row[-1], mark) and mark.left - row[-1].right <= gap else [mark]
        else:
            row.append(mark)
    leaders.extend(_leader(row, dpi))
    return leaders


def _kind(
    mark: _Mark, box: tuple[int, int, int, int], largest: float, smallest: float, dash: float
) -> str | None:
    """What a mark is, whole within the box (not a piece of a taller mark): a dash ("-"), at least
    twice as wide as it is tall, no wider than dash; a dot ("."), no larger than largest; else
    None."""
    width, height = mark.right - mark.left, mark.bottom - mark.top
    if max(width, height) < smallest or height > largest or not (box[1] < mark.top and mark.bottom < box[3]):
        return None
    if width >= 2 * height:
        return "-" if width <= dash else None
    return "." if width <= largest else None


def _clear(around: Image.Image, corner: tuple[int, int], mark: _Mark, reach: int) -> bool:
    """Whether there is no ink within reach above or below a dot (and a pixel either side of
    it), in around: the ink about it, whose corner is at corner on the page."""
    left, right = max(0, mark.left - 1 - corner[0]), min(around.width, mark.right + 1 - corner[0])
    top, bottom = mark.top - corner[1], mark.bottom - corner[1]
    above = around.crop((left, max(0, top - reach), right, top))
    below = around.crop((left, bottom, right, min(around.height, bottom + reach)))
    return above.getbbox() is None and below.getbbox() is None


def _level(last: _Mark, mark: _Mark) -> bool:
    """Whether mark's middle is level with last's, give or take last's height (or 2 pixels)."""
    return abs((mark.top + mark.bottom) - (last.top + last.bottom)) / 2 <= max(2, last.bottom - last.top)


def _in_step(row: list[_Mark], mark: _Mark, gap: float) -> bool:
    """Whether mark goes on the row: level with its last dot, and at the row's pitch (within
    gap of a row of one)."""
    last = row[-1]
    if not _level(last, mark):
        return False
    if len(row) == 1:
        return mark.left - last.right <= gap
    pitch = (last.centre - row[0].centre) / (len(row) - 1)
    return abs(mark.centre - last.centre - pitch) <= PITCH_SPREAD * pitch


def _leader(row: list[_Mark], dpi: int) -> list[tuple[Leader, list[_Mark]]]:
    """The row as a leader with its dots, if it is long enough; else none."""
    if len(row) < MIN_DOTS or row[-1].right - row[0].left < LEADER_INCHES * dpi:
        return []
    gaps = [mark.left - before.right for before, mark in pairwise(row)]
    width = sum(mark.right - mark.left for mark in row) / len(row)
    height = sum(mark.bottom - mark.top for mark in row) / len(row)
    kind = "-" if width >= 2 * height else "."
    leader = Leader(
        row[0].left,
        min(mark.top for mark in row),
        row[-1].right,
        max(mark.bottom for mark in row),
        len(row),
        sum(gaps) / len(gaps) >= (DASH_SPACED if kind == "-" else SPACED) * width,
        (row[0].top + row[0].bottom) / 2,
        (row[-1].top + row[-1].bottom) / 2,
        kind,
    )
    return [(leader, row)]


def _joined(found: list[tuple[Leader, list[_Mark]]]) -> list[tuple[Leader, list[_Mark]]]:
    """The leaders with the pieces of one made one: a leader level with the one before and
    within BLEMISH pitches after it, at the same pitch, continues it (a dot that ran into a
    speck, or a speck between two dots, breaks a row of dots). What lies between them, on the
    leader's rows, is painted with it."""
    out: list[tuple[Leader, list[_Mark]]] = []
    for leader, dots in sorted(found, key=lambda item: (item[0].left, item[0].top)):
        match = next((i for i, (last, _) in enumerate(out) if _continues(last, leader)), None)
        if match is None:
            out.append((leader, dots))
            continue
        last, marks = out[match]
        pitch = _pitch(last)
        skipped = max(0, round((leader.left - last.right) / pitch) - 1) if pitch else 0
        top, bottom = min(last.top, leader.top), max(last.bottom, leader.bottom)
        out[match] = (
            Leader(
                last.left,
                top,
                leader.right,
                bottom,
                last.dots + skipped + leader.dots,
                last.spaced,
                last.first,
                leader.last,
                last.mark,
            ),
            [*marks, _Mark(last.right, top, leader.left, bottom), *dots],
        )
    return out


def _pitch(leader: Leader) -> float:
    """The distance from one of its dots to the next (about: from its ends)."""
    return (leader.right - leader.left) / (leader.dots - 1) if leader.dots > 1 else 0.0


def _continues(last: Leader, leader: Leader) -> bool:
    pitch, gap = _pitch(last), leader.left - last.right
    if (
        not pitch
        or leader.mark != last.mark
        or gap < 0
        or gap > BLEMISH * pitch
        or abs(_pitch(leader) - pitch) > PITCH_SPREAD * pitch
    ):
        return False
    return abs((leader.top + leader.bottom) - (last.top + last.bottom)) / 2 <= max(2, last.bottom - last.top)


def _odd(length: float) -> int:
    """The odd whole number at or above length, at least 1."""
    whole = max(1, math.ceil(length))
    return whole if whole % 2 else whole + 1
