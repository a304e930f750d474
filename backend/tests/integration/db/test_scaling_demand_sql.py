"""public.ocr_scaling_demand(): what KEDA reads, at the queue states docs/DEPLOY.md tabulates.

Each state is made through the service and the SQL functions workers call (start, claim, fail,
retry, complete, finalize), on an emptied database. The demand is read as the autoscaler's
role, and the worker pods follow from it by KEDA's rule with the values of the ScaledObject in
deploy/k8s/keda.yaml. The table of replica counts in docs/DEPLOY.md must say exactly what is
measured here, so the manifests, the docs and the SQL cannot drift apart.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import pytest
import yaml

from app.db.postgres import PostgresChunkRepository
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, make_matter, ranges

ROOT = Path(__file__).resolve().parents[4]
KEDA_MANIFEST = ROOT / "deploy" / "k8s" / "keda.yaml"
DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
TABLE_HEADING = "### Worker pods at several queue states"


def scaled_object() -> dict[str, Any]:
    """The spec of the ScaledObject in deploy/k8s/keda.yaml."""
    documents = [d for d in yaml.safe_load_all(KEDA_MANIFEST.read_text(encoding="utf-8")) if d]
    (found,) = [d for d in documents if d["kind"] == "ScaledObject"]
    spec: dict[str, Any] = found["spec"]
    return spec


def keda_replicas(demand: int) -> int:
    """Worker pods KEDA settles on for a demand: minReplicaCount while the trigger is not active
    (demand <= activationTargetQueryValue), else the HPA's ceil(demand / targetQueryValue) (an
    AverageValue target: the metric per pod), kept within [max(1, min), max]."""
    spec = scaled_object()
    (trigger,) = spec["triggers"]
    target = float(trigger["metadata"]["targetQueryValue"])
    activation = float(trigger["metadata"].get("activationTargetQueryValue", "0"))
    low, high = int(spec.get("minReplicaCount", 0)), int(spec.get("maxReplicaCount", 100))
    if demand <= activation:
        return low
    return min(high, max(low, 1, math.ceil(demand / target)))


def documented_table() -> dict[str, tuple[int, int]]:
    """queue state -> (demand, worker pods), from the table under TABLE_HEADING in DEPLOY.md."""
    text = DEPLOY_DOC.read_text(encoding="utf-8")
    assert TABLE_HEADING in text, f"docs/DEPLOY.md has no section {TABLE_HEADING!r}"
    section = text.split(TABLE_HEADING, 1)[1].split("\n#", 1)[0]
    rows: dict[str, tuple[int, int]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"\d+", cells[1]) and re.fullmatch(r"\d+", cells[2]):
            rows[cells[0]] = (int(cells[1]), int(cells[2]))
    return rows


async def as_role(pool: asyncpg.Pool, role: str, query: str) -> object:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(f"set local role {role}")
        return await conn.fetchval(query)


async def demand_as_autoscaler(pool: asyncpg.Pool) -> int:
    """The demand as KEDA reads it: with the privileges of ocr_autoscaler, whose member it logs in as."""
    value = await as_role(pool, "ocr_autoscaler", "select public.ocr_scaling_demand()")
    assert isinstance(value, int)
    return value


# -- queue states -----------------------------------------------------------------------------


class Queue:
    """Builds queue states the way the service and workers do."""

    def __init__(self, service: OCRChunkService, repository: PostgresChunkRepository, pool: asyncpg.Pool):
        self.service, self.repository, self.pool = service, repository, pool
        self.claims = 0

    async def document(self, chunks: int, matter_id: UUID | None = None) -> list[DocumentOCRChunk]:
        """A started document of `chunks` one-page chunks, all pending and due now."""
        document_id = await make_document(self.pool, matter_id, page_count=chunks)
        return await self.service.start_document(document_id, ranges(chunks, 1))

    async def claim(self, document_id: UUID) -> DocumentOCRChunk:
        self.claims += 1
        claimed = await self.service.claim_next_chunk(f"worker-{self.claims}", document_id)
        assert claimed is not None, "nothing due to claim"
        return claimed

    async def complete(self, document_id: UUID) -> None:
        claimed = await self.claim(document_id)
        await self.service.complete_chunk(
            claimed.lease, f"m/{document_id}/chunks/{claimed.chunk_index:05d}.json", checksum(b"result")
        )

    async def fail(self, document_id: UUID, *, retryable: bool) -> DocumentOCRChunk:
        claimed = await self.claim(document_id)
        return await self.service.fail_chunk(
            claimed.lease, error_code="engine_error", error_message="tesseract failed", retryable=retryable
        )


async def empty_queue(q: Queue) -> None:
    pass


async def one_chunk_due(q: Queue) -> None:
    await q.document(1)


async def five_chunks_due(q: Queue) -> None:
    await q.document(5)


async def retries_waiting_for_their_backoff(q: Queue) -> None:
    (first, *_) = await q.document(3)
    for _ in range(3):
        await q.fail(first.document_id, retryable=True)
    retried = await q.service.retry_failed_chunks(first.document_id)
    assert len(retried) == 3
    assert all(c.status is ChunkStatus.PENDING for c in retried)
    now = await q.pool.fetchval("select now()")
    assert all(c.next_attempt_at > now for c in retried)  # OCR_RETRY_BASE_SECONDS (30) ahead
    assert await q.service.claim_next_chunk("worker-x") is None  # the claim sees nothing due either


async def completed_and_permanently_failed(q: Queue) -> None:
    (first, *_) = await q.document(3)
    await q.complete(first.document_id)
    await q.complete(first.document_id)
    await q.fail(first.document_id, retryable=False)
    # a chunk of another document exhausts its attempts (OCR_MAX_ATTEMPTS, 3) on retryable errors
    (other,) = await q.document(1)
    for attempt in range(1, 4):
        failed = await q.fail(other.document_id, retryable=True)
        assert failed.attempt_count == attempt
        if attempt < 3:
            await q.service.retry_failed_chunks(other.document_id, force=True)  # due now, as a person asks
    assert await q.service.retry_failed_chunks() == []
    statuses = await q.pool.fetch("select ocr_status from public.documents")
    assert [r["ocr_status"] for r in statuses] == ["failed", "failed"]


async def six_due_and_four_running(q: Queue) -> None:
    (first, *_) = await q.document(10)
    for _ in range(4):
        await q.claim(first.document_id)


async def a_running_chunk_whose_worker_died(q: Queue) -> None:
    (chunk,) = await q.document(1)
    await q.claim(chunk.document_id)
    await q.pool.execute(
        "update public.document_ocr_chunks set heartbeat_at = now() - interval '10 minutes' where id = $1",
        chunk.id,
    )
    assert [c.id for c in await q.service.detect_stale_chunks()] == [chunk.id]


async def a_failure_the_sweep_has_not_retried_yet(q: Queue) -> None:
    (chunk,) = await q.document(1)
    await q.fail(chunk.document_id, retryable=True)


async def a_document_waiting_for_its_merge(q: Queue) -> None:
    (first, _) = await q.document(2)
    await q.complete(first.document_id)
    await q.complete(first.document_id)
    ready = await q.repository.documents_ready_to_merge(10, 90)
    assert [d.id for d in ready] == [first.document_id]


async def a_merged_document(q: Queue) -> None:
    (first, _) = await q.document(2)
    await q.complete(first.document_id)
    await q.complete(first.document_id)
    lease = await q.repository.claim_finalize(first.document_id, "worker-merge", 90)
    assert lease is not None
    merged = await q.repository.complete_finalize(
        first.document_id, "worker-merge", lease.finalize_attempt, "m/result.json", checksum(b"merged")
    )
    assert merged is not None


async def forty_due_in_eight_documents(q: Queue) -> None:
    matters = [await make_matter(q.pool, f"matter {n}") for n in range(3)]
    for n in range(8):
        await q.document(5, matters[n % 3])


async def three_documents_in_every_state(q: Queue) -> None:
    (a, *_) = await q.document(5)  # 2 due, 3 running
    for _ in range(3):
        await q.claim(a.document_id)
    (b, _) = await q.document(2)  # merge to do
    await q.complete(b.document_id)
    await q.complete(b.document_id)
    (c, *_) = await q.document(2)  # both in backoff: nothing wanted
    await q.fail(c.document_id, retryable=True)
    await q.fail(c.document_id, retryable=True)
    assert len(await q.service.retry_failed_chunks(c.document_id)) == 2


async def a_runs_document_beside_one_fleet_chunk(q: Queue) -> None:
    """A `chunk-ocr run` on the fleet's database: its worker, not the fleet's, does its work."""
    await q.document(1)
    (ours, *_) = await q.document(4)
    await q.service.reserve_document(ours.document_id, "run:laptop:1:abc")
    assert await q.service.claim_next_chunk("fleet-worker", ours.document_id) is None  # not the fleet's
    running, failing = [await q.service.claim_for_holder(f"run/{n}", "run:laptop:1:abc") for n in range(2)]
    assert running is not None
    assert failing is not None
    await q.service.fail_chunk(failing.lease, error_code="engine_error", error_message="x", retryable=True)


async def a_killed_runs_document_beside_one_fleet_chunk(q: Queue) -> None:
    await a_runs_document_beside_one_fleet_chunk(q)
    await q.pool.execute("update document_ocr_reservations set reserved_until = now() - interval '1 second'")


# label (as in the docs' table) -> (how the queue gets there, the demand it makes)
STATES: dict[str, tuple[Callable[[Queue], Awaitable[None]], int]] = {
    "empty queue": (empty_queue, 0),
    "1 chunk due": (one_chunk_due, 1),
    "5 chunks due": (five_chunks_due, 5),
    "3 chunks waiting out a retry backoff": (retries_waiting_for_their_backoff, 0),
    "completed chunks and permanent failures only": (completed_and_permanently_failed, 0),
    "6 chunks due, 4 running": (six_due_and_four_running, 10),
    "1 running chunk whose worker died (stale lease)": (a_running_chunk_whose_worker_died, 1),
    "1 retryable failure the sweep has not sent back yet": (a_failure_the_sweep_has_not_retried_yet, 1),
    "1 document waiting for its merge": (a_document_waiting_for_its_merge, 1),
    "1 document merged": (a_merged_document, 0),
    "40 chunks due in 8 documents of 3 matters": (forty_due_in_eight_documents, 40),
    "2 due, 3 running, 1 merge, 2 in backoff (3 documents)": (three_documents_in_every_state, 6),
    "1 chunk due; a `chunk-ocr run`'s document: 2 due, 1 running, 1 failed": (
        a_runs_document_beside_one_fleet_chunk,
        1,
    ),
    "the same after the run was killed (its reservation lapsed)": (
        a_killed_runs_document_beside_one_fleet_chunk,
        5,
    ),
}


@pytest.mark.parametrize("state", list(STATES))
async def test_demand_and_worker_pods_at_each_queue_state(
    state: str, service: OCRChunkService, repository: PostgresChunkRepository, pool: asyncpg.Pool
) -> None:
    build, expected = STATES[state]
    queue = Queue(service, repository, pool)
    await build(queue)

    demand = await demand_as_autoscaler(pool)

    assert demand == expected
    assert documented_table().get(state) == (demand, keda_replicas(demand)), (
        f"docs/DEPLOY.md's table should read | {state} | {demand} | {keda_replicas(demand)} |"
    )


async def test_claiming_moves_demand_from_due_to_running_and_completing_ends_it(
    service: OCRChunkService, repository: PostgresChunkRepository, pool: asyncpg.Pool
) -> None:
    """Due is exactly what the claim takes: claiming every due chunk leaves the demand as it was
    and the claim finding nothing; completing them leaves one merge, and merging leaves none."""
    queue = Queue(service, repository, pool)
    (first, *_) = await queue.document(3)
    assert await demand_as_autoscaler(pool) == 3
    held = [await queue.claim(first.document_id) for _ in range(3)]
    assert await service.claim_next_chunk("worker-late") is None
    assert await demand_as_autoscaler(pool) == 3
    for chunk in held:
        await service.complete_chunk(chunk.lease, f"m/{chunk.chunk_index}.json", checksum(b"r"))
    assert await demand_as_autoscaler(pool) == 1  # the merge
    lease = await repository.claim_finalize(first.document_id, "worker-merge", 90)
    assert lease is not None
    assert await demand_as_autoscaler(pool) == 1  # the merge, running
    await repository.complete_finalize(
        first.document_id, "worker-merge", lease.finalize_attempt, "m/result.json", checksum(b"m")
    )
    assert await demand_as_autoscaler(pool) == 0


def test_the_documented_table_has_a_row_for_each_state_and_no_other() -> None:
    assert set(documented_table()) == set(STATES)


def test_replicas_follow_kedas_rule_with_the_manifests_values() -> None:
    """The rule the table is computed with, on the ScaledObject's own numbers."""
    spec = scaled_object()
    (trigger,) = spec["triggers"]
    target = float(trigger["metadata"]["targetQueryValue"])
    high = int(spec["maxReplicaCount"])
    assert spec["minReplicaCount"] == 0
    assert keda_replicas(0) == 0
    assert keda_replicas(1) == 1
    assert keda_replicas(int(target) + 1) == 2
    assert keda_replicas(int(target * high * 10)) == high


async def test_the_autoscaler_role_reads_the_demand_and_nothing_else(pool: asyncpg.Pool) -> None:
    for role in ("ocr_autoscaler", "service_role"):
        assert await as_role(pool, role, "select public.ocr_scaling_demand()") == 0
    for table in ("public.document_ocr_chunks", "public.documents", "public.matters"):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await as_role(pool, "ocr_autoscaler", f"select count(*) from {table}")
    for role in ("anon", "authenticated"):
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await as_role(pool, role, "select public.ocr_scaling_demand()")
    assert not await pool.fetchval("select rolcanlogin from pg_roles where rolname = 'ocr_autoscaler'")
