"""render_text_layer: one page per chunk page, words as invisible text, in lines, small."""

from __future__ import annotations

import io
import random
import subprocess
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
import pytest
from reportlab.pdfgen import canvas

from app.engines._pages import RENDER_DPI
from app.models.results import PageFailure, PageText, WordBox
from app.pdf.errors import TextLayerError
from app.pdf.page_space import DEFAULT_DPI
from app.pdf.text_layer import render_text_layer


def blank_pdf(pages: int = 1, size: tuple[float, float] = (612, 792)) -> bytes:
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=size)
    for _ in range(pages):
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def ocr_page(words: list[tuple[str, tuple[int, int, int, int]]], number: int = 1) -> PageText:
    return PageText(
        page_number=number,
        text=" ".join(text for text, _ in words),
        confidence=0.9,
        source="ocr",
        words=tuple(WordBox(text=text, confidence=0.9, bbox=box) for text, box in words),
        rotation=0,
        skew=0.0,
    )


def page_text(layer: bytes, index: int = 0) -> str:
    document = pdfium.PdfDocument(layer)
    try:
        return str(document[index].get_textpage().get_text_bounded())
    finally:
        document.close()


def dense_page(number: int, seed: int, words: int = 300) -> PageText:
    """About 300 words of 2-10 letters in lines of ten at 300 DPI, the density of a full page."""
    rng = random.Random(seed)
    boxes = []
    for index in range(words):
        row, column = divmod(index, 10)
        left, top = 150 + column * 220, 200 + row * 90
        length = rng.randint(2, 10)
        text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(length))
        boxes.append((text, (left, top, left + 20 * length, top + rng.randint(36, 50))))
    return ocr_page(boxes, number)


def test_the_default_dpi_is_the_engines() -> None:
    assert DEFAULT_DPI == RENDER_DPI


def test_words_of_a_line_are_joined_by_one_space_and_lines_are_lines(tmp_path: Path) -> None:
    words = [
        ("The", (300, 300, 380, 350)),
        ("first", (400, 300, 500, 350)),
        ("a", (520, 310, 540, 350)),  # shorter than its neighbours, still on their line
        ("line", (560, 300, 650, 350)),
        ("Then", (300, 400, 400, 450)),  # back at the margin: a new line
        ("second", (420, 400, 560, 450)),
    ]
    layer = render_text_layer(blank_pdf(), [ocr_page(words)])
    assert page_text(layer) == "The first a line\r\nThen second"
    (tmp_path / "layer.pdf").write_bytes(layer)
    poppler = subprocess.run(["pdftotext", str(tmp_path / "layer.pdf"), "-"], capture_output=True, check=True)
    assert poppler.stdout.decode().split("\n")[:2] == ["The first a line", "Then second"]


def test_a_word_with_a_gap_before_it_on_the_same_row_is_on_the_same_line() -> None:
    words = [("Name:", (300, 300, 420, 350)), ("Smith", (1500, 302, 1640, 352))]
    assert page_text(render_text_layer(blank_pdf(), [ocr_page(words)])) == "Name: Smith"


def test_right_to_left_words_make_one_line_going_left() -> None:
    words = [("שלום", (900, 300, 1000, 350)), ("עולם", (760, 300, 880, 350))]
    assert page_text(render_text_layer(blank_pdf(), [ocr_page(words)])).split() == ["שלום", "עולם"]


def test_pages_without_ocr_words_are_empty_pages_of_their_size() -> None:
    source = blank_pdf(4, size=(500, 700))
    failed = PageText(
        page_number=2,
        text="",
        confidence=0.0,
        source="ocr",
        error=PageFailure(code="page_render_failed", message="x"),
    )
    text_layer = PageText(page_number=3, text="born digital", confidence=1.0, source="text-layer")
    words = [("kept", (100, 100, 200, 150))]
    layer = render_text_layer(source, [ocr_page([]), failed, text_layer, ocr_page(words, 4)])
    with pikepdf.open(io.BytesIO(layer)) as pdf:
        assert len(pdf.pages) == 4
        assert [list(page.mediabox) for page in pdf.pages] == [[0, 0, 500, 700]] * 4
        assert [pikepdf.Name.Contents in page.obj for page in pdf.pages] == [False, False, False, True]
    assert page_text(layer, 3) == "kept"


def test_controls_and_lone_surrogates_are_dropped_and_empty_words_left_out() -> None:
    words = [
        ("a\x00b", (100, 100, 200, 150)),
        ("\ud800", (220, 100, 260, 150)),
        ("  ", (280, 100, 300, 150)),
        ("c", (320, 100, 360, 150)),
    ]
    assert page_text(render_text_layer(blank_pdf(), [ocr_page(words)])) == "ab c"


def test_the_page_count_must_match() -> None:
    with pytest.raises(TextLayerError):
        render_text_layer(blank_pdf(2), [ocr_page([])])


def test_a_turn_that_is_not_a_quarter_is_refused() -> None:
    page = ocr_page([("x", (1, 1, 5, 5))]).model_copy(update={"rotation": 45})
    with pytest.raises(TextLayerError):
        render_text_layer(blank_pdf(), [page])


def test_an_unreadable_chunk_is_a_text_layer_error() -> None:
    with pytest.raises(TextLayerError):
        render_text_layer(b"%PDF-1.7 not really", [ocr_page([])])


def test_the_same_words_give_the_same_bytes() -> None:
    pages = [dense_page(1, seed=1), dense_page(2, seed=2)]
    assert render_text_layer(blank_pdf(2), pages) == render_text_layer(blank_pdf(2), pages)


def test_a_dense_page_costs_a_few_kilobytes() -> None:
    """300 words a page: the content is in whole pixels, so it compresses to well under 10 KB."""
    pages = 10
    layer = render_text_layer(
        blank_pdf(pages), [dense_page(number, seed=number) for number in range(1, pages + 1)]
    )
    empty = render_text_layer(blank_pdf(pages), [ocr_page([], number) for number in range(1, pages + 1)])
    per_page = (len(layer) - len(empty)) / pages
    print(f"dense page: {per_page:.0f} bytes of text layer for 300 words")
    assert per_page < 6_000
    assert page_text(layer).count(" ") + page_text(layer).count("\n") + 1 == 300
