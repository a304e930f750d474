"""Scanned pages: `chunk-ocr run --engine tesseract --ocr-processes 2` beside
`ocrmypdf --jobs 2 --output-type none --sidecar` and beside the limit, on the same
generated 300 DPI scan. Also the character error rate of both against the known text.
The three are timed in turn, round after round (`--warmup` untimed rounds first), so a machine
that slows down for a while slows all three alike; each figure is the median of its rounds.

Two files (--kind): `degraded`, 8-point prose through a simulated economy scanner (skew,
blur, noise, JPEG), and `dense`, clean 10-point prose filling each page (about 4,500
characters a page), where tesseract's own time is almost all there is.

The limit is tesseract alone: the pages rendered beforehand (untimed) into memory
(/dev/shm), then two tesseract processes (OMP_THREAD_LIMIT=1), each loading its model once
and reading half the pages from a list, both cores busy. Nothing can OCR these pages with
this tesseract faster than that.

    uv run python -m bench.scanned [--kind degraded|dense] [--pages 20] [--repeat 3] [--warmup 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pypdfium2 as pdfium

from bench._env import (
    HEADER,
    NAME_WIDTH,
    chunk_ocr,
    medians_interleaved,
    ocrmypdf_command,
    row,
    services,
    timed,
)
from bench._samples import make_degraded_scan_pdf, make_dense_scan_pdf
from tests.pdf_factories import cer


def _render(pdf: Path, workdir: Path) -> list[Path]:
    """Every page at 300 DPI in gray, as PGM files in memory (/dev/shm) where there is one."""
    shm = Path("/dev/shm")
    target = Path(tempfile.mkdtemp(dir=shm if shm.is_dir() else workdir, prefix="chunk-ocr-limit-"))
    document = pdfium.PdfDocument(pdf)
    images = []
    for index in range(len(document)):
        path = target / f"page-{index:04d}.pgm"
        document[index].render(scale=300 / 72, grayscale=True).to_pil().convert("L").save(path)
        images.append(path)
    document.close()
    return images


def _limit(images: list[Path]) -> float:
    """Two tesseract processes, each reading every other page from a list with its model loaded
    once: tesseract's own time on these pages, with both cores busy."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    lists: list[Path] = []
    for half in (images[0::2], images[1::2]):
        if half:
            listing = half[0].parent / f"list-{len(lists)}.txt"
            listing.write_text("".join(f"{path}\n" for path in half))
            lists.append(listing)
    started = time.perf_counter()
    running = [
        subprocess.Popen(
            ["tesseract", str(listing), "stdout", "--dpi", "300", "tsv"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for listing in lists
    ]
    if any(process.wait() != 0 for process in running):
        raise RuntimeError("tesseract failed on the pre-rendered pages")
    return time.perf_counter() - started


KINDS = {"degraded": make_degraded_scan_pdf, "dense": make_dense_scan_pdf}


def ours_command(pdf: Path, out: Path) -> list[str]:
    """The command this benchmark times (and bench.where profiles)."""
    return chunk_ocr("run", str(pdf), "--out", str(out), "--engine", "tesseract", "--ocr-processes", "2")


async def main(pages: int, repeat: int, warmup: int = 1, kind: str = "degraded") -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-scan-"))
    pdf = work / "scan.pdf"
    texts = KINDS[kind](pdf, pages, seed=2026)
    reference = "\n".join(texts)
    ocrmypdf = ocrmypdf_command()
    sidecar = work / "ocrmypdf.txt"
    command = ours_command(pdf, work / "ours")
    theirs_command = [
        *ocrmypdf,
        *("--jobs", "2", "--output-type", "none", "--sidecar", str(sidecar), "--force-ocr", str(pdf), "-"),
    ]
    images = _render(pdf, work)
    try:
        async with services() as env:
            ours, theirs, limit = medians_interleaved(
                repeat,
                [lambda: timed(command, env), lambda: timed(theirs_command), lambda: _limit(images)],
                warmup=warmup,
            )
    finally:
        shutil.rmtree(images[0].parent, ignore_errors=True)
    name = "scanned" if kind == "degraded" else kind
    label = f"{name}: CER (ours, ocrmypdf)"
    our_cer = cer(reference, (work / "ours" / "scan.txt").read_text().replace("\f", "\n"))
    their_cer = cer(reference, sidecar.read_text().replace("\f", "\n"))
    return [
        row(
            f"{name} {pages} p, pages/s vs ocrmypdf --jobs 2",
            pages / ours,
            pages / theirs,
            "pages/s",
            ">= 1.3",
        ),
        row(
            f"{name} {pages} p, pages/s vs limit (tesseract x2)",
            pages / ours,
            pages / limit,
            "pages/s",
            ">= 0.95",
        ),
        f"{label:<{NAME_WIDTH}}{our_cer * 100:>10.3f}{their_cer * 100:>10.3f} "
        f"{'%':<8}{(our_cer - their_cer) * 100:>+7.3f}  within 0.5 points",
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kind", choices=sorted(KINDS), default="degraded")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()
    lines = asyncio.run(main(args.pages, args.repeat, args.warmup, args.kind))
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
