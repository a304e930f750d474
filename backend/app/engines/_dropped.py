"""What tesseract dropped beside a line it read, found on the page to be read again.

tesseract drops a column of short words standing alone far from the rest, as a table of
contents' page numbers at the right margin: of six tables of contents without leaders (24
entries, 9-13 points), four came back with 2-4 of their 24 numbers, the titles all read. What
is dropped is still on the page: ink level with a line that was read, to its right, that no
word read covers.

Each read line's row, from GAP past its end to the page's edge, is looked at on the page's ink
reduced to LOOK_DPI with every word's box blanked and its rules taken out (RULE_LONG along a
row, under RULE_THICK tall: a leader drawn as a line from a title to its number, a line to
write on; tables of contents of 24 such entries kept 2-4 of their numbers, and with the
rules the boxes were a picture's size): ink left there at least TALL of the line's
height, with a row of paper within a line's height above and below it (a picture has none), is
dropped text; boxes of it over MAX_SHARE of the page are a picture. The boxes are read again on
their own (one block of lines), the words already read blanked, and only confident words
(MIN_CONFIDENCE) of two letters or digits or more, or with a digit, are kept, as a block of
their own: a speck or an empty box to tick read as a letter or a sign is not. Looking costs
about 4 ms a page at 300 DPI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PIL import Image, ImageChops, ImageDraw

from app.engines._morphology import darkest, lightest, paper_level
from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import merged, text_lines

LOOK_DPI = 75  # the resolution the page's ink is looked at
DROP = 48  # a sample this much darker than the paper is ink
TALL = 0.5  # dropped ink is at least this share of its line's height
GAP = 1.0  # line heights: what is dropped starts at least this far past the line's end
RULE_LONG = 0.2  # inches: a run of ink along a row this long and under RULE_THICK tall is a rule
RULE_THICK = 3  # rows at LOOK_DPI (0.04 in)
MAX_SHARE = 0.1  # of the page: more than this, left out, is a picture, and is not read again
MIN_CONFIDENCE = 60.0  # a word read again is kept when tesseract is at least this sure of it
_MARGIN = 0.25  # line heights about a dropped box, read with it


def dropped_boxes(words: Sequence[TsvWord], image: Image.Image, dpi: int) -> list[tuple[int, int, int, int]]:
    """Boxes (left, top, right, bottom, in page pixels) of ink level with a line read, past its
    end, that no word read covers."""
    if not words or image.mode != "L":
        return []
    factor = max(1, round(dpi / LOOK_DPI))
    small = image.reduce(factor) if factor > 1 else image
    paper = paper_level(small)
    ink = small.point(lambda v: 255 if v < paper - DROP else 0)
    draw = ImageDraw.Draw(ink)
    for word in words:
        draw.rectangle(
            (
                word.left // factor - 1,
                word.top // factor - 1,
                (word.left + word.width) // factor + 1,
                (word.top + word.height) // factor + 1,
            ),
            fill=0,
        )
    boxes: list[tuple[int, int, int, int]] = []
    long = round(RULE_LONG * dpi / factor)
    for line in text_lines(words).values():
        top, bottom, right = line.top, line.bottom, line.right
        height = bottom - top
        start = (right + round(GAP * height)) // factor
        if start >= ink.width:
            continue
        row = (start, top // factor, ink.width, -(-bottom // factor))
        found = ink.crop(row).getbbox()
        if found is not None and found[2] - found[0] >= 2 * long:  # room for a rule, and what it leads to
            found = _without_rules(ink, row, long).getbbox()
        if found is None:
            continue
        left, upper, end, lower = found
        if (lower - upper) * factor < TALL * height or _in_a_picture(
            ink, start + left, start + end, top, bottom, factor
        ):
            continue
        margin = round(_MARGIN * height)
        boxes.append(
            (
                max(0, (start + left) * factor - margin),
                max(0, top - margin),
                min(image.width, (start + end) * factor + margin),
                min(image.height, bottom + margin),
            )
        )
    boxes = merged(boxes)
    if sum((box[2] - box[0]) * (box[3] - box[1]) for box in boxes) > MAX_SHARE * image.width * image.height:
        return []  # a picture beside the text, not words
    return boxes


def _without_rules(ink: Image.Image, box: tuple[int, int, int, int], long: int) -> Image.Image:
    """The ink (255) in box without its rules: runs along a row at least long, in ink less than
    RULE_THICK rows tall (a leader drawn as a line, a line to write on), measured with the rows
    about the box (a rule along its edge is not cut short there). A word's strokes are shorter; a
    picture is thicker."""
    left, top, right, bottom = box
    around = ink.crop((left, top - RULE_THICK, right, bottom + RULE_THICK))  # paper beyond the page
    runs = lightest(darkest(around, long | 1, 1), long | 1, 1)
    thick = lightest(darkest(around, 1, RULE_THICK), 1, RULE_THICK)
    clean = ImageChops.subtract(around, ImageChops.subtract(runs, thick))
    return clean.crop((0, RULE_THICK, right - left, RULE_THICK + bottom - top))


def _in_a_picture(ink: Image.Image, left: int, right: int, top: int, bottom: int, factor: int) -> bool:
    """Whether the ink between columns left and right (of ink, reduced by factor) goes on above
    and below the line's rows, top to bottom (on the page), with no row of paper within a line's
    height of them: a picture, where lines of text have paper between them."""
    height = max(1, (bottom - top) // factor)
    first, last = top // factor, -(-bottom // factor)
    for rows in ((max(0, first - height), first), (last, min(ink.height, last + height))):
        if rows[1] <= rows[0]:
            return False
        band = ink.crop((left, rows[0], right, rows[1])).reduce((right - left, 1))
        if 0 in band.tobytes():
            return False  # a row of paper: lines of text
    return True


def strips(
    image: Image.Image, boxes: Sequence[tuple[int, int, int, int]], words: Sequence[TsvWord]
) -> tuple[Image.Image, tuple[int, int]]:
    """The boxes' pixels on blank paper, cut to their bounds, with the words already read
    blanked (a box drawn round a field's value holds the value too); and where that image's
    corner is on the page."""
    left, top = min(box[0] for box in boxes), min(box[1] for box in boxes)
    right, bottom = max(box[2] for box in boxes), max(box[3] for box in boxes)
    paper = Image.new("L", (right - left, bottom - top), 255)
    for box in boxes:
        paper.paste(image.crop(box), (box[0] - left, box[1] - top))
    draw = ImageDraw.Draw(paper)
    for word in words:
        x, y = word.left - left, word.top - top
        if x < paper.width and y < paper.height and x + word.width > 0 and y + word.height > 0:
            draw.rectangle((x, y, x + word.width, y + word.height), fill=255)
    return paper, (left, top)


def kept(found: Sequence[TsvWord], corner: tuple[int, int], block: int) -> list[TsvWord]:
    """The confident words read on the strips, moved to the page, in blocks numbered from
    block (after the page's own)."""
    return [
        replace(word, block=block + word.block, left=word.left + corner[0], top=word.top + corner[1])
        for word in found
        if word.confidence >= MIN_CONFIDENCE and _wordlike(word.text)
    ]


def _wordlike(text: str) -> bool:
    """Two letters or digits or more, or a digit: a page number, a word; not a lone letter or
    sign, which is what an empty box to tick or a speck reads as."""
    characters = sum(1 for character in text if character.isalnum())
    return characters >= 2 or any(character.isdigit() for character in text)
