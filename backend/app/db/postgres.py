"""Chunk repository on asyncpg.

Every method is one statement (an ``ocr_*`` function or a plain table
operation), so it runs in its own implicit transaction and holds no session
state: it works the same through a transaction pooler, where the statement
cache must be off (``Settings.statement_cache_size`` turns it off for
Supabase's pooler port).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self
from uuid import UUID

import asyncpg

from app.core.errors import (
    DocumentNotFoundError,
    DuplicateChunkError,
    DuplicateDocumentError,
    MatterNotFoundError,
    OCRError,
    RepositoryUnavailableError,
)
from app.db.errors import error_for_sqlstate
from app.db.repository import chunk_payload, document_and_progress, matter_role
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import (
    ChunkProgress,
    ChunkRange,
    ChunkStatus,
    DocumentOCRChunk,
    DocumentOCRChunkCreate,
)
from app.models.roles import MatterRole

_CHUNK = "public.document_ocr_chunks"


class PostgresChunkRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        statement_cache_size: int = 100,
    ) -> Self:
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                statement_cache_size=statement_cache_size,
                server_settings={"application_name": "chunk-ocr"},
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise RepositoryUnavailableError(f"cannot connect to the database: {exc}") from exc
        return cls(pool)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def close(self) -> None:
        await self._pool.close()

    async def ping(self) -> None:
        async with self._translated():
            await self._pool.fetchval("select 1")

    @asynccontextmanager
    async def _translated(
        self,
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> AsyncIterator[None]:
        try:
            yield
        except asyncpg.PostgresError as exc:
            raise error_for_sqlstate(
                exc.sqlstate, str(exc), on_unique=on_unique, on_foreign_key=on_foreign_key
            ) from exc
        except (asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise RepositoryUnavailableError(f"database connection failed: {exc}") from exc

    async def _chunks(self, query: str, *args: Any) -> list[DocumentOCRChunk]:
        async with self._translated():
            rows = await self._pool.fetch(query, *args)
        return [DocumentOCRChunk.from_row(r) for r in rows]

    async def _chunk(self, query: str, *args: Any) -> DocumentOCRChunk | None:
        rows = await self._chunks(query, *args)
        return rows[0] if rows else None

    # -- matters ----------------------------------------------------------------

    async def get_or_create_matter(self, name: str) -> UUID:
        async with self._translated():
            matter_id: UUID = await self._pool.fetchval("select public.ocr_get_or_create_matter($1)", name)
        return matter_id

    async def is_matter_member(self, matter_id: UUID, user_id: UUID) -> bool:
        async with self._translated():
            member = await self._pool.fetchval(
                "select public.ocr_user_is_matter_member($1, $2)", matter_id, user_id
            )
        return bool(member)

    async def member_role(self, matter_id: UUID, user_id: UUID) -> MatterRole | None:
        async with self._translated():
            role = await self._pool.fetchval("select public.ocr_user_matter_role($1, $2)", matter_id, user_id)
        return matter_role(role)

    async def progress_for_user(
        self, document_id: UUID, user_id: UUID
    ) -> tuple[Document, ChunkProgress] | None:
        async with self._translated():
            found = await self._pool.fetchval(
                "select public.ocr_document_progress_for_user($1, $2)::text", document_id, user_id
            )
        return document_and_progress(found)

    # -- documents ------------------------------------------------------------

    async def create_document(self, document: DocumentCreate) -> Document:
        async with self._translated(on_unique=DuplicateDocumentError, on_foreign_key=MatterNotFoundError):
            row = await self._pool.fetchrow(
                """
                insert into public.documents
                    (id, matter_id, filename, source_path, page_count, file_sha256, engine)
                values (coalesce($1, gen_random_uuid()), $2, $3, $4, $5, $6, $7)
                returning *
                """,
                document.id,
                document.matter_id,
                document.filename,
                document.source_path,
                document.page_count,
                document.file_sha256,
                document.engine,
            )
        return Document.from_row(row)

    async def get_document(self, document_id: UUID) -> Document | None:
        async with self._translated():
            row = await self._pool.fetchrow("select * from public.documents where id = $1", document_id)
        return Document.from_row(row) if row else None

    async def set_document_status(
        self,
        document_id: UUID,
        status: DocumentStatus,
        *,
        result_storage_path: str | None = None,
        result_checksum: str | None = None,
        error_message: str | None = None,
    ) -> Document | None:
        async with self._translated():
            row = await self._pool.fetchrow(
                "select * from public.ocr_set_document_status($1, $2, $3, $4, $5)",
                document_id,
                status.value,
                result_storage_path,
                result_checksum,
                error_message,
            )
        return Document.from_row(row) if row else None

    async def refresh_document_status(self, document_id: UUID) -> DocumentStatus | None:
        async with self._translated():
            value = await self._pool.fetchval("select public.ocr_refresh_document_status($1)", document_id)
        return DocumentStatus(value) if value is not None else None

    async def delete_document(self, document_id: UUID) -> None:
        async with self._translated():
            await self._pool.execute("delete from public.documents where id = $1", document_id)

    async def documents_ready_to_merge(self, limit: int, lease_seconds: float) -> list[Document]:
        return await self._documents(
            "select * from public.ocr_documents_ready_to_merge($1, $2)", limit, lease_seconds
        )

    async def _documents(self, query: str, *args: Any) -> list[Document]:
        async with self._translated():
            rows = await self._pool.fetch(query, *args)
        return [Document.from_row(r) for r in rows]

    async def _document(self, query: str, *args: Any) -> Document | None:
        rows = await self._documents(query, *args)
        return rows[0] if rows else None

    async def _flag(self, query: str, *args: Any) -> bool:
        async with self._translated():
            return bool(await self._pool.fetchval(query, *args))

    # -- the finalize lease -----------------------------------------------------

    async def claim_finalize(
        self, document_id: UUID, worker_id: str, lease_seconds: float
    ) -> Document | None:
        return await self._document(
            "select * from public.ocr_claim_finalize($1, $2, $3)", document_id, worker_id, lease_seconds
        )

    async def heartbeat_finalize(self, document_id: UUID, worker_id: str, attempt: int) -> bool:
        return await self._flag(
            "select public.ocr_heartbeat_finalize($1, $2, $3)", document_id, worker_id, attempt
        )

    async def complete_finalize(
        self,
        document_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> Document | None:
        return await self._document(
            "select * from public.ocr_complete_finalize($1, $2, $3, $4, $5)",
            document_id,
            worker_id,
            attempt,
            result_storage_path,
            result_checksum,
        )

    async def release_finalize(
        self, document_id: UUID, worker_id: str, attempt: int, failed_message: str | None = None
    ) -> bool:
        return await self._flag(
            "select public.ocr_release_finalize($1, $2, $3, $4)",
            document_id,
            worker_id,
            attempt,
            failed_message,
        )

    # -- chunk rows -----------------------------------------------------------

    async def create_chunk(self, chunk: DocumentOCRChunkCreate, max_attempts: int) -> DocumentOCRChunk:
        created = await self._create(chunk.document_id, [chunk_payload(chunk, chunk.matter_id)], max_attempts)
        return created[0]

    async def create_chunks(
        self, document_id: UUID, chunks: Sequence[ChunkRange], max_attempts: int
    ) -> list[DocumentOCRChunk]:
        return await self._create(document_id, [chunk_payload(c) for c in chunks], max_attempts)

    async def start_document(
        self, document_id: UUID, chunks: Sequence[ChunkRange], max_attempts: int
    ) -> list[DocumentOCRChunk]:
        return await self._create(
            document_id, [chunk_payload(c) for c in chunks], max_attempts, "ocr_start_document"
        )

    async def _create(
        self,
        document_id: UUID,
        payload: list[dict[str, Any]],
        max_attempts: int,
        function: str = "ocr_create_chunks",
    ) -> list[DocumentOCRChunk]:
        async with self._translated(on_unique=DuplicateChunkError, on_foreign_key=DocumentNotFoundError):
            rows = await self._pool.fetch(
                f"select * from public.{function}($1, $2::jsonb, $3)",
                document_id,
                json.dumps(payload),
                max_attempts,
            )
        if len(rows) != len(payload):
            raise DocumentNotFoundError(f"document {document_id} does not exist", document_id=document_id)
        return sorted((DocumentOCRChunk.from_row(r) for r in rows), key=lambda c: c.chunk_index)

    async def get_chunk(self, chunk_id: UUID) -> DocumentOCRChunk | None:
        return await self._chunk(f"select * from {_CHUNK} where id = $1", chunk_id)

    async def list_chunks(
        self,
        *,
        document_id: UUID | None = None,
        status: ChunkStatus | None = None,
        limit: int | None = None,
    ) -> list[DocumentOCRChunk]:
        return await self._chunks(
            f"""
            select * from {_CHUNK}
             where ($1::uuid is null or document_id = $1)
               and ($2::text is null or status = $2)
             order by document_id, chunk_index
             limit $3
            """,
            document_id,
            status.value if status else None,
            limit,
        )

    async def update_status(
        self,
        chunk_id: UUID,
        expected: ChunkStatus,
        new: ChunkStatus,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
    ) -> DocumentOCRChunk | None:
        return await self._chunk(
            f"""
            update {_CHUNK}
               set status = $3,
                   error_code = coalesce($4, error_code),
                   error_message = coalesce($5, error_message)
             where id = $1 and status = $2
            returning *
            """,
            chunk_id,
            expected.value,
            new.value,
            error_code,
            error_message,
        )

    async def set_result(
        self, chunk_id: UUID, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk | None:
        return await self._chunk(
            f"""
            update {_CHUNK}
               set result_storage_path = $2, result_checksum = $3
             where id = $1 and status in ('processing', 'completed')
            returning *
            """,
            chunk_id,
            result_storage_path,
            result_checksum,
        )

    # -- lease protocol -------------------------------------------------------

    async def claim(self, chunk_id: UUID, worker_id: str) -> DocumentOCRChunk | None:
        return await self._chunk("select * from public.ocr_claim_chunk($1, $2)", chunk_id, worker_id)

    async def claim_next(self, worker_id: str, document_id: UUID | None = None) -> DocumentOCRChunk | None:
        return await self._chunk("select * from public.ocr_claim_next_chunk($1, $2)", worker_id, document_id)

    async def heartbeat(self, chunk_id: UUID, worker_id: str, attempt: int) -> bool:
        async with self._translated():
            beat = await self._pool.fetchval(
                "select public.ocr_heartbeat_chunk($1, $2, $3)", chunk_id, worker_id, attempt
            )
        return bool(beat)

    async def record_result(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> bool:
        async with self._translated():
            recorded = await self._pool.fetchval(
                "select public.ocr_record_chunk_result($1, $2, $3, $4, $5)",
                chunk_id,
                worker_id,
                attempt,
                result_storage_path,
                result_checksum,
            )
        return bool(recorded)

    async def complete(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> DocumentOCRChunk | None:
        return await self._chunk(
            "select * from public.ocr_complete_chunk($1, $2, $3, $4, $5)",
            chunk_id,
            worker_id,
            attempt,
            result_storage_path,
            result_checksum,
        )

    async def fail(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        error_code: str,
        error_message: str,
        retryable: bool,
    ) -> DocumentOCRChunk | None:
        return await self._chunk(
            "select * from public.ocr_fail_chunk($1, $2, $3, $4, $5, $6)",
            chunk_id,
            worker_id,
            attempt,
            error_code,
            error_message,
            retryable,
        )

    async def detect_stale(self, threshold_seconds: float) -> list[DocumentOCRChunk]:
        return await self._chunks("select * from public.ocr_detect_stale_chunks($1)", threshold_seconds)

    async def sweep_stale(
        self, threshold_seconds: float, chunk_id: UUID | None = None
    ) -> list[DocumentOCRChunk]:
        return await self._chunks(
            "select * from public.ocr_sweep_stale_chunks($1, $2)", threshold_seconds, chunk_id
        )

    async def retry_failed(
        self,
        *,
        document_id: UUID | None,
        base_seconds: float,
        cap_seconds: float,
        force: bool,
    ) -> list[DocumentOCRChunk]:
        return await self._chunks(
            "select * from public.ocr_retry_failed_chunks($1, $2, $3, $4)",
            document_id,
            base_seconds,
            cap_seconds,
            force,
        )

    async def due_pending(self, limit: int, overdue_seconds: float = 0) -> list[DocumentOCRChunk]:
        return await self._chunks(
            "select * from public.ocr_due_pending_chunks($1, $2)", limit, overdue_seconds
        )

    async def progress(self, document_id: UUID) -> ChunkProgress:
        async with self._translated():
            row = await self._pool.fetchrow("select * from public.ocr_chunk_progress($1)", document_id)
        return ChunkProgress.model_validate(dict(row) if row else {"document_id": document_id})
