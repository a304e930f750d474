"""Repairing damaged files (tests/corpus/damaged.py): every intact page kept, the lost ones marked and
named, and the files that cannot be read refused with their real cause."""

from __future__ import annotations

import io
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image
from pypdf import PdfReader

from app.engines._pages import image_coverage
from app.pdf.errors import DamagedPdfError, UnsupportedCompressionError
from app.pdf.inspect import inspect_pdf
from app.pdf.lost import lost_page_reason
from app.pdf.plan import plan_chunks
from app.pdf.repair import repair_pdf
from app.pdf.split import split_pdf
from app.pdf.verify import undrawable_pages
from tests.corpus.damaged import (
    DamagedFixture,
    broken_page_tree,
    overcounted_page_tree,
    page_in_unsupported_filter,
    truncated_page_tree,
    truncated_scan_colour_space,
    truncated_shared_resources,
    unsupported_filter,
)
from tests.corpus.pdf_objects import classic_pdf, stream_object, with_object_stream


def split_pages(path: Path, page_count: int, chunk_pages: int) -> list[tuple[bytes, int]]:
    """(chunk PDF, index in it) of every page, in order, as split_pdf cuts them."""
    return [
        (data, k)
        for page_range, data in split_pdf(path, plan_chunks(page_count, chunk_pages, 1))
        for k in range(page_range.page_count)
    ]


def text_of(data: bytes, index: int) -> str:
    document = pdfium.PdfDocument(data)
    try:
        return str(document[index].get_textpage().get_text_bounded())
    finally:
        document.close()


def render(data: bytes, index: int, dpi: int = 36) -> Image.Image:
    document = pdfium.PdfDocument(data)
    try:
        return document[index].render(scale=dpi / 72).to_pil().convert("RGB")
    finally:
        document.close()


def check_pages(fixture: DamagedFixture, chunk_pages: int) -> list[tuple[bytes, int]]:
    """Split the fixture; every page gives its expected text, and exactly the lost pages are marked."""
    pages = split_pages(fixture.fixture.path, len(fixture.fixture.expected), chunk_pages)
    assert len(pages) == len(fixture.fixture.expected)
    for number, ((data, index), expected) in enumerate(zip(pages, fixture.fixture.expected, strict=True), 1):
        assert text_of(data, index).split() == expected.split(), f"page {number}"
        assert (lost_page_reason(data, index) is not None) is (number in fixture.lost_pages), f"page {number}"
    return pages


# -- a truncated file keeps its intact pages -----------------------------------------------------


@pytest.mark.parametrize("first_page_table", [False, True], ids=["classic", "first-page-table"])
def test_a_page_whose_shared_icc_profile_and_font_are_cut_off_is_kept(
    tmp_path: Path, first_page_table: bool
) -> None:
    """The issue's file: page 1 is intact but for the profile and font program it shares with pages
    2-6, which the cut took with them. Page 1 keeps its text and its picture. With its table at the
    start (a linearized download), PDFium opens the cut file itself and would draw page 1 blank:
    it is rebuilt all the same."""
    fixture = truncated_shared_resources(tmp_path / "cut.pdf", first_page_table=first_page_table)
    opens = True
    try:
        pdfium.PdfDocument(fixture.fixture.path).close()
    except pdfium.PdfiumError:
        opens = False
    assert opens is first_page_table
    info = inspect_pdf(fixture.fixture.path)
    assert info.page_count == 6
    assert info.lost_pages == fixture.lost_pages == (2, 3, 4, 5, 6)
    assert info.repaired_pages == fixture.repaired_pages == (1,)
    (warning,) = info.warnings
    assert "5 of 6 pages lost (pages 2-6, left blank); pages 2-6: the page's object is cut off" in warning
    assert "page 1 kept with substitutes: image /Im0: ICC profile is cut off, drawn as DeviceRGB" in warning
    assert "font /F1: embedded font is cut off, drawn with a substitute font" in warning
    assert [item.page for item in info.damage] == [1, 2, 3, 4, 5, 6]
    pages = check_pages(fixture, chunk_pages=2)
    pixels = render(*pages[0]).tobytes()
    reds = sum(
        1
        for r, g, b in zip(pixels[::3], pixels[1::3], pixels[2::3], strict=True)
        if r > 150 and max(g, b) < 90
    )
    assert reds > 50  # the red disc of page 1's image is drawn


def test_a_scan_whose_colour_space_is_cut_off_is_drawn_in_grey(tmp_path: Path) -> None:
    fixture = truncated_scan_colour_space(tmp_path / "scan.pdf")
    info = inspect_pdf(fixture.fixture.path)
    assert (info.lost_pages, info.repaired_pages) == ((2,), (1,))
    assert "image /Im0: colour space is cut off, drawn as DeviceGray" in info.warnings[0]
    (data, index), _ = split_pages(fixture.fixture.path, 2, 1)
    document = pdfium.PdfDocument(data)
    try:
        assert image_coverage(document[index]) > 0.9
    finally:
        document.close()
    assert render(data, index).convert("L").getextrema()[0] < 100  # the scan's text is drawn


def test_the_mark_of_a_lost_page_survives_the_cut_and_reads_back(tmp_path: Path) -> None:
    fixture = truncated_shared_resources(tmp_path / "cut.pdf")
    pages = split_pages(fixture.fixture.path, 6, 4)
    assert [lost_page_reason(data, index) for data, index in pages] == [None] + [
        "the page's object is cut off"
    ] * 5
    data, index = pages[3]
    assert lost_page_reason(PdfReader(io.BytesIO(data)), index) == "the page's object is cut off"
    assert lost_page_reason(b"not even a PDF: a chunk without marks is never parsed", 0) is None


# -- PDFium's word on the repaired pages ---------------------------------------------------------


def header_only_jpeg() -> bytes:
    """A JPEG that stops after its frame header: pypdf cannot tell, PDFium draws nothing of it."""
    encoded = io.BytesIO()
    Image.new("RGB", (40, 40), (200, 30, 30)).save(encoded, "JPEG")
    data, position = encoded.getvalue(), 2
    while data[position + 1] != 0xC0:
        position += 2 + (data[position + 2] << 8 | data[position + 3])
    return data[: position + 2 + (data[position + 2] << 8 | data[position + 3])] + b"\xff\xd9"


def cut_file_with_an_undrawable_image(path: Path) -> Path:
    image = stream_object(
        b"/Type /XObject /Subtype /Image /Width 40 /Height 40 /BitsPerComponent 8 /ColorSpace 7 0 R "
        b"/Filter /DCTDecode",
        header_only_jpeg(),
        compress=False,
    )
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im0 6 0 R >> >> "
        b"/Contents 4 0 R >>",
        4: stream_object(b"", b"q 200 0 0 200 0 0 cm /Im0 Do Q", compress=True),
        5: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 8 0 R >> >> "
        b"/Contents 9 0 R >>",
        6: image,
        7: b"[/ICCBased 10 0 R]",
        8: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        9: stream_object(b"", b"BT /F1 12 Tf 20 100 Td (Second page) Tj ET", compress=True),
    }
    data, offsets = classic_pdf(objects, [1, 2, 3, 4, 5, 6, 8, 9, 7])
    path.write_bytes(data[: offsets[7] + 5])  # the colour space object is cut off
    return path


def test_a_kept_page_pdfium_still_cannot_draw_is_reported_lost(tmp_path: Path) -> None:
    path = cut_file_with_an_undrawable_image(tmp_path / "cut.pdf")
    report = repair_pdf(path, tmp_path / "fixed.pdf")
    assert report.lost_pages == (1,)
    assert report.damage[0].reasons == ("PDFium draws nothing on the page after the repair",)
    fixed = (tmp_path / "fixed.pdf").read_bytes()
    assert lost_page_reason(fixed, 0) == "PDFium draws nothing on the page after the repair"
    assert text_of(fixed, 1).split() == ["Second", "page"]


def test_the_pdfium_check_is_bounded_in_time(tmp_path: Path) -> None:
    path = cut_file_with_an_undrawable_image(tmp_path / "cut.pdf")
    repair_pdf(path, tmp_path / "fixed.pdf", check_seconds=0)  # past the bound at once: kept, unchecked
    assert undrawable_pages(tmp_path / "fixed.pdf", [1, 2], {1}, seconds=0) == {}
    assert undrawable_pages(tmp_path / "fixed.pdf", [1, 2], {1}) == {
        1: "PDFium draws nothing on the page after the repair"
    }


# -- broken page trees ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_pages", [1, 2, 5])
def test_a_page_missing_from_the_page_tree_is_a_marked_blank_and_the_others_are_cut(
    tmp_path: Path, chunk_pages: int
) -> None:
    fixture = broken_page_tree(tmp_path / "tree.pdf")
    info = inspect_pdf(fixture.fixture.path)
    assert info.page_count == 5
    assert info.lost_pages == (3,)
    assert info.warnings == (
        "the PDF's page tree is broken: 1 of 5 pages cannot be found (page 3, left blank); "
        "page 3: the page's object is missing",
    )
    pages = check_pages(fixture, chunk_pages)
    assert lost_page_reason(*pages[2]) == "the page's object is missing"


def test_the_pages_kept_from_a_broken_tree_are_those_pdftotext_reads(tmp_path: Path) -> None:
    fixture = broken_page_tree(tmp_path / "tree.pdf")
    done = subprocess.run(["pdftotext", str(fixture.fixture.path), "-"], capture_output=True, text=True)
    theirs = [page.split() for page in done.stdout.split("\f") if page.strip()]
    ours = [text_of(data, index).split() for data, index in split_pages(fixture.fixture.path, 5, 5)]
    assert theirs == [text for text in ours if text]


def test_a_page_tree_that_counts_more_pages_than_it_holds(tmp_path: Path) -> None:
    fixture = overcounted_page_tree(tmp_path / "count.pdf")
    info = inspect_pdf(fixture.fixture.path)
    assert info.lost_pages == (4,)
    assert "page 4: the page tree counts 4 pages but holds only 3" in info.warnings[0]
    check_pages(fixture, 3)


def test_a_page_compressed_with_a_filter_nobody_reads_is_named(tmp_path: Path) -> None:
    fixture = page_in_unsupported_filter(tmp_path / "page.pdf")
    info = inspect_pdf(fixture.fixture.path)
    assert info.lost_pages == (2,)
    assert (
        "page 2: the page's object is compressed with /JBIG2Decode, which cannot be read" in info.warnings[0]
    )
    pages = check_pages(fixture, 3)
    assert (
        lost_page_reason(*pages[1])
        == "the page's object is compressed with /JBIG2Decode, which cannot be read"
    )


def test_pages_whose_page_tree_is_cut_off_are_taken_in_file_order(tmp_path: Path) -> None:
    fixture = truncated_page_tree(tmp_path / "tex.pdf")
    info = inspect_pdf(fixture.fixture.path)
    assert info.page_count == 4
    assert info.lost_pages == ()
    assert info.warnings == (
        "the file is truncated: rebuilt with pypdf from the 4 pages found in it, in the order they come in "
        "it (its page tree is cut off: pages whose objects went with it are not counted)",
    )
    check_pages(fixture, 3)


# -- refusals that name their cause --------------------------------------------------------------


def test_a_file_whose_objects_use_an_unknown_filter_is_refused_naming_it(tmp_path: Path) -> None:
    fixture = unsupported_filter(tmp_path / "lzma.pdf")
    for attempt in (
        lambda: inspect_pdf(fixture.fixture.path),
        lambda: list(split_pdf(fixture.fixture.path, [])),
    ):
        with pytest.raises(UnsupportedCompressionError) as raised:
            attempt()
        assert raised.value.code == fixture.error_code == "unsupported_compression"
        assert str(raised.value) == "the PDF's objects are compressed with /LZMADecode, which cannot be read"


TEXT_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>"
CONTENT = stream_object(b"", b"BT /F1 12 Tf 20 100 Td (text) Tj ET", compress=True)
PAGES = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"


def pages_in_object_stream(filter_name: bytes, encode: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(
            with_object_stream(
                {1: b"<< /Type /Catalog /Pages 2 0 R >>", 4: CONTENT},
                {2: PAGES, 3: TEXT_PAGE},
                filter_name,
                encode,
            )
        )

    return make


def page_tree_and_pages_cut(path: Path) -> None:
    """The page tree and the page after it are cut off: no page object is left to find."""
    data, offsets = classic_pdf(
        {1: b"<< /Type /Catalog /Pages 2 0 R >>", 2: PAGES, 3: TEXT_PAGE, 4: CONTENT}, [1, 4, 2, 3]
    )
    path.write_bytes(data[: offsets[2] + 10])


def catalog_with(pages: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        objects = {1: b"<< /Type /Catalog %s >>" % pages, 2: PAGES, 3: TEXT_PAGE, 4: CONTENT, 5: b"[3 0 R]"}
        path.write_bytes(classic_pdf(objects)[0])

    return make


# Where pypdf says "Invalid object in /Pages" (or raises its own exception): each cause, in words.
PAGE_TREE_CAUSES: list[tuple[str, Callable[[Path], None], type[DamagedPdfError], str]] = [
    (
        "unknown-filter",
        pages_in_object_stream(b"/FooDecode", zlib.compress),
        UnsupportedCompressionError,
        "the PDF's objects are compressed with /FooDecode, which cannot be read",
    ),
    (
        "image-codec",
        pages_in_object_stream(b"/DCTDecode", zlib.compress),
        UnsupportedCompressionError,
        "the PDF's objects are compressed with /DCTDecode, which cannot be read",
    ),
    (
        "corrupt-stream",
        pages_in_object_stream(b"/FlateDecode", lambda data: b"\x78\x9c\x07" + data),
        DamagedPdfError,
        "the PDF is damaged beyond repair: its page tree is in an object stream that is not valid /FlateDecode data",
    ),
    (
        "cut-off",
        page_tree_and_pages_cut,
        DamagedPdfError,
        "the PDF is damaged beyond repair: its page tree is cut off",
    ),
    (
        "freed",
        catalog_with(b"/Pages 9 0 R"),
        DamagedPdfError,
        "the PDF is damaged beyond repair: its page tree is missing",
    ),
    (
        "no-page-tree",
        catalog_with(b""),
        DamagedPdfError,
        "the PDF is damaged beyond repair: its catalog names no page tree",
    ),
    (
        "not-a-dictionary",
        catalog_with(b"/Pages 5 0 R"),
        DamagedPdfError,
        "the PDF is damaged beyond repair: its page tree is not a dictionary",
    ),
]


@pytest.mark.parametrize(
    ("make", "error", "message"), [c[1:] for c in PAGE_TREE_CAUSES], ids=[c[0] for c in PAGE_TREE_CAUSES]
)
def test_an_unreadable_page_tree_is_refused_naming_its_cause(
    tmp_path: Path, make: Callable[[Path], None], error: type[DamagedPdfError], message: str
) -> None:
    make(tmp_path / "bad.pdf")
    with pytest.raises(DamagedPdfError) as raised:
        inspect_pdf(tmp_path / "bad.pdf")
    assert type(raised.value) is error
    assert str(raised.value) == message
