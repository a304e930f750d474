"""Scanned pages: `chunk-ocr run --engine tesseract --ocr-processes 2` beside
`ocrmypdf --jobs 2 --output-type none --sidecar` and beside the limit (PDFium
render + tesseract with OMP_THREAD_LIMIT=1 on the pre-rendered pages, two at
a time), on the same generated 300 DPI scan (8-point prose through a simulated
economy scanner: skew, blur, noise, JPEG). Also the character error rate of both
against the known text. Each side runs `--warmup` times untimed first.

    uv run python -m bench.scanned [--pages 20] [--repeat 3] [--warmup 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pypdfium2 as pdfium

from bench._env import HEADER, NAME_WIDTH, chunk_ocr, median_of, ocrmypdf_command, row, services, timed
from bench._samples import make_degraded_scan_pdf
from tests.pdf_factories import cer


def _limit(pdf: Path, workdir: Path) -> float:
    """Render every page at 300 DPI, then tesseract them two at a time: the work nobody can skip."""
    started = time.perf_counter()
    document = pdfium.PdfDocument(pdf)
    images = []
    for index in range(len(document)):
        image = document[index].render(scale=300 / 72, grayscale=True).to_pil().convert("L")
        path = workdir / f"page-{index:04d}.pgm"
        image.save(path)
        images.append(path)
    document.close()
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}

    def ocr(path: Path) -> None:
        subprocess.run(
            ["tesseract", str(path), "stdout", "--dpi", "300", "tsv"],
            env=env,
            capture_output=True,
            check=True,
        )

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(ocr, images))
    return time.perf_counter() - started


async def main(pages: int, repeat: int, warmup: int = 1) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-scan-"))
    pdf = work / "scan.pdf"
    texts = make_degraded_scan_pdf(pdf, pages, seed=2026)
    reference = "\n".join(texts)
    ocrmypdf = ocrmypdf_command()
    async with services() as env:
        ours = median_of(
            repeat,
            lambda: timed(
                chunk_ocr(
                    "run",
                    str(pdf),
                    "--out",
                    str(work / "ours"),
                    "--engine",
                    "tesseract",
                    "--ocr-processes",
                    "2",
                ),
                env,
            ),
            warmup=warmup,
        )
        sidecar = work / "ocrmypdf.txt"
        theirs = median_of(
            repeat,
            lambda: timed(
                [
                    *ocrmypdf,
                    "--jobs",
                    "2",
                    "--output-type",
                    "none",
                    "--sidecar",
                    str(sidecar),
                    "--force-ocr",
                    str(pdf),
                    "-",
                ],
            ),
            warmup=warmup,
        )
        limit = median_of(repeat, lambda: _limit(pdf, Path(tempfile.mkdtemp(dir=work))), warmup=warmup)
    label = "character error rate (ours, ocrmypdf)"
    our_cer = cer(reference, (work / "ours" / "scan.txt").read_text().replace("\f", "\n"))
    their_cer = cer(reference, sidecar.read_text().replace("\f", "\n"))
    return [
        row(
            f"scanned {pages} p, pages/s vs ocrmypdf --jobs 2",
            pages / ours,
            pages / theirs,
            "pages/s",
            ">= 1.15",
        ),
        row(
            f"scanned {pages} p, pages/s vs limit (render+tess x2)",
            pages / ours,
            pages / limit,
            "pages/s",
            ">= 0.90",
        ),
        f"{label:<{NAME_WIDTH}}{our_cer * 100:>10.3f}{their_cer * 100:>10.3f} "
        f"{'%':<8}{(our_cer - their_cer) * 100:>+7.3f}  within 0.5 points",
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
