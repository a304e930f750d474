"""Vision's words as Word boxes in the geometry every engine shares (base.Word).

For a PDF, Vision gives each word's bounding polygon as normalized vertices
(0..1 of the page as displayed: crop box, /Rotate applied), in the order the
text is read: vertex 0 is the top-left corner of the word as read, vertex 1 its
top-right, whatever way the word lies on the page. So the direction from
vertex 0 to vertex 1 is the way the word reads, and the page's words vote on
the quarter turn that sets them upright.

The boxes are then what tesseract's are: integer pixels of the page image at
RENDER_DPI, turned clockwise by the page's rotation (no skew: Vision reads a
tilted page as it is, and its boxes follow the tilt, so the axis-aligned box
of the turned polygon is the word's box).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from google.cloud import vision_v1

from app.engines.base import Word

# Share of a page's words, reading one way, that turns the page: fewer, and the page stays as it
# came (a page of upright text with a few sideways labels on a chart is upright).
_MAJORITY = 0.5
_NOISE = 0.01  # pixels


@dataclass(frozen=True, slots=True)
class PageWords:
    words: tuple[Word, ...]  # in Vision's reading order
    rotation: int  # degrees clockwise that set the page's text upright: 0, 90, 180 or 270


@dataclass(frozen=True, slots=True)
class _Found:
    text: str
    confidence: float
    corners: tuple[tuple[float, float], ...]  # in points of the page as displayed, y down


def page_words(annotation: vision_v1.TextAnnotation, size_pt: tuple[float, float], dpi: int) -> PageWords:
    """The words of one page, with boxes in pixels at dpi of the page turned upright.

    size_pt is the page's displayed size in points (PDFium's page size: crop box, /Rotate
    applied), the frame Vision's normalized vertices are fractions of."""
    width, height = size_pt
    if width <= 0 or height <= 0:
        return PageWords((), 0)
    found = [
        word
        for page in annotation.pages
        for block in page.blocks
        for paragraph in block.paragraphs
        for word in _words(paragraph.words, page, width, height)
    ]
    rotation = upright_turn([w.corners for w in found])
    scale = dpi / 72
    return PageWords(tuple(_box(w, rotation, width, height, scale) for w in found), rotation)


def _words(
    words: Iterable[vision_v1.Word], page: vision_v1.Page, width: float, height: float
) -> Iterable[_Found]:
    """Vision's words with their text and corners; a word with no text or no polygon is skipped
    (its text is still in the page's text)."""
    for word in words:
        text = "".join(symbol.text for symbol in word.symbols)
        corners = _corners(word.bounding_box, page, width, height)
        if text.strip() and corners:
            yield _Found(text, round(min(max(word.confidence, 0.0), 1.0), 4), corners)


def _corners(
    polygon: vision_v1.BoundingPoly, page: vision_v1.Page, width: float, height: float
) -> tuple[tuple[float, float], ...]:
    """The polygon's vertices in points of the displayed page. Files come with normalized
    vertices; absolute ones (in page.width/height units, points for a PDF) are read the same way."""
    if polygon.normalized_vertices:
        return tuple((v.x * width, v.y * height) for v in polygon.normalized_vertices)
    if polygon.vertices and page.width > 0 and page.height > 0:
        return tuple((v.x / page.width * width, v.y / page.height * height) for v in polygon.vertices)
    return ()


def upright_turn(polygons: Sequence[Sequence[tuple[float, float]]]) -> int:
    """The clockwise quarter turn that sets most words upright, when more than half of those
    with a direction agree on it; else 0.

    A word reading at angle phi (clockwise from the x axis, y down) reads left to right once
    the image is turned clockwise by 360 - phi."""
    votes: Counter[int] = Counter()
    for corners in polygons:
        if len(corners) < 2:
            continue
        (x0, y0), (x1, y1) = corners[0], corners[1]
        if x0 == x1 and y0 == y1:
            continue
        reads_at = round(math.degrees(math.atan2(y1 - y0, x1 - x0)) / 90) % 4 * 90
        votes[(360 - reads_at) % 360] += 1
    if not votes:
        return 0
    turn, count = votes.most_common(1)[0]
    return turn if count > _MAJORITY * sum(votes.values()) else 0


def turn_point(x: float, y: float, rotation: int, width: float, height: float) -> tuple[float, float]:
    """Where a point of a width x height image lands once the image is turned clockwise by
    rotation (as _orientation.turn turns it)."""
    if rotation == 90:
        return height - y, x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return y, width - x
    return x, y


def _box(word: _Found, rotation: int, width: float, height: float, scale: float) -> Word:
    """The word's axis-aligned box in pixels of the turned image, within the image."""
    turned = [
        turn_point(x * scale, y * scale, rotation, width * scale, height * scale) for x, y in word.corners
    ]
    right, bottom = (
        (height * scale, width * scale) if rotation in (90, 270) else (width * scale, height * scale)
    )
    xs = [min(max(x, 0.0), right) for x, _ in turned]
    ys = [min(max(y, 0.0), bottom) for _, y in turned]
    # Rounded outward to whole pixels, but not for the noise of Vision's 32-bit fractions (0.9 is
    # 0.8999999762): a vertex within _NOISE of a whole pixel is on it.
    bbox = (
        math.floor(min(xs) + _NOISE),
        math.floor(min(ys) + _NOISE),
        math.ceil(max(xs) - _NOISE),
        math.ceil(max(ys) - _NOISE),
    )
    return Word(word.text, word.confidence, bbox)
