"""Document records."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import ConfigDict, Field

from app.core.languages import DEFAULT_LANGUAGE
from app.models.limits import STORAGE_PATH_MAX, EngineName, Filename, Language, Sha256Hex, WorkerId
from app.models.ocr_chunk import CamelModel


class DocumentStatus(StrEnum):
    PENDING = "pending"  # registered, not planned yet
    PROCESSING = "processing"  # chunks exist and some can still move
    COMPLETED = "completed"  # merged result written
    FAILED = "failed"  # some chunk can no longer move: needs human review


class ProgressStatus(StrEnum):
    """A document's status as pollers see it: the stored one, with a completed document whose
    merged result lacks pages told apart."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"  # every page read
    COMPLETED_WITH_ERRORS = "completed_with_errors"  # finished; pages_failed pages could not be read
    FAILED = "failed"


class DocumentCreate(CamelModel):
    matter_id: UUID
    filename: Filename
    source_path: Annotated[str, Field(max_length=STORAGE_PATH_MAX)] | None = None  # may be empty
    page_count: Annotated[int, Field(ge=1)]
    file_sha256: Sha256Hex
    engine: EngineName = "auto"
    language: Language = DEFAULT_LANGUAGE  # tesseract's codes: eng, eng+deu
    id: UUID | None = None


class Document(CamelModel):
    model_config = ConfigDict(extra="ignore")

    id: UUID
    matter_id: UUID
    filename: str
    source_path: str | None = None
    page_count: int
    file_sha256: str
    ocr_status: DocumentStatus
    engine: str
    language: str = DEFAULT_LANGUAGE  # what its pages are read in (tesseract's codes); chunks carry a copy
    result_storage_path: str | None = None
    result_checksum: str | None = None
    error_message: str | None = None
    pages_failed: int = 0  # pages of the merged result that could not be read (result.json says which)
    # the last retryable error that put its merge off ("code: message"), while it waits for the
    # next; None once merged or failed (it never means failed: ocr_status does)
    merge_error: str | None = None
    ocr_started_at: datetime | None = None
    ocr_completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    # the finalize lease: who merges the document now, and how many merges were started
    finalize_worker_id: str | None = Field(default=None, exclude=True)
    finalize_attempt: int = Field(default=0, exclude=True)
    finalize_heartbeat_at: datetime | None = Field(default=None, exclude=True)

    @classmethod
    def from_row(cls, row: Any) -> Document:
        return cls.model_validate(dict(row))

    @property
    def progress_status(self) -> ProgressStatus:
        if self.ocr_status is DocumentStatus.COMPLETED and self.pages_failed:
            return ProgressStatus.COMPLETED_WITH_ERRORS
        return ProgressStatus(self.ocr_status.value)

    @property
    def finalize_lease(self) -> FinalizeLease:
        if self.finalize_worker_id is None or self.finalize_attempt < 1:
            raise ValueError(f"document {self.id} holds no finalize lease")
        return FinalizeLease(
            document_id=self.id, worker_id=self.finalize_worker_id, attempt=self.finalize_attempt
        )


class FinalizeLease(CamelModel):
    """The fencing token of one merge: heartbeat, complete and release must present it."""

    document_id: UUID
    worker_id: WorkerId
    attempt: Annotated[int, Field(ge=1)]
