"""Chunk repository on supabase-py: PostgREST table operations and RPC.

It calls the same SQL as the asyncpg repository (the ``ocr_*`` functions by RPC
with their SQL argument names, plain table reads and compare-and-set updates)
with the service role key, so RLS does not apply and the SQL decides everything.

Errors are translated here, once, by code, never by message text. A PostgREST
error body's ``code`` (the SQLSTATE, or PostgREST's own ``PGRST...``) goes
through ``error_for_sqlstate`` as asyncpg's ``sqlstate`` does, so both
repositories raise the same error for the same SQL failure. A 5xx (or 408/429)
answer without a SQLSTATE means PostgREST lost its database (PGRST000-003) or a
gateway in front of it failed (JSON without a code, an HTML page): postgrest-py
keeps no HTTP status on ``APIError``, so a response hook recognises these
before it parses the body. Those and transport errors are retryable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, Self
from uuid import UUID

import httpx
from postgrest.exceptions import APIError
from postgrest.types import ReturnMethod
from supabase import AsyncClient, AsyncClientOptions, AsyncSupabaseException, acreate_client

from app.core.errors import (
    ConfigurationError,
    DocumentNotFoundError,
    DuplicateChunkError,
    DuplicateDocumentError,
    MatterNotFoundError,
    OCRError,
    RepositoryError,
    RepositoryUnavailableError,
)
from app.db._postgrest import UnavailableResponse, first, install_hook, models, reject_unavailable
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

CHUNKS = "document_ocr_chunks"
DOCUMENTS = "documents"


def _id(value: UUID | None) -> str | None:
    return str(value) if value is not None else None


class SupabaseChunkRepository:
    def __init__(self, client: AsyncClient) -> None:
        """Use ``client`` (its PostgREST session gets the unavailable-response hook); close() closes it."""
        self._client = client
        install_hook(client.postgrest.session)

    @classmethod
    async def connect(cls, url: str, service_role_key: str, *, request_timeout: float = 30) -> Self:
        """A client with one HTTP/1.1 connection pool for the process, closed by close()."""
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(request_timeout), event_hooks={"response": [reject_unavailable]}
        )
        options = AsyncClientOptions(
            auto_refresh_token=False,  # a service role key has no user session to refresh
            persist_session=False,
            # postgrest-py would sleep and resend GETs after a 503 or a network error; whether and
            # when to try again is the caller's decision (RepositoryUnavailableError.retryable).
            postgrest_client_retry=False,
            # Our own client also spares postgrest-py's deprecated per-client timeout argument.
            httpx_client=http,
        )
        try:
            client = await acreate_client(url, service_role_key, options)
        except AsyncSupabaseException as exc:
            await http.aclose()
            raise ConfigurationError(
                f"invalid SUPABASE_URL or SUPABASE_SERVICE_ROLE_KEY: {exc.message}"
            ) from exc
        return cls(client)

    async def close(self) -> None:
        await self._client.postgrest.aclose()

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
            raise error_for_sqlstate(
                exc.code, exc.message or "PostgREST error", on_unique=on_unique, on_foreign_key=on_foreign_key
            ) from exc
        except UnavailableResponse as exc:
            raise RepositoryUnavailableError(
                f"Supabase API unavailable: {exc}", status=exc.status, error_code=exc.code
            ) from exc
        except httpx.TransportError as exc:  # connect, read, write, pool and timeout errors
            raise RepositoryUnavailableError(f"Supabase API unreachable: {exc!r}") from exc

    async def _rpc(self, function: str, params: dict[str, Any], **translate: type[OCRError]) -> object:
        async with self._translated(**translate):
            response = await self._client.rpc(function, params).execute()
        return response.data

    async def _rpc_chunks(self, function: str, params: dict[str, Any]) -> list[DocumentOCRChunk]:
        return models(DocumentOCRChunk, await self._rpc(function, params), function)

    async def _rpc_chunk(self, function: str, params: dict[str, Any]) -> DocumentOCRChunk | None:
        return first(DocumentOCRChunk, await self._rpc(function, params), function)

    async def _rpc_flag(self, function: str, params: dict[str, Any]) -> bool:
        value = await self._rpc(function, params)
        if not isinstance(value, bool):
            raise RepositoryError(f"{function} returned {value!r}, expected a JSON boolean")
        return value

    # -- matters ----------------------------------------------------------------

    async def get_or_create_matter(self, name: str) -> UUID:
        value = await self._rpc("ocr_get_or_create_matter", {"p_name": name})
        if isinstance(value, str):
            with suppress(ValueError):
                return UUID(value)
        raise RepositoryError(f"ocr_get_or_create_matter returned {value!r}, expected a uuid")

    async def is_matter_member(self, matter_id: UUID, user_id: UUID) -> bool:
        return await self._rpc_flag(
            "ocr_user_is_matter_member", {"p_matter_id": str(matter_id), "p_user_id": str(user_id)}
        )

    async def member_role(self, matter_id: UUID, user_id: UUID) -> MatterRole | None:
        return matter_role(
            await self._rpc(
                "ocr_user_matter_role", {"p_matter_id": str(matter_id), "p_user_id": str(user_id)}
            )
        )

    async def progress_for_user(
        self, document_id: UUID, user_id: UUID
    ) -> tuple[Document, ChunkProgress] | None:
        found = await self._rpc(
            "ocr_document_progress_for_user", {"p_document_id": str(document_id), "p_user_id": str(user_id)}
        )
        return document_and_progress(found)

    # -- documents ------------------------------------------------------------

    async def create_document(self, document: DocumentCreate) -> Document:
        row = document.model_dump(mode="json", exclude_none=True)  # omitted columns take their defaults
        async with self._translated(on_unique=DuplicateDocumentError, on_foreign_key=MatterNotFoundError):
            response = await self._client.table(DOCUMENTS).insert(row).execute()
        created = first(Document, response.data, f"insert into {DOCUMENTS}")
        if created is None:
            raise RepositoryError(f"insert into {DOCUMENTS} returned no row")
        return created

    async def get_document(self, document_id: UUID) -> Document | None:
        async with self._translated():
            response = await self._client.table(DOCUMENTS).select("*").eq("id", str(document_id)).execute()
        return first(Document, response.data, DOCUMENTS)

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
        return first(Document, data, "ocr_set_document_status")

    async def refresh_document_status(self, document_id: UUID) -> DocumentStatus | None:
        value = await self._rpc("ocr_refresh_document_status", {"p_document_id": str(document_id)})
        if value is None:  # no such document
            return None
        if isinstance(value, str) and value in {s.value for s in DocumentStatus}:
            return DocumentStatus(value)
        raise RepositoryError(f"ocr_refresh_document_status returned {value!r}, expected a status")

    async def delete_document(self, document_id: UUID) -> None:
        async with self._translated():
            await (
                self._client.table(DOCUMENTS)
                .delete(returning=ReturnMethod.minimal)
                .eq("id", str(document_id))
                .execute()
            )

    async def documents_ready_to_merge(self, limit: int, lease_seconds: float) -> list[Document]:
        data = await self._rpc(
            "ocr_documents_ready_to_merge", {"p_limit": limit, "p_lease_seconds": lease_seconds}
        )
        return models(Document, data, "ocr_documents_ready_to_merge")

    # -- the finalize lease -----------------------------------------------------

    async def claim_finalize(
        self, document_id: UUID, worker_id: str, lease_seconds: float
    ) -> Document | None:
        data = await self._rpc(
            "ocr_claim_finalize",
            {"p_document_id": str(document_id), "p_worker_id": worker_id, "p_lease_seconds": lease_seconds},
        )
        return first(Document, data, "ocr_claim_finalize")

    async def heartbeat_finalize(self, document_id: UUID, worker_id: str, attempt: int) -> bool:
        return await self._rpc_flag(
            "ocr_heartbeat_finalize",
            {"p_document_id": str(document_id), "p_worker_id": worker_id, "p_attempt": attempt},
        )

    async def complete_finalize(
        self,
        document_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> Document | None:
        data = await self._rpc(
            "ocr_complete_finalize",
            {
                "p_document_id": str(document_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
        )
        return first(Document, data, "ocr_complete_finalize")

    async def release_finalize(
        self, document_id: UUID, worker_id: str, attempt: int, failed_message: str | None = None
    ) -> bool:
        return await self._rpc_flag(
            "ocr_release_finalize",
            {
                "p_document_id": str(document_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_failed_message": failed_message,
            },
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
        data = await self._rpc(
            function,
            {"p_document_id": str(document_id), "p_chunks": payload, "p_max_attempts": max_attempts},
            on_unique=DuplicateChunkError,
            on_foreign_key=DocumentNotFoundError,
        )
        rows = models(DocumentOCRChunk, data, function)
        if len(rows) != len(payload):  # the function inserts nothing when the document is missing
            raise DocumentNotFoundError(f"document {document_id} does not exist", document_id=document_id)
        return sorted(rows, key=lambda c: c.chunk_index)

    async def get_chunk(self, chunk_id: UUID) -> DocumentOCRChunk | None:
        async with self._translated():
            response = await self._client.table(CHUNKS).select("*").eq("id", str(chunk_id)).execute()
        return first(DocumentOCRChunk, response.data, CHUNKS)

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
        return models(DocumentOCRChunk, response.data, CHUNKS)

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
        # as coalesce($n, column) in the asyncpg repository: None keeps what the row has
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
        return first(DocumentOCRChunk, response.data, CHUNKS)

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
        return first(DocumentOCRChunk, response.data, CHUNKS)

    # -- lease protocol -------------------------------------------------------

    async def claim(self, chunk_id: UUID, worker_id: str) -> DocumentOCRChunk | None:
        return await self._rpc_chunk(
            "ocr_claim_chunk", {"p_chunk_id": str(chunk_id), "p_worker_id": worker_id}
        )

    async def claim_next(self, worker_id: str, document_id: UUID | None = None) -> DocumentOCRChunk | None:
        return await self._rpc_chunk(
            "ocr_claim_next_chunk", {"p_worker_id": worker_id, "p_document_id": _id(document_id)}
        )

    async def heartbeat(self, chunk_id: UUID, worker_id: str, attempt: int) -> bool:
        return await self._rpc_flag(
            "ocr_heartbeat_chunk",
            {"p_chunk_id": str(chunk_id), "p_worker_id": worker_id, "p_attempt": attempt},
        )

    async def record_result(
        self, chunk_id: UUID, worker_id: str, attempt: int, result_storage_path: str, result_checksum: str
    ) -> bool:
        return await self._rpc_flag(
            "ocr_record_chunk_result",
            {
                "p_chunk_id": str(chunk_id),
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
        )

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
            "ocr_sweep_stale_chunks", {"p_threshold_seconds": threshold_seconds, "p_chunk_id": _id(chunk_id)}
        )

    async def retry_failed(
        self, *, document_id: UUID | None, base_seconds: float, cap_seconds: float, force: bool
    ) -> list[DocumentOCRChunk]:
        return await self._rpc_chunks(
            "ocr_retry_failed_chunks",
            {
                "p_document_id": _id(document_id),
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
        data = await self._rpc("ocr_chunk_progress", {"p_document_id": str(document_id)})
        # a returns-table function: one row, even for a document without chunks
        progress = first(ChunkProgress, data, "ocr_chunk_progress")
        return progress or ChunkProgress.model_validate({"document_id": document_id})
