"""Chunk repository on supabase-py: PostgREST table operations and RPC.

It calls the same SQL as the asyncpg repository (the ``ocr_*`` functions by
RPC, plain table reads and compare-and-set updates), with the service role
key, so RLS does not apply and the lease functions decide everything.
PostgREST errors carry the PostgreSQL SQLSTATE in ``code`` (or PostgREST's
own ``PGRST...`` code, or the HTTP status for a non-JSON body); they are
translated here, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self
from uuid import UUID

import httpx
from postgrest.exceptions import APIError
from supabase import AsyncClient, AsyncClientOptions, acreate_client

from app.core.errors import (
    DocumentNotFoundError,
    DuplicateChunkError,
    DuplicateDocumentError,
    MatterNotFoundError,
    OCRError,
    RepositoryUnavailableError,
)
from app.db.errors import error_for_sqlstate
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import (
    ChunkProgress,
    ChunkRange,
    ChunkStatus,
    DocumentOCRChunk,
    DocumentOCRChunkCreate,
)

CHUNKS = "document_ocr_chunks"
DOCUMENTS = "documents"
# PostgREST cannot reach PostgreSQL (PGRST000-003) or a proxy answered 5xx: try again later.
_POSTGREST_UNAVAILABLE = frozenset({"PGRST000", "PGRST001", "PGRST002", "PGRST003"})


def _postgrest_error(
    exc: APIError,
    *,
    on_unique: type[OCRError] | None = None,
    on_foreign_key: type[OCRError] | None = None,
) -> OCRError:
    code = exc.code or ""
    message = exc.message or "PostgREST error"
    if code in _POSTGREST_UNAVAILABLE or (len(code) == 3 and code.startswith("5")):
        return RepositoryUnavailableError(f"Supabase API unavailable: {message}", code=code)
    return error_for_sqlstate(code, message, on_unique=on_unique, on_foreign_key=on_foreign_key)


def _chunk_payload(chunk: ChunkRange, matter_id: UUID | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "chunk_index": chunk.chunk_index,
        "page_start": chunk.page_start,
        "page_end": chunk.page_end,
        "input_storage_path": chunk.input_storage_path,
        "input_checksum": chunk.input_checksum,
    }
    if matter_id is not None:
        payload["matter_id"] = str(matter_id)
    return payload


def _rows(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return data
    return [data] if isinstance(data, dict) else []


class SupabaseChunkRepository:
    def __init__(self, client: AsyncClient, http: httpx.AsyncClient | None = None) -> None:
        self._client = client
        self._http = http

    @classmethod
    async def connect(cls, url: str, service_role_key: str, *, request_timeout: float = 30) -> Self:
        """One HTTP/1.1 client for the process, closed by close()."""
        http = httpx.AsyncClient(timeout=httpx.Timeout(request_timeout), http2=False)
        options = AsyncClientOptions(auto_refresh_token=False, persist_session=False, httpx_client=http)
        return cls(await acreate_client(url, service_role_key, options), http)

    @property
    def client(self) -> AsyncClient:
        return self._client

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def ping(self) -> None:
        async with self._translated():
            await self._client.table(DOCUMENTS).select("id").limit(1).execute()

    @asynccontextmanager
    async def _translated(
        self,
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> AsyncIterator[None]:
        try:
            yield
        except APIError as exc:
            raise _postgrest_error(exc, on_unique=on_unique, on_foreign_key=on_foreign_key) from exc
        except httpx.TransportError as exc:  # connect, read, write, pool and timeout errors
            raise RepositoryUnavailableError(f"Supabase API unreachable: {exc}") from exc

    async def _rpc(self, function: str, params: dict[str, Any], **translate: Any) -> Any:
        async with self._translated(**translate):
            response = await self._client.rpc(function, params).execute()
        return response.data

    async def _rpc_chunks(self, function: str, params: dict[str, Any]) -> list[DocumentOCRChunk]:
        return [DocumentOCRChunk.model_validate(r) for r in _rows(await self._rpc(function, params))]

    async def _rpc_chunk(self, function: str, params: dict[str, Any]) -> DocumentOCRChunk | None:
        rows = await self._rpc_chunks(function, params)
        return rows[0] if rows else None

    # -- documents ------------------------------------------------------------

    async def create_document(self, document: DocumentCreate) -> Document:
        row = document.model_dump(mode="json", exclude_none=True)
        async with self._translated(on_unique=DuplicateDocumentError, on_foreign_key=MatterNotFoundError):
            response = await self._client.table(DOCUMENTS).insert(row).execute()
        return Document.model_validate(_rows(response.data)[0])

    async def get_document(self, document_id: UUID) -> Document | None:
        async with self._translated():
            response = await self._client.table(DOCUMENTS).select("*").eq("id", str(document_id)).execute()
        rows = _rows(response.data)
        return Document.model_validate(rows[0]) if rows else None

    async def set_document_status(
        self,
        document_id: UUID,
        status: DocumentStatus,
        *,
        result_storage_path: str | None = None,
        result_checksum: str | None = None,
        error_message: str | None = None,
    ) -> Document | None:
        data = await self._rpc(
            "ocr_set_document_status",
            {
                "p_document_id": str(document_id),
                "p_ocr_status": status.value,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
                "p_error_message": error_message,
            },
        )
        rows = _rows(data)
        return Document.model_validate(rows[0]) if rows else None

    async def refresh_document_status(self, document_id: UUID) -> DocumentStatus | None:
        value = await self._rpc("ocr_refresh_document_status", {"p_document_id": str(document_id)})
        return DocumentStatus(value) if value else None

    async def delete_document(self, document_id: UUID) -> None:
        async with self._translated():
            await self._client.table(DOCUMENTS).delete().eq("id", str(document_id)).execute()

    async def documents_ready_to_merge(self, limit: int) -> list[Document]:
        rows = _rows(await self._rpc("ocr_documents_ready_to_merge", {"p_limit": limit}))
        return [Document.model_validate(r) for r in rows]

    # -- chunk rows -----------------------------------------------------------

    async def create_chunk(self, chunk: DocumentOCRChunkCreate, max_attempts: int) -> DocumentOCRChunk:
        created = await self._create(
            chunk.document_id, [_chunk_payload(chunk, chunk.matter_id)], max_attempts
        )
        return created[0]

    async def create_chunks(
        self, document_id: UUID, chunks: Sequence[ChunkRange], max_attempts: int
    ) -> list[DocumentOCRChunk]:
        return await self._create(document_id, [_chunk_payload(c) for c in chunks], max_attempts)

    async def _create(
        self, document_id: UUID, payload: list[dict[str, Any]], max_attempts: int
    ) -> list[DocumentOCRChunk]:
        data = await self._rpc(
            "ocr_create_chunks",
            {"p_document_id": str(document_id), "p_chunks": payload, "p_max_attempts": max_attempts},
            on_unique=DuplicateChunkError,
            on_foreign_key=DocumentNotFoundError,
        )
        rows = _rows(data)
        if len(rows) != len(payload):
            raise DocumentNotFoundError(f"document {document_id} does not exist", document_id=document_id)
        return sorted((DocumentOCRChunk.model_validate(r) for r in rows), key=lambda c: c.chunk_index)

    async def get_chunk(self, chunk_id: UUID) -> DocumentOCRChunk | None:
        async with self._translated():
            response = await self._client.table(CHUNKS).select("*").eq("id", str(chunk_id)).execute()
        rows = _rows(response.data)
        return DocumentOCRChunk.model_validate(rows[0]) if rows else None

    async def list_chunks(
        self,
        *,
        document_id: UUID | None = None,
        status: ChunkStatus | None = None,
        limit: int | None = None,
    ) -> list[DocumentOCRChunk]:
        query = self._client.table(CHUNKS).select("*")
        if document_id is not None:
            query = query.eq("document_id", str(document_id))
        if status is not None:
            query = query.eq("status", status.value)
        query = query.order("document_id").order("chunk_index")
        if limit is not None:
            query = query.limit(limit)
        async with self._translated():
            response = await query.execute()
        return [DocumentOCRChunk.model_validate(r) for r in _rows(response.data)]

    async def update_status(
        self,
        chunk_id: UUID,
        expected: ChunkStatus,
        new: ChunkStatus,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
    ) -> DocumentOCRChunk | None:
        update: dict[str, Any] = {"status": new.value}
        if error_code is not None:
            update["error_code"] = error_code
        if error_message is not None:
            update["error_message"] = error_message
        async with self._translated():
            response = await (
                self._client.table(CHUNKS)
                .update(update)
                .eq("id", str(chunk_id))
                .eq("status", expected.value)
                .execute()
            )
        rows = _rows(response.data)
        return DocumentOCRChunk.model_validate(rows[0]) if rows else None

    async def set_result(
        self, chunk_id: UUID, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk | None:
        async with self._translated():
            response = await (
                self._client.table(CHUNKS)
                .update({"result_storage_path": result_storage_path, "result_checksum": result_checksum})
                .eq("id", str(chunk_id))
                .in_("status", [ChunkStatus.PROCESSING.value, ChunkStatus.COMPLETED.value])
                .execute()
            )
        rows = _rows(response.data)
        return DocumentOCRChunk.model_validate(rows[0]) if rows else None

    # -- lease protocol -------------------------------------------------------

    async def claim(self, chunk_id: UUID, worker_id: str) -> DocumentOCRChunk | None:
        return await self._rpc_chunk(
            "ocr_claim_chunk", {"p_chunk_id": str(chunk_id), "p_worker_id": worker_id}
        )

    async def claim_next(self, worker_id: str, document_id: UUID | None = None) -> DocumentOCRChunk | None:
        return await self._rpc_chunk(
            "ocr_claim_next_chunk",
            {"p_worker_id": worker_id, "p_document_id": str(document_id) if document_id else None},
        )

    async def heartbeat(self, chunk_id: UUID, worker_id: str, attempt: int) -> bool:
        beat = await self._rpc(
            "ocr_heartbeat_chunk",
            {"p_chunk_id": str(chunk_id), "p_worker_id": worker_id, "p_attempt": attempt},
        )
        return beat is True

    async def record_result(
        self, chunk_id: UUID, worker_id: str, attempt: int, result_storage_path: str, result_checksum: str
    ) -> bool:
        recorded = await self._rpc(
            "ocr_record_chunk_result",
            {
                "p_chunk_id": str(chunk_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
        )
        return recorded is True

    async def complete(
        self, chunk_id: UUID, worker_id: str, attempt: int, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk | None:
        return await self._rpc_chunk(
            "ocr_complete_chunk",
            {
                "p_chunk_id": str(chunk_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
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
        return await self._rpc_chunk(
            "ocr_fail_chunk",
            {
                "p_chunk_id": str(chunk_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_error_code": error_code,
                "p_error_message": error_message,
                "p_retryable": retryable,
            },
        )

    async def detect_stale(self, threshold_seconds: float) -> list[DocumentOCRChunk]:
        return await self._rpc_chunks("ocr_detect_stale_chunks", {"p_threshold_seconds": threshold_seconds})

    async def sweep_stale(
        self, threshold_seconds: float, chunk_id: UUID | None = None
    ) -> list[DocumentOCRChunk]:
        return await self._rpc_chunks(
            "ocr_sweep_stale_chunks",
            {"p_threshold_seconds": threshold_seconds, "p_chunk_id": str(chunk_id) if chunk_id else None},
        )

    async def retry_failed(
        self, *, document_id: UUID | None, base_seconds: float, cap_seconds: float, force: bool
    ) -> list[DocumentOCRChunk]:
        return await self._rpc_chunks(
            "ocr_retry_failed_chunks",
            {
                "p_document_id": str(document_id) if document_id else None,
                "p_base_seconds": base_seconds,
                "p_cap_seconds": cap_seconds,
                "p_force": force,
            },
        )

    async def due_pending(self, limit: int, overdue_seconds: float = 0) -> list[DocumentOCRChunk]:
        return await self._rpc_chunks(
            "ocr_due_pending_chunks", {"p_limit": limit, "p_overdue_seconds": overdue_seconds}
        )

    async def progress(self, document_id: UUID) -> ChunkProgress:
        rows = _rows(await self._rpc("ocr_chunk_progress", {"p_document_id": str(document_id)}))
        return ChunkProgress.model_validate(rows[0] if rows else {"document_id": document_id})
