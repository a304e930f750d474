"""The chunk repository: one class over a thin connector.

Every call is an ``ocr_*`` function of supabase/migrations, called by name with
its SQL argument names. ChunkRepository knows the functions, their arguments and
the rows they return; a Connector knows only how to call a function and how to
translate its driver's errors. Two connectors: asyncpg (app.db.postgres) and
PostgREST RPC through supabase-py (app.db.supabase). Neither the repository nor
a connector implements the state machine: the lease functions and the
transition trigger do.

Every method raises only ``app.core.errors`` exceptions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar
from uuid import UUID

from pydantic import ValidationError

from app.core.errors import (
    DocumentNotFoundError,
    DuplicateChunkError,
    DuplicateDocumentError,
    MatterNotFoundError,
    OCRError,
    RepositoryError,
)
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import (
    ChunkProgress,
    ChunkRange,
    ChunkStatus,
    DocumentOCRChunk,
    DocumentOCRChunkCreate,
    PlannedChunk,
)
from app.models.queue import QueueSnapshot
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
    if isinstance(chunk, PlannedChunk) and chunk.result_storage_path is not None:
        # read at planning: created completed (ocr_start_document)
        payload["result_storage_path"] = chunk.result_storage_path
        payload["result_checksum"] = chunk.result_checksum
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


M = TypeVar("M", Document, DocumentOCRChunk)


class Connector(Protocol):
    """How to call an ocr_* function with named arguments, and nothing else.

    Arguments are Python values (UUID, str, int, float, bool, None, and lists or dicts for
    jsonb); answers are rows as mappings, or one value, with JSON already parsed. Driver
    errors become app.core.errors exceptions (error_for_sqlstate): a unique or foreign-key
    violation as `on_unique` / `on_foreign_key` when given.
    """

    async def rows(
        self,
        function: str,
        args: Mapping[str, object],
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> list[Mapping[str, Any]]: ...

    async def value(self, function: str, args: Mapping[str, object]) -> object: ...

    async def ping(self) -> None:
        """Raise RepositoryUnavailableError unless the database answers."""
        ...

    async def close(self) -> None: ...


def _models(model: type[M], rows: list[Mapping[str, Any]], source: str) -> list[M]:
    try:
        return [model.model_validate(dict(row)) for row in rows]
    except ValidationError as exc:  # the schema and the models disagree
        raise RepositoryError(f"{source} returned a row that is not a {model.__name__}: {exc}") from exc


def _first(model: type[M], rows: list[Mapping[str, Any]], source: str) -> M | None:
    found = _models(model, rows[:1], source)
    return found[0] if found else None


def _flag(function: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise RepositoryError(f"{function} returned {value!r}, expected a boolean")
    return value


class ChunkRepository:
    def __init__(self, connector: Connector) -> None:
        self.connector = connector

    async def _rows(self, function: str, args: Mapping[str, object], model: type[M]) -> list[M]:
        return _models(model, await self.connector.rows(function, args), function)

    async def _row(self, function: str, args: Mapping[str, object], model: type[M]) -> M | None:
        return _first(model, await self.connector.rows(function, args), function)

    async def _flag(self, function: str, args: Mapping[str, object]) -> bool:
        return _flag(function, await self.connector.value(function, args))

    async def _count(self, function: str, args: Mapping[str, object]) -> int:
        value = await self.connector.value(function, args)
        if not isinstance(value, int) or isinstance(value, bool):
            raise RepositoryError(f"{function} returned {value!r}, expected a count")
        return value

    # -- matters ----------------------------------------------------------------

    async def get_or_create_matter(self, name: str) -> UUID:
        """The oldest matter with this name, created if there is none (the CLI's own matter)."""
        value = await self.connector.value("ocr_get_or_create_matter", {"p_name": name})
        try:
            return UUID(str(value))
        except ValueError:
            raise RepositoryError(f"ocr_get_or_create_matter returned {value!r}, expected a uuid") from None

    async def is_matter_member(self, matter_id: UUID, user_id: UUID) -> bool:
        return await self._flag("ocr_user_is_matter_member", {"p_matter_id": matter_id, "p_user_id": user_id})

    async def member_role(self, matter_id: UUID, user_id: UUID) -> MatterRole | None:
        """The user's role in the matter (ocr_user_matter_role); None when not a member."""
        return matter_role(
            await self.connector.value(
                "ocr_user_matter_role", {"p_matter_id": matter_id, "p_user_id": user_id}
            )
        )

    async def progress_for_user(
        self, document_id: UUID, user_id: UUID
    ) -> tuple[Document, ChunkProgress] | None:
        """The document and its progress in one round trip; None if absent or not the user's."""
        return document_and_progress(
            await self.connector.value(
                "ocr_document_progress_for_user", {"p_document_id": document_id, "p_user_id": user_id}
            )
        )

    # -- documents ------------------------------------------------------------

    async def create_document(self, document: DocumentCreate) -> Document:
        rows = await self.connector.rows(
            "ocr_create_document",
            {
                "p_id": document.id,
                "p_matter_id": document.matter_id,
                "p_filename": document.filename,
                "p_source_path": document.source_path,
                "p_page_count": document.page_count,
                "p_file_sha256": document.file_sha256,
                "p_engine": document.engine,
                "p_language": document.language,
            },
            on_unique=DuplicateDocumentError,
            on_foreign_key=MatterNotFoundError,
        )
        created = _first(Document, rows, "ocr_create_document")
        if created is None:
            raise RepositoryError("ocr_create_document returned no row")
        return created

    async def get_document(self, document_id: UUID) -> Document | None:
        return await self._row("ocr_get_document", {"p_document_id": document_id}, Document)

    async def unfinished_document(
        self, matter_id: UUID, file_sha256: str, engine: str, language: str
    ) -> Document | None:
        """The newest document of the matter with this file, engine and language whose OCR is
        under way (processing), or None."""
        return await self._row(
            "ocr_unfinished_document",
            {
                "p_matter_id": matter_id,
                "p_file_sha256": file_sha256,
                "p_engine": engine,
                "p_language": language,
            },
            Document,
        )

    async def refresh_document_status(self, document_id: UUID) -> DocumentStatus | None:
        value = await self.connector.value("ocr_refresh_document_status", {"p_document_id": document_id})
        if value is None:  # no such document
            return None
        if isinstance(value, str) and value in {s.value for s in DocumentStatus}:
            return DocumentStatus(value)
        raise RepositoryError(f"ocr_refresh_document_status returned {value!r}, expected a status")

    async def delete_document(self, document_id: UUID) -> None:
        """Remove a document and (by cascade) its chunks; used to undo a start that failed."""
        await self.connector.value("ocr_delete_document", {"p_document_id": document_id})

    async def documents_ready_to_merge(
        self, limit: int, lease_seconds: float, run_id: str | None = None
    ) -> list[Document]:
        """Documents whose chunks all completed, not merged yet, whose merge nobody holds; those
        reserved for run_id, or (None) those no run holds."""
        return await self._rows(
            "ocr_documents_ready_to_merge",
            {"p_limit": limit, "p_lease_seconds": lease_seconds, "p_run_id": run_id},
            Document,
        )

    # -- run reservations -------------------------------------------------------

    async def reserve_document(self, document_id: UUID, run_id: str, seconds: float) -> None:
        """Keep the document's chunks and merge to the run run_id for `seconds`."""
        await self.connector.value(
            "ocr_reserve_document", {"p_document_id": document_id, "p_run_id": run_id, "p_seconds": seconds}
        )

    async def renew_reservations(self, run_id: str, seconds: float) -> int:
        """Every reservation of the run, renewed for `seconds`; how many there are."""
        return await self._count("ocr_renew_reservations", {"p_run_id": run_id, "p_seconds": seconds})

    async def release_reservations(self, run_id: str) -> int:
        """The run's documents, handed back to the fleet; how many it held."""
        return await self._count("ocr_release_reservations", {"p_run_id": run_id})

    # -- the finalize lease -----------------------------------------------------

    async def claim_finalize(
        self, document_id: UUID, worker_id: str, lease_seconds: float
    ) -> Document | None:
        """Take the merge unless a live lease holds it or a chunk is not completed; None then."""
        return await self._row(
            "ocr_claim_finalize",
            {"p_document_id": document_id, "p_worker_id": worker_id, "p_lease_seconds": lease_seconds},
            Document,
        )

    async def heartbeat_finalize(self, document_id: UUID, worker_id: str, attempt: int) -> bool:
        return await self._flag(
            "ocr_heartbeat_finalize",
            {"p_document_id": document_id, "p_worker_id": worker_id, "p_attempt": attempt},
        )

    async def complete_finalize(
        self,
        document_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
        pages_failed: int = 0,
    ) -> Document | None:
        """Record the merged result (and how many pages could not be read) and complete the
        document; None if the lease is lost."""
        return await self._row(
            "ocr_complete_finalize",
            {
                "p_document_id": document_id,
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
                "p_pages_failed": pages_failed,
            },
            Document,
        )

    async def release_finalize(
        self,
        document_id: UUID,
        worker_id: str,
        attempt: int,
        failed_message: str | None = None,
        deferred_message: str | None = None,
    ) -> bool:
        """Give the lease up, failing the document when failed_message is given, keeping
        deferred_message as its merge_error when given (a retryable error); False if lost."""
        return await self._flag(
            "ocr_release_finalize",
            {
                "p_document_id": document_id,
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_failed_message": failed_message,
                "p_deferred_message": deferred_message,
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
        """Create the chunks and move the document to processing, atomically, once.

        OCRAlreadyStartedError when the document has chunks or is not pending;
        DocumentNotFoundError when it does not exist.
        """
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
        rows = await self.connector.rows(
            function,
            {"p_document_id": document_id, "p_chunks": payload, "p_max_attempts": max_attempts},
            on_unique=DuplicateChunkError,
            on_foreign_key=DocumentNotFoundError,
        )
        if len(rows) != len(payload):  # the function inserts nothing when the document is missing
            raise DocumentNotFoundError(f"document {document_id} does not exist", document_id=document_id)
        return sorted(_models(DocumentOCRChunk, rows, function), key=lambda c: c.chunk_index)

    async def get_chunk(self, chunk_id: UUID) -> DocumentOCRChunk | None:
        return await self._row("ocr_get_chunk", {"p_chunk_id": chunk_id}, DocumentOCRChunk)

    async def list_chunks(
        self,
        *,
        document_id: UUID | None = None,
        status: ChunkStatus | None = None,
        limit: int | None = None,
    ) -> list[DocumentOCRChunk]:
        return await self._rows(
            "ocr_list_chunks",
            {"p_document_id": document_id, "p_status": status.value if status else None, "p_limit": limit},
            DocumentOCRChunk,
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
        """Compare-and-set the status; None when the row was not in ``expected``."""
        return await self._row(
            "ocr_update_chunk_status",
            {
                "p_chunk_id": chunk_id,
                "p_expected": expected.value,
                "p_new": new.value,
                "p_error_code": error_code,
                "p_error_message": error_message,
            },
            DocumentOCRChunk,
        )

    async def set_result(
        self, chunk_id: UUID, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk | None:
        """Record a (replacement) result on a processing or completed row."""
        return await self._row(
            "ocr_set_chunk_result",
            {
                "p_chunk_id": chunk_id,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
            DocumentOCRChunk,
        )

    # -- lease protocol -------------------------------------------------------

    async def claim(self, chunk_id: UUID, worker_id: str) -> DocumentOCRChunk | None:
        return await self._row(
            "ocr_claim_chunk", {"p_chunk_id": chunk_id, "p_worker_id": worker_id}, DocumentOCRChunk
        )

    async def claim_next(self, worker_id: str, document_id: UUID | None = None) -> DocumentOCRChunk | None:
        return await self._row(
            "ocr_claim_next_chunk", {"p_worker_id": worker_id, "p_document_id": document_id}, DocumentOCRChunk
        )

    async def held(self, worker_id: str) -> DocumentOCRChunk | None:
        """The chunk this holder's claim leased, if it committed (its answer may have been lost)."""
        return await self._row("ocr_held_chunk", {"p_worker_id": worker_id}, DocumentOCRChunk)

    async def claim_for_holder(
        self, worker_id: str, document_id: UUID | None = None, run_id: str | None = None
    ) -> DocumentOCRChunk | None:
        """The chunk this holder holds, else the next one claimed for it (of the documents
        reserved for run_id, or of those no run holds); one call per holder at a time, so calls
        of one claim lease one chunk between them, in whatever order they run."""
        return await self._row(
            "ocr_claim_for_holder",
            {"p_worker_id": worker_id, "p_document_id": document_id, "p_run_id": run_id},
            DocumentOCRChunk,
        )

    async def heartbeat(self, chunk_id: UUID, worker_id: str, attempt: int) -> bool:
        return await self._flag(
            "ocr_heartbeat_chunk", {"p_chunk_id": chunk_id, "p_worker_id": worker_id, "p_attempt": attempt}
        )

    async def complete(
        self,
        chunk_id: UUID,
        worker_id: str,
        attempt: int,
        result_storage_path: str,
        result_checksum: str,
    ) -> DocumentOCRChunk | None:
        return await self._row(
            "ocr_complete_chunk",
            {
                "p_chunk_id": chunk_id,
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_result_storage_path": result_storage_path,
                "p_result_checksum": result_checksum,
            },
            DocumentOCRChunk,
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
        return await self._row(
            "ocr_fail_chunk",
            {
                "p_chunk_id": chunk_id,
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_error_code": error_code,
                "p_error_message": error_message,
                "p_retryable": retryable,
            },
            DocumentOCRChunk,
        )

    async def release(
        self, chunk_id: UUID, worker_id: str, attempt: int, error_message: str
    ) -> DocumentOCRChunk | None:
        return await self._row(
            "ocr_release_chunk",
            {
                "p_chunk_id": chunk_id,
                "p_worker_id": worker_id,
                "p_attempt": attempt,
                "p_error_message": error_message,
            },
            DocumentOCRChunk,
        )

    async def detect_stale(self, threshold_seconds: float) -> list[DocumentOCRChunk]:
        return await self._rows(
            "ocr_detect_stale_chunks", {"p_threshold_seconds": threshold_seconds}, DocumentOCRChunk
        )

    async def sweep_stale(
        self, threshold_seconds: float, chunk_id: UUID | None = None
    ) -> list[DocumentOCRChunk]:
        return await self._rows(
            "ocr_sweep_stale_chunks",
            {"p_threshold_seconds": threshold_seconds, "p_chunk_id": chunk_id},
            DocumentOCRChunk,
        )

    async def retry_failed(
        self,
        *,
        document_id: UUID | None,
        base_seconds: float,
        cap_seconds: float,
        force: bool,
    ) -> list[DocumentOCRChunk]:
        return await self._rows(
            "ocr_retry_failed_chunks",
            {
                "p_document_id": document_id,
                "p_base_seconds": base_seconds,
                "p_cap_seconds": cap_seconds,
                "p_force": force,
            },
            DocumentOCRChunk,
        )

    async def due_pending(
        self, limit: int, overdue_seconds: float = 0, run_id: str | None = None
    ) -> list[DocumentOCRChunk]:
        return await self._rows(
            "ocr_due_pending_chunks",
            {"p_limit": limit, "p_overdue_seconds": overdue_seconds, "p_run_id": run_id},
            DocumentOCRChunk,
        )

    async def queue_snapshot(self, overdue_seconds: float) -> QueueSnapshot:
        """The live queue's counts and the oldest due chunk's age (ocr_queue_metrics)."""
        rows = await self.connector.rows("ocr_queue_metrics", {"p_overdue_seconds": overdue_seconds})
        if len(rows) != 1:
            raise RepositoryError(f"ocr_queue_metrics returned {len(rows)} rows, expected 1")
        try:
            return QueueSnapshot.model_validate(dict(rows[0]))
        except ValidationError as exc:
            raise RepositoryError(
                f"ocr_queue_metrics returned a row that is not a QueueSnapshot: {exc}"
            ) from exc

    async def progress(self, document_id: UUID) -> ChunkProgress:
        rows = await self.connector.rows("ocr_chunk_progress", {"p_document_id": document_id})
        return ChunkProgress.model_validate(dict(rows[0]) if rows else {"document_id": document_id})

    # -- lifecycle ------------------------------------------------------------

    async def ping(self) -> None:
        """Raise RepositoryUnavailableError unless the database answers."""
        await self.connector.ping()

    async def close(self) -> None:
        await self.connector.close()
