"""A bare scan's own image stands in for its render only where the two are the same picture:
every page the fast path takes is compared with PDFium's render of it, and every way a page can
differ from a bare scan (its image's decode array, a mask, an annotation, a clip, a second
object, margins, another resolution) is rendered instead."""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import pikepdf
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageChops, ImageStat

from app.engines._pages import open_pdf, page_image, render_gray
from app.engines._scan_image import ScanPages, scan_image
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import page_text, render_scan, wrapped
from tests.pdf_factories import cer

LETTER = (612.0, 792.0)


def _jpeg(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def _scan_pdf(
    image: Image.Image,
    *,
    placed: tuple[float, float, float, float] = (0.0, 0.0, *LETTER),
    edit: Callable[[pikepdf.Pdf, pikepdf.Page, pikepdf.Stream], None] | None = None,
    content_before: bytes = b"",
    rotate: int = 0,
) -> bytes:
    """A one-page PDF drawing `image` (JPEG) over the rectangle placed = (x, y, width, height)."""
    pdf = pikepdf.new()
    stream = pikepdf.Stream(pdf, _jpeg(image))
    stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    stream.Width, stream.Height, stream.BitsPerComponent = image.width, image.height, 8
    stream.ColorSpace = pikepdf.Name.DeviceGray if image.mode == "L" else pikepdf.Name.DeviceRGB
    stream.Filter = pikepdf.Name.DCTDecode
    x, y, width, height = placed
    content = content_before + f"q {width:g} 0 0 {height:g} {x:g} {y:g} cm /Im0 Do Q".encode()
    page = pdf.add_blank_page(page_size=LETTER)
    page.obj.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream))
    page.obj.Contents = pikepdf.Stream(pdf, content)
    if rotate:
        page.obj.Rotate = rotate
    if edit is not None:
        edit(pdf, page, stream)
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def text_page() -> tuple[Image.Image, str]:
    text = page_text(3, seed=11)
    return render_scan(text, points=10), wrapped(text)


def _difference(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference in gray levels over the two images' common area."""
    assert abs(a.width - b.width) <= 2, (a.size, b.size)
    assert abs(a.height - b.height) <= 2, (a.size, b.size)
    box = (0, 0, min(a.width, b.width), min(a.height, b.height))
    return float(ImageStat.Stat(ImageChops.difference(a.crop(box), b.crop(box))).mean[0])


def _fast_and_rendered(pdf_bytes: bytes) -> tuple[Image.Image | None, Image.Image, bool]:
    """scan_image's answer, the render, and whether the file's objects say bare scan."""
    document = pdfium.PdfDocument(pdf_bytes)
    try:
        page = document[0]
        try:
            return scan_image(page, 300), render_gray(page, 1, 300), ScanPages(pdf_bytes).is_bare(0)
        finally:
            page.close()
    finally:
        document.close()


@pytest.mark.parametrize("mode", ["L", "RGB"])
@pytest.mark.parametrize("rotate", [0, 90, 180, 270])
def test_a_bare_scan_gives_its_image_as_the_render_shows_it(
    text_page: tuple[Image.Image, str], mode: str, rotate: int
) -> None:
    image = text_page[0].convert(mode)
    fast, rendered, bare = _fast_and_rendered(_scan_pdf(image, rotate=rotate))
    assert bare
    assert fast is not None
    assert fast.mode == "L"
    same = _difference(fast, rendered)
    # and not merely similar to any page: the same picture turned over differs by far more
    assert same < 2
    assert same * 5 < _difference(fast.transpose(Image.Transpose.ROTATE_180), rendered)


def _decode_inverted(pdf: pikepdf.Pdf, page: pikepdf.Page, image: pikepdf.Stream) -> None:
    image.Decode = pikepdf.Array([1, 0])


def _soft_mask(pdf: pikepdf.Pdf, page: pikepdf.Page, image: pikepdf.Stream) -> None:
    mask = pikepdf.Stream(pdf, zlib.compress(bytes([128]) * 16))
    mask.Type, mask.Subtype, mask.Width, mask.Height = pikepdf.Name.XObject, pikepdf.Name.Image, 4, 4
    mask.ColorSpace, mask.BitsPerComponent, mask.Filter = pikepdf.Name.DeviceGray, 8, pikepdf.Name.FlateDecode
    image.SMask = mask


def _annotated(pdf: pikepdf.Pdf, page: pikepdf.Page, image: pikepdf.Stream) -> None:
    note = pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Square, Rect=[100, 100, 300, 300])
    page.obj.Annots = pdf.make_indirect(pikepdf.Array([pdf.make_indirect(note)]))


def _indexed(pdf: pikepdf.Pdf, page: pikepdf.Page, image: pikepdf.Stream) -> None:
    image.ColorSpace = pikepdf.Array(
        [pikepdf.Name.Indexed, pikepdf.Name.DeviceGray, 255, bytes(range(256))[::-1]]
    )


@pytest.mark.parametrize("edit", [_decode_inverted, _soft_mask, _annotated, _indexed])
def test_an_image_that_is_not_drawn_as_stored_is_rendered(
    text_page: tuple[Image.Image, str], edit: Callable[[pikepdf.Pdf, pikepdf.Page, pikepdf.Stream], None]
) -> None:
    pdf_bytes = _scan_pdf(text_page[0], edit=edit)
    assert not ScanPages(pdf_bytes).is_bare(0)
    with open_pdf(pdf_bytes) as document:
        page = document[0]
        try:
            shown, rendered = page_image(document, page, 0, 1, 300), render_gray(page, 1, 300)
        finally:
            page.close()
    assert shown.tobytes() == rendered.tobytes()  # the render itself


@pytest.mark.parametrize(
    "layout",
    [
        {"placed": (36.0, 36.0, 540.0, 720.0)},  # margins: rendering scales it
        {"content_before": b"0 0 306 792 re W n "},  # clipped to the left half
        {"content_before": b"BT /F1 12 Tf 72 72 Td (x) Tj ET "},  # a second object on the page
    ],
    ids=["margins", "clip", "text"],
)
def test_a_page_that_is_more_than_its_image_is_rendered(
    text_page: tuple[Image.Image, str], layout: dict[str, object]
) -> None:
    fast, _, _ = _fast_and_rendered(_scan_pdf(text_page[0], **layout))  # type: ignore[arg-type]
    assert fast is None


def test_an_image_at_another_resolution_is_rendered(text_page: tuple[Image.Image, str]) -> None:
    lower = text_page[0].resize((1700, 2200))  # 200 DPI on a letter page: the render resamples it
    fast, _, bare = _fast_and_rendered(_scan_pdf(lower))
    assert bare
    assert fast is None


def test_tesseract_reads_a_bare_scan_as_it_reads_its_render(text_page: tuple[Image.Image, str]) -> None:
    image, text = text_page
    bare = _scan_pdf(image)
    # A 1-point clip that hides nothing keeps the picture but takes the page off the fast path.
    clipped = _scan_pdf(image, content_before=b"0 0 612 792 re W n ")
    engine = TesseractEngine()
    (fast,) = engine.recognize(bare, 1)
    (slow,) = engine.recognize(clipped, 1)
    assert cer(text, fast.text) < 0.01
    assert abs(cer(text, fast.text) - cer(text, slow.text)) < 0.005
