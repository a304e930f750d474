"""The planner's text pass in OCR processes: what it reads, and what it leaves to the workers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.core.config import Settings
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services.text_reader import TextReader
from tests.corpus.unreadable_pages import huge_and_bomb_among_small


@pytest.fixture
async def reader(settings: Settings) -> AsyncIterator[TextReader]:
    reader = TextReader(settings.model_copy(update={"read_text_at_planning": True, "ocr_processes": 2}))
    yield reader
    await reader.close()


async def test_a_page_that_kills_its_process_is_left_and_the_pages_after_it_are_read(
    reader: TextReader, tmp_path: Path
) -> None:
    """Page 3 inflates to 1 GiB: PDFium aborts under the process's memory limit. Page 4, after it
    in the same slice, is read all the same, by a new process."""
    case = huge_and_bomb_among_small(tmp_path)
    text = case.fixture.expected[3]

    read = await reader.read("auto", case.fixture.path, 4)

    assert set(read.pages) == {4}  # 1 is a scan, 2 has no text, 3 killed its process
    assert read.pages[4].text.split() == text.split()
    assert read.pages[4].source == "text-layer"
    assert reader._pool is not None
    assert reader._pool.replaced == 1  # exactly one process died: on page 3, not on the retry


async def test_slices_in_parallel_read_every_text_page_in_order(reader: TextReader, tmp_path: Path) -> None:
    texts = make_born_digital_pdf(tmp_path / "born.pdf", pages=600, seed=9)

    read = await reader.read("text-layer", tmp_path / "born.pdf", 600)

    assert sorted(read.pages) == list(range(1, 601))
    assert [read.pages[n].text.split() for n in range(1, 601)] == [t.split() for t in texts]
    assert read.engine_version.startswith("pdfium")


async def test_scanned_pages_are_left_to_the_workers_and_say_so(reader: TextReader, tmp_path: Path) -> None:
    make_scanned_pdf(tmp_path / "scan.pdf", pages=3)
    told: list[bool] = []
    reader.on_pages_to_ocr = lambda: told.append(True)

    read = await reader.read("auto", tmp_path / "scan.pdf", 3)

    assert read.pages == {}
    assert told == [True]


async def test_an_engine_that_reads_no_text_layer_starts_no_process(
    reader: TextReader, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=3)

    read = await reader.read("tesseract", tmp_path / "born.pdf", 3)

    assert read.pages == {}
    assert reader._pool is None
