"""PDFium access rules shared by inspect and split.

PDFium is not thread-safe: every call in a process goes through PDFIUM_LOCK
(the API server and the CLI call it from worker threads). OCR engines run in
their own processes and need no lock.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pypdfium2 is imported by the callers, where PDFium is used
    import pypdfium2 as pdfium

PDFIUM_LOCK = threading.Lock()


def _load_malloc_trim() -> Callable[[int], int] | None:
    try:
        # The C library the interpreter is linked with. Not ctypes.util.find_library("c"): that
        # runs `ldconfig -p` (about 0.1 s) in every process that imports this, OCR processes too.
        libc = ctypes.CDLL(None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None
    return trim


_MALLOC_TRIM = _load_malloc_trim()


def release_freed_memory() -> None:
    """Give memory PDFium freed back to the operating system (glibc's malloc_trim).

    PDFium's buffers for large images are tens of megabytes. glibc serves a freed one's successors
    from the heap of the thread that freed it (its mmap threshold rises to the largest block freed,
    up to 32 MiB) and keeps that heap's pages, so an API that planned large uploads from several
    threads went on holding about one large image per thread. Called after large cuts only;
    a no-op where the C library has no malloc_trim.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def shown_chars(textpage: pdfium.PdfTextPage) -> Iterator[tuple[int, int]]:
    """(index, code point) of each character of textpage that the page draws: not a space or a
    break PDFium made, not shown in render mode 3 (an OCR layer's text; a Type 3 font's glyphs
    in that mode are drawn, but PDFium does not tell its fonts apart: counted as not), and not
    drawn before an opaque image over the whole page (covered_text_objects)."""
    import pypdfium2.raw as pdfium_c

    covered = covered_text_objects(textpage.page)
    modes: dict[int, int] = {}  # text object (its address) -> its render mode
    raw = textpage.raw
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        if code <= 0x20 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            continue
        text_object = pdfium_c.FPDFText_GetTextObject(raw, index)
        address = ctypes.cast(text_object, ctypes.c_void_p).value or 0
        if address not in modes:
            if address in covered:
                modes[address] = _COVERED
            else:
                modes[address] = pdfium_c.FPDFTextObj_GetTextRenderMode(text_object) if address else -1
        if modes[address] not in (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, _COVERED):
            yield index, code


_COVER_TOLERANCE = 1.0  # points an image may fall short of the page on a side
_COVERED = -2  # as a render mode: a text object an image over the whole page hides


def covered_text_objects(page: pdfium.PdfPage) -> frozenset[int]:
    """The text objects (their addresses, forms' included) the page draws before the last opaque
    image it draws over all of its box, at the top level: text an image-on-text scan hides (as
    app.pdf._cover finds it in the content for the graft). Empty when no image covers the page.
    PDFium does not say whether an image has a soft mask or a /Mask (app.pdf._cover, which reads
    the image's dictionary, does): such a scan counts as covering here, so an OCR word the page
    shows through it is kept in the layer, never one it does not show left out."""
    import pypdfium2.raw as pdfium_c

    raw = page.raw
    objects = [
        pdfium_c.FPDFPage_GetObject(raw, index) for index in range(pdfium_c.FPDFPage_CountObjects(raw))
    ]
    box = page.get_bbox()
    last = -1
    for index, item in enumerate(objects):
        if pdfium_c.FPDFPageObj_GetType(item) == pdfium_c.FPDF_PAGEOBJ_IMAGE and _covers(item, raw, box):
            last = index
    if last < 0:
        return frozenset()
    covered: set[int] = set()
    for item in objects[:last]:
        _text_objects(item, covered, depth=0)
    return frozenset(covered)


def _covers(image: Any, page: Any, box: tuple[float, float, float, float]) -> bool:
    """Whether image is opaque and drawn, unclipped, over all of box. PDFium says an image with a
    soft mask or drawn translucent has transparency; a stencil mask (drawn in the fill colour
    where it is set, nothing elsewhere) is the image whose colour space it does not know."""
    import pypdfium2.raw as pdfium_c

    if pdfium_c.FPDFPageObj_HasTransparency(image):
        return False
    metadata = pdfium_c.FPDF_IMAGEOBJ_METADATA()
    if not pdfium_c.FPDFImageObj_GetImageMetadata(image, page, ctypes.byref(metadata)):
        return False
    if metadata.colorspace == pdfium_c.FPDF_COLORSPACE_UNKNOWN:
        return False
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not pdfium_c.FPDFPageObj_GetBounds(image, *(ctypes.byref(v) for v in (left, bottom, right, top))):
        return False
    if not _around((left.value, bottom.value, right.value, top.value), box):
        return False
    clip = pdfium_c.FPDFPageObj_GetClipPath(image)
    if not clip:
        return True
    x, y = ctypes.c_float(), ctypes.c_float()
    for path in range(pdfium_c.FPDFClipPath_CountPaths(clip)):
        points = []
        for number in range(pdfium_c.FPDFClipPath_CountPathSegments(clip, path)):
            segment = pdfium_c.FPDFClipPath_GetPathSegment(clip, path, number)
            if segment and pdfium_c.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y)):
                points.append((x.value, y.value))
        if not points:
            return False
        xs, ys = [point[0] for point in points], [point[1] for point in points]
        if not _around((min(xs), min(ys), max(xs), max(ys)), box):
            return False
    return True


def _around(outer: tuple[float, float, float, float], inner: tuple[float, float, float, float]) -> bool:
    return (
        outer[0] <= inner[0] + _COVER_TOLERANCE
        and outer[1] <= inner[1] + _COVER_TOLERANCE
        and outer[2] >= inner[2] - _COVER_TOLERANCE
        and outer[3] >= inner[3] - _COVER_TOLERANCE
    )


def _text_objects(item: Any, into: set[int], depth: int) -> None:
    import pypdfium2.raw as pdfium_c

    kind = pdfium_c.FPDFPageObj_GetType(item)
    if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
        into.add(ctypes.cast(item, ctypes.c_void_p).value or 0)
    elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < 32:
        for index in range(pdfium_c.FPDFFormObj_CountObjects(item)):
            _text_objects(pdfium_c.FPDFFormObj_GetObject(item, index), into, depth + 1)
