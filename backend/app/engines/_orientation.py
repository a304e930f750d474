"""Which way a page's text lines run, and how far they are tilted, measured on the page image
before OCR; and the turns that make it upright and straight.

The measure is a projection profile, the method of Postl (1986) and of leptonica's
pixFindSkew: binarise a copy of the page at about 75 DPI, shear it by a candidate angle, and sum
its ink row by row. Text lines at the right angle make a profile of sharp peaks (ink) and
valleys (the space between lines); the sum of squared differences between adjacent rows
measures that sharpness, and the angle that maximises it is the skew. Columns measured the
same way tell a page whose lines run up and down: turned 90 or 270 degrees, or written so.

It costs about 6 ms a page (Pillow's C code does the shearing and the summing; Python only adds
up a few hundred row sums per angle), against about 600 ms for tesseract to read a page. A
margin of the page is left out, so the dark border of a scanner lid, parallel to the image and
not to the text, does not pull the angle to zero; an image, a table's rules or a few specks
move the profile less than the rows of text do.

What the measure cannot tell is which end of the lines is up; tesseract's orientation and
script detection (OSD) guesses that, and the engine keeps a turn only when the page reads
better for it (tesseract.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

from PIL import Image

ANALYSIS_DPI = 75  # text of 8 points has lines 12 pixels apart here: enough to see them, cheap to shear
MAX_SKEW = 10.0  # degrees either way: past this a page was not fed crooked, it was laid on the glass so
# Tilts under this are left alone: tesseract reads a page within 1.5 degrees of level as well as a
# level one (measured both ways, 8 to 11.5 point text; past 2 degrees clockwise it returns nothing),
# and straightening a 300 DPI page costs about 60 ms, a tenth of reading it. Office scans are
# mostly within a degree: they pay nothing.
MIN_SKEW = 1.0
# A tilt is only believed when its profile is this much sharper than the level one: a photograph
# or an empty page has no angle that stands out, and its best angle is noise.
_SKEW_EVIDENCE = 1.25
# Lines run up and down when the columns' profile is this much sharper than the rows'.
_SIDEWAYS_EVIDENCE = 2.0
_MARGIN = 0.04  # of each side, left out of the measure
_MIN_INK = 0.001  # share of dark pixels below which a page is taken as empty (a page number, specks)
# A letter page at ANALYSIS_DPI is 0.5 megapixels; a poster rendered at a lower resolution to fit
# the render cap is measured coarser still, to keep the measure's cost and memory those of a page.
_MAX_MEASURED_PIXELS = 2_000_000
_MIN_SIDE = 64  # pixels of the measured image below which nothing is measured


@dataclass(frozen=True, slots=True)
class Lines:
    """What the profile says about a page's text lines."""

    # Degrees the lines are tilted counter-clockwise (they rise to the right); 0.0 when within half
    # a degree of level, or when no angle stands out (a photograph, an empty page).
    skew: float
    sideways: bool  # the lines run up and down the image: turned 90 or 270 degrees, or vertical text


LEVEL = Lines(0.0, False)


def measure(image: Image.Image, dpi: int) -> Lines:
    """The skew and direction of the text lines of a grayscale page image rendered at dpi."""
    crowded = math.ceil(math.sqrt(image.width * image.height / _MAX_MEASURED_PIXELS))
    binary = _binarise(image.reduce(max(1, round(dpi / ANALYSIS_DPI), crowded)))
    if binary is None:
        return LEVEL
    coarse = binary.reduce(2)  # a quarter of the pixels for the sweep over the whole range
    rows, columns = _Profile(coarse), _Profile(coarse.transpose(Image.Transpose.ROTATE_90))
    # Every second degree first: lines of 8-point text are 6 pixels apart at this resolution and
    # smear over 4 at a degree off, so the right angle still stands out from two degrees off.
    sweep = [float(angle) for angle in range(-round(MAX_SKEW), round(MAX_SKEW) + 1, 2)]
    row_angle = max(sweep, key=rows.sharpness)
    column_angle = max(sweep, key=columns.sharpness)
    sideways = columns.sharpness(column_angle) > _SIDEWAYS_EVIDENCE * rows.sharpness(row_angle)
    # The columns were measured on the image turned a quarter counter-clockwise: a tilt of the
    # page is the same tilt of its lines whichever way they run, so the angle needs no change.
    profile, angle = (columns, column_angle) if sideways else (rows, row_angle)
    angle = profile.climb(angle, 1.0)
    if angle == 0.0:
        return Lines(0.0, sideways)  # within half a degree of level: nothing to straighten
    # Then at the full measuring resolution: half, quarter and eighth degrees.
    fine = _Profile(binary.transpose(Image.Transpose.ROTATE_90) if sideways else binary)
    for step in (0.5, 0.25, 0.125):
        angle = fine.climb(angle, step)
    angle = max(-MAX_SKEW, min(MAX_SKEW, angle))
    if fine.sharpness(angle) < _SKEW_EVIDENCE * fine.sharpness(0.0):
        angle = 0.0
    return Lines(round(angle, 2), sideways)


def _binarise(image: Image.Image) -> Image.Image | None:
    """Ink 255, paper 0, by Otsu's threshold, with the margins cut off; None for an empty page."""
    width, height = image.size
    left, top = round(width * _MARGIN), round(height * _MARGIN)
    image = image.crop((left, top, width - left, height - top))
    if min(image.size) < _MIN_SIDE:
        return None
    histogram = image.histogram()
    threshold = _otsu(histogram)
    if threshold is None:
        return None
    ink = sum(histogram[: threshold + 1])
    if ink < _MIN_INK * image.width * image.height:
        return None
    return image.point([255 if value <= threshold else 0 for value in range(256)])


def _otsu(histogram: list[int]) -> int | None:
    """The gray level that best splits ink from paper, or None for an image of one level."""
    total = sum(histogram)
    weighted_total = sum(level * count for level, count in enumerate(histogram))
    below = weighted_below = 0
    best, threshold = 0.0, None
    for level, count in enumerate(histogram[:-1]):
        below += count
        weighted_below += level * count
        above = total - below
        if below == 0 or above == 0:
            continue
        difference = weighted_below / below - (weighted_total - weighted_below) / above
        between = below * above * difference * difference
        if between > best:
            best, threshold = between, level
    return threshold


class _Profile:
    """The sharpness of an image's row profile by shear angle, each angle measured once."""

    def __init__(self, image: Image.Image) -> None:
        self._image = image
        self._measured: dict[float, int] = {}

    def climb(self, angle: float, step: float) -> float:
        """angle, or the neighbour step away that is sharper."""
        return max((angle - step, angle, angle + step), key=self.sharpness)

    def sharpness(self, angle: float) -> int:
        """How sharp the rows' ink profile is once the image is sheared by angle (degrees of a
        counter-clockwise tilt made level): the sum of squared differences of adjacent rows."""
        if angle not in self._measured:
            self._measured[angle] = _sharpness(self._image, angle)
        return self._measured[angle]


def _sharpness(image: Image.Image, angle: float) -> int:
    width, height = image.size
    slope = math.tan(math.radians(angle))
    # Output row y takes input row y - slope * (x - width / 2): a vertical shear about the centre,
    # which for small angles levels lines as a rotation would, at a fraction of its cost.
    sheared = image.transform(
        image.size,
        Image.Transform.AFFINE,
        (1, 0, 0, -slope, 1, slope * width / 2),
        resample=Image.Resampling.NEAREST,
        fillcolor=0,
    )
    profile = sheared.resize((1, height), Image.Resampling.BOX).tobytes()
    return sum((b - a) * (b - a) for a, b in pairwise(profile))


def straighten(image: Image.Image, skew: float) -> Image.Image:
    """The image turned by -skew degrees about its centre, the same size, corners filled white.

    Bilinear: nearest-neighbour is six times cheaper and reads as well on prose, but turns the
    rules of a table into staircases that tesseract reads as letters (measured: 1.5-4.5 % of
    the characters of a ruled table lost, against 0.4-2.2 % bilinear)."""
    return image.rotate(-skew, resample=Image.Resampling.BILINEAR, fillcolor=255)


_TURNS = {
    90: Image.Transpose.ROTATE_270,  # PIL turns counter-clockwise; 90 degrees clockwise is its 270
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}


def turn(image: Image.Image, rotation: int) -> Image.Image:
    """The image turned clockwise by rotation (0, 90, 180 or 270 degrees), losslessly."""
    if rotation == 0:
        return image
    return image.transpose(_TURNS[rotation])
