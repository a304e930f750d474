"""`chunk-ocr status` and `chunk-ocr retry` on a document a person has to look at."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest

from app.pdf.samples import make_born_digital_pdf
from tests.e2e.conftest import run_cli, wait_for
from tests.factories import lose_chunk_input


@pytest.mark.timeout(300)
async def test_failed_document_status_and_retry(
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=41)
    submitted = run_cli(  # its pages through the workers, one chunk each (not read at planning)
        ["submit", str(tmp_path / "doc.pdf"), "--engine", "text-layer", "--chunk-pages", "1"],
        cli_env | {"READ_TEXT_AT_PLANNING": "false"},
    )
    assert submitted.returncode == 0, submitted.stderr
    document_id = UUID(submitted.stdout.strip().splitlines()[-1])
    # Its second chunk's input object is lost: that chunk fails for good and a person must look.
    await lose_chunk_input(pool, Path(cli_env["LOCAL_STORAGE_DIR"]), document_id, 1)
    worker = start_worker(cli_env)

    async def failed() -> bool:
        return await pool.fetchval("select ocr_status from documents where id = $1", document_id) == "failed"

    try:
        await wait_for(failed, 120, "the document to fail")
    except AssertionError as exc:  # say what the worker and the chunks were doing
        rows = await pool.fetch(
            "select chunk_index, status, attempt_count, error_code, next_attempt_at - now() as due_in"
            " from document_ocr_chunks where document_id = $1 order by chunk_index",
            document_id,
        )
        log = (tmp_path / "worker.log").read_text(errors="replace").splitlines()[-40:]
        raise AssertionError(
            f"{exc}; chunks: {[dict(r) for r in rows]}; worker log:\n" + "\n".join(log)
        ) from None
    os.killpg(worker.pid, signal.SIGKILL)  # nothing must pick the retried chunk up below
    worker.wait()
    doc = {"document_id": str(document_id)}

    status = run_cli(["status", doc["document_id"], "--json"], cli_env)
    assert status.returncode == 0, status.stderr
    body = json.loads(status.stdout)
    assert body["document"]["ocrStatus"] == "failed"
    assert body["progress"]["completed"] == 1
    assert [(c["chunkIndex"], c["errorCode"]) for c in body["failedChunks"]] == [(1, "object_not_found")]

    human = run_cli(["status", doc["document_id"]], cli_env)
    assert "failed, 1/2 pages" in human.stdout
    assert "chunk 1 (pages 2-2): object_not_found" in human.stdout

    retry = run_cli(["retry", doc["document_id"]], cli_env)
    assert retry.returncode == 0, retry.stderr
    assert retry.stdout.startswith("1 chunk(s)")
    after = json.loads(run_cli(["status", doc["document_id"], "--json"], cli_env).stdout)
    assert after["document"]["ocrStatus"] == "processing"
    assert after["progress"]["pending"] == 1

    unknown = run_cli(["status", "not-a-uuid"], cli_env)
    assert unknown.returncode == 2
    assert unknown.stderr.strip() == "chunk-ocr: error: document_id is not a valid UUID: 'not-a-uuid'"
