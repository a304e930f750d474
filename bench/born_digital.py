"""Born-digital pages: `chunk-ocr run --engine auto` on a 2,000-page text PDF,
database and Redis already running, beside `pdftotext` on the same file.

Each side runs `--warmup` times untimed first.

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
    pdf = work / "born.pdf"
    make_born_digital_pdf(pdf, pages, seed=7)
    workers = str(os.cpu_count() or 2)
    async with services() as env:
        ours = median_of(
            repeat,
            lambda: timed(
                chunk_ocr(
                    "run", str(pdf), "--out", str(work / "ours"), "--engine", "auto", "--workers", workers
                ),
                env,
            ),
            warmup=warmup,
        )
    theirs = median_of(
        repeat, lambda: timed(["pdftotext", str(pdf), str(work / "pdftotext.txt")]), warmup=warmup
    )
    return [row(f"born-digital {pages} p, wall seconds vs pdftotext", ours, theirs, "s", "<= 1.00")]


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
