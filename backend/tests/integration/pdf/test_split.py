"""Splitting on real files: every page once, in order, and the text of each page where it belongs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from app.pdf.errors import DamagedPdfError
from app.pdf.inspect import inspect_pdf
from app.pdf.plan import PageRange, plan_chunks
from app.pdf.samples import make_born_digital_pdf
from app.pdf.split import split_pdf
from tests.pdf_factories import make_truncated_pdf


def texts_of(data: bytes) -> list[str]:
    document = pdfium.PdfDocument(data)
    try:
        return [str(document[k].get_textpage().get_text_bounded()) for k in range(len(document))]
    finally:
        document.close()


@pytest.mark.parametrize(("chunk_pages", "workers"), [(4, 2), (1, 2), (11, 1), (None, 2), (None, 8)])
def test_page_k_of_chunk_i_is_page_start_plus_k(
    tmp_path: Path, chunk_pages: int | None, workers: int
) -> None:
    texts = make_born_digital_pdf(tmp_path / "a.pdf", pages=11, seed=3)
    ranges = plan_chunks(11, chunk_pages, workers)
    pieces = list(split_pdf(tmp_path / "a.pdf", ranges))
    assert [r for r, _ in pieces] == ranges
    for page_range, data in pieces:
        chunk_texts = texts_of(data)
        assert len(chunk_texts) == page_range.page_count
        for k, text in enumerate(chunk_texts):
            assert text.split() == texts[page_range.page_start - 1 + k].split()


def test_pieces_come_one_at_a_time(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=6)
    pieces = split_pdf(tmp_path / "a.pdf", plan_chunks(6, 2, 1))
    first_range, first = next(pieces)
    assert first_range.chunk_index == 0
    assert len(texts_of(first)) == 2
    pieces.close()  # stopping early releases the source


def test_a_range_past_the_end_is_refused(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=3)
    with pytest.raises(DamagedPdfError):
        list(split_pdf(tmp_path / "a.pdf", [PageRange(0, 2, 4)]))


def test_a_repaired_file_splits_into_the_pages_inspect_counted(tmp_path: Path) -> None:
    texts = make_truncated_pdf(tmp_path / "cut.pdf", pages=12, keep=0.7, seed=9)
    info = inspect_pdf(tmp_path / "cut.pdf")
    pieces = list(split_pdf(tmp_path / "cut.pdf", plan_chunks(info.page_count, 5, 2)))
    split_texts = [t for _, data in pieces for t in texts_of(data)]
    assert len(split_texts) == info.page_count == 12
    recovered = [n for n, t in enumerate(split_texts, 1) if t.strip()]
    assert recovered  # the head survives
    assert recovered == list(range(1, len(recovered) + 1))
    assert all(split_texts[n - 1].split() == texts[n - 1].split() for n in recovered)


SPLIT_2000 = """
import sys
from pathlib import Path
from app.pdf.plan import plan_chunks
from app.pdf.split import split_pdf
pages = 0
for page_range, data in split_pdf(Path(sys.argv[1]), plan_chunks(2000, None, 2)):
    pages += page_range.page_count
# VmHWM, not ru_maxrss: the latter starts from the parent's size when a big process spawns us.
peak_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(pages, peak_kib // 1024)
"""


def test_splitting_2000_pages_stays_small(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "big.pdf", pages=2000, seed=1)
    done = subprocess.run(
        [sys.executable, "-c", SPLIT_2000, str(tmp_path / "big.pdf")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parents[3],  # backend/, so `app` imports
    )
    pages, peak_mib = map(int, done.stdout.split())
    assert pages == 2000
    assert peak_mib < 150  # the interpreter and PDFium are about 40 MiB; chunks are cut one at a time
