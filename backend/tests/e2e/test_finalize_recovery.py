"""A merge killed half way, on a document whose merged result and one chunk result were tampered
with: real `chunk-ocr worker` processes, the HTTP API served by uvicorn, tesseract for real.

The merge holds a lease on the document. The worker that takes over must wait for the dead
one's lease to expire (no two merges at once), OCR the tampered chunk again, and write a merged
result that verifies.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest

from app.models.results import ChunkResult, MergedResult
from app.pdf.samples import make_scanned_pdf
from app.storage.checksums import sha256_hex
from tests.e2e.conftest import log_events, run_cli, wait_for
from tests.factories import make_user
from tests.integration.api.conftest import bearer
from tests.pdf_factories import cer
from tests.pdf_tools import pdftotext, qpdf_check

pytestmark = pytest.mark.slow

THRESHOLD = 4.0
FAST = {
    "STALE_CHUNK_THRESHOLD_SECONDS": str(THRESHOLD),
    "HEARTBEAT_INTERVAL_SECONDS": "0.5",
    "SWEEP_INTERVAL_SECONDS": "1",
    "OCR_PROCESSES": "1",
    "WORKER_MAX_JOBS": "2",
}


def tamper(path: Path) -> None:
    data = path.read_bytes()
    tampered = data.replace(b'"text":"', b'"text":"TAMPERED ', 1)
    assert tampered != data
    path.write_bytes(tampered)


async def document(pool: asyncpg.Pool, document_id: UUID) -> asyncpg.Record:
    row: asyncpg.Record = await pool.fetchrow("select * from documents where id = $1", document_id)
    return row


@pytest.mark.timeout(240)
async def test_merge_killed_mid_way_is_rebuilt_by_one_merge_at_a_time(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    server: str,
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    env = cli_env | FAST
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=4, seed=41)
    submitted = run_cli(
        ["submit", str(tmp_path / "scan.pdf"), "--engine", "tesseract", "--chunk-pages", "2"], env
    )
    assert submitted.returncode == 0, submitted.stderr
    document_id = UUID(submitted.stdout.strip())

    first = start_worker(env, "first")

    async def completed() -> bool:
        return bool((await document(pool, document_id))["ocr_status"] == "completed")

    await wait_for(completed, 90, "the document to complete")
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=60) == 0

    # Tamper with the merged result and with chunk 0's result.
    storage = tmp_path / "storage" / "ocr-chunks"
    done = await document(pool, document_id)
    chunk0 = await pool.fetchrow(
        "select * from document_ocr_chunks where document_id = $1 and chunk_index = 0", document_id
    )
    tamper(storage / done["result_storage_path"])
    tamper(storage / chunk0["result_storage_path"])

    user = await make_user(pool, done["matter_id"])
    url = f"{server}/documents/{document_id}/ocr/result"
    async with httpx.AsyncClient(headers=bearer(user), timeout=30) as http:
        # The API cannot OCR: it hands the document to the workers and says to come back.
        answer = await http.get(url)
        assert (answer.status_code, answer.json()["error"]["code"]) == (503, "result_rebuilding")

        victim = start_worker(env, "victim")

        async def victim_merging() -> asyncpg.Record | None:
            row = await document(pool, document_id)
            holder = row["finalize_worker_id"] or ""
            return row if f":{victim.pid}:" in holder else None

        held = await wait_for(victim_merging, 60, "the victim to take the merge")
        os.kill(victim.pid, signal.SIGKILL)  # mid-merge: OCR of the tampered chunk is under way
        victim.wait()
        last_beat: datetime = (await document(pool, document_id))["finalize_heartbeat_at"]
        rescuer = start_worker(env, "rescuer")

        async def rebuilt() -> bool:
            row = await document(pool, document_id)
            return row["finalize_worker_id"] is None and row["finalize_attempt"] > held["finalize_attempt"]

        await wait_for(rebuilt, 90, "the rescuer to rebuild the result")
        answer = await http.get(url)
    assert answer.status_code == 200, answer.text
    assert rescuer.poll() is None

    # One merge at a time: the rescuer started its merge only once the victim's lease had expired.
    (started,) = log_events([tmp_path / "rescuer.log"], "finalize_started")
    assert datetime.fromisoformat(str(started["timestamp"])) >= last_beat + timedelta(seconds=THRESHOLD)
    row = await document(pool, document_id)
    assert row["finalize_attempt"] == held["finalize_attempt"] + 1
    assert row["ocr_status"] == "completed"

    # The result verifies, every page is there once with its own text, nothing tampered survives.
    merged_bytes = (storage / row["result_storage_path"]).read_bytes()
    assert sha256_hex(merged_bytes) == row["result_checksum"]
    merged = MergedResult.model_validate_json(merged_bytes)
    assert [p.page_number for p in merged.pages] == [1, 2, 3, 4]
    for text, page in zip(texts, merged.pages, strict=True):
        assert cer(text, page.text) < 0.05
    assert [p["text"] for p in answer.json()["pages"]] == [p.text for p in merged.pages]
    redone = await pool.fetchrow("select * from document_ocr_chunks where id = $1", chunk0["id"])
    redone_bytes = (storage / redone["result_storage_path"]).read_bytes()
    assert sha256_hex(redone_bytes) == redone["result_checksum"]
    assert "TAMPERED" not in ChunkResult.model_validate_json(redone_bytes).pages[0].text

    # The searchable PDF was grafted by the merge that finished, once, and verifies.
    assert merged.searchable_pdf is not None
    result_pdf = storage / merged.searchable_pdf.path
    assert sha256_hex(result_pdf.read_bytes()) == merged.searchable_pdf.sha256
    assert len(log_events([tmp_path / "rescuer.log"], "searchable_pdf_built")) == 1
    qpdf_check(result_pdf)
    for number, text in enumerate(texts, start=1):
        assert cer(text, pdftotext(result_pdf, number)) < 0.05
