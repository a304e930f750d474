"""The finalize lease on real PostgreSQL, Redis, PDFs and OCR: one merge at a time, fenced,
rescued by the sweep only once it expired, given up on errors, and repairing a merged result."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis

from app.core.backoff import Backoff
from app.core.errors import LeaseLostError
from app.local.documents import print_status
from app.models.document import Document, DocumentStatus
from app.models.results import MergedResult
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services.chunk_processor import ChunkOutcome
from app.services.documents import Documents
from app.services.finalize import FinalizeOutcome, Finalizer
from app.services.planner import StartedDocument, start_document
from app.services.queue import QUEUE_NAME, ArqJobQueue, finalize_job_id
from app.services.recovery import sweep
from app.services.runtime import Runtime
from app.storage.base import get_verified
from app.storage.paths import merged_json_path, merged_text_path
from tests.integration.conftest import heartbeating
from tests.pdf_factories import cer


async def started_and_processed(
    runtime: Runtime,
    arq_redis: ArqRedis,
    pdf: Path,
    matter_id: UUID,
    *,
    engine: str = "text-layer",
    chunk_pages: int = 2,
) -> StartedDocument:
    """A document whose chunks have all completed (OCR ran), its merge not started yet."""
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine=engine,
        chunk_pages=chunk_pages,
    )
    for chunk in started.chunks:
        assert await runtime.processor.process(str(chunk.id)) is ChunkOutcome.COMPLETED
    return started


def rival(runtime: Runtime, worker_id: str, **processor_changes: object) -> Finalizer:
    """A second finalizer on the same database, store and OCR pool, as another worker would be."""
    processor = dataclasses.replace(runtime.processor, worker_id=worker_id, **processor_changes)  # type: ignore[arg-type]
    return dataclasses.replace(runtime.finalizer, processor=processor)


def stored(runtime: Runtime, path: str) -> Path:
    """The local file behind a blob store path."""
    return runtime.settings.local_storage_dir / runtime.settings.storage_bucket / path


async def verified_merged(runtime: Runtime, document: Document) -> MergedResult:
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    data = await get_verified(runtime.store, document.result_storage_path, document.result_checksum)
    return MergedResult.model_validate_json(data)


async def lease_row(pool: asyncpg.Pool, document_id: UUID) -> asyncpg.Record:
    row = await pool.fetchrow(
        "select ocr_status, finalize_worker_id, finalize_attempt, finalize_heartbeat_at, error_message"
        " from public.documents where id = $1",
        document_id,
    )
    assert row is not None
    return row


async def test_one_merge_at_a_time(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=2, seed=7)
    started = await started_and_processed(
        runtime, arq_redis, tmp_path / "scan.pdf", matter_id, engine="tesseract", chunk_pages=1
    )
    # The winner must OCR a chunk again (tesseract, a second or more), so the two merges overlap.
    victim = await runtime.service.get_chunk(started.chunks[0].id)
    assert victim.result_storage_path is not None
    file = stored(runtime, victim.result_storage_path)
    file.write_bytes(file.read_bytes().replace(b'"text":"', b'"text":"TAMPERED ', 1))
    other = rival(runtime, "rival-worker")

    async def finalize(finalizer: Finalizer) -> tuple[FinalizeOutcome, str | None]:
        """The outcome, and who held the merge's lease the moment it was known."""
        outcome = await finalizer.finalize(started.document.id)
        holder = await pool.fetchval(
            "select finalize_worker_id from public.documents where id = $1", started.document.id
        )
        return outcome, holder

    mine, theirs = await asyncio.gather(finalize(runtime.finalizer), finalize(other))

    assert {mine[0], theirs[0]} == {FinalizeOutcome.COMPLETED, FinalizeOutcome.BUSY}
    winner, (loser_outcome, holder_then) = (
        ("test-worker", theirs) if mine[0] is FinalizeOutcome.COMPLETED else ("rival-worker", mine)
    )
    assert loser_outcome is FinalizeOutcome.BUSY
    # turned away by a merge that was really running (the winner still held the lease), not a finished one
    assert holder_then == winner
    row = await lease_row(pool, started.document.id)
    assert (row["ocr_status"], row["finalize_attempt"], row["finalize_worker_id"]) == ("completed", 1, None)
    merged = await verified_merged(runtime, await runtime.service.get_document(started.document.id))
    assert "TAMPERED" not in merged.text()
    assert [p.page_number for p in merged.pages] == [1, 2]
    assert all(cer(t, p.text) < 0.05 for t, p in zip(texts, merged.pages, strict=True))


async def test_the_sweep_rescues_only_an_expired_merge(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "s.pdf", pages=4, seed=8)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "s.pdf", matter_id)
    document_id = started.document.id
    await arq_redis.flushdb()  # the finalize job the last chunk enqueued is lost: only the sweep is left
    queue = ArqJobQueue(arq_redis)

    held = await runtime.service.claim_finalize(document_id, "first-merger")
    assert held is not None
    lease = held.finalize_lease
    assert lease.attempt == 1
    async with heartbeating(runtime.service, lease):
        # a live merge: the sweep leaves it alone, and so does any other finalizer
        assert (await sweep(runtime.service, queue)).finalize_enqueued == 0
        assert await runtime.service.get_documents_ready_to_merge() == []
        assert await arq_redis.zscore(QUEUE_NAME, finalize_job_id(document_id)) is None
        assert await rival(runtime, "second-merger").finalize(document_id) is FinalizeOutcome.BUSY

    # the holder stops heartbeating (it died); its lease ages past the threshold
    await pool.execute(
        "update public.documents set finalize_heartbeat_at = now() - interval '1 hour' where id = $1",
        document_id,
    )
    assert [d.id for d in await runtime.service.get_documents_ready_to_merge()] == [document_id]
    assert (await sweep(runtime.service, queue)).finalize_enqueued == 1
    assert await arq_redis.zscore(QUEUE_NAME, finalize_job_id(document_id)) is not None

    assert await rival(runtime, "second-merger").finalize(document_id) is FinalizeOutcome.COMPLETED
    row = await lease_row(pool, document_id)
    assert (row["ocr_status"], row["finalize_attempt"], row["finalize_worker_id"]) == ("completed", 2, None)
    document = await runtime.service.get_document(document_id)
    await verified_merged(runtime, document)

    # the first holder is fenced out: it can neither complete nor heartbeat any more
    with pytest.raises(LeaseLostError):
        await runtime.service.complete_finalize(lease, "elsewhere/result.json", "0" * 64)
    assert await runtime.service.heartbeat_finalize(lease) is False
    assert await runtime.service.release_finalize(lease, failed_message="zombie") is False
    assert await runtime.service.get_document(document_id) == document


async def test_a_zombie_cannot_complete_over_a_live_takeover(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "z.pdf", pages=2, seed=9)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "z.pdf", matter_id)
    document_id = started.document.id
    first = await runtime.service.claim_finalize(document_id, "zombie")
    assert first is not None
    await pool.execute(
        "update public.documents set finalize_heartbeat_at = now() - interval '1 hour' where id = $1",
        document_id,
    )
    second = await runtime.service.claim_finalize(document_id, "zombie")  # same worker id, new attempt
    assert second is not None
    assert second.finalize_lease.attempt == 2

    with pytest.raises(LeaseLostError):
        await runtime.service.complete_finalize(first.finalize_lease, "elsewhere/result.json", "0" * 64)
    assert await runtime.service.heartbeat_finalize(first.finalize_lease) is False
    row = await lease_row(pool, document_id)
    assert (row["ocr_status"], row["finalize_worker_id"], row["finalize_attempt"]) == (
        "processing",
        "zombie",
        2,
    )
    assert await runtime.service.heartbeat_finalize(second.finalize_lease) is True


async def test_a_page_missing_from_the_chunks_fails_the_document(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "g.pdf", pages=6, seed=10)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "g.pdf", matter_id)
    # pages 3-4 have no chunk any more: the chunk results cannot add up to the document
    await pool.execute("delete from public.document_ocr_chunks where id = $1", started.chunks[1].id)

    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.FAILED
    row = await lease_row(pool, started.document.id)
    assert (row["ocr_status"], row["finalize_worker_id"], row["finalize_heartbeat_at"]) == (
        "failed",
        None,
        None,
    )
    assert row["finalize_attempt"] == 1
    assert "do not cover pages 1-6" in row["error_message"]
    assert not stored(runtime, merged_json_path(matter_id, started.document.id)).exists()
    assert await runtime.service.get_documents_ready_to_merge() == []
    # a failed document is not merged again by a later delivery
    assert await runtime.finalizer.finalize(started.document.id) is not FinalizeOutcome.COMPLETED
    assert await lease_row(pool, started.document.id) == row


async def test_a_chunk_that_can_no_longer_be_read_nor_redone_fails_the_document(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "n.pdf", pages=4, seed=11)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "n.pdf", matter_id)
    chunk = await runtime.service.get_chunk(started.chunks[0].id)
    assert chunk.result_storage_path is not None
    assert chunk.input_storage_path is not None
    # both the result and the input it could be made again from are gone: no retry can help
    stored(runtime, chunk.result_storage_path).unlink()
    stored(runtime, chunk.input_storage_path).unlink()

    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.FAILED
    row = await lease_row(pool, started.document.id)
    assert (row["ocr_status"], row["finalize_worker_id"]) == ("failed", None)
    assert chunk.input_storage_path in row["error_message"]


async def test_a_storage_error_gives_the_merge_back_for_the_sweep(
    runtime: Runtime,
    arq_redis: ArqRedis,
    matter_id: UUID,
    tmp_path: Path,
    pool: asyncpg.Pool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    texts = make_born_digital_pdf(tmp_path / "t.pdf", pages=4, seed=12)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "t.pdf", matter_id)
    document_id = started.document.id
    await arq_redis.flushdb()
    chunk = await runtime.service.get_chunk(started.chunks[1].id)
    assert chunk.result_storage_path is not None
    assert chunk.input_storage_path is not None
    # The chunk's result is gone, so it must be OCR'd again, and its input cannot be read right
    # now: the store answers with an I/O error (a directory where the object was), not "no object".
    stored(runtime, chunk.result_storage_path).unlink()
    input_file = stored(runtime, chunk.input_storage_path)
    saved = tmp_path / "input.pdf"
    shutil.move(input_file, saved)
    input_file.mkdir()
    quick = rival(runtime, "second-worker", storage_backoff=Backoff(base=0.01, cap=0.05))

    assert await quick.finalize(document_id) is FinalizeOutcome.DEFERRED
    row = await lease_row(pool, document_id)
    assert (row["ocr_status"], row["finalize_worker_id"], row["finalize_heartbeat_at"]) == (
        "processing",
        None,
        None,
    )
    assert row["error_message"] is None
    assert not stored(runtime, merged_json_path(matter_id, document_id)).exists()
    # why the merge was put off is on the document, and `chunk-ocr status` says it
    deferred = await runtime.service.get_document(document_id)
    assert deferred.merge_error is not None
    assert chunk.input_storage_path in deferred.merge_error
    report = await Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis)).status(document_id)
    print_status(report, as_json=False)
    said = capsys.readouterr().out
    assert f"merge put off (a worker tries again; merges started: 1): {deferred.merge_error}" in said
    # released, not expired: the sweep enqueues the merge again at once
    assert [d.id for d in await runtime.service.get_documents_ready_to_merge()] == [document_id]
    assert (await sweep(runtime.service, ArqJobQueue(arq_redis))).finalize_enqueued == 1

    input_file.rmdir()  # the store is back
    shutil.move(saved, input_file)
    assert await quick.finalize(document_id) is FinalizeOutcome.COMPLETED
    document = await runtime.service.get_document(document_id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.merge_error is None  # cleared by the merge that completed it
    merged = await verified_merged(runtime, document)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    assert (await lease_row(pool, document_id))["finalize_attempt"] == 2


@pytest.mark.parametrize("damage", ["deleted", "tampered"])
async def test_finalize_repairs_a_damaged_merged_result(
    runtime: Runtime,
    arq_redis: ArqRedis,
    matter_id: UUID,
    tmp_path: Path,
    pool: asyncpg.Pool,
    damage: str,
) -> None:
    texts = make_born_digital_pdf(tmp_path / "m.pdf", pages=4, seed=13)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "m.pdf", matter_id)
    document_id = started.document.id
    assert await runtime.finalizer.finalize(document_id) is FinalizeOutcome.COMPLETED
    done = await runtime.service.get_document(document_id)
    result_file = stored(runtime, merged_json_path(matter_id, document_id))
    good = result_file.read_bytes()
    if damage == "deleted":
        result_file.unlink()
    else:
        result_file.write_bytes(good.replace(b'"text":"', b'"text":"TAMPERED ', 1))

    assert await runtime.finalizer.finalize(document_id) is FinalizeOutcome.COMPLETED
    repaired = await runtime.service.get_document(document_id)
    assert repaired.ocr_status is DocumentStatus.COMPLETED
    merged = await verified_merged(runtime, repaired)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    assert result_file.read_bytes() == good  # merging is deterministic: the same bytes again
    assert (repaired.result_storage_path, repaired.result_checksum) == (
        done.result_storage_path,
        done.result_checksum,
    )
    assert repaired.ocr_completed_at == done.ocr_completed_at  # completed once; repaired since
    row = await lease_row(pool, document_id)
    assert (row["finalize_attempt"], row["finalize_worker_id"]) == (2, None)


async def test_finalize_of_a_verified_result_writes_nothing(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "v.pdf", pages=3, seed=14)
    started = await started_and_processed(runtime, arq_redis, tmp_path / "v.pdf", matter_id)
    document_id = started.document.id
    assert await runtime.finalizer.finalize(document_id) is FinalizeOutcome.COMPLETED
    done = await runtime.service.get_document(document_id)
    files = [
        stored(runtime, merged_json_path(matter_id, document_id)),
        stored(runtime, merged_text_path(matter_id, document_id)),
    ]
    before = [f.stat().st_mtime_ns for f in files]
    await asyncio.sleep(0.05)  # a rewrite now would show in the mtime

    assert await runtime.finalizer.finalize(document_id) is FinalizeOutcome.ALREADY_DONE
    assert await rival(runtime, "other-worker").finalize(document_id) is FinalizeOutcome.ALREADY_DONE
    assert [f.stat().st_mtime_ns for f in files] == before
    assert await runtime.service.get_document(document_id) == done
    assert (await lease_row(pool, document_id))["finalize_attempt"] == 1
