"""Response bodies of the HTTP API (camelCase, from the domain models)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from uuid import UUID

from app.models.document import Document, DocumentStatus
from app.models.ocr_chunk import CamelModel, ChunkProgress, ChunkStatus, DocumentOCRChunk
from app.models.results import MergedResult


class ProgressView(CamelModel):
    """What a frontend polls: counts per status, pages, percent, status, and an ETA once known."""

    document_id: UUID
    status: DocumentStatus
    total: int
    pending: int
    processing: int
    completed: int
    failed: int
    pages_done: int
    pages_total: int
    percent: float
    eta_seconds: float | None
    updated_at: datetime

    @classmethod
    def of(cls, document: Document, progress: ChunkProgress, now: datetime) -> ProgressView:
        return cls(
            document_id=document.id,
            status=document.ocr_status,
            total=progress.total,
            pending=progress.pending,
            processing=progress.processing,
            completed=progress.completed,
            failed=progress.failed,
            pages_done=progress.pages_completed,
            pages_total=progress.pages_total,
            percent=100.0 if document.ocr_status is DocumentStatus.COMPLETED else progress.percent,
            eta_seconds=_eta(document, progress, now),
            updated_at=document.updated_at,
        )

    def etag(self) -> str:
        """Changes whenever anything a poller shows changes (the ETA is derived, so it is left out)."""
        body = self.model_dump_json(exclude={"eta_seconds"})
        return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def _eta(document: Document, progress: ChunkProgress, now: datetime) -> float | None:
    """Pages left at the rate seen so far, once two chunks have finished."""
    if document.ocr_status is not DocumentStatus.PROCESSING or progress.completed < 2:
        return None
    if progress.first_started_at is None or progress.last_completed_at is None:
        return None
    elapsed = (progress.last_completed_at - progress.first_started_at).total_seconds()
    if elapsed <= 0 or progress.pages_completed == 0:
        return None
    rate = progress.pages_completed / elapsed
    since_last = max(0.0, (now - progress.last_completed_at).total_seconds())
    remaining = (progress.pages_total - progress.pages_completed) / rate
    return round(max(0.0, remaining - since_last), 1)


class RetryView(CamelModel):
    document_id: UUID
    retried: int


class DocumentView(CamelModel):
    """A document as its matter's members see it: no storage paths (where the service keeps the
    source and the result is its own business; the routes serve both)."""

    id: UUID
    matter_id: UUID
    filename: str
    page_count: int
    file_sha256: str
    ocr_status: DocumentStatus
    engine: str
    result_checksum: str | None
    error_message: str | None
    ocr_started_at: datetime | None
    ocr_completed_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, document: Document) -> DocumentView:
        return cls.model_validate(document.model_dump(include=set(cls.model_fields)))


class ChunkView(CamelModel):
    """A chunk as a member sees it: its pages, state and error; not which machine and process
    holds it, nor where its input and result are stored."""

    id: UUID
    document_id: UUID
    chunk_index: int
    page_start: int
    page_end: int
    status: ChunkStatus
    attempt_count: int
    max_attempts: int
    engine: str
    error_code: str | None
    error_message: str | None
    error_retryable: bool | None
    next_attempt_at: datetime
    processing_started_at: datetime | None
    heartbeat_at: datetime | None
    processing_completed_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, chunk: DocumentOCRChunk) -> ChunkView:
        return cls.model_validate(chunk.model_dump(include=set(cls.model_fields)))


class StartedView(CamelModel):
    document: DocumentView
    chunks: int


class PageView(CamelModel):
    page_number: int
    text: str
    confidence: float
    source: str


class ResultView(CamelModel):
    document_id: UUID
    filename: str
    page_count: int
    mean_confidence: float
    low_confidence_pages: list[int]
    pages: list[PageView]
    text: str

    @classmethod
    def of(cls, merged: MergedResult) -> ResultView:
        return cls(
            document_id=merged.document_id,
            filename=merged.filename,
            page_count=merged.page_count,
            mean_confidence=merged.mean_confidence,
            low_confidence_pages=list(merged.low_confidence_pages),
            pages=[
                PageView(page_number=p.page_number, text=p.text, confidence=p.confidence, source=p.source)
                for p in merged.pages
            ],
            text=merged.text(),
        )
