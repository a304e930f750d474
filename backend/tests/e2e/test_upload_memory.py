"""Three concurrent 190 MB uploads into a real API process (uvicorn, its own process): its memory
stays bounded, because each file is streamed to disk, hashed as it arrives, and cut into chunk
PDFs written straight to files, never held whole in memory."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import psutil
import pytest

from tests.e2e.conftest import REPO_ROOT
from tests.e2e.test_upload_refusal import _member
from tests.integration.api.conftest import JWT_SECRET, token

pytestmark = pytest.mark.slow

MIB = 1024 * 1024
UPLOAD_MIB = 190
PAGES = 8
RSS_LIMIT_MIB = 300


def make_large_pdf(path: Path, total_mib: int, pages: int) -> None:
    """A valid PDF of about `total_mib` MiB: each page one uncompressed image of random grey noise
    (nothing compresses it, so the file is its size on the wire and on disk)."""
    side = int(((total_mib * MIB) // pages) ** 0.5)
    offsets: list[int] = []
    with path.open("wb") as out:

        def obj(number: int, body: bytes) -> None:
            offsets.append(out.tell())
            out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")

        out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(pages))
        obj(1, b"<< /Type /Catalog /Pages 2 0 R >>")
        obj(2, f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
        for i in range(pages):
            page, image, content = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
            obj(
                page,
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 612] /Resources << /XObject"
                f" << /Im0 {image} 0 R >> >> /Contents {content} 0 R >>".encode(),
            )
            offsets.append(out.tell())
            out.write(
                f"{image} 0 obj\n<< /Type /XObject /Subtype /Image /Width {side} /Height {side}"
                f" /ColorSpace /DeviceGray /BitsPerComponent 8 /Length {side * side} >>\nstream\n".encode()
            )
            for _ in range(side):
                out.write(os.urandom(side))
            out.write(b"\nendstream\nendobj\n")
            drawing = b"q 612 0 0 612 0 0 cm /Im0 Do Q"
            obj(content, b"<< /Length %d >>\nstream\n" % len(drawing) + drawing + b"\nendstream")
        xref = out.tell()
        out.write(f"xref\n0 {len(offsets) + 1}\n0000000000 65535 f \n".encode())
        for offset in offsets:
            out.write(f"{offset:010d} 00000 n \n".encode())
        out.write(f"trailer\n<< /Size {len(offsets) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())


@pytest.fixture
def api_process(
    database_url: str, redis_url: str, arq_redis: object, tmp_path: Path
) -> Iterator[tuple[str, int]]:
    """`uvicorn --factory app.main:create_app` in its own process, configured by environment."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = os.environ | {
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LOCAL_STORAGE_DIR": str(tmp_path / "storage"),
        "SUPABASE_JWT_SECRET": JWT_SECRET,
        "TMPDIR": str(tmp_path),
        "LOG_LEVEL": "WARNING",
    }
    log = (tmp_path / "api.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--port", str(port)],
        env=env,
        cwd=REPO_ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "api.log").read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health/live", timeout=1).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the API did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


class PeakRss:
    """The largest resident set of a process and its children, sampled every 10 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                tree = [self.process, *self.process.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in tree))
            except psutil.NoSuchProcess:
                pass
            self._stop.wait(0.01)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.mark.timeout(300)
async def test_three_concurrent_190_mb_uploads_stay_under_300_mb(
    api_process: tuple[str, int], database_url: str, tmp_path: Path
) -> None:
    url, pid = api_process
    pdf = tmp_path / "large.pdf"
    make_large_pdf(pdf, UPLOAD_MIB, PAGES)
    size = pdf.stat().st_size
    assert 185 * MIB < size < 200 * MIB
    matter, user = await _member(database_url)
    headers = {"Authorization": f"Bearer {token(user)}"}
    idle = psutil.Process(pid).memory_info().rss

    async def upload(client: httpx.AsyncClient, n: int) -> httpx.Response:
        with pdf.open("rb") as handle:
            return await client.post(
                f"{url}/matters/{matter}/documents",
                files={"file": (f"large-{n}.pdf", handle, "application/pdf")},
                headers=headers,
            )

    with PeakRss(pid) as rss:
        async with httpx.AsyncClient(timeout=240) as client:
            answers = await asyncio.gather(*(upload(client, n) for n in range(3)))
    print(
        f"API RSS: {idle / MIB:.0f} MiB idle, {rss.peak / MIB:.0f} MiB peak under 3 x {size / MIB:.0f} MiB uploads"
    )
    assert [a.status_code for a in answers] == [201] * 3, [a.text[:300] for a in answers]
    conn = await asyncpg.connect(database_url)
    try:
        for answer in answers:
            document_id = UUID(answer.json()["document"]["id"])
            pages = await conn.fetchval("select page_count from documents where id = $1", document_id)
            chunks = await conn.fetchval(
                "select count(*) from document_ocr_chunks where document_id = $1", document_id
            )
            assert (pages, chunks > 0) == (PAGES, True)
    finally:
        await conn.close()
    assert rss.peak < RSS_LIMIT_MIB * MIB, f"peak {rss.peak / MIB:.0f} MiB"
