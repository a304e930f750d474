"""Memory: a worker's RSS over 100 chunks (after the first vs after the last), and the peak
RSS of planning (inspect, cut, upload, create rows) a 2,000-page file with `chunk-ocr submit`.

    uv run python -m bench.memory [--chunks 100] [--pages 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import tempfile
from pathlib import Path
from uuid import UUID

import asyncpg
import psutil

from app.pdf.samples import make_born_digital_pdf
from bench._env import HEADER, chunk_ocr, row, services
from tests.peak_rss import run_measuring_peak_rss


def _rss_mb(process: psutil.Process) -> float:
    """The worker and its OCR processes together."""
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / (1024 * 1024)


async def main(chunks: int, pages: int) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-memory-"))
    make_born_digital_pdf(work / "hundred.pdf", chunks, seed=4)
    make_born_digital_pdf(work / "big.pdf", pages, seed=5)
    async with services() as base:
        env = base | {"OCR_PROCESSES": "1", "WORKER_MAX_JOBS": "1", "LOG_LEVEL": "WARNING"}
        planning = run_measuring_peak_rss(
            chunk_ocr("submit", str(work / "big.pdf"), "--engine", "auto"),
            env=env,
            cwd=Path.cwd(),
            timeout=600,
        )
        if planning.completed.returncode != 0:
            raise SystemExit(f"chunk-ocr submit failed: {planning.completed.stderr.strip()[-500:]}")
        submitted = subprocess.run(
            chunk_ocr("submit", str(work / "hundred.pdf"), "--engine", "auto", "--chunk-pages", "1"),
            env=env | {"READ_TEXT_AT_PLANNING": "false"},  # a chunk a page, each through the worker
            capture_output=True,
            text=True,
            check=True,
        )
        document_id = UUID(submitted.stdout.strip())
        conn = await asyncpg.connect(env["DATABASE_URL"])
        worker = subprocess.Popen(chunk_ocr("worker"), env=env)
        process = psutil.Process(worker.pid)
        samples: dict[int, float] = {}
        try:
            while True:
                done = await conn.fetchval(
                    "select count(*) from document_ocr_chunks"
                    " where document_id = $1 and status = 'completed'",
                    document_id,
                )
                if done >= 1 and 1 not in samples:
                    samples[1] = _rss_mb(process)
                if done >= chunks:
                    samples[chunks] = _rss_mb(process)
                    break
                await asyncio.sleep(0.05)
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
            await conn.close()
    first, last = samples[1], samples[chunks]
    return [
        row(f"worker RSS after chunk {chunks} vs after chunk 1", last, first, "MB", "<= 1.20"),
        row(f"planning peak RSS, {pages} pages, vs 300 MB", planning.largest_mib, 300, "MB", "< 1.00"),
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    print(HEADER)
    print("\n".join(asyncio.run(main(args.chunks, args.pages))))


if __name__ == "__main__":
    run()
