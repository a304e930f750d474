"""The document side of OCRChunkService: documents, matters, membership, and the merge lease.

A base class of OCRChunkService rather than a service of its own, so that
callers keep one object (get_ocr_chunk_service()); it is kept apart only so
that each module reads as one concept.
"""

from __future__ import annotations

from uuid import UUID

from pydantic import TypeAdapter

from app.core.config import Settings
from app.core.errors import (
    DocumentNotFoundError,
    ForbiddenError,
    MatterNotFoundError,
)
from app.db.repository import ChunkRepository
from app.models.document import Document, DocumentCreate, DocumentStatus, FinalizeLease
from app.models.limits import MATTER_NAME_MAX, MatterName
from app.models.ocr_chunk import ChunkProgress
from app.models.roles import MatterRole
from app.services.validation import (
    IdLike,
    as_uuid,
    checked,
    finalize_lease_lost,
    result_fields,
    validated,
    worker_id_of,
)

_MATTER_NAME = TypeAdapter(MatterName)


class DocumentOperations:
    repository: ChunkRepository
    settings: Settings

    # -- documents ------------------------------------------------------------

    async def create_document(self, document: DocumentCreate | dict[str, object]) -> Document:
        return await self.repository.create_document(validated(DocumentCreate, document))

    async def get_document(self, document_id: IdLike) -> Document:
        doc_id = as_uuid(document_id, "document_id")
        document = await self.repository.get_document(doc_id)
        if document is None:
            raise DocumentNotFoundError(f"document {doc_id} not found", document_id=doc_id)
        return document

    async def get_unfinished_document(
        self, matter_id: IdLike, file_sha256: str, engine: str, language: str
    ) -> Document | None:
        """The document a stopped run left under way for this file (the newest of the matter with
        its SHA-256, engine and language, processing), or None."""
        return await self.repository.unfinished_document(
            as_uuid(matter_id, "matter_id"), file_sha256, engine, language
        )

    async def get_document_for_user(self, document_id: IdLike, user_id: UUID) -> Document:
        """The document if the user belongs to its matter, else DocumentNotFoundError (ids do not leak)."""
        document = await self.get_document(document_id)
        if not await self.repository.is_matter_member(document.matter_id, user_id):
            raise DocumentNotFoundError(f"document {document.id} not found", document_id=document.id)
        return document

    async def check_matter_write_access(self, matter_id: IdLike, user_id: UUID) -> UUID:
        """The matter id if the user may act in it (upload, start, retry).

        MatterNotFoundError for a non-member (no hint the matter exists),
        ForbiddenError for a member whose role only reads (a viewer).
        """
        mid = as_uuid(matter_id, "matter_id")
        role = await self.repository.member_role(mid, user_id)
        if role is None:
            raise MatterNotFoundError(f"matter {mid} not found", matter_id=mid)
        if not role.can_act:
            raise _forbidden(role, matter_id=mid)
        return mid

    async def get_document_for_writer(self, document_id: IdLike, user_id: UUID) -> Document:
        """The document if the user may act on it (start, retry).

        DocumentNotFoundError for a non-member (ids do not leak), ForbiddenError
        for a member whose role only reads (a viewer).
        """
        document = await self.get_document(document_id)
        role = await self.repository.member_role(document.matter_id, user_id)
        if role is None:
            raise DocumentNotFoundError(f"document {document.id} not found", document_id=document.id)
        if not role.can_act:
            raise _forbidden(role, document_id=document.id)
        return document

    async def get_progress_for_user(
        self, document_id: IdLike, user_id: UUID
    ) -> tuple[Document, ChunkProgress]:
        """A document and its progress in one round trip, for pollers; 404 semantics as above."""
        doc_id = as_uuid(document_id, "document_id")
        found = await self.repository.progress_for_user(doc_id, user_id)
        if found is None:
            raise DocumentNotFoundError(f"document {doc_id} not found", document_id=doc_id)
        return found

    async def get_or_create_matter(self, name: str) -> UUID:
        return await self.repository.get_or_create_matter(
            checked(_MATTER_NAME, name, "a matter name", f"1 to {MATTER_NAME_MAX} characters")
        )

    async def refresh_document_status(self, document_id: IdLike) -> DocumentStatus | None:
        """Recompute the document's status from its chunks (failed once nothing can move)."""
        return await self.repository.refresh_document_status(as_uuid(document_id, "document_id"))

    async def delete_document(self, document_id: IdLike) -> None:
        await self.repository.delete_document(as_uuid(document_id, "document_id"))

    async def get_documents_ready_to_merge(
        self, limit: int = 100, *, run_id: str | None = None
    ) -> list[Document]:
        """Documents to merge whose merge nobody holds (or whose holder stopped heartbeating): of
        those reserved for the `chunk-ocr run` run_id, or (None) of those no run holds."""
        return await self.repository.documents_ready_to_merge(
            limit, self.settings.stale_chunk_threshold_seconds, run_id
        )

    # -- run reservations (a `chunk-ocr run` keeps its documents to its own worker) -----------

    async def reserve_document(self, document_id: IdLike, run_id: str) -> None:
        """Keep the document's chunks and merge to the run's worker for the stale threshold;
        the run renews it (renew_reservations) while it runs, and a later run takes it over."""
        await self.repository.reserve_document(
            as_uuid(document_id, "document_id"), run_id, self.settings.stale_chunk_threshold_seconds
        )

    async def renew_reservations(self, run_id: str) -> int:
        """The run's reservations, renewed for the stale threshold; how many it holds."""
        return await self.repository.renew_reservations(run_id, self.settings.stale_chunk_threshold_seconds)

    async def release_reservations(self, run_id: str) -> int:
        """The run ends: its documents are the fleet's again; how many it held."""
        return await self.repository.release_reservations(run_id)

    # -- the finalize lease (one merge per document at a time) --------------------

    async def claim_finalize(self, document_id: IdLike, worker_id: str) -> Document | None:
        """Lease the document's merge; None while another live merge holds it or chunks remain."""
        return await self.repository.claim_finalize(
            as_uuid(document_id, "document_id"),
            worker_id_of(worker_id),
            self.settings.stale_chunk_threshold_seconds,
        )

    async def heartbeat_finalize(self, lease: FinalizeLease) -> bool:
        return await self.repository.heartbeat_finalize(lease.document_id, lease.worker_id, lease.attempt)

    async def complete_finalize(
        self, lease: FinalizeLease, result_storage_path: str, result_checksum: str, pages_failed: int = 0
    ) -> Document:
        path, checksum = result_fields(result_storage_path, result_checksum)
        done = await self.repository.complete_finalize(
            lease.document_id, lease.worker_id, lease.attempt, path, checksum, pages_failed
        )
        if done is None:
            raise finalize_lease_lost(lease)
        return done

    async def release_finalize(
        self, lease: FinalizeLease, *, failed_message: str | None = None, deferred_message: str | None = None
    ) -> bool:
        """Give the merge up; with failed_message the document fails (a permanent merge error), with
        deferred_message it stays processing and says why its merge was put off (merge_error)."""
        return await self.repository.release_finalize(
            lease.document_id, lease.worker_id, lease.attempt, failed_message, deferred_message
        )


def _forbidden(role: MatterRole, **context: object) -> ForbiddenError:
    return ForbiddenError(
        f"a {role.value} of this matter may read it but not change it (owners and members may)",
        role=role.value,
        **context,
    )
