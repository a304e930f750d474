"""Where a pixel of the image OCR read lies on its PDF page.

The engines read a page as PDFium renders it (app.engines._pages.render_gray): the page as
displayed, its crop box within its media box turned by /Rotate, scaled to whole pixels at the
page's DPI; then straightened by its skew (PIL's rotate by -skew about the centre, same size)
and turned clockwise by its rotation (app.engines._orientation). ocr_to_page undoes the three
steps, so a word box OCR reported in pixels can be drawn in the page's own user space.

Boxes are read the way PDFium reads them (CPDF_Page::UpdateDimensions): normalised, an empty or
missing media box is US Letter, the crop box is cut to the media box, a missing or empty one is
the media box, all in single precision, and /Rotate is counted in whole quarter turns.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import pikepdf
from pikepdf import Name

DEFAULT_DPI = 300  # what the engines render at when a page does not say (engines._pages.RENDER_DPI)
_LETTER = (0.0, 0.0, 612.0, 792.0)
_INHERITABLE_DEPTH = 64  # page tree levels searched for an inherited attribute, as PDFium does

Box = tuple[float, float, float, float]  # left, bottom, right, top


@dataclass(frozen=True, slots=True)
class Affine:
    """x' = a x + c y + e, y' = b x + d y + f: a PDF matrix [a b c d e f]."""

    a: float
    b: float
    c: float
    d: float
    e: float
    f: float

    def then(self, other: Affine) -> Affine:
        """This transform followed by other."""
        return Affine(
            self.a * other.a + self.b * other.c,
            self.a * other.b + self.b * other.d,
            self.c * other.a + self.d * other.c,
            self.c * other.b + self.d * other.d,
            self.e * other.a + self.f * other.c + other.e,
            self.e * other.b + self.f * other.d + other.f,
        )

    def apply(self, x: float, y: float) -> tuple[float, float]:
        return self.a * x + self.c * y + self.e, self.b * x + self.d * y + self.f


@dataclass(frozen=True, slots=True)
class PageGeometry:
    """What of a page decides where its pixels fall: its boxes and its turn."""

    media_box: Box
    crop_box: Box  # the displayed area: the crop box within the media box
    rotate: int  # /Rotate as displayed: 0, 90, 180 or 270

    @property
    def displayed_size(self) -> tuple[float, float]:
        """Width and height of the page as displayed (PDFium's FPDF_GetPageWidthF/HeightF)."""
        left, bottom, right, top = self.crop_box
        width, height = _f32(right - left), _f32(top - bottom)
        return (height, width) if self.rotate in (90, 270) else (width, height)

    def render_size(self, dpi: int) -> tuple[int, int]:
        """The size in pixels of the page rendered at dpi, as pypdfium2's PdfPage.render makes it."""
        width, height = self.displayed_size
        return math.ceil(width * (dpi / 72)), math.ceil(height * (dpi / 72))


def inherited(page: pikepdf.Dictionary, key: Name) -> pikepdf.Object | None:
    """The page's value for an inheritable key: its own, else the nearest ancestor's."""
    node: pikepdf.Object | None = page
    for _ in range(_INHERITABLE_DEPTH):
        if not isinstance(node, pikepdf.Dictionary):
            return None
        value = node.get(key)
        if value is not None:
            return value
        node = node.get(Name.Parent)
    return None


def page_geometry(page: pikepdf.Dictionary) -> PageGeometry:
    """The page's geometry as PDFium displays it."""
    media = _box(inherited(page, Name.MediaBox))
    if media is None:
        media = _LETTER
    crop = _box(inherited(page, Name.CropBox))
    if crop is None:
        crop = media
    else:
        left, bottom = max(crop[0], media[0]), max(crop[1], media[1])
        crop = (left, bottom, max(left, min(crop[2], media[2])), max(bottom, min(crop[3], media[3])))
    return PageGeometry(media, crop, _rotate(inherited(page, Name.Rotate)))


def ocr_to_page(geometry: PageGeometry, dpi: int, skew: float, rotation: int) -> Affine:
    """The transform from the pixels of the image OCR read (x right, y down) to page user space.

    dpi, skew and rotation are the page's: rendered at dpi, turned by -skew degrees about its
    centre, then turned clockwise by rotation (0, 90, 180 or 270)."""
    if rotation not in (0, 90, 180, 270):
        raise ValueError(f"rotation must be 0, 90, 180 or 270, not {rotation}")
    width, height = geometry.render_size(dpi)
    return (
        _unturn(rotation, width, height)
        .then(_unstraighten(skew, width, height))
        .then(_undisplay(geometry, dpi))
    )


def _unturn(rotation: int, width: int, height: int) -> Affine:
    """Turned image -> image before the turn (width x height). PIL's ROTATE_270 (our 90) sends
    (x, y) to (height - y, x); ROTATE_180 to (width - x, height - y); ROTATE_90 to (y, width - x)."""
    if rotation == 90:
        return Affine(0, -1, 1, 0, 0, height)
    if rotation == 180:
        return Affine(-1, 0, 0, -1, width, height)
    if rotation == 270:
        return Affine(0, 1, -1, 0, width, 0)
    return Affine(1, 0, 0, 1, 0, 0)


def _unstraighten(skew: float, width: int, height: int) -> Affine:
    """Straightened image -> rendered image. PIL's rotate(-skew) fills each pixel o of its output
    from the input at c + R(o - c), R = [[cos t, sin t], [-sin t, cos t]], t = skew in radians
    and c the centre: that is the inverse, as it stands."""
    if not skew:
        return Affine(1, 0, 0, 1, 0, 0)
    t = math.radians(skew)
    cos, sin = math.cos(t), math.sin(t)
    cx, cy = width / 2, height / 2
    return Affine(cos, -sin, sin, cos, cx - cos * cx - sin * cy, cy + sin * cx - cos * cy)


def _undisplay(geometry: PageGeometry, dpi: int) -> Affine:
    """Rendered pixel -> user space: the inverse of PDFium's display matrix (page rotation and
    crop box offset, then the scale that fits the displayed page to the bitmap)."""
    left, bottom, right, top = geometry.crop_box
    width, height = geometry.displayed_size
    pixels_wide, pixels_high = geometry.render_size(dpi)
    sx, sy = width / pixels_wide, height / pixels_high  # points per pixel
    if geometry.rotate == 90:
        return Affine(0, sx, sy, 0, left, bottom)
    if geometry.rotate == 180:
        return Affine(-sx, 0, 0, sy, right, bottom)
    if geometry.rotate == 270:
        return Affine(0, -sx, -sy, 0, right, top)
    return Affine(sx, 0, 0, -sy, left, top)


def _box(value: pikepdf.Object | None) -> Box | None:
    """A rectangle normalised in single precision, or None when it is missing, malformed or empty."""
    if not isinstance(value, pikepdf.Array) or len(value) != 4:
        return None
    try:
        x0, y0, x1, y1 = (_f32(float(number)) for number in value)
    except (TypeError, ValueError):
        return None
    box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
    return box if box[2] > box[0] and box[3] > box[1] else None


def _rotate(value: pikepdf.Object | None) -> int:
    """/Rotate in whole quarter turns clockwise, as PDFium counts them (C division: 100 is 90)."""
    try:
        degrees = int(value) if value is not None else 0
    except (TypeError, ValueError):
        return 0
    return (math.trunc(degrees / 90) % 4) * 90


def _f32(value: float) -> float:
    """value rounded to single precision, as PDFium holds coordinates."""
    result: float = struct.unpack("f", struct.pack("f", value))[0]
    return result
