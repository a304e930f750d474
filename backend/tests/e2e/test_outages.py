"""Outages that happen every week, with real `chunk-ocr worker` processes and real tesseract.

Each test stops and starts a server it started itself (tests.servers): its own
Redis, or its own PostgreSQL cluster, never the shared ones. What must hold:
the workers are still alive afterwards, the document completes, every page is
in the result exactly once, and no chunk was OCR'd twice (each engine run logs
one `chunk_ocr` event, counted across the workers' logs).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO
from uuid import UUID

import asyncpg
import pytest

from app.models.results import MergedResult
from app.pdf.samples import make_scanned_pdf
from app.storage.checksums import sha256_hex
from tests import servers
from tests.e2e.conftest import REPO_ROOT, log_events, run_cli, wait_for
from tests.pdf_factories import cer
from tests.servers import PrivatePostgres, PrivateRedis

pytestmark = pytest.mark.slow

private_redis = servers.private_redis
private_persistent_redis = servers.private_persistent_redis
private_postgres = servers.private_postgres

PAGES, CHUNK_PAGES = 8, 2
WORKER = {
    "OCR_PROCESSES": "1",
    "WORKER_MAX_JOBS": "2",
    "HEARTBEAT_INTERVAL_SECONDS": "0.5",
    "SWEEP_INTERVAL_SECONDS": "1",
}


def submit(env: dict[str, str], pdf: Path) -> UUID:
    result = run_cli(["submit", str(pdf), "--engine", "tesseract", "--chunk-pages", str(CHUNK_PAGES)], env)
    assert result.returncode == 0, result.stderr
    return UUID(result.stdout.strip())


async def fetch(dsn: str, query: str, *args: object) -> list[asyncpg.Record] | None:
    """Rows from a fresh connection; None while the server does not answer."""
    try:
        conn = await asyncpg.connect(dsn, timeout=2)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError):
        return None
    try:
        rows: list[asyncpg.Record] = await conn.fetch(query, *args)
        return rows
    finally:
        await conn.close()


async def chunk_in_processing(dsn: str, document_id: UUID) -> bool:
    rows = await fetch(
        dsn, "select 1 from document_ocr_chunks where document_id = $1 and status = 'processing'", document_id
    )
    return bool(rows)


async def document_completed(dsn: str, document_id: UUID) -> bool:
    rows = await fetch(dsn, "select ocr_status from documents where id = $1", document_id)
    return bool(rows) and rows is not None and rows[0]["ocr_status"] == "completed"


async def assert_complete_once(
    dsn: str, document_id: UUID, texts: list[str], storage: Path, logs: list[Path]
) -> list[asyncpg.Record]:
    """Every page exactly once, in order and readable; every chunk OCR'd exactly once."""
    (document,) = await fetch(dsn, "select * from documents where id = $1", document_id) or []
    chunks = await fetch(
        dsn, "select * from document_ocr_chunks where document_id = $1 order by chunk_index", document_id
    )
    assert chunks is not None
    data = (storage / document["result_storage_path"]).read_bytes()
    assert sha256_hex(data) == document["result_checksum"]
    merged = MergedResult.model_validate_json(data)
    assert [p.page_number for p in merged.pages] == list(range(1, PAGES + 1))
    for text, page in zip(texts, merged.pages, strict=True):
        assert cer(text, page.text) < 0.05
    runs = Counter(str(e["chunk_id"]) for e in log_events(logs, "chunk_ocr"))
    assert runs == {str(c["id"]): 1 for c in chunks}, "a chunk was OCR'd twice (or never)"
    return chunks


def timestamp(event: dict[str, object]) -> float:
    return datetime.fromisoformat(str(event["timestamp"])).timestamp()


def arq_job_starts(logs: list[Path], function: str) -> list[float]:
    """When arq started jobs of `function` (its "→ function(...)" lines), as Unix times."""
    starts = []
    for log in logs:
        for line in log.read_text().splitlines():
            if line.startswith("{") and '"arq.worker"' in line:
                event = json.loads(line)
                if f"\u2192 {function}(" in event["event"]:
                    starts.append(timestamp(event))
    return starts


@dataclass
class Run:
    """A scanned document submitted and two workers on it, one of its chunks under way."""

    document_id: UUID
    texts: list[str]
    workers: list[subprocess.Popen[bytes]]
    logs: list[Path]

    def alive(self) -> bool:
        return all(w.poll() is None for w in self.workers)


async def mid_run(
    env: dict[str, str],
    dsn: str,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
    seed: int,
) -> Run:
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=PAGES, seed=seed)
    document_id = submit(env, tmp_path / "scan.pdf")
    workers = [start_worker(env, "worker-a"), start_worker(env, "worker-b")]
    await wait_for(lambda: chunk_in_processing(dsn, document_id), 60, "a chunk in processing")
    return Run(document_id, texts, workers, [tmp_path / "worker-a.log", tmp_path / "worker-b.log"])


@pytest.mark.timeout(240)
@pytest.mark.parametrize(("redis_kind", "outage"), [("private_redis", 12), ("private_persistent_redis", 8)])
async def test_redis_down_mid_run(
    redis_kind: str,
    outage: float,
    request: pytest.FixtureRequest,
    cli_env: dict[str, str],
    start_worker: Callable[..., subprocess.Popen[bytes]],
    database_url: str,
    tmp_path: Path,
) -> None:
    """Redis that comes back empty (a cache restarted) or with its queue (persistence, or a network
    that came back): either way the workers outlive it and nothing is OCR'd twice."""
    private_redis: PrivateRedis = request.getfixturevalue(redis_kind)
    # A threshold far above the recovery time: a chunk waiting for the sweep's rescue would show.
    env = cli_env | WORKER | {"REDIS_URL": private_redis.url, "STALE_CHUNK_THRESHOLD_SECONDS": "60"}
    run = await mid_run(env, database_url, start_worker, tmp_path, seed=31)
    private_redis.stop()
    await asyncio.sleep(outage)
    assert run.alive(), "a worker exited during the outage"
    private_redis.start()
    restarted = time.monotonic()

    await wait_for(lambda: document_completed(database_url, run.document_id), 45, "the document to complete")
    print(
        f"redis outage {outage} s ({redis_kind}): complete {time.monotonic() - restarted:.1f} s after it came back"
    )
    assert run.alive(), "a worker exited after the outage"
    chunks = await assert_complete_once(
        database_url, run.document_id, run.texts, tmp_path / "storage" / "ocr-chunks", run.logs
    )
    assert {c["attempt_count"] for c in chunks} == {1}  # nothing was timed out and retried
    # A worker that reported the outage reports its end too, once each. (One whose job slots were
    # all taken asks Redis nothing until a job ends, so a short outage can pass unseen by both; a
    # 12 s one outlasts a chunk (2 pages, about 4 s), and a job finishing into it is seen. One whose
    # next poll is still in its backoff when the other finishes the document says so a moment later.)
    noticed = 0
    for log in run.logs:
        down = [e["dependency"] for e in log_events([log], "dependency_unavailable")]
        if not down:
            continue
        noticed += 1

        async def restored(log: Path = log) -> list[str]:
            return [str(e["dependency"]) for e in log_events([log], "dependency_restored")]

        assert down == ["redis"]
        assert await wait_for(restored, 15, f"{log.name} to see Redis back") == ["redis"]
    if outage >= 12:
        assert noticed >= 1


@pytest.mark.timeout(240)
async def test_postgres_down_for_10_seconds_mid_run(
    cli_env: dict[str, str],
    private_postgres: PrivatePostgres,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    """OCR that finishes during the outage is recorded when the database is back, within its lease."""
    dsn = private_postgres.dsn
    env = cli_env | WORKER | {"DATABASE_URL": dsn, "STALE_CHUNK_THRESHOLD_SECONDS": "60"}
    run = await mid_run(env, dsn, start_worker, tmp_path, seed=32)
    private_postgres.stop(mode="fast")
    await asyncio.sleep(10)  # longer than the OCR of the chunks in flight, shorter than their lease
    assert run.alive(), "a worker exited during the outage"
    private_postgres.start()
    restarted = time.monotonic()

    await wait_for(lambda: document_completed(dsn, run.document_id), 120, "the document to complete")
    print(f"postgres outage 10 s: complete {time.monotonic() - restarted:.1f} s after PostgreSQL came back")
    assert run.alive()
    chunks = await assert_complete_once(
        dsn, run.document_id, run.texts, tmp_path / "storage" / "ocr-chunks", run.logs
    )
    assert {c["attempt_count"] for c in chunks} == {1}  # recorded within the lease, no second attempt
    assert "database" in {e["dependency"] for e in log_events(run.logs, "dependency_unavailable")}


@pytest.mark.timeout(240)
async def test_postgres_outage_longer_than_the_lease_reuses_the_stored_result(
    cli_env: dict[str, str],
    private_postgres: PrivatePostgres,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    """The lease ran out during the outage: the next attempt finds the stored result and runs no OCR."""
    dsn = private_postgres.dsn
    env = cli_env | WORKER | {"DATABASE_URL": dsn, "STALE_CHUNK_THRESHOLD_SECONDS": "3"}
    run = await mid_run(env, dsn, start_worker, tmp_path, seed=33)
    private_postgres.stop(mode="immediate")  # a crash, not a shutdown
    await asyncio.sleep(10)  # OCR of the chunks in flight ends in here, and their leases with it
    private_postgres.start()

    await wait_for(lambda: document_completed(dsn, run.document_id), 120, "the document to complete")
    assert run.alive()
    chunks = await assert_complete_once(
        dsn, run.document_id, run.texts, tmp_path / "storage" / "ocr-chunks", run.logs
    )
    unrecorded = {str(e["chunk_id"]) for e in log_events(run.logs, "chunk_unrecorded")}
    reused = {str(e["chunk_id"]) for e in log_events(run.logs, "chunk_done") if e["outcome"] == "reused"}
    assert unrecorded, "no chunk was in flight when the database went away"
    assert unrecorded <= reused  # every result that could not be recorded was reused, not redone
    # Each unrecorded chunk ran a second attempt (which reused its result). A claim that committed
    # as the server crashed, and could not be taken up before the 3 s lease ran out, also costs a
    # second attempt, though no OCR: assert_complete_once counted one OCR run per chunk.
    assert unrecorded <= {str(c["id"]) for c in chunks if c["attempt_count"] == 2}


@pytest.mark.timeout(240)
async def test_worker_started_while_redis_and_postgres_are_down_waits_for_them(
    cli_env: dict[str, str],
    private_redis: PrivateRedis,
    private_postgres: PrivatePostgres,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    """Started with arq's own command, so the arq CLI path (its Worker adopted) is the one tested."""
    dsn = private_postgres.dsn
    env = cli_env | WORKER | {"DATABASE_URL": dsn, "REDIS_URL": private_redis.url}
    private_redis.stop()
    private_postgres.stop()
    worker = start_worker(env, "worker", arq_cli=True)
    await asyncio.sleep(5)  # past arq's own connection retries (5 of 1 s)
    assert worker.poll() is None, "the worker gave up on Redis"
    private_redis.start()
    await asyncio.sleep(3)  # connected to Redis; now waiting for the database in its start-up
    assert worker.poll() is None, "the worker gave up on the database"
    private_postgres.start()

    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=2, seed=34)
    result = run_cli(["submit", str(tmp_path / "scan.pdf"), "--engine", "tesseract"], env)
    assert result.returncode == 0, result.stderr
    document_id = UUID(result.stdout.strip())
    await wait_for(lambda: document_completed(dsn, document_id), 90, "the document to complete")
    (document,) = await fetch(dsn, "select * from documents where id = $1", document_id) or []
    merged = MergedResult.model_validate_json(
        (tmp_path / "storage" / "ocr-chunks" / document["result_storage_path"]).read_bytes()
    )
    assert [cer(t, p.text) < 0.05 for t, p in zip(texts, merged.pages, strict=True)] == [True, True]
    log = [tmp_path / "worker.log"]
    assert [e["dependency"] for e in log_events(log, "dependency_unavailable")] == ["database"]
    assert [e["dependency"] for e in log_events(log, "dependency_restored")] == ["database"]
    assert len(log_events(log, "worker_started")) == 1


@pytest.mark.timeout(240)
async def test_run_waits_out_a_postgres_outage(
    cli_env: dict[str, str], private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    """`chunk-ocr run` polls the database for its progress: an outage in the middle is waited for,
    said on its stderr, and the run ends as if there had been none."""
    dsn = private_postgres.dsn
    env = cli_env | WORKER | {"DATABASE_URL": dsn, "STALE_CHUNK_THRESHOLD_SECONDS": "60"}
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=4, seed=35)
    out, stderr_path = tmp_path / "out", tmp_path / "run.stderr"
    command = ["run", str(tmp_path / "scan.pdf"), "--out", str(out), "--chunk-pages", "1"]
    with stderr_path.open("wb") as stderr:
        run = _start([*command, "--engine", "tesseract", "--ocr-processes", "1"], env, stderr)
        try:
            document = await wait_for(lambda: _a_document(dsn), 60, "the run to start its document")
            await wait_for(lambda: chunk_in_processing(dsn, document), 60, "a chunk in processing")
            private_postgres.stop(mode="fast")
            await asyncio.sleep(4)
            assert run.poll() is None, stderr_path.read_text()
            private_postgres.start()
            assert await asyncio.to_thread(run.wait, 150) == 0, stderr_path.read_text()
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
    pages = (out / "scan.txt").read_text(encoding="utf-8").split("\f")
    assert [cer(t, p) < 0.05 for t, p in zip(texts, pages, strict=True)] == [True] * 4
    said = [line for line in stderr_path.read_text().splitlines() if line.startswith("chunk-ocr: ")]
    assert len(said) == 2, said
    assert said[0].endswith("waiting for the database (Ctrl-C stops)")
    assert said[1].startswith("chunk-ocr: the database answers again after ")


def _start(arguments: list[str], env: dict[str, str], stderr: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *arguments],
        env=env,
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )


async def _a_document(dsn: str) -> UUID | None:
    rows = await fetch(dsn, "select id from documents")
    return rows[0]["id"] if rows else None


@pytest.mark.timeout(240)
async def test_postgres_that_stops_answering_mid_run(
    cli_env: dict[str, str],
    private_postgres: PrivatePostgres,
    start_worker: Callable[..., subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    """A database that hangs (every process stopped: connections open, nothing answers, as after a
    failover or a dropped network): each call gives up after DATABASE_TIMEOUT_SECONDS instead of
    waiting for TCP, the sweeps that fell due meanwhile are not all run once it answers, and the
    document completes with nothing read twice and no attempt charged."""
    dsn = private_postgres.dsn
    env = cli_env | WORKER | {"DATABASE_URL": dsn, "STALE_CHUNK_THRESHOLD_SECONDS": "60"}
    env |= {"DATABASE_TIMEOUT_SECONDS": "2"}
    run = await mid_run(env, dsn, start_worker, tmp_path, seed=34)
    private_postgres.freeze()
    frozen = time.time()
    await asyncio.sleep(8)  # four DATABASE_TIMEOUT_SECONDS, eight sweep ticks
    assert run.alive(), "a worker exited during the outage"
    private_postgres.thaw()
    thawed = time.time()
    await wait_for(lambda: document_completed(dsn, run.document_id), 120, "the document to complete")
    print(f"postgres hung 8 s: complete {time.time() - thawed:.1f} s after it answered again")
    assert run.alive()
    chunks = await assert_complete_once(
        dsn, run.document_id, run.texts, tmp_path / "storage" / "ocr-chunks", run.logs
    )
    assert {c["attempt_count"] for c in chunks} == {1}

    def during_outage(event: dict[str, object]) -> bool:
        return frozen < timestamp(event) < thawed

    # Each worker heartbeats its chunk every 0.5 s or claims one: a call fails within seconds of
    # the outage's start (before: every call waited for the database, and nothing was said).
    noticed = [
        timestamp(e) - frozen
        for e in log_events(run.logs, "dependency_unavailable")
        if e["dependency"] == "database" and during_outage(e)
    ]
    assert noticed, "no call noticed the outage while it lasted"
    assert min(noticed) < 6, noticed

    # A sweep fell due every second for the fleet. Those that fell due in the outage waited in the
    # queue behind the claims (each waiting for the database); once it answered they are skipped,
    # not run one after another (before: 20 to 30 sweeps in the next second).
    def after_outage(at: float) -> bool:
        return thawed <= at <= thawed + 3

    started = [t for t in arq_job_starts(run.logs, "sweep") if after_outage(t)]
    skipped = [e for e in log_events(run.logs, "sweep_skipped") if after_outage(timestamp(e))]
    assert len(started) - len(skipped) <= 6, f"{len(started) - len(skipped)} sweeps ran in the 3 s after"
