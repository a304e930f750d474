"""Chunk records, their state machine, and the create/update/progress models.

``VALID_STATUS_TRANSITIONS`` is the single Python statement of the state
machine; the trigger ``ocr_chunk_status_guard`` in the migrations states the
same map for the database, and a test proves the two agree.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Self
from uuid import UUID

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from app.core.languages import DEFAULT_LANGUAGE
from app.models.limits import ErrorCodeText, ErrorMessageText, PageNumber, Sha256Hex, StoragePath, WorkerId


class ChunkStatus(StrEnum):
    PENDING = "pending"  # waiting for a worker; claimable once next_attempt_at has passed
    PROCESSING = "processing"  # leased by worker_id for attempt attempt_count
    COMPLETED = "completed"  # result stored and checksummed; terminal
    FAILED = "failed"  # an attempt failed; retry may send it back to pending


VALID_STATUS_TRANSITIONS: dict[ChunkStatus, frozenset[ChunkStatus]] = {
    ChunkStatus.PENDING: frozenset({ChunkStatus.PROCESSING}),
    ChunkStatus.PROCESSING: frozenset({ChunkStatus.COMPLETED, ChunkStatus.FAILED}),
    ChunkStatus.COMPLETED: frozenset(),
    ChunkStatus.FAILED: frozenset({ChunkStatus.PENDING}),
}


def is_valid_transition(current: ChunkStatus, new: ChunkStatus) -> bool:
    return new in VALID_STATUS_TRANSITIONS[current]


class ErrorCode(StrEnum):
    """Error codes written to chunk rows by the system itself."""

    WORKER_TIMEOUT = "worker_timeout"  # heartbeat stopped; the worker died, not the chunk
    WORKER_STOPPED = "worker_stopped"  # the worker stopped mid-chunk (SIGTERM, Ctrl-C); not charged


class CamelModel(BaseModel):
    """Base for API-facing models: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(alias=to_camel),
        populate_by_name=True,
        frozen=True,
        extra="forbid",
    )


class ChunkRange(CamelModel):
    """One planned chunk: an index and an inclusive 1-based page range."""

    chunk_index: Annotated[int, Field(ge=0)]
    page_start: PageNumber
    page_end: PageNumber
    input_storage_path: StoragePath | None = None
    input_checksum: Sha256Hex | None = None

    @model_validator(mode="after")
    def _range(self) -> Self:
        if self.page_end < self.page_start:
            raise ValueError(f"page_end ({self.page_end}) is before page_start ({self.page_start})")
        return self

    @property
    def page_count(self) -> int:
        return self.page_end - self.page_start + 1


class PlannedChunk(ChunkRange):
    """A chunk as start_document creates it: the range, and for a chunk the planner read itself
    (its pages' text layers), its stored result. Such a row is created completed and never goes
    on the queue."""

    result_storage_path: StoragePath | None = None
    result_checksum: Sha256Hex | None = None

    @model_validator(mode="after")
    def _read(self) -> Self:
        if (self.result_storage_path is None) != (self.result_checksum is None):
            raise ValueError("a chunk read at planning needs both its result's path and its checksum")
        return self


class DocumentOCRChunkCreate(ChunkRange):
    """What create_chunk needs: the range plus the owning document and matter."""

    matter_id: UUID
    document_id: UUID


class DocumentOCRChunkUpdate(CamelModel):
    """A status change requested through update_status."""

    status: ChunkStatus
    error_code: ErrorCodeText | None = None
    error_message: ErrorMessageText | None = None


class DocumentOCRChunk(CamelModel):
    """A row of document_ocr_chunks."""

    model_config = ConfigDict(extra="ignore")

    id: UUID
    matter_id: UUID
    document_id: UUID
    chunk_index: int
    page_start: int
    page_end: int
    status: ChunkStatus
    attempt_count: int
    max_attempts: int = 3
    engine: str  # the document's engine, copied to the row when the chunk is created
    language: str = DEFAULT_LANGUAGE  # the document's language, copied the same way
    error_code: str | None = None
    error_message: str | None = None
    error_retryable: bool | None = None
    next_attempt_at: datetime
    worker_id: str | None = None
    input_storage_path: str | None = None
    input_checksum: str | None = None
    result_storage_path: str | None = None
    result_checksum: str | None = None
    processing_started_at: datetime | None = None
    heartbeat_at: datetime | None = None
    processing_completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Any) -> DocumentOCRChunk:
        return cls.model_validate(dict(row))

    @property
    def page_count(self) -> int:
        return self.page_end - self.page_start + 1

    @property
    def lease(self) -> ChunkLease:
        if self.status is not ChunkStatus.PROCESSING or self.worker_id is None:
            raise ValueError(f"chunk {self.id} is {self.status}, it holds no lease")
        return ChunkLease(chunk_id=self.id, worker_id=self.worker_id, attempt=self.attempt_count)


class ChunkLease(CamelModel):
    """The fencing token of one attempt: heartbeat, complete and fail must present it."""

    chunk_id: UUID
    worker_id: WorkerId
    attempt: Annotated[int, Field(ge=1)]


class ChunkProgress(CamelModel):
    """Aggregates of one document's chunks, as the frontend polls them."""

    model_config = ConfigDict(extra="ignore")

    document_id: UUID
    total: int = 0
    pending: int = 0
    processing: int = 0
    completed: int = 0
    failed: int = 0
    failed_retryable: int = 0  # failed rows that retry will still send back to pending
    pages_total: int = 0
    pages_completed: int = 0
    first_started_at: datetime | None = None
    last_completed_at: datetime | None = None

    @property
    def percent(self) -> float:
        if self.pages_total == 0:
            return 0.0
        return round(100.0 * self.pages_completed / self.pages_total, 2)

    @property
    def is_complete(self) -> bool:
        return self.total > 0 and self.completed == self.total

    @property
    def is_stuck(self) -> bool:
        """Nothing can move any more but not everything completed: needs human review."""
        return self.failed > 0 and self.pending == 0 and self.processing == 0 and self.failed_retryable == 0
