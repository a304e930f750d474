"""Cutting a 2,000-page PDF into 50-page chunk PDFs: pypdfium2 import_pages
(what app/pdf/split.py uses) beside pypdf opened from a file handle.

    uv run python -m bench.split [--pages 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

from pypdf import PdfReader, PdfWriter

from app.pdf.plan import plan_chunks
from app.pdf.samples import make_born_digital_pdf
from app.pdf.split import split_pdf
from bench._env import HEADER, row


def _pypdf(path: Path, pages: int) -> float:
    started = time.perf_counter()
    with path.open("rb") as handle:
        reader = PdfReader(handle)
        for r in plan_chunks(pages, 50, 2):
            writer = PdfWriter()
            for index in range(r.page_start - 1, r.page_end):
                writer.add_page(reader.pages[index])
            writer.write(io.BytesIO())
    return time.perf_counter() - started


def _pdfium(path: Path, pages: int) -> float:
    started = time.perf_counter()
    for _ in split_pdf(path, plan_chunks(pages, 50, 2)):
        pass
    return time.perf_counter() - started


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    pdf = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-split-")) / "big.pdf"
    make_born_digital_pdf(pdf, args.pages, seed=3)
    ours = statistics.median(_pdfium(pdf, args.pages) for _ in range(args.repeat))
    theirs = statistics.median(_pypdf(pdf, args.pages) for _ in range(args.repeat))
    print(HEADER)
    print(row(f"split {args.pages} p into 50-page PDFs, seconds vs pypdf", ours, theirs, "s", "< 1 (choice)"))


if __name__ == "__main__":
    run()
