"""The pages an OCR process read before it died come back with its death, and a run of the chunk
that is given them does not read them again (app.engines._read_pages)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.engines._limits import Limits
from app.engines._read_pages import MAX_BYTES, page_read, pages_read, record_to
from app.engines.base import PageResult
from app.engines.errors import OcrProcessDiedError
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from tests.bombs import content_bomb_pdf
from tests.pdf_factories import between_text_pages, cer

MIB = 1 << 20


@pytest.mark.timeout(180)
def test_a_death_gives_back_the_pages_read_before_it_and_they_are_not_read_again(tmp_path: Path) -> None:
    """Pages 11 to 13 of a document, read by tesseract; on page 12 PDFium inflates content past
    the process's memory (no page meter here) and the process dies, as on a page that crashes it."""
    bomb = content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30)
    texts = between_text_pages(tmp_path / "chunk.pdf", bomb, seeds=(7, 8))
    chunk = (tmp_path / "chunk.pdf").read_bytes()
    pool = make_ocr_pool(1, Limits(address_space_bytes=768 * MIB))
    try:
        with pytest.raises(OcrProcessDiedError) as died:
            pool.submit(recognize_in_process, "tesseract", chunk, 11).result(timeout=120)
        assert died.value.context["page"] == 12
        (kept,) = died.value.pages_read
        assert kept.page_number == 11
        assert cer(texts[0], kept.text) < 0.02

        # Given back, page 11 is not read again: what comes back for it is what it was given.
        stand_in = PageResult(11, "read before the process died", 0.93, "ocr")
        lost = {12: ("ocr_process_died", "died on page 12")}
        pages, _ = pool.submit(
            recognize_in_process, "tesseract", chunk, 11, lost=lost, read={11: stand_in}
        ).result(timeout=120)
        assert pages[0] == stand_in
        assert pages[1].error is not None
        assert pages[1].error.code == "ocr_process_died"
        assert pages[2].page_number == 13
        assert cer(texts[1], pages[2].text) < 0.02
    finally:
        stop_ocr_pool(pool)


def test_a_record_cut_short_by_a_death_is_left_out(tmp_path: Path) -> None:
    """The process may die while it writes a page: the pages before it are still given back."""
    path = tmp_path / "123.read"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    first, second = PageResult(1, "one", 0.9, "ocr"), PageResult(2, "two " * 1000, 0.9, "ocr")
    record_to(descriptor)
    try:
        page_read(first)
        page_read(second)
    finally:
        record_to(None)
        os.close(descriptor)
    whole = path.read_bytes()
    assert pages_read(path) == [first, second]
    path.write_bytes(whole[:-10])  # the second record's end never written
    assert pages_read(path) == [first]
    assert pages_read(tmp_path / "none.read") == []


def test_a_task_records_no_more_than_its_share_of_shared_memory(tmp_path: Path) -> None:
    """Pages past MAX_BYTES are left out (read again after a death), not written to /dev/shm."""
    path = tmp_path / "124.read"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    large = [PageResult(number, "x" * (MAX_BYTES // 3), 0.9, "ocr") for number in range(1, 5)]
    small = PageResult(5, "five", 0.9, "ocr")
    record_to(descriptor)
    try:
        for page in [*large, small]:
            page_read(page)
    finally:
        record_to(None)
        os.close(descriptor)
    assert path.stat().st_size <= MAX_BYTES
    assert [page.page_number for page in pages_read(path)] == [1, 2, 5]
