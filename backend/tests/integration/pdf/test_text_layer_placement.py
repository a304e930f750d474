"""Each OCR word of a text layer lies where the word is seen on its page, with its exact text.

Pages of every geometry the engines meet (a crop box off the media box, /Rotate, a page read
turned, a skewed scan, 150 DPI) are made from an image of known words (tests.layer_pages); the
model of how the engines read a page is first checked against the engines' own pipeline on
that ink, then says where each word must be. Two extractors that share nothing with the code
under test read the layer back: PDFium (character boxes) and pdfminer.
"""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from app.pdf.text_layer import render_text_layer
from tests.layer_pages import (
    SETUPS,
    Scan,
    Setup,
    distance,
    expected_box,
    ink_box,
    pdfium_words,
    pdfminer_words,
    read_by_pipeline,
    scanned_page,
    vector_page,
)

TOLERANCE = 1.0  # points; measured: within 0.14 (PDFium) and 0.01 (pdfminer)
INK_TOLERANCE = 3  # pixels


@pytest.fixture(scope="module", params=SETUPS, ids=lambda setup: setup.name)
def scan(request: pytest.FixtureRequest) -> Scan:
    setup: Setup = request.param
    return scanned_page(setup)


def test_the_page_model_is_what_the_engines_read(scan: Scan) -> None:
    """Each word's ink, read through render_gray, straighten and turn, is where its pixel box is:
    the model the other tests take expected positions from is the engines' pipeline."""
    document = pdfium.PdfDocument(scan.pdf)
    try:
        image = read_by_pipeline(document[0], scan.setup)
    finally:
        document.close()
    assert image.size == scan.setup.image_size
    for text, box in scan.words:
        found = ink_box(image, box)
        assert found is not None, text
        assert max(abs(a - b) for a, b in zip(found, box, strict=True)) <= INK_TOLERANCE, (text, found, box)


def test_pdfium_reads_every_word_over_its_ink(scan: Scan) -> None:
    layer = render_text_layer(scan.pdf, [scan.setup.page_text(scan.words)])
    document = pdfium.PdfDocument(layer)
    try:
        found = pdfium_words(document[0])
    finally:
        document.close()
    assert [text for text, _ in found] == [text for text, _ in scan.words]
    for (text, box), cell in zip(found, scan.cells, strict=True):
        expected = expected_box(scan.setup, cell)
        assert distance(box, expected) <= TOLERANCE, (text, box, expected)


def test_pdfminer_reads_every_word_over_its_ink(scan: Scan) -> None:
    layer = render_text_layer(scan.pdf, [scan.setup.page_text(scan.words)])
    found = pdfminer_words(layer)
    assert [text for text, _ in found] == [text for text, _ in scan.words]
    for (text, box), cell in zip(found, scan.cells, strict=True):
        expected = expected_box(scan.setup, cell)
        assert distance(box, expected) <= TOLERANCE, (text, box, expected)


@pytest.mark.parametrize(
    "setup",
    [
        Setup("vector-letter"),
        Setup(
            "vector-a4-150",
            media_box=(0.0, 0.0, 595.28, 841.89),
            crop_box=(20.0, 25.0, 575.0, 830.0),
            dpi=150,
        ),
    ],
    ids=lambda s: s.name,
)
def test_words_of_a_born_digital_page_lie_over_its_own_text(setup: Setup) -> None:
    """OCR of a vector page: each layer word covers the page's own word (its font box). The
    page's text is invisible here, as an earlier OCR's: words the page shows are not laid over
    it at all (test_text_layer_shown_text)."""
    page = vector_page(setup, mode=3)
    layer = render_text_layer(page.pdf, [setup.page_text(page.words)])
    document = pdfium.PdfDocument(page.pdf)
    layer_document = pdfium.PdfDocument(layer)
    try:
        drawn = pdfium_words(document[0])
        found = pdfium_words(layer_document[0])
    finally:
        layer_document.close()
        document.close()
    assert [text for text, _ in found] == [text for text, _ in drawn]
    for (text, box), (_, original) in zip(found, drawn, strict=True):
        assert distance(box, original) <= TOLERANCE, (text, box, original)
