"""Grey-level morphology on Pillow images, for the page clean-ups before tesseract (_shading,
_rules): the lightest or darkest level in a rectangle around each pixel, which is dilation or
erosion of a mask whose ink is 255 (erosion then dilation is an opening: what is left are the
shapes at least as large as the rectangle); the level at a rank of a histogram, and the
paper's.

Each runs along rows, then along columns, by doubling shifted copies: a few passes of Pillow's
C code over the image, where its MaxFilter (a rank filter) took 7-32 ms on a page reduced to
37.5 DPI, and it only takes squares.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image, ImageChops


def lightest(image: Image.Image, across: int, down: int | None = None) -> Image.Image:
    """The brightest level within an across x down rectangle (each odd; down defaults to across)
    centred on each pixel, the rectangle cut short at the image's edges."""
    return _extreme(image, across, across if down is None else down, ImageChops.lighter, 0)


def darkest(image: Image.Image, across: int, down: int | None = None) -> Image.Image:
    """The darkest level within an across x down rectangle centred on each pixel (as lightest)."""
    return _extreme(image, across, across if down is None else down, ImageChops.darker, 255)


def both(first: Image.Image, second: Image.Image) -> Image.Image:
    """255 where both masks are (each 0 or 255), else 0."""
    return ImageChops.darker(first, second)


def _extreme(
    image: Image.Image,
    across: int,
    down: int,
    pick: Callable[[Image.Image, Image.Image], Image.Image],
    never: int,
) -> Image.Image:
    width, height = image.size
    reach_x, reach_y = across // 2, down // 2
    # Padded by the reach on every side with the level pick never takes, so that the window of
    # the pixel at (x, y) of the image starts at (x, y) of the padded copy.
    padded = Image.new("L", (width + 2 * reach_x, height + 2 * reach_y), never)
    padded.paste(image, (reach_x, reach_y))
    for horizontal, side in ((True, across), (False, down)):
        span = 1
        while span < side:
            step = min(span, side - span)
            shifted = Image.new("L", padded.size, never)
            box = (step, 0, *padded.size) if horizontal else (0, step, *padded.size)
            shifted.paste(padded.crop(box), (0, 0))
            padded = pick(padded, shifted)
            span += step
    return padded.crop((0, 0, width, height))


PAPER_FLOOR = 160  # a page's paper is the median of its levels at and above this


def paper_level(image: Image.Image) -> int:
    """The paper's level on a page (or a reduced copy of it): the median of its levels at or
    above PAPER_FLOOR, 255 when there are none."""
    counts = image.histogram()[PAPER_FLOOR:]
    total = sum(counts)
    return PAPER_FLOOR + level_at(counts, total / 2) if total else 255


def level_at(counts: list[int], rank: float) -> int:
    """The first level of a histogram (counts per level) whose running total reaches rank."""
    seen = 0
    for level, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return level
    return len(counts) - 1
