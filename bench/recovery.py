"""Crash recovery: kill -9 a worker in the middle of a chunk and time until another worker
completes that chunk, against the bound the design promises (stale threshold + one sweep
interval + the chunk's own OCR time); count result writes per chunk (duplicates must be 0).

Runs with a 10 s stale threshold and a 5 s sweep so one run takes seconds, not minutes; the
bound scales with the production settings (90 s + 15 s) the same way.

    uv run python -m bench.recovery [--pages 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from uuid import UUID

import asyncpg

from app.pdf.samples import make_scanned_pdf
from bench._env import HEADER, NAME_WIDTH, chunk_ocr, services

THRESHOLD, SWEEP = 10, 5


async def main(pages: int, threshold: int = THRESHOLD, sweep: int = SWEEP) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-recovery-"))
    make_scanned_pdf(work / "scan.pdf", pages, seed=9)
    async with services() as base:
        env = base | {
            "STALE_CHUNK_THRESHOLD_SECONDS": str(threshold),
            "HEARTBEAT_INTERVAL_SECONDS": "1",
            "SWEEP_INTERVAL_SECONDS": str(sweep),
            "OCR_PROCESSES": "1",
            "WORKER_MAX_JOBS": "1",
            "LOG_LEVEL": "WARNING",
        }
        submitted = subprocess.run(
            chunk_ocr("submit", str(work / "scan.pdf"), "--engine", "tesseract", "--chunk-pages", "1"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        document_id = UUID(submitted.stdout.strip())
        conn = await asyncpg.connect(env["DATABASE_URL"])
        try:
            victim = subprocess.Popen(chunk_ocr("worker"), env=env, start_new_session=True)
            row = None
            while row is None:
                row = await conn.fetchrow(
                    "select id, chunk_index from document_ocr_chunks"
                    " where document_id = $1 and status = 'processing'",
                    document_id,
                )
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)  # mid-chunk: OCR of the page is under way
            os.killpg(victim.pid, signal.SIGKILL)
            killed_at = time.perf_counter()
            victim.wait()
            rescuer = subprocess.Popen(chunk_ocr("worker"), env=env, start_new_session=True)
            while not await conn.fetchval(
                "select status = 'completed' from document_ocr_chunks where id = $1", row["id"]
            ):
                await asyncio.sleep(0.05)
            recovered = time.perf_counter() - killed_at
            while (
                await conn.fetchval("select ocr_status from documents where id = $1", document_id)
                != "completed"
            ):
                await asyncio.sleep(0.1)
            durations = await conn.fetch(
                "select extract(epoch from processing_completed_at - processing_started_at) as s"
                " from document_ocr_chunks where document_id = $1 and attempt_count = 1",
                document_id,
            )
            attempts = await conn.fetchval(
                "select attempt_count from document_ocr_chunks where id = $1", row["id"]
            )
            rescuer.send_signal(signal.SIGTERM)
            rescuer.wait(timeout=60)
        finally:
            await conn.close()
        results = Path(env["LOCAL_STORAGE_DIR"]).rglob("chunks/*.json")
        per_chunk: dict[str, int] = {}
        for path in results:
            index = path.name.split("-")[0]
            per_chunk[index] = per_chunk.get(index, 0) + 1
    ocr_seconds = statistics.median(float(r["s"]) for r in durations) if durations else 0.0
    bound = threshold + sweep + ocr_seconds
    duplicates = sum(n - 1 for n in per_chunk.values())
    return [
        f"{'recovery after kill -9, seconds vs bound':<{NAME_WIDTH}}{recovered:>10.2f}{bound:>10.2f} {'s':<8}"
        f"{recovered / bound:>7.2f}  <= 1.00 (bound: {threshold} s threshold + {sweep} s sweep + "
        f"{ocr_seconds:.1f} s OCR; attempt {attempts})",
        f"{'duplicate result writes':<{NAME_WIDTH}}{duplicates:>10d}{0:>10d} {'writes':<8}{'':>7}  0",
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--threshold", type=int, default=THRESHOLD, help="stale threshold, seconds")
    parser.add_argument("--sweep", type=int, default=SWEEP, help="sweep interval, seconds")
    args = parser.parse_args()

    print(HEADER)
    print("\n".join(asyncio.run(main(args.pages, args.threshold, args.sweep))))


if __name__ == "__main__":
    run()
