"""Fair scheduling with real `chunk-ocr worker` processes: a 1-page document submitted while a
2,000-page one holds both workers is worked within a few chunk times, not after the large one."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest

from app.pdf.samples import make_born_digital_pdf
from tests.e2e.conftest import run_cli, wait_for

pytestmark = pytest.mark.slow

# tesseract on every page (the text layer ignored), so a chunk takes a second or two: long enough
# that the large document is far from done when the small one arrives
LARGE_PAGES, CHUNK_PAGES = 2000, 2
WORKER = {"OCR_PROCESSES": "1", "WORKER_MAX_JOBS": "2", "HEARTBEAT_INTERVAL_SECONDS": "1"}


def submit(env: dict[str, str], pdf: Path) -> UUID:
    done = run_cli(["submit", str(pdf), "--engine", "tesseract", "--chunk-pages", str(CHUNK_PAGES)], env)
    assert done.returncode == 0, done.stderr
    return UUID(done.stdout.strip())


@pytest.mark.timeout(240)
async def test_a_small_document_is_not_queued_behind_a_large_one(
    cli_env: dict[str, str],
    database_url: str,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    env = cli_env | WORKER
    make_born_digital_pdf(tmp_path / "large.pdf", LARGE_PAGES, seed=3)
    make_born_digital_pdf(tmp_path / "small.pdf", 1, seed=4)
    large = submit(env, tmp_path / "large.pdf")
    start_worker(env, "worker-a")
    start_worker(env, "worker-b")
    conn = await asyncpg.connect(database_url)
    try:

        async def chunks_done(document_id: UUID, at_least: int) -> bool:
            done = await conn.fetchval(
                "select count(*) from document_ocr_chunks where document_id = $1 and status = 'completed'",
                document_id,
            )
            return bool(done >= at_least)

        total = LARGE_PAGES // CHUNK_PAGES
        await wait_for(lambda: chunks_done(large, 4), 120, "the workers to be busy with the large document")
        small = submit(env, tmp_path / "small.pdf")

        async def completed(document_id: UUID) -> bool:
            status = await conn.fetchval("select ocr_status from documents where id = $1", document_id)
            return bool(status == "completed")

        await wait_for(lambda: completed(small), 60, "the small document to complete")
        (small_chunk,) = await conn.fetch("select * from document_ocr_chunks where document_id = $1", small)
        # The large document's chunks claimed while the small one's chunk was due: under first in,
        # first out every chunk of the large one still queued; fairly, only claims already under way.
        overtaking = await conn.fetchval(
            "select count(*) from document_ocr_chunks where document_id = $1"
            " and processing_started_at > $2 and processing_started_at < $3",
            large,
            small_chunk["created_at"],
            small_chunk["processing_started_at"],
        )
        left = await conn.fetchval(
            "select count(*) from document_ocr_chunks where document_id = $1 and status <> 'completed'", large
        )
        print(
            f"fairness: {overtaking} chunk(s) of the large document claimed before the small one's; {left} of {total} left"
        )
    finally:
        await conn.close()
    assert left > total // 4, "the large document was nearly done: the test shows nothing"
    assert overtaking <= 2  # two workers: at most one claim each already under way
