"""Page geometry as PDFium reads it, and the transform from OCR pixels back to the page."""

from __future__ import annotations

import pikepdf
import pytest
from pikepdf import Name

from app.pdf.page_space import PageGeometry, ocr_to_page, page_geometry

_PDFS: list[pikepdf.Pdf] = []  # a pikepdf object lives no longer than its Pdf


def page_under(node: dict[str, object], page: dict[str, object]) -> pikepdf.Dictionary:
    """A page dictionary whose parent holds node's (inheritable) attributes."""
    pdf = pikepdf.new()
    _PDFS.append(pdf)
    parent = pdf.make_indirect(pikepdf.Dictionary({"/Type": Name.Pages, **node}))
    return pdf.make_indirect(pikepdf.Dictionary({"/Type": Name.Page, "/Parent": parent, **page}))


def test_boxes_and_turn_are_inherited() -> None:
    page = page_under({"/MediaBox": [0, 0, 500, 700], "/Rotate": 270}, {})
    assert page_geometry(page) == PageGeometry((0, 0, 500, 700), (0, 0, 500, 700), 270)


def test_the_crop_box_is_normalised_and_cut_to_the_media_box() -> None:
    page = page_under({}, {"/MediaBox": [0, 0, 600, 800], "/CropBox": [650, 900, -10, 100]})
    assert page_geometry(page).crop_box == (0, 100, 600, 800)


@pytest.mark.parametrize(
    ("rotate", "shown"), [(90, 90), (-90, 270), (450, 90), (100, 90), (45, 0), (180.0, 180)]
)
def test_rotate_counts_whole_quarter_turns_as_pdfium_does(rotate: float, shown: int) -> None:
    assert page_geometry(page_under({}, {"/MediaBox": [0, 0, 10, 10], "/Rotate": rotate})).rotate == shown


def test_a_missing_or_empty_media_box_is_letter() -> None:
    assert page_geometry(page_under({}, {})).media_box == (0, 0, 612, 792)
    assert page_geometry(page_under({}, {"/MediaBox": [0, 0, 0, 0]})).media_box == (0, 0, 612, 792)


def test_render_size_is_pypdfium2s_ceiling() -> None:
    letter = PageGeometry((0, 0, 612, 792), (0, 0, 612, 792), 0)
    assert letter.render_size(300) == (2550, 3301)  # 792 * (300 / 72) is a hair over 3300
    assert PageGeometry(letter.media_box, letter.crop_box, 90).render_size(150) == (1651, 1275)


def test_the_corners_of_the_image_are_the_corners_of_the_crop_box() -> None:
    geometry = PageGeometry((0, 0, 600, 800), (50, 100, 550, 700), 90)
    width, height = geometry.render_size(72)  # 600 x 500 pixels: a point a pixel
    turned = ocr_to_page(geometry, 72, 0.0, 180)
    # turned 180 after /Rotate 90: the image's top-left is the crop box's top-right corner
    assert turned.apply(0, 0) == pytest.approx((550, 700))
    assert turned.apply(width, height) == pytest.approx((50, 100))
