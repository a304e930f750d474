"""Searchable PDF: `chunk-ocr run --engine tesseract --output pdf --ocr-processes 2` beside
`ocrmypdf --jobs 2 --output-type pdf` on the same generated 300 DPI degraded scan (the
scanned benchmark's file). Rows: pages/s, the character error rate of `pdftotext` on each
output against the known text, and each output's size over the input's. Each side runs
`--warmup` times untimed first.

    uv run python -m bench.searchable [--pages 20] [--repeat 3] [--warmup 1]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from bench._env import HEADER, NAME_WIDTH, chunk_ocr, median_of, ocrmypdf_command, row, services, timed
from bench._samples import make_degraded_scan_pdf
from tests.pdf_factories import cer
from tests.pdf_tools import pdftotext


def _pdftotext(pdf: Path) -> str:
    return pdftotext(pdf).replace("\f", "\n")


async def main(pages: int, repeat: int, warmup: int = 1) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-searchable-"))
    pdf = work / "scan.pdf"
    reference = "\n".join(make_degraded_scan_pdf(pdf, pages, seed=2026))
    ours_pdf = work / "ours" / "scan.ocr.pdf"
    theirs_pdf = work / "ocrmypdf.pdf"
    async with services() as env:
        ours = median_of(
            repeat,
            lambda: timed(
                chunk_ocr(
                    "run",
                    str(pdf),
                    "--out",
                    str(work / "ours"),
                    "--output",
                    "pdf",
                    "--engine",
                    "tesseract",
                    "--ocr-processes",
                    "2",
                ),
                env,
            ),
            warmup=warmup,
        )
        theirs = median_of(
            repeat,
            lambda: timed(
                [
                    *ocrmypdf_command(),
                    "--jobs",
                    "2",
                    "--output-type",
                    "pdf",
                    "--force-ocr",
                    str(pdf),
                    str(theirs_pdf),
                ],
            ),
            warmup=warmup,
        )
    our_cer, their_cer = cer(reference, _pdftotext(ours_pdf)), cer(reference, _pdftotext(theirs_pdf))
    size = pdf.stat().st_size
    label = "searchable: pdftotext CER (ours, ocrmypdf)"
    return [
        row(
            f"searchable {pages} p, pages/s vs ocrmypdf --jobs 2",
            pages / ours,
            pages / theirs,
            "pages/s",
            ">= 1.3",
        ),
        f"{label:<{NAME_WIDTH}}{our_cer * 100:>10.3f}{their_cer * 100:>10.3f} "
        f"{'%':<8}{(our_cer - their_cer) * 100:>+7.3f}  within 0.5 points",
        row(
            "searchable: output size / input size",
            ours_pdf.stat().st_size / size,
            theirs_pdf.stat().st_size / size,
            "x",
            "lower",
        ),
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()
    lines = asyncio.run(main(args.pages, args.repeat, args.warmup))
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
