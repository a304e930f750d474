"""Workers that die or are stopped: real `chunk-ocr worker` processes, SIGKILL and SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest

from app.core.errors import LeaseLostError
from app.models.ocr_chunk import ChunkLease
from app.models.results import MergedResult
from app.pdf.samples import make_scanned_pdf
from app.services.ocr_chunk_service import OCRChunkService
from app.storage.checksums import sha256_hex
from tests.e2e.conftest import run_cli, wait_for
from tests.pdf_factories import cer
from tests.pdf_tools import pdftotext, qpdf_check

# Test timing: a dead worker's chunk is stale after 3 s, the sweep runs every second.
FAST_RECOVERY = {
    "STALE_CHUNK_THRESHOLD_SECONDS": "3",
    "HEARTBEAT_INTERVAL_SECONDS": "0.5",
    "SWEEP_INTERVAL_SECONDS": "1",
    "OCR_PROCESSES": "1",
    "WORKER_MAX_JOBS": "2",
}


def submit(env: dict[str, str], pdf: Path, chunk_pages: int) -> UUID:
    result = run_cli(["submit", str(pdf), "--engine", "tesseract", "--chunk-pages", str(chunk_pages)], env)
    assert result.returncode == 0, result.stderr
    return UUID(result.stdout.strip())


async def processing_by_someone(pool: asyncpg.Pool, document_id: UUID) -> asyncpg.Record | None:
    row: asyncpg.Record | None = await pool.fetchrow(
        "select id, worker_id, attempt_count, chunk_index from document_ocr_chunks"
        " where document_id = $1 and status = 'processing' order by chunk_index limit 1",
        document_id,
    )
    return row


async def document_status(pool: asyncpg.Pool, document_id: UUID, status: str) -> bool:
    return bool(
        await pool.fetchval("select ocr_status = $2 from documents where id = $1", document_id, status)
    )


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_worker_killed_mid_chunk_is_recovered_exactly_once(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    service: OCRChunkService,
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    env = cli_env | FAST_RECOVERY
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=4, seed=11)
    document_id = submit(env, tmp_path / "scan.pdf", chunk_pages=2)

    victim = start_worker(env, "victim")
    row = await wait_for(lambda: processing_by_someone(pool, document_id), 60, "a chunk in processing")
    os.killpg(victim.pid, signal.SIGKILL)  # the worker and its OCR process, mid-chunk
    victim.wait()
    dead_lease = ChunkLease(chunk_id=row["id"], worker_id=row["worker_id"], attempt=row["attempt_count"])

    start_worker(env, "rescuer")
    await wait_for(lambda: document_status(pool, document_id, "completed"), 120, "the document to complete")

    chunk = await service.get_chunk(row["id"])
    assert chunk.attempt_count == 2
    assert chunk.worker_id != dead_lease.worker_id
    results_dir = tmp_path / "storage" / "ocr-chunks" / str(chunk.matter_id) / str(document_id) / "chunks"
    written = sorted(p.name for p in results_dir.iterdir() if p.name.startswith(f"{chunk.chunk_index:05d}-"))
    name = Path(chunk.result_storage_path or "").name
    assert written == [name, name.replace(".json", ".layer.pdf")]  # its result and its text layer, once
    with pytest.raises(LeaseLostError):  # the dead worker's lease can never complete anything
        await service.complete_chunk(dead_lease, "zombie.json", "0" * 64)
    assert (await service.get_chunk(chunk.id)) == chunk

    # The searchable PDF holds every page's text, the killed chunk's included, and verifies.
    document = await service.get_document(document_id)
    storage = tmp_path / "storage" / "ocr-chunks"
    merged = MergedResult.model_validate_json((storage / (document.result_storage_path or "")).read_bytes())
    assert merged.searchable_pdf is not None
    result_pdf = storage / merged.searchable_pdf.path
    assert sha256_hex(result_pdf.read_bytes()) == merged.searchable_pdf.sha256
    qpdf_check(result_pdf)
    for number, text in enumerate(texts, start=1):
        assert cer(text, pdftotext(result_pdf, number)) < 0.05


@pytest.mark.timeout(180)
async def test_sigterm_finishes_the_running_chunk_and_exits_zero(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    service: OCRChunkService,
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    env = cli_env | FAST_RECOVERY | {"WORKER_GRACE_SECONDS": "60", "STALE_CHUNK_THRESHOLD_SECONDS": "90"}
    make_scanned_pdf(tmp_path / "scan.pdf", pages=2, seed=12)
    document_id = submit(env, tmp_path / "scan.pdf", chunk_pages=2)
    worker = start_worker(env)
    row = await wait_for(lambda: processing_by_someone(pool, document_id), 60, "the chunk in processing")
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=90) == 0
    chunk = await service.get_chunk(row["id"])
    assert chunk.status == "completed"
    assert (chunk.worker_id, chunk.attempt_count) == (row["worker_id"], 1)


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_a_worker_stopped_mid_chunk_does_not_charge_the_chunk_an_attempt(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    service: OCRChunkService,
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    """A deploy's SIGTERM past the grace period cancelled the chunk as a worker_timeout, an
    attempt like any failure: with OCR_MAX_ATTEMPTS=1 one deploy failed the document for good,
    and with the default three, three deploys during one long chunk did. Now the chunk is
    handed back as worker_stopped, its attempt given back, and the next worker reads it.
    The stopped worker is started by arq's command line (whose worker is adopted, its signal
    handlers bound again), the next by `chunk-ocr worker`."""
    env = cli_env | FAST_RECOVERY | {"OCR_MAX_ATTEMPTS": "1", "WORKER_GRACE_SECONDS": "1"}
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=6, seed=13)  # several seconds of OCR
    document_id = submit(env, tmp_path / "scan.pdf", chunk_pages=6)

    stopped = start_worker(env, "stopped", arq_cli=True)
    row = await wait_for(lambda: processing_by_someone(pool, document_id), 60, "the chunk in processing")
    stopped.send_signal(signal.SIGTERM)
    assert stopped.wait(timeout=60) == 0

    handed_back = await service.get_chunk(row["id"])
    assert (handed_back.status, handed_back.error_code) == ("pending", "worker_stopped")
    assert (handed_back.attempt_count, handed_back.max_attempts) == (1, 2)  # the attempt given back
    assert await document_status(pool, document_id, "processing")

    start_worker(env, "next", arq_cli=False)
    await wait_for(lambda: document_status(pool, document_id, "completed"), 120, "the document to complete")
    chunk = await service.get_chunk(row["id"])
    assert (chunk.status, chunk.attempt_count, chunk.max_attempts) == ("completed", 2, 2)
    storage = tmp_path / "storage" / "ocr-chunks"
    document = await service.get_document(document_id)
    merged = MergedResult.model_validate_json((storage / (document.result_storage_path or "")).read_bytes())
    for page, text in zip(merged.pages, texts, strict=True):
        assert cer(text, page.text) < 0.05
