"""A scanned page's own image, decoded without rendering the page.

A scan is usually a page that draws one image over its whole area, stored at the
resolution it would be rendered at for OCR (300 DPI). Rendering such a page gives
back that image's pixels, at a cost: on a letter page PDFium renders in about
75 ms what it decodes in about 12 ms when asked for the image alone (its JPEG; a
tenth of tesseract's time on a sparse page). So a page that is nothing but such an
image is handed over as the image, and every other page is rendered.

"Nothing but such an image" is checked on both sides, and any doubt renders:

- the file's objects (pikepdf, once per chunk): the page's only XObject is an
  8-bit DeviceGray or DeviceRGB image (or ICC-based with 1 or 3 components) with
  no /Decode array, mask, soft mask or stencil, and the page has no annotations;
- PDFium's view of the page: one page object, that image, drawn upright over the
  page's whole box with no clipping path, at the rendering resolution (within 1 %)
  on both axes.

The page's /Rotate is applied to the image as rendering would apply it, and the image is brought
to the render's size. Decoding, turning and resizing cost about 30 ms of the render's 75.
"""

from __future__ import annotations

import io
import math
from functools import cached_property
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

if TYPE_CHECKING:  # imported where used: the planning process imports this module (through the
    # pool) but never reads a scan's objects, and pikepdf is slow to import at a command's start
    import pikepdf

_EDGE_POINTS = 0.5  # how far the image's edge may be from the page's (rendering rounds to a pixel)
_DPI_TOLERANCE = 0.01
_PLAIN_SPACES = {"/DeviceGray": 1, "/DeviceRGB": 3}
_TURNS = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


class ScanPages:
    """Which pages of one chunk's PDF are bare scans, read from its objects on first use."""

    def __init__(self, pdf_bytes: bytes) -> None:
        self._pdf_bytes = pdf_bytes

    @cached_property
    def _bare(self) -> frozenset[int]:
        import pikepdf

        try:
            with pikepdf.open(io.BytesIO(self._pdf_bytes)) as pdf:
                return frozenset(index for index, page in enumerate(pdf.pages) if _bare_scan(page))
        except (pikepdf.PdfError, ValueError, KeyError, TypeError):  # whatever cannot be read renders
            return frozenset()

    def is_bare(self, index: int) -> bool:
        return index in self._bare


def _bare_scan(page: pikepdf.Page) -> bool:
    """The page's objects: one plain image XObject and no annotations."""
    import pikepdf

    if len(page.obj.get("/Annots", ())) > 0:
        return False
    xobjects = page.resources.get("/XObject")
    if not isinstance(xobjects, pikepdf.Dictionary) or len(xobjects.keys()) != 1:
        return False
    image = next(iter(xobjects.values()))
    if not isinstance(image, pikepdf.Stream) or image.get("/Subtype") != "/Image":
        return False
    info = image.stream_dict
    if info.get("/BitsPerComponent") != 8 or bool(info.get("/ImageMask", False)):
        return False
    if any(key in info for key in ("/Decode", "/Mask", "/SMask", "/SMaskInData")):
        return False
    return _plain_colour_space(info.get("/ColorSpace"))


def _plain_colour_space(space: object) -> bool:
    import pikepdf

    if isinstance(space, pikepdf.Name):
        return str(space) in _PLAIN_SPACES
    if isinstance(space, pikepdf.Array) and len(space) == 2 and space[0] == "/ICCBased":
        profile = space[1]
        return isinstance(profile, pikepdf.Stream) and profile.get("/N") in (1, 3)
    return False


def scan_image(page: pdfium.PdfPage, dpi: int) -> Image.Image | None:
    """The page as rendering it at dpi would show it, in 8-bit gray, taken from its one image;
    None when the page is more than one image laid over it at that resolution (render it)."""
    if pdfium_c.FPDFPage_CountObjects(page.raw) != 1:
        return None
    image = next(page.get_objects(max_depth=1))
    if image.type != pdfium_c.FPDF_PAGEOBJ_IMAGE or not isinstance(image, pdfium.PdfImage):
        return None
    clip = pdfium_c.FPDFPageObj_GetClipPath(image.raw)
    if clip and pdfium_c.FPDFClipPath_CountPaths(clip) > 0:
        return None
    matrix = image.get_matrix()
    if matrix.b != 0 or matrix.c != 0 or matrix.a <= 0 or matrix.d <= 0:
        return None  # turned, mirrored or sheared: rendering resamples it
    left, bottom, right, top = page.get_bbox()
    edges = (matrix.e, matrix.f, matrix.e + matrix.a, matrix.f + matrix.d)
    if any(
        abs(edge - side) > _EDGE_POINTS for edge, side in zip(edges, (left, bottom, right, top), strict=True)
    ):
        return None
    width, height = image.get_px_size()
    for pixels, points in ((width, matrix.a), (height, matrix.d)):
        if abs(pixels * 72 / points - dpi) > dpi * _DPI_TOLERANCE:
            return None
    rotation = page.get_rotation()
    if rotation not in (0, *_TURNS):
        return None
    try:
        decoded: Image.Image = image.get_bitmap(render=False).to_pil()
    except pdfium.PdfiumError:
        return None
    if decoded.size != (width, height) or decoded.mode not in ("L", "RGB"):
        return None
    gray = decoded if decoded.mode == "L" else decoded.convert("L")
    if rotation:
        gray = gray.transpose(_TURNS[rotation])
    # The render's own size (pypdfium2 rounds each side up: a letter page is 2550 x 3301 pixels at
    # 300 DPI), reached the way PDFium stretches an image, so tesseract sees the render's pixels
    # to within a grey level or two: it reacts to less (one page of figures read 1.1 % wrong from
    # the render, 5.2 % from its image as stored, 0.9 % from this).
    scale = dpi / 72  # as render_gray passes it, so the sides round as they do there
    size = (math.ceil(page.get_width() * scale), math.ceil(page.get_height() * scale))
    return gray if gray.size == size else gray.resize(size, Image.Resampling.BILINEAR)
