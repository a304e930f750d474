"""The chunk repository port.

One narrow interface over the database, with two implementations that call
the same SQL (tables plus the ``ocr_*`` functions of supabase/migrations):
``PostgresChunkRepository`` (asyncpg) and ``SupabaseChunkRepository``
(supabase-py: PostgREST table operations and RPC). Neither implements the
state machine: the lease functions and the transition trigger do.

Every method raises only ``app.core.errors`` exceptions; driver errors are
translated inside the implementation.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol
from uuid import UUID

from app.core.errors import RepositoryError
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import (
    ChunkProgress,
    ChunkRange,
    ChunkStatus,
    DocumentOCRChunk,
    DocumentOCRChunkCreate,
)
from app.models.roles import MatterRole


def chunk_payload(chunk: ChunkRange, matter_id: UUID | None = None) -> dict[str, Any]:
    """One element of ocr_create_chunks' p_chunks argument, as both implementations send it."""
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


def matter_role(value: object) -> MatterRole | None:
    """Decode ocr_user_matter_role's answer: a role name or null; anything else is a schema drift."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return MatterRole(value)
        except ValueError:
            pass
    raise RepositoryError(f"ocr_user_matter_role returned {value!r}, expected owner, member, viewer or null")


def document_and_progress(found: object) -> tuple[Document, ChunkProgress] | None:
    """Decode ocr_document_progress_for_user's JSON (text from asyncpg, parsed from PostgREST)."""
    if found is None:
        return None
    data = json.loads(found) if isinstance(found, str) else found
    if not isinstance(data, dict):
        raise RepositoryError(f"ocr_document_progress_for_user returned {type(data).__name__}")
    return Document.model_validate(data["document"]), ChunkProgress.model_validate(data["progress"])


class ChunkRepository(Protocol):
    # -- matters ----------------------------------------------------------------
    async def get_or_create_matter(self, name: str) -> UUID:
        """The oldest matter with this name, created if there is none (the CLI's own matter)."""
        ...

    async def is_matter_member(self, matter_id: UUID, user_id: UUID) -> bool: ...

    async def member_role(self, matter_id: UUID, user_id: UUID) -> MatterRole | None:
        """The user's role in the matter (ocr_user_matter_role); None when not a member."""
        ...

    async def progress_for_user(
        self, document_id: UUID, user_id: UUID
    ) -> tuple[Document, ChunkProgress] | None:
        """The document and its progress in one round trip; None if absent or not the user's."""
        ...

    # -- documents ------------------------------------------------------------
    async def create_document(self, document: DocumentCreate) -> Document: ...

    async def get_document(self, document_id: UUID) -> Document | None: ...

    async def set_document_status(
        self,
        document_id: UUID,
        status: DocumentStatus,
        *,
        result_storage_path: str | None = None,
        result_checksum: str | None = None,
        error_message: str | None = None,
    ) -> Document | None: ...

    async def refresh_document_status(self, document_id: UUID) -> DocumentStatus | None: ...

    async def delete_document(self, document_id: UUID) -> None:
        """Remove a document and (by cascade) its chunks; used to undo a start that failed."""
        ...

    async def documents_ready_to_merge(self, limit: int, lease_seconds: float) -> list[Document]:
        """Documents whose chunks all completed, not merged yet, whose merge nobody holds."""
        ...

    # -- the finalize lease -----------------------------------------------------
    async def claim_finalize(
        self, document_id: UUID, worker_id: str, lease_seconds: float
    ) -> Document | None:
        """Take the merge unless a live lease holds it or a chunk is not completed; None then."""
        ...

    async def heartbeat_finalize(self, document_id: UUID, worker_id: str, attempt: int) -> bool: ...

    async def complete_finalize(
        self,
        document_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> Document | None:
        """Record the merged result and complete the document; None if the lease is lost."""
        ...

    async def release_finalize(
        self, document_id: UUID, worker_id: str, attempt: int, failed_message: str | None = None
    ) -> bool:
        """Give the lease up (failing the document when failed_message is given); False if lost."""
        ...

    # -- chunk rows -----------------------------------------------------------
    async def create_chunk(self, chunk: DocumentOCRChunkCreate, max_attempts: int) -> DocumentOCRChunk: ...

    async def create_chunks(
        self, document_id: UUID, chunks: Sequence[ChunkRange], max_attempts: int
    ) -> list[DocumentOCRChunk]: ...

    async def start_document(
        self, document_id: UUID, chunks: Sequence[ChunkRange], max_attempts: int
    ) -> list[DocumentOCRChunk]:
        """Create the chunks and move the document to processing, atomically, once.

        OCRAlreadyStartedError when the document has chunks or is not pending;
        DocumentNotFoundError when it does not exist.
        """
        ...

    async def get_chunk(self, chunk_id: UUID) -> DocumentOCRChunk | None: ...

    async def list_chunks(
        self,
        *,
        document_id: UUID | None = None,
        status: ChunkStatus | None = None,
        limit: int | None = None,
    ) -> list[DocumentOCRChunk]: ...

    async def update_status(
        self,
        chunk_id: UUID,
        expected: ChunkStatus,
        new: ChunkStatus,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
    ) -> DocumentOCRChunk | None:
        """Compare-and-set the status; None when the row was not in ``expected``."""
        ...

    async def set_result(
        self, chunk_id: UUID, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk | None:
        """Record a (replacement) result on a processing or completed row."""
        ...

    # -- lease protocol -------------------------------------------------------
    async def claim(self, chunk_id: UUID, worker_id: str) -> DocumentOCRChunk | None: ...

    async def claim_next(
        self, worker_id: str, document_id: UUID | None = None
    ) -> DocumentOCRChunk | None: ...

    async def heartbeat(self, chunk_id: UUID, worker_id: str, attempt: int) -> bool: ...

    async def record_result(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> bool:
        """Record the current attempt's stored result before completing; False if the lease is lost."""
        ...

    async def complete(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> DocumentOCRChunk | None: ...

    async def fail(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        error_code: str,
        error_message: str,
        retryable: bool,
    ) -> DocumentOCRChunk | None: ...

    async def detect_stale(self, threshold_seconds: float) -> list[DocumentOCRChunk]: ...

    async def sweep_stale(
        self, threshold_seconds: float, chunk_id: UUID | None = None
    ) -> list[DocumentOCRChunk]: ...

    async def retry_failed(
        self,
        *,
        document_id: UUID | None,
        base_seconds: float,
        cap_seconds: float,
        force: bool,
    ) -> list[DocumentOCRChunk]: ...

    async def due_pending(self, limit: int, overdue_seconds: float = 0) -> list[DocumentOCRChunk]: ...

    async def progress(self, document_id: UUID) -> ChunkProgress: ...

    # -- lifecycle ------------------------------------------------------------
    async def ping(self) -> None:
        """Raise RepositoryUnavailableError unless the database answers."""
        ...

    async def close(self) -> None: ...
