"""The progress route under 50 concurrent pollers on loopback: requests/s and p99 latency,
for pollers that send If-None-Match (304s, as the reference page does) and for pollers that
do not (200s). The API runs in its own uvicorn process; the pollers share this one.

    uv run python -m bench.progress [--pollers 50] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import asyncpg
import httpx

from app.models.ocr_chunk import ChunkRange
from bench._env import HEADER, row, services

SECRET = "bench-jwt-secret-bench-jwt-secret-0123"


async def _seed(dsn: str) -> tuple[str, str]:
    conn = await asyncpg.connect(dsn)
    try:
        matter = await conn.fetchval("insert into matters (name) values ('bench') returning id")
        user = await conn.fetchval("insert into auth.users (email) values ('bench@example.com') returning id")
        await conn.execute("insert into matter_members (matter_id, user_id) values ($1, $2)", matter, user)
        doc = await conn.fetchval(
            "insert into documents (matter_id, filename, page_count, file_sha256, ocr_status)"
            " values ($1, 'b.pdf', 2000, $2, 'processing') returning id",
            matter,
            hashlib.sha256(uuid.uuid4().bytes).hexdigest(),
        )
        chunks = [ChunkRange(chunk_index=i, page_start=i * 50 + 1, page_end=i * 50 + 50) for i in range(40)]
        await conn.fetch(
            "select * from ocr_create_chunks($1, $2::jsonb, 3)",
            doc,
            "[" + ",".join(c.model_dump_json() for c in chunks) + "]",
        )
    finally:
        await conn.close()
    import jwt

    now = int(time.time())
    token = jwt.encode(
        {"sub": str(user), "aud": "authenticated", "exp": now + 3600}, SECRET, algorithm="HS256"
    )
    return str(doc), token


def _wrk(
    url: str, token: str, etag: str, pollers: int, seconds: float, conditional: bool
) -> tuple[float, float]:
    """wrk (C, from Debian's package) as the load: it costs the shared 2 cores far less than Python."""
    headers = ["-H", f"Authorization: Bearer {token}"] + (
        ["-H", f"If-None-Match: {etag}"] if conditional else []
    )
    out = subprocess.run(
        ["wrk", "-t2", f"-c{pollers}", f"-d{seconds:.0f}s", "--latency", *headers, url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    value, unit = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
    if "Non-2xx or 3xx responses" in out:
        raise SystemExit(f"wrk saw errors:\n{out}")
    return rps, p99


async def _load(url: str, token: str, pollers: int, seconds: float, conditional: bool) -> tuple[float, float]:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=pollers, max_keepalive_connections=pollers)
    async with httpx.AsyncClient(
        limits=limits, timeout=30, headers={"Authorization": f"Bearer {token}"}
    ) as client:
        first = await client.get(url)
        etag = first.headers["etag"]
        if shutil.which("wrk"):
            return await asyncio.to_thread(_wrk, url, token, etag, pollers, seconds, conditional)

        async def poller() -> None:
            headers = {"If-None-Match": etag} if conditional else {}
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                response = await client.get(url, headers=headers)
                latencies.append(time.perf_counter() - started)
                assert response.status_code == (304 if conditional else 200), response.status_code

        started = time.perf_counter()
        await asyncio.gather(*(poller() for _ in range(pollers)))
        elapsed = time.perf_counter() - started
    p99 = statistics.quantiles(latencies, n=100)[98] * 1000
    return len(latencies) / elapsed, p99


async def main(pollers: int, seconds: float) -> list[str]:
    async with services() as env:
        doc, token = await _seed(env["DATABASE_URL"])
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server_env = {
            **env,
            "SUPABASE_JWT_SECRET": SECRET,
            "LOG_LEVEL": "WARNING",
            "LOCAL_STORAGE_DIR": tempfile.mkdtemp(),
        }
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "app.main:app",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--no-access-log",
            ],
            env=server_env,
        )
        try:
            url = f"http://127.0.0.1:{port}/documents/{doc}/ocr/progress"
            for _ in range(100):
                try:
                    httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            rps_304, p99_304 = await _load(url, token, pollers, seconds, conditional=True)
            rps_200, p99_200 = await _load(url, token, pollers, seconds, conditional=False)
            rows = [
                row(f"progress, {pollers} pollers, req/s 304 vs 200", rps_304, rps_200, "req/s", "(none)"),
                row(f"progress, {pollers} pollers, p99 304 vs 200", p99_304, p99_200, "ms", "(none)"),
            ]
        finally:
            server.terminate()
            server.wait(timeout=10)
    return rows


def run() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pollers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    print(HEADER)
    print("\n".join(asyncio.run(main(args.pollers, args.seconds))))


if __name__ == "__main__":
    run()
