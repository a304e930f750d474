"""Born-digital pages: `chunk-ocr run --engine auto` on a 2,000-page text PDF,
database and Redis already running, beside `pdftotext` on the same file.

A second row separates the start-up both pay once from the work per page: each side also
runs a file a tenth the size, and (T(2,000) - T(200)) / 1,800 pages is its time per page
once started. Each side runs `--warmup` times untimed first.

    uv run python -m bench.born_digital [--pages 2000] [--repeat 3] [--warmup 1]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

from app.pdf.samples import make_born_digital_pdf
from bench._env import HEADER, chunk_ocr, median_of, row, services, timed


async def main(pages: int, repeat: int, warmup: int = 1) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-born-"))
    small_pages = max(1, pages // 10)
    big, small = work / "born.pdf", work / "small.pdf"
    make_born_digital_pdf(big, pages, seed=7)
    make_born_digital_pdf(small, small_pages, seed=7)
    workers = str(os.cpu_count() or 2)
    ours: dict[Path, float] = {}
    theirs: dict[Path, float] = {}
    async with services() as env:
        for pdf in (big, small):
            command = chunk_ocr(
                "run", str(pdf), "--out", str(work / "ours"), "--engine", "auto", "--ocr-processes", workers
            )
            ours[pdf] = median_of(repeat, lambda command=command: timed(command, env), warmup=warmup)
    for pdf in (big, small):
        command = ["pdftotext", str(pdf), str(work / "pdftotext.txt")]
        theirs[pdf] = median_of(repeat, lambda command=command: timed(command), warmup=warmup)
    per_thousand = 1000 / (pages - small_pages) if pages > small_pages else float("nan")
    return [
        row(f"born-digital {pages} p, wall seconds vs pdftotext", ours[big], theirs[big], "s", "<= 1.00"),
        row(
            f"  per 1,000 pages once started ({pages} - {small_pages} p)",
            (ours[big] - ours[small]) * per_thousand,
            (theirs[big] - theirs[small]) * per_thousand,
            "s",
            "(what limits the row above)",
        ),
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()
    lines = asyncio.run(main(args.pages, args.repeat, args.warmup))
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
