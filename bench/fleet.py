"""Fleet: 1, 2, 4 and 8 worker processes against one PostgreSQL and one Redis, each reading
5-page chunks with the google-vision engine from a loopback stand-in of Vision that answers every
request after a fixed latency and does no OCR (tests/vision_fake.py, canned text): what the
fleet's own machinery costs (claims, leases, heartbeats, the quota, storage, results, merges)
and how far it scales, with the OCR itself taking no CPU, as with Vision.

Each run has a database of its own and N documents of `--chunks-per-worker` chunks (250 by
default: 2,000 chunks at 8 workers), planned with the workers stopped. Then N workers start
(`chunk-ocr worker`, OCR_PROCESSES=2 each) and the run ends when every chunk is completed.
Throughput is the chunks completed while every worker was at work (from the moment the last
worker to start took its first chunk to the 90th percentile of completion, by the database's
clock) over that time: start-up and the last stragglers are left out. It is compared with N
times one worker's (linear). CPU per chunk, over the whole run: PostgreSQL's
processes and Redis's (from /proc, so the servers must run on this machine), and the workers'.

The fleet's Vision quota is set far above the run's rate: Google's default (1,800 requests a
minute, 30 a second) would cap the 8-worker run, which asks about 32 a second.

    uv run python -m bench.fleet [--workers 1 2 4 8] [--chunks-per-worker 250] [--latency 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from app.pdf.samples import make_born_digital_pdf
from bench._env import HEADER, NAME_WIDTH, chunk_ocr, row, services
from tests.vision_fake import serve_vision

PAGES_PER_CHUNK = 5  # one Vision request a chunk
OCR_PROCESSES = 2  # chunks each worker reads at once
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Run:
    workers: int
    chunks: int
    throughput: float  # chunks a second while every worker was at work
    wall: float  # seconds from the workers' start to the last chunk
    database_ms: float  # PostgreSQL CPU per chunk
    redis_ms: float
    workers_ms: float  # the workers' CPU (their OCR processes included) per chunk


def _server_cpu(name: str) -> float:
    """CPU seconds of every process named `name`, with its reaped children's (a PostgreSQL
    backend that has exited is counted in the postmaster's)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        if comm != name:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return total / _TICKS


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _submit(env: dict[str, str], pdf: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        *chunk_ocr("submit", str(pdf), "--engine", "google-vision", "--chunk-pages", str(PAGES_PER_CHUNK)),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, err = await process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"chunk-ocr submit failed ({process.returncode}): {err.decode()[-500:]}")


async def _run(workers: int, chunks_per_worker: int, pdf: Path, vision_port: int) -> Run:
    async with services() as base:
        env = base | {
            "GOOGLE_VISION_ENDPOINT": f"127.0.0.1:{vision_port}",
            "GOOGLE_VISION_INSECURE": "1",
            "GOOGLE_VISION_REQUESTS_PER_MINUTE": "1000000",
            "GOOGLE_VISION_PAGES_PER_MINUTE": "5000000",
            "GOOGLE_VISION_PAGES_IN_FLIGHT": "100000",
            "OCR_PROCESSES": str(OCR_PROCESSES),
            "LOG_LEVEL": "WARNING",
        }
        await asyncio.gather(*(_submit(env, pdf) for _ in range(workers)))
        total = workers * chunks_per_worker
        conn = await asyncpg.connect(env["DATABASE_URL"])
        try:
            planned = await conn.fetchval("select count(*) from document_ocr_chunks")
            if planned != total:
                raise SystemExit(f"planned {planned} chunks, expected {total}")
            database, redis, children = _server_cpu("postgres"), _server_cpu("redis-server"), _children_cpu()
            started = time.perf_counter()
            fleet = [
                subprocess.Popen(
                    chunk_ocr("worker"), env=env, start_new_session=True, stderr=subprocess.DEVNULL
                )
                for _ in range(workers)
            ]
            try:
                while await conn.fetchval(
                    "select count(*) from document_ocr_chunks where status <> 'completed'"
                ):
                    if any(worker.poll() is not None for worker in fleet):
                        raise SystemExit("a worker exited during the run")
                    await asyncio.sleep(0.2)
                wall = time.perf_counter() - started
                database = _server_cpu("postgres") - database
                redis = _server_cpu("redis-server") - redis
            finally:
                for worker in fleet:
                    worker.send_signal(signal.SIGTERM)
                for worker in fleet:
                    worker.wait(timeout=120)
            children = _children_cpu() - children
            done = await conn.fetch(
                "select split_part(worker_id, '/', 1) as worker,"
                " extract(epoch from processing_started_at) as started,"
                " extract(epoch from processing_completed_at) as completed from document_ocr_chunks"
            )
        finally:
            await conn.close()
    per_chunk = 1000 / total
    throughput = _steady_throughput(
        [(str(r["worker"]), float(r["started"]), float(r["completed"])) for r in done], workers
    )
    return Run(
        workers, total, throughput, wall, database * per_chunk, redis * per_chunk, children * per_chunk
    )


def _steady_throughput(chunks: list[tuple[str, float, float]], workers: int) -> float:
    """Chunks a second while every worker was at work: from the moment the last worker to start
    began its first chunk to the 90th percentile of completion (the stragglers left out). When the
    fleet was never all at work for long (too few chunks: the smoke run), from the 10th
    percentile of completion instead."""
    first: dict[str, float] = {}
    for worker, started, _ in chunks:
        first[worker] = min(started, first.get(worker, started))
    completions = sorted(completed for _, _, completed in chunks)
    end = completions[round(0.9 * (len(completions) - 1))]
    begin = max(first.values())
    inside = sum(1 for at in completions if begin < at <= end)
    if len(first) < workers or end <= begin or inside < 4 * workers:
        begin = completions[round(0.1 * (len(completions) - 1))]
        inside = sum(1 for at in completions if begin < at <= end)
    return inside / (end - begin) if end > begin else float("nan")


async def main(workers: list[int], chunks_per_worker: int, latency: float) -> list[str]:
    work = Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-fleet-"))
    pdf = work / "document.pdf"
    make_born_digital_pdf(pdf, chunks_per_worker * PAGES_PER_CHUNK, blank=True)
    runs = []
    with serve_vision(threads=4 * OCR_PROCESSES * max(workers)) as vision:
        vision.delay = latency
        for count in workers:
            runs.append(await _run(count, chunks_per_worker, pdf, vision.port))
    one = next((run for run in runs if run.workers == 1), runs[0])
    per_worker = one.throughput / one.workers
    lines = []
    for run in runs:
        lines.append(
            row(
                f"fleet {run.workers} w x {chunks_per_worker} ch, chunks/s vs linear",
                run.throughput,
                per_worker * run.workers,
                "chunks/s",
                ">= 0.85 at 8",
            )
        )
    for run in runs:
        name = f"fleet {run.workers} w: CPU ms/chunk (db, redis)"
        lines.append(
            f"{name:<{NAME_WIDTH}}{run.database_ms:>10.2f}{run.redis_ms:>10.2f} {'ms':<8}"
            f"{run.workers_ms:>7.1f}  workers' ms/chunk; {run.wall:.0f} s for {run.chunks}"
        )
    return lines


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--chunks-per-worker", type=int, default=250)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds Vision takes a request")
    args = parser.parse_args()
    lines = asyncio.run(main(sorted(set(args.workers)), args.chunks_per_worker, args.latency))
    print(HEADER)
    print("\n".join(lines))


if __name__ == "__main__":
    run()
