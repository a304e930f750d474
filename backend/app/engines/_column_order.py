"""Columns of prose stored line by line across the page, read column by column.

A PDF may store a page set in two or three columns a row at a time: the first line of the
left column, then the first line of the right one, then the second of each, as writers that
sort what they draw by height do. PDFium's text follows the stored order and joins the two
lines of a row ("L1 the left column's line R1 the right column's line"), so the columns came
out interleaved, line by line. pdftotext finds the columns by where the text is and reads them
one after the other.

Most pages are not so: the pass asks cheaply first. PDFium's text rectangles (one for each text
object, its characters' boxes together) are counted in C; a page with no more of them than
lines has no line drawn in pieces, and on the others a few runs of neighbouring rectangles are
looked at for two jumps to the right across one gap of a line's height or more, as stored rows
do when they cross the gutter. Only then are all rectangles read (about 1 us each). A row
stored as one text object (a TJ whose spacing crosses the gutter) is one rectangle: such a page
keeps PDFium's order.

A gutter is an x where at least MIN_ROWS jumps cross, in stored order. The rectangles it cuts
(a title, a table or a figure caption across the page) split the page into bands above and
below; a band is read as columns of the gutter when at least MIN_ROWS of its stored jumps cross
it (the columns are stored interleaved: stored column by column, PDFium's order is already the
reading order and the page is left as it is), and both sides read as prose: lines wide for the
column and for their height, the right side's lines starting at the same x (a column's margin;
a "river" of word gaps down a paragraph starts its lines anywhere), which also leaves tables of
short cells as PDFium reads them, a row at a time. Such a band's text is each column's, left to
right, read by PDFium from the column's box; the rest of the page is read band by band, top to
bottom, each as PDFium reads it.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.engines._page_chars import Bounds, RectReader, TextRect, bounded_text

Reader = Callable[[Bounds], str]  # the text inside bounds (left, bottom, right, top)

MIN_ROWS = 5  # stored jumps across a gutter (and lines a side) for a band to be read as columns
MAX_GUTTERS = 4  # five columns at most
MAX_RECTS = 20_000  # a page of more text runs than this keeps PDFium's order (it is not prose)
# Where the runs of neighbouring rectangles the cheap test reads start (eighths of the page's
# rectangles, the last two read only when the first two found one jump), and how long they are.
_SAMPLED_EIGHTHS, _SAMPLE_WIDTH = (2, 6, 0, 4), 16
_GAP = 1.0  # a jump crosses a gap of at least this many line heights
_NEAR = 2.0  # and lands within this many line heights of the line it left
_LINE_WIDTHS = 12.0  # a side's lines are prose when their median width is this many heights
_FILLED = 0.5  # and at least this share of the side's width
_WHOLE = 0.8  # and this share of them have no gap of _GAP in them
_WIDEST_GUTTER = 8.0  # line heights: a wider gap is a table's or a form's
_ALIGNED = 0.5  # and (right of the gutter) this share of them start at the same x
_ALIGNED_POINTS = 2.0  # within this many points


@dataclass(frozen=True, slots=True)
class _Band:
    """A run of boxes, by height, read as columns split at the gutters' x (left to right)."""

    first: int  # in the boxes sorted top to bottom
    end: int
    gutters: tuple[float, ...]


def may_have_columns(textpage: pdfium.PdfTextPage, text: str, count: int) -> bool:
    """Whether the page's lines may cross a gutter (the cheap test of the module's doc): two
    jumps over the same gap in runs of neighbouring rectangles spread over the page. Two runs are
    read first; the other two only when they found one jump (a row of words drawn one by one may
    be longer than a run). count: the page's rect_count."""
    raw = textpage.raw
    if count < text.count("\n") + 1 + MIN_ROWS or count > MAX_RECTS:
        return False
    reader = RectReader(raw)
    jumps: dict[int, tuple[TextRect, TextRect]] = {}  # by the index of the box jumped from
    for number, start in enumerate(count * eighth // 8 for eighth in _SAMPLED_EIGHTHS):
        if number == 2 and len(jumps) != 1:
            break
        boxes = [reader.box(index) for index in range(start, min(start + _SAMPLE_WIDTH, count))]
        height = statistics.median(box.height for box in boxes) if boxes else 0.0
        if height > 0:
            jumps.update((a.stored, (a, b)) for a, b in itertools.pairwise(boxes) if _jumps(a, b, height))
    return any(
        a.right < d.left and c.right < b.left for (a, b), (c, d) in itertools.combinations(jumps.values(), 2)
    )


def column_text(textpage: pdfium.PdfTextPage, bounds: Bounds, read: Reader | None = None) -> str | None:
    """The page's text with its interleaved columns read one after the other, or None when it
    has none (PDFium's text stands). read: how the text inside a part's bounds is read (PDFium's
    bounded text, or the page's text put together again, _glued_text)."""
    raw = textpage.raw
    reader = RectReader(raw)
    left, bottom, right, top = bounds
    boxes = [
        box
        for box in (reader.box(index) for index in range(pdfium_c.FPDFText_CountRects(raw, 0, -1)))
        if box.height > 0 and left <= (box.left + box.right) / 2 <= right and bottom <= box.middle <= top
    ]
    if len(boxes) < 2 * MIN_ROWS:
        return None
    height = statistics.median(box.height for box in boxes)
    jumps = [(a, b) for a, b in itertools.pairwise(boxes) if _jumps(a, b, height)]
    gutters = _gutter_xs(jumps) if len(jumps) >= MIN_ROWS else []
    if not gutters or len(gutters) > MAX_GUTTERS:  # more: a table's columns, not prose
        return None
    by_height = sorted(boxes, key=lambda box: -box.middle)
    bands = _bands(by_height, jumps, gutters, height)
    if not bands:
        return None
    return _read(read or _bounded(textpage), bounds, by_height, bands)


def _bounded(textpage: pdfium.PdfTextPage) -> Reader:
    return lambda part: bounded_text(textpage, part)


def _jumps(a: TextRect, b: TextRect, height: float) -> bool:
    """Whether b, stored after a, lies to its right across a gap, near a's line."""
    return b.left - a.right >= _GAP * height and abs(b.middle - a.middle) <= _NEAR * height


def _gutter_xs(jumps: list[tuple[TextRect, TextRect]]) -> list[float]:
    """Each x crossed by MIN_ROWS jumps or more: the most crossed x of each such stretch."""
    events = sorted([(a.right, 1) for a, _ in jumps] + [(b.left, -1) for _, b in jumps])
    xs: list[float] = []
    crossing, best, best_x, previous = 0, 0, 0.0, 0.0
    for x, step in events:
        if crossing >= MIN_ROWS and crossing > best:
            best, best_x = crossing, (previous + x) / 2
        crossing += step
        previous = x
        if crossing < MIN_ROWS and best:
            xs.append(best_x)
            best = 0
    return xs


def _bands(
    by_height: list[TextRect], jumps: list[tuple[TextRect, TextRect]], gutters: list[float], height: float
) -> list[_Band]:
    """The runs of boxes (by height) read as columns, each with its gutters (of those given)."""
    position = {box.stored: at for at, box in enumerate(by_height)}
    per_gutter: list[tuple[int, int, float]] = []
    for number, x in enumerate(gutters):
        # a side ends at the next gutter: three columns are checked two at a time
        before = gutters[number - 1] if number else -math.inf
        after = gutters[number + 1] if number + 1 < len(gutters) else math.inf
        blockers = [at for at, box in enumerate(by_height) if box.left < x < box.right]
        crossing: Counter[int] = Counter()  # stored jumps across x, by the run they are in
        for a, b in jumps:
            run = bisect.bisect(blockers, position[a.stored])
            if a.right <= x <= b.left and bisect.bisect(blockers, position[b.stored]) == run:
                crossing[run] += 1
        for run, first, end in zip(
            itertools.count(), [0, *(at + 1 for at in blockers)], [*blockers, len(by_height)]
        ):
            if (
                crossing[run] >= MIN_ROWS
                and end - first >= 2 * MIN_ROWS
                and _columns(by_height[first:end], x, (before, after), height)
            ):
                per_gutter.append((first, end, x))
    if not per_gutter:
        return []
    # Runs of different gutters (three columns) are cut where any of them starts or ends.
    cuts = sorted({edge for first, end, _ in per_gutter for edge in (first, end)})
    bands: list[_Band] = []
    for first, end in itertools.pairwise(cuts):
        found = tuple(sorted(x for start, stop, x in per_gutter if start <= first and end <= stop))
        if not found:
            continue
        if bands and bands[-1].end == first and bands[-1].gutters == found:
            bands[-1] = _Band(bands[-1].first, end, found)
        else:
            bands.append(_Band(first, end, found))
    return bands


def _columns(run: list[TextRect], x: float, outer: tuple[float, float], height: float) -> bool:
    """Whether the run (no box of which crosses x, stored across x often enough) is prose in
    columns: the columns on either side (up to the gutters beside, outer) are prose with a
    narrow gutter between them."""
    left = [box for box in run if outer[0] <= box.left and box.right <= x]
    right = [box for box in run if x <= box.left and box.right <= outer[1]]
    if not left or not right:
        return False
    if min(box.left for box in right) - max(box.right for box in left) > _WIDEST_GUTTER * height:
        return False  # the gap of a table or a form, not a gutter: prose runs up to it
    return _prose(left, height, aligned=False) and _prose(right, height, aligned=True)


def _prose(side: list[TextRect], height: float, *, aligned: bool) -> bool:
    """Whether a side's boxes, taken as lines, read as a column of prose: wide lines, filling
    the column, most without a gap as wide as a gutter (a table's cells have them)."""
    lines = _lines(side, height)
    if len(lines) < MIN_ROWS:
        return False
    width = max(line.right for line in lines) - min(line.left for line in lines)
    median = statistics.median(line.right - line.left for line in lines)
    if median < _LINE_WIDTHS * height or median < _FILLED * width:
        return False
    if sum(1 for line in lines if line.widest_gap >= _GAP * height) > (1 - _WHOLE) * len(lines):
        return False
    if not aligned:
        return True
    starts = Counter(round(line.left / _ALIGNED_POINTS) for line in lines)
    margin, _ = starts.most_common(1)[0]
    near = sum(count for at, count in starts.items() if abs(at - margin) <= 1)
    return near >= _ALIGNED * len(lines)


@dataclass(slots=True)
class _Line:
    left: float
    right: float
    widest_gap: float = 0.0


def _lines(side: list[TextRect], height: float) -> list[_Line]:
    """The side's boxes joined into lines by height, each box after the one left of it."""
    rows: list[list[TextRect]] = []
    middle = None
    for box in sorted(side, key=lambda box: -box.middle):
        if middle is not None and abs(box.middle - middle) <= height / 2:
            rows[-1].append(box)
        else:
            rows.append([box])
            middle = box.middle
    lines = []
    for row in rows:
        row.sort(key=lambda box: box.left)
        line = _Line(row[0].left, row[0].right)
        for box in row[1:]:
            line.widest_gap = max(line.widest_gap, box.left - line.right)
            line.right = max(line.right, box.right)
        lines.append(line)
    return lines


def _read(read: Reader, bounds: Bounds, by_height: list[TextRect], bands: list[_Band]) -> str:
    """The page band by band, top to bottom; a band of columns column by column, left to right."""
    left, bottom, right, top = bounds

    def edge(at: int) -> float:  # between the boxes at-1 and at (by height)
        if at <= 0:
            return top
        if at >= len(by_height):
            return bottom
        return (by_height[at - 1].middle + by_height[at].middle) / 2

    parts: list[str] = []
    upper = top
    for band in bands:
        band_top, band_bottom = edge(band.first), edge(band.end)
        if band_top < upper:
            parts.append(read((left, band_top, right, upper)))
        xs = [left, *band.gutters, right]
        parts += [read((a, band_bottom, b, band_top)) for a, b in itertools.pairwise(xs)]
        upper = band_bottom
    if upper > bottom:
        parts.append(read((left, bottom, right, upper)))
    # a column's lines end where the row went on across the gutter: with PDFium's space there
    lines = (line.rstrip(" ") for part in parts if part.strip() for line in part.rstrip("\r\n").split("\r\n"))
    return "\r\n".join(lines)
