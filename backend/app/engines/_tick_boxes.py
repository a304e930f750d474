"""Empty boxes to tick taken off a scan before tesseract reads it, and put back in its words as
"☐" (U+2610 BALLOT BOX).

tesseract reads a form's empty box as letters and signs, differently at each size and on each
scan: "L]", "[]", "OO", "Ol", "0", "C)", "C1", and now and then runs it into the word beside it
("[No"). A form of 20 questions, each with "Yes" and "No" to tick, read 9-15 % wrong so against
its text with its boxes as "☐". So the boxes are found and painted with the paper before the
page is read, and each is put back after as a word of its own before its label.

A box is found on the page's ink at LOOK_DPI (the mean of the pixels it samples: a scan's noise
evens out). A run of ink along a row SMALLEST to LARGEST inches long with next to nothing (CLEAR)
over it is a top side; a run as long and as far across (its ends within REACH of a side of the
top's) as far below as it is long, give or take SQUARE, its bottom. Between them there must be
ink within STROKE of both of the box's outer edges in SIDES of the rows (straight sides: not a
D's bowl, nor an n set on its side), the sides must stop at the corners (a table's cells' sides
go on into the next cell), and the inside must hold no more than EMPTY of ink: a box with
anything in it (a tick, a cross, a letter of a name written a letter to a box) is left as it is,
for tesseract to read. A page with more than MAX_BOXES is a pattern (graph paper) and is left as
it is. Looking costs 9-19 ms a page at 300 DPI.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

from app.engines._morphology import paper_level
from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import key_of, text_lines

LOOK_DPI = 150  # the resolution the page's ink is looked at
DROP = 64  # a sample this much darker than the paper is ink
SMALLEST, LARGEST = 0.08, 0.3  # inches: a box's sides
SQUARE = 0.25  # its height within this share of its width
REACH = 0.15  # of a side: the bottom side's ends within this of the top's
SIDES = 0.95  # of the rows between top and bottom with ink at each end
EMPTY = 0.03  # of the inside, at most this much ink
CLEAR = 0.1  # of the row over a box's top, at most this much ink (specks)
STROKE = 3  # samples at LOOK_DPI: a side's ink is this near the box's outer edge (0.02 in)
GROW = 0.01  # inches: a box is painted this much beyond its sides (the scan's blur)
MAX_BOXES = 200
TEXT = "\u2610"  # BALLOT BOX
_RUN = re.compile(rb"\x01+")


@dataclass(frozen=True, slots=True)
class TickBox:
    """An empty box to tick, in pixels of the page image (right and bottom exclusive)."""

    left: int
    top: int
    right: int
    bottom: int


def without_boxes(image: Image.Image, dpi: int) -> tuple[Image.Image, tuple[TickBox, ...]]:
    """The page with its empty boxes to tick painted with the paper, and the boxes."""
    if image.mode != "L":
        return image, ()
    factor = max(1, round(dpi / LOOK_DPI))
    small = image.reduce(factor) if factor > 1 else image  # the mean: a scan's noise evens out
    paper = paper_level(small)
    ink = small.point([1 if level < paper - DROP else 0 for level in range(256)]).tobytes()
    found = _boxes(ink, small.width, small.height, dpi / factor)
    if not found or len(found) > MAX_BOXES:
        return image, ()
    grow = max(1, round(GROW * dpi))
    boxes = tuple(
        TickBox(
            max(0, left * factor - grow),
            max(0, top * factor - grow),
            min(image.width, (right + 1) * factor + grow),
            min(image.height, (bottom + 1) * factor + grow),
        )
        for left, top, right, bottom in found
    )
    clean = image.copy()
    draw = ImageDraw.Draw(clean)
    for box in boxes:
        draw.rectangle((box.left, box.top, box.right - 1, box.bottom - 1), fill=paper)
    return clean, boxes


def _boxes(ink: bytes, width: int, height: int, dpi: float) -> list[tuple[int, int, int, int]]:
    """The empty boxes (left, top, right, bottom, inclusive, in samples) on ink (a byte a sample,
    1 for ink, width samples a row)."""
    shortest, longest = max(3, round(SMALLEST * dpi)), round(LARGEST * dpi)
    runs: dict[int, list[tuple[int, int]]] = {}
    needle = b"\x01" * shortest
    start = ink.find(needle)  # hops over the paper, most of a page, in C
    while start != -1:
        end = _RUN.match(ink, start).end()  # type: ignore[union-attr]  # needle matched here
        row, left = divmod(start, width)
        if end - start <= longest and left + end - start <= width:
            runs.setdefault(row, []).append((left, left + end - start - 1))
        start = ink.find(needle, end)
    found: list[tuple[int, int, int, int]] = []
    for top in sorted(runs):
        for left, right in runs[top]:
            side = right - left + 1
            reach = max(1, round(REACH * side))
            above = ink[(top - 1) * width + max(0, left - reach) : (top - 1) * width + right + reach + 1]
            if top and (
                above.count(1) > CLEAR * len(above) or _matching(runs.get(top - 1, ()), left, right, reach)
            ):
                continue  # ink over it (a speck aside): not a box's top, nor its top side's first row
            bottom = next(
                (
                    row
                    for row in range(
                        top + round((1 - SQUARE) * side), min(height, top + round((1 + SQUARE) * side) + 1)
                    )
                    if _matching(runs.get(row, ()), left, right, reach) is not None
                ),
                None,
            )
            if bottom is None:
                continue
            while _matching(runs.get(bottom + 1, ()), left, right, reach) is not None:
                bottom += 1  # the bottom side's last row
            box = _box_at(ink, width, left, top, right, bottom, reach)
            if box is not None:
                found.append(box)
        if len(found) > MAX_BOXES:
            break
    return found


def _matching(runs: Sequence[tuple[int, int]], left: int, right: int, reach: int) -> tuple[int, int] | None:
    return next((run for run in runs if abs(run[0] - left) <= reach and abs(run[1] - right) <= reach), None)


def _box_at(
    ink: bytes, width: int, left: int, top: int, right: int, bottom: int, reach: int
) -> tuple[int, int, int, int] | None:
    """The box whose top and bottom sides run from left to right at top and bottom (within
    reach), if it is one: its outer bounds (inclusive), with straight sides down both ends
    (ink within STROKE samples of each end in SIDES of its rows: not a D) that stop at its
    corners (reach rows on, a table's cells' sides go on) and next to nothing inside (EMPTY)."""
    height = len(ink) // width
    window = range(max(0, left - reach), min(width, right + reach + 1))
    rows = [ink[row * width + window.start : row * width + window.stop] for row in range(top, bottom + 1)]
    inked = [index for index in range(len(window)) if any(line[index] for line in rows)]
    if not inked:
        return None
    outer_left, outer_right = window.start + inked[0], window.start + inked[-1]
    first, last = outer_left - window.start, outer_right - window.start
    ends = sum(
        1 for line in rows if 1 in line[first : first + STROKE] and 1 in line[last - STROKE + 1 : last + 1]
    )
    inner = [line[first + reach + 1 : last - reach] for line in rows[reach + 1 : len(rows) - reach - 1]]
    area = sum(len(line) for line in inner)
    if ends < SIDES * len(rows) or not area or sum(line.count(1) for line in inner) > EMPTY * area:
        return None
    for row in (top - reach, bottom + reach):  # the sides stop at the corners, where a table's go on
        line = ink[row * width + outer_left : row * width + outer_right + 1] if 0 <= row < height else b""
        if 1 in line[:STROKE] or 1 in line[-STROKE:]:
            return None
    return outer_left, top, outer_right, bottom


def box_words(words: Sequence[TsvWord], boxes: Sequence[TickBox]) -> list[TsvWord]:
    """tesseract's words with each box a word in the nearest line it stands level with (its
    label's, set just after it), before the first word to its right; a box level with no line
    is left out."""
    out = list(words)
    lines = text_lines(words)  # a box goes into a line read, so the lines stay where they are
    for box in sorted(boxes, key=lambda box: (box.top, box.left)):
        middle = (box.top + box.bottom) / 2
        level = [line for line in lines.values() if line.top <= middle <= line.bottom]
        if not level:
            continue
        line = min(level, key=lambda line: max(line.left - box.right, box.left - line.right, 0))
        members = [index for index, word in enumerate(out) if key_of(word) == line.key]
        after = next((index for index in members if out[index].left >= box.right), members[-1] + 1)
        block, paragraph, number = line.key
        confidence = sum(out[index].confidence for index in members) / len(members)
        word = TsvWord(
            block,
            paragraph,
            number,
            TEXT,
            confidence,
            box.left,
            box.top,
            box.right - box.left,
            box.bottom - box.top,
        )
        out.insert(after, word)
    return out
