"""`chunk-ocr run` on the DATABASE_URL and REDIS_URL of a fleet: each keeps to its own documents.

Before, the worker inside `run` took the fleet's jobs and claimed the fleet's chunks (a chunk
of an engine the laptop cannot build failed for good), and an idle fleet worker claimed the
run's chunks with its own engines, languages and store.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest

from app.local.exit_codes import ExitCode
from app.pdf.samples import make_scanned_pdf
from tests.e2e.conftest import run_cli, wait_for

OCR = ["--engine", "tesseract", "--chunk-pages", "1"]


async def _chunks(pool: asyncpg.Pool, document_id: object) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await pool.fetch(
        "select status, attempt_count, worker_id from document_ocr_chunks where document_id = $1"
        " order by chunk_index",
        document_id,
    )
    return rows


@pytest.mark.timeout(300)
async def test_a_run_and_a_fleet_on_the_same_servers_keep_to_their_own_documents(
    cli_env: dict[str, str],
    pool: asyncpg.Pool,
    tmp_path: Path,
    start_worker: Callable[..., subprocess.Popen[bytes]],
) -> None:
    env = cli_env | {"OCR_PROCESSES": "1"}
    make_scanned_pdf(tmp_path / "fleet.pdf", pages=2, seed=31)
    make_scanned_pdf(tmp_path / "laptop.pdf", pages=2, seed=32)
    make_scanned_pdf(tmp_path / "later.pdf", pages=4, seed=33)

    # 1. The fleet's document waits in the shared queue; no fleet worker runs yet.
    submitted = run_cli(["submit", str(tmp_path / "fleet.pdf"), *OCR], env)
    assert submitted.returncode == 0, submitted.stderr
    fleet_doc = UUID(submitted.stdout.strip().split()[-1])

    ran = run_cli(["run", str(tmp_path / "laptop.pdf"), "--out", str(tmp_path / "out"), *OCR, "--json"], env)
    assert ran.returncode == ExitCode.OK, ran.stderr
    (laptop,) = json.loads(ran.stdout)["documents"]
    assert laptop["status"] == "completed"
    # the run read its own file and left the fleet's alone
    assert [(r["status"], r["attempt_count"]) for r in await _chunks(pool, fleet_doc)] == [("pending", 0)] * 2
    assert await pool.fetchval("select count(*) from document_ocr_reservations") == 0  # handed back

    # 2. A fleet worker reads the fleet's document, then idles while a run reads another file.
    worker = start_worker(env, "fleet-worker")
    fleet_prefix = f"{socket.gethostname()}:{worker.pid}:"

    async def fleet_done() -> bool:
        status = await pool.fetchval("select ocr_status from documents where id = $1", fleet_doc)
        return bool(status == "completed")

    await wait_for(fleet_done, 120, "the fleet worker to read the fleet's document")
    assert all(r["worker_id"].startswith(fleet_prefix) for r in await _chunks(pool, fleet_doc))

    later = await asyncio.to_thread(
        run_cli, ["run", str(tmp_path / "later.pdf"), "--out", str(tmp_path / "out"), *OCR, "--json"], env
    )
    assert later.returncode == ExitCode.OK, later.stderr
    (entry,) = json.loads(later.stdout)["documents"]
    rows = await _chunks(pool, entry["document_id"])
    assert [(r["status"], r["attempt_count"]) for r in rows] == [("completed", 1)] * 4
    readers = {r["worker_id"].rsplit(":", 1)[0] for r in rows}
    assert not any(r["worker_id"].startswith(fleet_prefix) for r in rows), readers  # the run's worker only
    assert worker.poll() is None  # the fleet worker is still up, and had nothing to do
