"""Progress over Supabase Realtime Broadcast: what the triggers write to realtime.messages as the
service moves chunks and documents (topic, event, payload, rate), and who may receive it, checked
the way Realtime checks a client joining a private channel."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import asyncpg
import pytest
from asyncpg.pool import PoolConnectionProxy

from app.api.schemas import ProgressView
from app.models.ocr_chunk import DocumentOCRChunk
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, make_matter, make_user, ranges


# The field names of GET /documents/{id}/ocr/progress, which the payload shares.
async def test_a_merge_put_off_is_sent_with_why_until_a_merge_completes_the_document(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """Every chunk read, the merge put off by a retryable error: the document stays processing,
    and its progress says why at once (throttled or not), until a merge completes it."""
    matter, document_id, chunks = await started(service, pool, pages=2, chunk_pages=2)
    claimed = await service.claim_chunk(chunks[0].id, "worker")
    assert claimed is not None
    await service.complete_chunk(claimed.lease, "r/0.json", checksum(b"0"))
    await close_throttle(pool, document_id)
    before = len(await messages(pool, document_id))

    merging = await service.claim_finalize(document_id, "merger")
    assert merging is not None
    why = "storage_unavailable: the store did not answer"
    assert await service.release_finalize(merging.finalize_lease, deferred_message=why)
    sent = [payload(m) for m in await messages(pool, document_id)]
    assert len(sent) == before + 1
    assert (sent[-1]["status"], sent[-1]["mergeError"], sent[-1]["percent"]) == ("processing", why, 100.0)
    document, progress = await service.get_progress_for_user(document_id, await make_user(pool, matter))
    assert document.merge_error == why
    route = ProgressView.of(document, progress, datetime.now(UTC)).model_dump(mode="json", by_alias=True)
    assert route["mergeError"] == why

    await finalize(service, document_id)
    final = payload((await messages(pool, document_id))[-1])
    assert (final["status"], final["mergeError"]) == ("completed", None)
    assert (await service.get_document(document_id)).merge_error is None


ROUTE_FIELDS = set(ProgressView.model_json_schema(by_alias=True)["properties"])
THROTTLE_SECONDS = 0.25


def topic(document_id: UUID) -> str:
    return f"document:{document_id}"


async def messages(pool: asyncpg.Pool, document_id: UUID) -> list[asyncpg.Record]:
    """Every broadcast of the document's topic, oldest first."""
    return await pool.fetch(
        "select id, topic, event, extension, private, payload from realtime.messages"
        " where topic = $1 order by inserted_at, updated_at",
        topic(document_id),
    )


def payload(message: asyncpg.Record) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(message["payload"])
    return decoded


async def open_throttle(db: asyncpg.Pool | PoolConnectionProxy, document_id: UUID) -> None:
    """As if the document's last progress message were long ago: the next change is sent."""
    await db.execute(
        "update ocr_progress_broadcasts set sent_at = '-infinity' where document_id = $1", document_id
    )


async def close_throttle(pool: asyncpg.Pool, document_id: UUID) -> None:
    """As if the document had just sent one (its last send is in the future): no change of chunk
    counts alone is sent."""
    await pool.execute(
        "update ocr_progress_broadcasts set sent_at = now() + interval '1 hour' where document_id = $1",
        document_id,
    )


async def started(
    service: OCRChunkService, pool: asyncpg.Pool, pages: int, chunk_pages: int
) -> tuple[UUID, UUID, list[DocumentOCRChunk]]:
    matter = await make_matter(pool)
    document_id = await make_document(pool, matter, pages)
    chunks = await service.start_document(document_id, ranges(pages, chunk_pages))
    return matter, document_id, chunks


async def finalize(service: OCRChunkService, document_id: UUID, pages_failed: int = 0) -> None:
    document = await service.claim_finalize(document_id, "merger")
    assert document is not None
    await service.complete_finalize(
        document.finalize_lease, f"m/{document_id}/result.json", checksum(b"merged"), pages_failed
    )


async def test_each_change_is_a_progress_message_on_the_documents_private_topic(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    matter, document_id, chunks = await started(service, pool, pages=6, chunk_pages=2)
    first = await messages(pool, document_id)
    assert len(first) == 1  # the status message: pending -> processing
    assert first[0]["topic"] == f"document:{document_id}"
    assert (first[0]["event"], first[0]["extension"], first[0]["private"]) == ("progress", "broadcast", True)
    body = payload(first[0])
    assert body.pop("id") == str(first[0]["id"])  # realtime.send names the message in its payload
    assert set(body) == ROUTE_FIELDS
    assert body | {"updatedAt": None} == {
        "documentId": str(document_id),
        "status": "processing",
        "total": 3,
        "pending": 3,
        "processing": 0,
        "completed": 0,
        "failed": 0,
        "pagesDone": 0,
        "pagesTotal": 6,
        "pagesFailed": 0,
        "mergeError": None,
        "percent": 0.0,
        "etaSeconds": None,
        "updatedAt": None,
    }

    async def step() -> dict[str, Any]:
        sent = await messages(pool, document_id)
        await open_throttle(pool, document_id)
        return payload(sent[-1])

    claimed = [await service.claim_chunk(chunks[0].id, "worker-0")]
    # The first claim finds the throttle open (the row is new); one just after it would not.
    assert payload((await messages(pool, document_id))[-1])["processing"] == 1
    await close_throttle(pool, document_id)
    claimed += [await service.claim_chunk(c.id, f"worker-{c.chunk_index}") for c in chunks[1:]]
    assert len(await messages(pool, document_id)) == 2
    await open_throttle(pool, document_id)
    leases = [c.lease for c in claimed if c is not None]
    await service.complete_chunk(leases[0], "r/0.json", checksum(b"0"))
    after_one = await step()
    assert (after_one["pending"], after_one["processing"], after_one["completed"]) == (0, 2, 1)
    assert (after_one["pagesDone"], after_one["percent"], after_one["etaSeconds"]) == (2, 33.33, None)
    await service.complete_chunk(leases[1], "r/1.json", checksum(b"1"))
    after_two = await step()
    assert (after_two["completed"], after_two["pagesDone"], after_two["percent"]) == (2, 4, 66.67)
    assert after_two["etaSeconds"] >= 0  # two chunks done: a rate, so an ETA
    await service.complete_chunk(leases[2], "r/2.json", checksum(b"2"))
    after_three = await step()
    assert (after_three["status"], after_three["completed"], after_three["percent"]) == (
        "processing",
        3,
        100.0,
    )

    await finalize(service, document_id)
    final = payload((await messages(pool, document_id))[-1])
    final.pop("id")
    # The same as the progress route answers now, field for field.
    document, progress = await service.get_progress_for_user(document_id, await make_user(pool, matter))
    route = ProgressView.of(document, progress, datetime.now(UTC)).model_dump(mode="json", by_alias=True)
    assert datetime.fromisoformat(final.pop("updatedAt")) == datetime.fromisoformat(route.pop("updatedAt"))
    assert final == route
    assert final["status"] == "completed"


async def test_status_changes_are_sent_even_when_progress_is_throttled(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    _, document_id, chunks = await started(service, pool, pages=4, chunk_pages=2)
    await close_throttle(pool, document_id)
    claimed = [await service.claim_chunk(c.id, "worker") for c in chunks]
    leases = [c.lease for c in claimed if c is not None]
    await service.complete_chunk(leases[0], "r/0.json", checksum(b"0"))
    assert [payload(m)["status"] for m in await messages(pool, document_id)] == ["processing"]

    # The last chunk fails for good: the chunk's own change is throttled, the document's is not.
    await service.fail_chunk(leases[1], error_code="corrupt_page", error_message="bad", retryable=False)
    sent = [payload(m) for m in await messages(pool, document_id)]
    assert [m["status"] for m in sent] == ["processing", "failed"]
    assert (sent[-1]["completed"], sent[-1]["failed"], sent[-1]["pagesDone"]) == (1, 1, 2)

    # A person retries: back to processing, sent; completed with a page it could not read, sent.
    await service.retry_failed_chunks(document_id, force=True)
    retried = await service.claim_chunk(chunks[1].id, "worker")
    assert retried is not None
    await service.complete_chunk(retried.lease, "r/1.json", checksum(b"1"))
    await finalize(service, document_id, pages_failed=1)
    sent = [payload(m) for m in await messages(pool, document_id)]
    assert [m["status"] for m in sent] == ["processing", "failed", "processing", "completed_with_errors"]
    assert (sent[-1]["pagesFailed"], sent[-1]["percent"], sent[-1]["completed"]) == (1, 100.0, 2)


async def test_a_burst_of_completions_sends_a_few_messages_and_always_the_final_one(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """Forty chunks claimed and completed at once in their own transactions (20 connections):
    none waits on another's broadcast, and consecutive progress messages are 250 ms apart on the
    database's clock, so the burst sends at most one per 250 ms it lasted, plus the statuses."""
    _, document_id, chunks = await started(service, pool, pages=40, chunk_pages=1)

    async def claim_and_complete(chunk: DocumentOCRChunk) -> None:
        claimed = await service.claim_chunk(chunk.id, f"worker-{chunk.chunk_index}")
        assert claimed is not None
        await service.complete_chunk(claimed.lease, f"r/{chunk.chunk_index}.json", checksum(b"r"))

    began = time.monotonic()
    await asyncio.gather(*(claim_and_complete(c) for c in chunks))
    lasted = time.monotonic() - began
    await finalize(service, document_id)

    sent = [payload(m) for m in await messages(pool, document_id)]
    statuses = [m for m in sent if m["status"] != "processing" or m is sent[0]]
    progress_only = len(sent) - len(statuses)
    assert progress_only <= int(lasted / THROTTLE_SECONDS) + 1, (progress_only, lasted)
    assert progress_only < 80  # 80 chunk changes
    assert (sent[0]["status"], sent[0]["pending"]) == ("processing", 40)
    final = sent[-1]
    assert (final["status"], final["completed"], final["pagesDone"], final["percent"]) == (
        "completed",
        40,
        40,
        100.0,
    )
    assert (
        await pool.fetchval(
            "select count(*) from document_ocr_chunks where document_id = $1 and status = 'completed'",
            document_id,
        )
        == 40
    )


async def test_any_writer_broadcasts_though_only_the_owner_may_call_realtime_send(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """The service role (the PostgREST path's role) may not call realtime.send itself; the
    triggers run as their owner."""
    _, document_id, chunks = await started(service, pool, pages=2, chunk_pages=2)
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role service_role")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("select realtime.send('{}'::jsonb, 'progress', 'document:x', true)")
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role service_role")
        await open_throttle(conn, document_id)
        claimed = await conn.fetchrow("select * from ocr_claim_chunk($1, 'worker')", chunks[0].id)
        assert claimed is not None
    sent = [payload(m) for m in await messages(pool, document_id)]
    assert [(m["pending"], m["processing"]) for m in sent] == [(1, 0), (0, 1)]


@asynccontextmanager
async def joining(
    pool: asyncpg.Pool, channel: str, user_id: UUID | None
) -> AsyncIterator[PoolConnectionProxy]:
    """The transaction Realtime opens to authorise a client joining a private channel: probe
    messages of the topic inserted (broadcast and presence), then role, realtime.topic and the
    JWT claims set as it sets them (Realtime.Tenants.Authorization), rolled back afterwards."""
    async with pool.acquire() as conn:
        transaction = conn.transaction()
        await transaction.start()
        try:
            await conn.execute(
                "insert into realtime.messages (topic, extension) values ($1, 'broadcast'), ($1, 'presence')",
                channel,
            )
            claims = {"role": "authenticated"} | ({"sub": str(user_id)} if user_id else {})
            await conn.execute(
                "select set_config('role', 'authenticated', true), set_config('realtime.topic', $1, true),"
                " set_config('request.jwt.claims', $2, true)",
                channel,
                json.dumps(claims),
            )
            yield conn
        finally:
            await transaction.rollback()


async def can_receive(conn: PoolConnectionProxy, channel: str) -> int:
    """How many broadcast messages of the topic the joining client may read (0: refused)."""
    count: int = await conn.fetchval(
        "select count(*) from realtime.messages where topic = $1 and extension = 'broadcast'", channel
    )
    return count


async def test_only_members_of_the_documents_matter_receive_its_topic(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    matter, document_id, _ = await started(service, pool, pages=2, chunk_pages=1)
    _, other_document, _ = await started(service, pool, pages=2, chunk_pages=1)
    viewer = await make_user(pool, matter, role="viewer")
    stranger = await make_user(pool, await make_matter(pool, "elsewhere"))
    channel, other_channel = topic(document_id), topic(other_document)
    sent = len(await messages(pool, document_id))
    assert sent == 1

    async with joining(pool, channel, viewer) as conn:
        assert await conn.fetchval("select realtime.topic()") == channel
        assert await conn.fetchval("select auth.uid()") == viewer
        assert await can_receive(conn, channel) == sent + 1  # the trigger's messages and the probe
        # Reading is all: nobody sends on a document's topic but the database.
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "insert into realtime.messages (topic, extension, event, payload)"
                " values ($1, 'broadcast', 'progress', '{\"percent\": 100}')",
                channel,
            )
    async with joining(pool, channel, viewer) as conn:
        # Joined to their document's topic, they still read no other topic's messages.
        assert await can_receive(conn, other_channel) == 0
        assert await conn.fetchval("select count(*) from realtime.messages where extension = 'presence'") == 0
    for outsider in (stranger, None):
        async with joining(pool, channel, outsider) as conn:
            assert await can_receive(conn, channel) == 0
    async with joining(pool, other_channel, viewer) as conn:
        assert await can_receive(conn, other_channel) == 0
    for not_ours in ("document:not-a-uuid", f"document:{str(document_id).upper()}", f"room:{document_id}"):
        async with joining(pool, not_ours, viewer) as conn:
            assert await can_receive(conn, not_ours) == 0
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role anon")
        await conn.execute("select set_config('realtime.topic', $1, true)", channel)
        assert await can_receive(conn, channel) == 0


async def test_realtime_topic_reads_the_setting_realtime_sets(pool: asyncpg.Pool) -> None:
    async with pool.acquire() as conn, conn.transaction():
        assert await conn.fetchval("select realtime.topic()") is None
        await conn.execute("select set_config('realtime.topic', '', true)")
        assert await conn.fetchval("select realtime.topic()") is None
        await conn.execute("select set_config('realtime.topic', 'document:x', true)")
        assert await conn.fetchval("select realtime.topic()") == "document:x"


async def test_a_document_deleted_takes_its_throttle_row_and_a_missing_row_sends_statuses_only(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    _, document_id, chunks = await started(service, pool, pages=2, chunk_pages=1)
    await pool.execute("delete from ocr_progress_broadcasts where document_id = $1", document_id)
    claimed = await service.claim_chunk(chunks[0].id, "worker")
    assert claimed is not None
    assert len(await messages(pool, document_id)) == 1  # no row: no progress-only message
    await service.fail_chunk(claimed.lease, error_code="corrupt_page", error_message="x", retryable=False)
    other = await service.claim_chunk(chunks[1].id, "worker")
    assert other is not None
    await service.fail_chunk(other.lease, error_code="corrupt_page", error_message="x", retryable=False)
    assert [payload(m)["status"] for m in await messages(pool, document_id)] == ["processing", "failed"]
    assert (
        await pool.fetchval(
            "select count(*) from ocr_progress_broadcasts where document_id = $1", document_id
        )
        == 1
    )

    await service.delete_document(document_id)
    assert (
        await pool.fetchval(
            "select count(*) from ocr_progress_broadcasts where document_id = $1", document_id
        )
        == 0
    )
