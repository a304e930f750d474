"""Thin horizontal rules that touch text, taken off a scan before tesseract reads it: an
underline at the letters' feet, a line struck through them, a form's line with its answer
typed on it.

tesseract loses text that a rule touches. Such a rule joins a line of letters into one shape,
which its layout analysis takes for a drawing and drops: a page of 11-point lines each
underlined at the baseline read 100 % wrong (nothing at all), one line in four so underlined
13 %, with one pixel between rule and letters 21 %, and on a blurred economy scan, where the
paper between them goes grey, even three pixels apart lost all of it. ocrmypdf reads those
pages the same way. Rules clear of the text (a table's, a form's empty field) read well as
they are, and are left there: without its rules a table is read column by column instead of
row by row. So are rules that a rule up and down the page meets (in_grid), whatever touches
them: tesseract finds a table from its grid, and reads it row by row.

A rule is a run of ink at least RULE_INCHES long, with gaps of no more than a pixel, and at
most THIN_INCHES thick. Runs are looked for on every column of COLUMN_DPI and every row of
ROW_DPI (nearest neighbour, so ink stays ink), then measured on the page: letters come apart
every letter or two, and a black band, or the background of white text, is too thick. A rule
touches text when along TOUCHED of its length or more there is a stroke of ink within BESIDE
rows of it; its rows, and what is left of it beside them, are then painted with the paper's
level, except in the columns where a stroke crosses it (a descender through an underline),
so the letters come apart from it whole. Looking costs about 2 ms on a page at 300 DPI without
a rule, and about 1 ms a rule: 14-34 ms on the pages with them measured. A page with more than
MAX_RUNS runs is a pattern (hatching, ruled paper), and is left as it is.

A rule is painted out row by row, so one tilted by a fraction of a degree (less than the page
measure straightens) is painted out as a staircase, and what is left of it at each step still
binds letters: a page with rules tilted SLANT degrees or more is straightened before its rules
are looked for (the engine does that, asking has_rules).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

from PIL import Image, ImageChops

from app.engines._morphology import darkest, level_at, lightest

RULE_INCHES = 0.25  # a rule is at least this long: a short word's underline, a form's field
THIN_INCHES = 0.03  # and at most this thick (a 2-point rule is 0.028 inch)
INK = 128  # levels darker than this are ink
EDGE = 192  # beside a rule, what is darker than this is its blur or its tilt (painted out with it)
TOUCHED = 0.15  # the share of a rule's length with a stroke beside it that makes it touch text
BESIDE = 4  # rows above and below a rule (past the one next to it) where a stroke is beside it
BLUR = 2  # rows of a rule's blurred edge, at most, on either side of it
MOSTLY = 0.6  # a row beside a rule that is ink along this share of it is the rule's too
SLIVER_INCHES = 0.08  # what is left of a rule beside its rows is a run at least this long
GRID_INCHES = 0.3  # a rule up and down the page is ink along this long, unbroken (not a letter's stem)
PAPER_INCHES = 0.04  # how far above and below a rule its paper is measured
SLANT = 0.2  # degrees: a page with rules tilted this much or more is straightened first (see below)
MAX_RUNS = 1000  # runs a page may have to be looked at: every line underlined, 36; tilted 0.7°, 165
COLUMN_DPI = 37.5  # the columns looked at: every 8th at 300 DPI
ROW_DPI = 150  # the rows looked at: every 2nd at 300 DPI, so a rule two pixels thick is seen
_INK_LEVELS = [255 if level < INK else 0 for level in range(256)]
_EDGE_LEVELS = [255 if level < EDGE else 0 for level in range(256)]
_IS_INK = bytes(1 if level < INK else 0 for level in range(256))
_RUN = re.compile(rb"\xff+")
_STRETCH = re.compile(rb"\x01(?:\x01|\x00(?=\x01))*")  # 1s, and single 0s between them
_CROSSED = bytes([0] * 255 + [1])  # 1 where a column is crossed (255), else 0
_UNCROSSED = bytes([255] + [0] * 255)  # 255 where a column is not crossed (0), else 0


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule's pixels: columns left to right (exclusive), rows top to bottom (inclusive)."""

    left: int
    right: int
    top: int
    bottom: int


def unruled(image: Image.Image, dpi: int) -> tuple[Image.Image, bool]:
    """The page with its thin horizontal rules that touch text painted out, and whether it had
    any (if not, the page itself, unchanged)."""
    found = _few_runs(image, dpi)
    clean: Image.Image | None = None
    for left, right, row in found:
        page = image if clean is None else clean  # a rule two samples thick is met twice
        rule = measured(page, left, right, row, dpi)
        if rule is None or in_grid(page, rule, dpi):
            continue
        crossed = _beside(page, rule, dpi)
        if crossed is None:
            continue
        if clean is None:
            clean = image.copy()
        _paint_out(clean, rule, crossed, dpi)
    return (image, False) if clean is None else (clean, True)


def has_rules(image: Image.Image, dpi: int) -> bool:
    """Whether the page has a thin horizontal rule, touching text or not."""
    return any(
        measured(image, left, right, row, dpi) is not None for left, right, row in _few_runs(image, dpi)
    )


def _few_runs(image: Image.Image, dpi: int) -> list[tuple[int, int, int]]:
    """The page's runs (runs), or none when it has more than MAX_RUNS: a pattern (hatching, a
    screen, ruled paper), not text with rules. Measuring each costs about a millisecond: a page
    of 3,850 short dashes touching strokes took 2.6 s, and now 0.02 s."""
    found = list(islice(runs(image, dpi), MAX_RUNS + 1))
    return [] if len(found) > MAX_RUNS else found


def runs(image: Image.Image, dpi: int) -> Iterator[tuple[int, int, int]]:
    """Each run of ink long and thin enough to be a rule on one sampled row, as sampled: its
    first column, the column after its last, and the row. A run is not always a rule (letters'
    feet can meet on a sampled row): measured tells."""
    column_step = max(1, round(dpi / COLUMN_DPI))
    row_step = max(1, round(dpi / ROW_DPI))
    width, height = image.size
    columns, rows = width // column_step, height // row_step
    if columns < 1 or rows < 1:
        return
    sampled = image.resize(
        (columns, rows), Image.Resampling.NEAREST, box=(0, 0, columns * column_step, rows * row_step)
    )
    ink = sampled.point(_INK_LEVELS)
    long = _odd(RULE_INCHES * dpi / column_step)
    found = darkest(ink, long, 1)
    if found.getbbox() is None:
        return
    found = lightest(found, long, 1)  # the whole of each run at least `long` samples long
    tall = _odd(THIN_INCHES * dpi / row_step)  # sampled rows a bar spans, a rule does not
    found = ImageChops.subtract(found, lightest(darkest(found, 1, tall), 1, tall))
    if found.getbbox() is None:
        return
    data = found.tobytes()
    for index in range(rows):
        line = data[index * columns : (index + 1) * columns]
        if 255 in line:
            for run in _RUN.finditer(line):
                yield run.start() * column_step, run.end() * column_step, index * row_step + row_step // 2


def measured(image: Image.Image, left: int, right: int, row: int, dpi: int) -> Rule | None:
    """The rule through row, or next to it, between left and right (give or take a sample's
    step): the rows next to each other there that are ink along RULE_INCHES or more, with the
    ends of the longest; None when there are none (or none now), or they are thicker than
    THIN_INCHES.

    Ink along a length means ink but for gaps of a single pixel (a scan's noise; with gaps of
    two, the rows of a halftone screen's dots passed for rules). Letters can meet on a row, but
    come apart every letter or two: no row of the benchmark's degraded, dense or grainy pages,
    or of the app's sample scans, was ink along more than 48 pixels at 300 DPI."""
    width, height = image.size
    reach = max(1, math.ceil(THIN_INCHES * dpi))
    step = max(1, round(dpi / COLUMN_DPI))
    first, last = max(0, left - step), min(width, right + step)

    def stretch(y: int) -> tuple[int, int] | None:
        if not 0 <= y < height:
            return None
        ink = _ink_along(image, y, first, last)
        found = max(_STRETCH.finditer(ink), key=lambda match: match.end() - match.start(), default=None)
        if found is None or found.end() - found.start() < RULE_INCHES * dpi:
            return None
        return first + found.start(), first + found.end()

    # The sampled row can be a row of letters' feet right above or below the rule.
    centre = next((y for y in (row, row - 1, row + 1) if stretch(y) is not None), None)
    if centre is None:
        return None
    rows: dict[int, tuple[int, int]] = {}
    for way in (-1, 1):
        y = centre if way < 0 else centre + 1
        while len(rows) <= reach and (found := stretch(y)) is not None:
            rows[y] = found
            y += way
    if len(rows) > reach:
        return None
    longest = max(rows, key=lambda y: rows[y][1] - rows[y][0])
    # The whole of it: the sampled run can be a piece of it, cut where letters stand on it.
    start, end = _whole(image, longest, *rows[longest])
    top, bottom = min(rows), max(rows)
    # Rows of it that a scan's noise breaks too often to be ink along RULE_INCHES.
    while top > min(rows) - BLUR and _share(image, start, end, top - 1) >= MOSTLY:
        top -= 1
    while bottom < max(rows) + BLUR and _share(image, start, end, bottom + 1) >= MOSTLY:
        bottom += 1
    return Rule(start, end, top, bottom)


def _whole(image: Image.Image, row: int, start: int, end: int) -> tuple[int, int]:
    """The stretch of ink along the whole row that holds the one from start to end."""
    ink = _ink_along(image, row, 0, image.width)
    for found in _STRETCH.finditer(ink):
        if found.start() <= start < found.end():
            return found.start(), found.end()
    return start, end


def _share(image: Image.Image, left: int, right: int, row: int) -> float:
    """The share of the row's pixels from left to right (exclusive) that are ink."""
    if not 0 <= row < image.height:
        return 0.0
    return _ink_along(image, row, left, right).count(1) / (right - left)


def _ink_along(image: Image.Image, row: int, left: int, right: int) -> bytes:
    """1 for each pixel of the row from left to right (exclusive) that is ink, else 0."""
    return image.crop((left, row, right, row + 1)).tobytes().translate(_IS_INK)


def in_grid(image: Image.Image, rule: Rule, dpi: int) -> bool:
    """Whether a rule across the page meets one up and down it: ink in every row for GRID_INCHES
    above or below it, in some column of it. A table's rules do, and tesseract finds the table
    from them and reads it row by row; painted out, a table whose text sits on its rules was
    read column by column (73 % of it out of order, where it read 15 % wrong with them)."""
    reach = max(1, round(GRID_INCHES * dpi))
    for first, last in ((rule.top - reach, rule.top), (rule.bottom + 1, rule.bottom + 1 + reach)):
        if first < 0 or last > image.height:
            continue
        ink = image.crop((rule.left, first, rule.right, last)).point(_INK_LEVELS)
        if ink.reduce((1, last - first)).histogram()[255]:  # a column all ink
            return True
    return False


def _beside(image: Image.Image, rule: Rule, dpi: int) -> bytes | None:
    """Which of the rule's columns a stroke crosses (one in the BESIDE rows past the row above
    it and one past the row below it, 1 or 0 each); None when too little of it has a stroke
    that near to touch text. A letter two or three pixels off the rule counts as touching it: on
    a blurred scan the paper between them goes grey, and tesseract's threshold takes it for
    ink. The row right beside the rule is not looked at: it can be the rule's own edge, half of
    it ink where it falls between two rows of pixels."""
    above = _strokes(image, rule, rule.top - 1 - BESIDE, rule.top - 1, dpi)
    below = _strokes(image, rule, rule.bottom + 2, rule.bottom + 2 + BESIDE, dpi)
    if ImageChops.lighter(above, below).histogram()[255] < TOUCHED * (rule.right - rule.left):
        return None
    return ImageChops.darker(above, below).tobytes().translate(_CROSSED)


def _strokes(image: Image.Image, rule: Rule, first: int, last: int, dpi: int) -> Image.Image:
    """255 for each of the rule's columns with a stroke of ink in rows first to last (exclusive),
    else 0: ink that is not part of a run along a row SLIVER_INCHES long or longer, which is
    another rule (the other line of a double underline), not a letter."""
    first, last = max(0, first), min(image.height, last)
    if first >= last:
        return Image.new("L", (rule.right - rule.left, 1), 0)
    ink = image.crop((rule.left, first, rule.right, last)).point(_INK_LEVELS)
    sliver = _odd(SLIVER_INCHES * dpi)
    strokes = ImageChops.subtract(ink, lightest(darkest(ink, sliver, 1), sliver, 1))
    return lightest(strokes, 1, 2 * (last - first) - 1).crop((0, 0, ink.width, 1))


def _paint_out(image: Image.Image, rule: Rule, crossed: bytes, dpi: int) -> None:
    """Paint the rule's rows with the paper's level, and what is left of it within BLUR rows of
    them (its blur, and where it tilts from one row to the next): runs along a row darker than
    EDGE and SLIVER_INCHES long or longer. Not in the columns a stroke crosses it in."""
    top, bottom = max(0, rule.top - BLUR), min(image.height, rule.bottom + 1 + BLUR)
    box = (rule.left, top, rule.right, bottom)
    sliver = _odd(SLIVER_INCHES * dpi)
    erase = lightest(darkest(image.crop(box).point(_EDGE_LEVELS), sliver, 1), sliver, 1)
    erase.paste(255, (0, rule.top - top, erase.width, rule.bottom + 1 - top))
    uncrossed = Image.frombytes("L", (len(crossed), 1), crossed.translate(_UNCROSSED)).resize(erase.size)
    image.paste(_paper(image, rule, dpi), box, ImageChops.darker(erase, uncrossed))


def _paper(image: Image.Image, rule: Rule, dpi: int) -> int:
    """The paper's level around the rule: the median level within PAPER_INCHES above and below
    it, mostly paper between lines of text. Painted white on grey paper, rules left white
    stripes, and tesseract lost a whole line of a degraded scan over one."""
    reach = round(PAPER_INCHES * dpi)
    around = image.crop(
        (rule.left, max(0, rule.top - reach), rule.right, min(image.height, rule.bottom + 1 + reach))
    )
    return level_at(around.histogram(), around.width * around.height / 2)


def _odd(length: float) -> int:
    """The odd whole number at or above length, at least 1."""
    whole = max(1, math.ceil(length))
    return whole if whole % 2 else whole + 1
