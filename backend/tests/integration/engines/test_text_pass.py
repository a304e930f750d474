"""The planner's text pass in OCR processes: what it reads, and what it leaves to the workers."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from app.core.config import Settings
from app.engines._page_clock import PAGE_CLOCK_SIGNAL
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services.text_reader import TextReader
from tests.bombs import content_bomb_pdf, scattered_glyphs_pdf, self_drawing_form_pdf
from tests.corpus.unreadable_pages import huge_and_bomb_among_small
from tests.pdf_factories import between_text_pages
from tests.peak_rss import run_measuring_peak_rss

BACKEND = Path(__file__).resolve().parents[3]


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


@pytest.mark.timeout(60)
async def test_a_file_whose_pages_kill_the_pass_twice_is_left_to_the_workers(
    reader: TextReader, tmp_path: Path
) -> None:
    """1 KB naming one page 20 times whose form draws itself twice: each reading took a process
    to its headroom (1.6 s here) and the pass read on until eight had died, 12 s of an upload's
    planning. After two deaths the rest of the file is the workers', whose page meter refuses
    such a page before PDFium sees it."""
    path = self_drawing_form_pdf(tmp_path / "self.pdf", times=2, pages=20)
    with capture_logs() as logs:
        read = await reader.read("auto", path, 20)
    assert read.pages == {}
    (event,) = [e for e in logs if e["event"] == "text_pass"]
    assert event["died_on"] == [1, 2]
    assert reader._pool is not None
    assert reader._pool.replaced == 2


async def test_a_page_slow_to_read_is_left_to_the_workers_after_its_seconds(
    reader: TextReader, tmp_path: Path
) -> None:
    """Page 2 holds 100,000 letters placed one by one: PDFium's text page takes about a minute.
    The pass gives it PAGE_SECONDS of CPU, ends its process, and reads page 3 in a new one."""
    texts = between_text_pages(tmp_path / "doc.pdf", scattered_glyphs_pdf(tmp_path / "slow.pdf", 100_000))
    told: list[bool] = []
    reader.on_pages_to_ocr = lambda: told.append(True)

    with capture_logs() as logs:
        read = await reader.read("auto", tmp_path / "doc.pdf", 3)

    assert sorted(read.pages) == [1, 3]
    assert [read.pages[n].text.split() for n in (1, 3)] == [t.split() for t in texts]
    assert told == [True]  # page 2 is the workers'
    assert reader._pool is not None
    assert reader._pool.replaced == 1
    (replaced,) = [e for e in logs if e["event"] == "ocr_process_replaced"]
    assert -PAGE_CLOCK_SIGNAL in replaced["exit_codes"].values()


@pytest.mark.timeout(60)
async def test_no_page_is_begun_after_the_pass_runs_out_of_time(settings: Settings, tmp_path: Path) -> None:
    """A text page, 40 pages of 10,000 overlapping letters (PDFium takes about half a second on
    each, well within a page's own time), a text page: the pass, given 2 s, stops beginning pages
    and leaves the rest (the last page among them) to the workers."""
    slow = scattered_glyphs_pdf(tmp_path / "slow.pdf", 10_000)
    texts = between_text_pages(tmp_path / "doc.pdf", slow, repeat=40)
    reader = TextReader(
        settings.model_copy(update={"read_text_at_planning": True, "ocr_processes": 2}), seconds=2
    )
    told: list[bool] = []
    reader.on_pages_to_ocr = lambda: told.append(True)
    try:
        with capture_logs() as logs:
            read = await reader.read("auto", tmp_path / "doc.pdf", 42)
    finally:
        await reader.close()

    assert read.pages[1].text.split() == texts[0].split()
    assert 42 not in read.pages
    assert len(read.pages) < 20  # a few of the slow pages were read in the time, not all 40
    assert told == [True]
    (done,) = [e for e in logs if e["event"] == "text_pass"]
    assert done["out_of_time"] is True


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


# The pass as an OCR process runs it, with the settings' default limits.
_PASS_ON_A_BOMB = """
import sys
from app.engines._limits import Limits, set_limits
from app.engines.text_pass import read_text_pages

set_limits(Limits(page_decoded_bytes=512 << 20, address_space_bytes=2048 << 20))
pages, _ = read_text_pages("auto", sys.argv[1], 1, 0, 1)
print(pages)
"""


def test_a_bomb_ends_the_pass_near_the_page_limit_not_the_process_limit(tmp_path: Path) -> None:
    """The pass reads pages unmetered: a page whose content inflates to 1 GiB may take the process
    to MAX_PAGE_DECODED_MB (512) over what it mapped, not to OCR_PROCESS_MEMORY_MB (2048): it
    peaked over 1 GiB (2 GB with a larger bomb) before PDFium gave up."""
    bomb = content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30)
    measured = run_measuring_peak_rss(
        [sys.executable, "-c", _PASS_ON_A_BOMB, str(bomb)], env=dict(os.environ), cwd=BACKEND, timeout=120
    )
    # PDFium aborts the process (SIGABRT), or Python's allocation fails: either way no text
    assert measured.completed.returncode != 0 or measured.completed.stdout.strip() == "[None]"
    assert measured.largest_mib < 768, measured.describe()
