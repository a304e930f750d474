"""The default engine on the unreadable-pages corpus: each page that can be read is read, each
that cannot is a failed page with the code the corpus names, in one pass over the chunk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.engines._limits import Limits
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.pdf.samples import make_scanned_pdf
from tests.corpus.unreadable_pages import Unreadable, huge_and_bomb_among_small, poster_among_small
from tests.pdf_factories import cer

MIB = 1 << 20


@pytest.mark.parametrize("build", [huge_and_bomb_among_small, poster_among_small], ids=lambda b: b.__name__)
def test_auto_reads_what_it_can_and_fails_the_rest(
    build: Callable[[Path], Unreadable], tmp_path: Path
) -> None:
    case = build(tmp_path)
    # An OCR process under the default limits, as a worker runs it.
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=512 * MIB, address_space_bytes=2048 * MIB))
    try:
        pages, _ = pool.submit(recognize_in_process, "auto", case.fixture.path.read_bytes(), 1).result(
            timeout=120
        )
    finally:
        stop_ocr_pool(pool)
    assert [p.page_number for p in pages] == list(range(1, len(case.fixture.expected) + 1))
    for page, expected in zip(pages, case.fixture.expected, strict=True):
        if page.page_number in case.failed:
            assert page.error is not None, page.page_number
            assert page.error.code == case.failed[page.page_number]
            assert page.error.message.startswith(f"page {page.page_number}")
            assert (page.text, page.words) == ("", ())
        else:
            assert page.error is None, page.error
            assert cer(expected, page.text) < 0.1, (page.page_number, page.text[:200])


def _pages_whose_content_does_not_decode(path: Path) -> None:
    """A scanned page, then pages PDFium draws nothing on: a corrupt FlateDecode content stream,
    one in a filter no content stream may use, an empty one, and none at all."""
    import pikepdf

    make_scanned_pdf(path, pages=1, seed=36)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        contents = (
            pdf.make_stream(b"this is not deflated data"),
            pdf.make_stream(b"BT ET"),
            pdf.make_stream(b""),
            None,
        )
        contents[0].Filter = pikepdf.Name.FlateDecode
        contents[1].Filter = pikepdf.Name.DCTDecode
        for stream in contents:
            page = pikepdf.Dictionary(Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, 792])
            if stream is not None:
                page.Contents = stream
            pdf.pages.append(pikepdf.Page(page))
        pdf.save(path)


@pytest.mark.parametrize("engine", ["auto", "tesseract"])
def test_a_page_whose_content_does_not_decode_fails_and_a_blank_page_does_not(
    engine: str, tmp_path: Path
) -> None:
    """PDFium draws nothing of such a page and says nothing: it came out blank, its text silently
    missing. It is a failed page now (page_render_failed, the reason named); a blank page is not."""
    _pages_whose_content_does_not_decode(tmp_path / "content.pdf")
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=512 * MIB, address_space_bytes=2048 * MIB))
    try:
        pages, _ = pool.submit(
            recognize_in_process, engine, (tmp_path / "content.pdf").read_bytes(), 1
        ).result(timeout=120)
    finally:
        stop_ocr_pool(pool)
    assert [p.page_number for p in pages] == [1, 2, 3, 4, 5]
    assert pages[0].error is None
    assert pages[0].text.strip()
    failed = {p.page_number: (p.error.code, p.error.message) for p in pages if p.error is not None}
    assert failed == {
        2: ("page_render_failed", "page 2 cannot be drawn: its content stream is corrupt"),
        3: (
            "page_render_failed",
            "page 3 cannot be drawn: its content stream's filter /DCTDecode is not one a content stream may use",
        ),
    }
    assert [(p.text, p.error) for p in pages[3:]] == [("", None), ("", None)]  # blank, not failed
