"""Response bodies of the HTTP API (camelCase, from the domain models)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from app.models.document import Document, DocumentStatus, ProgressStatus
from app.models.ocr_chunk import CamelModel, ChunkProgress, ChunkStatus, DocumentOCRChunk
from app.models.results import MergedResult

if TYPE_CHECKING:  # the planner's result: read, not imported at start
    from app.services.planner import StartedDocument


class ProgressView(CamelModel):
    """What a frontend polls: counts per status, pages, percent, status, and an ETA once known."""

    document_id: UUID
    status: ProgressStatus  # completed_with_errors: finished, pages_failed pages could not be read
    total: int
    pending: int
    processing: int
    completed: int
    failed: int
    pages_done: int
    pages_total: int
    pages_failed: int  # known once the document is merged: pages it has no text for
    # while processing, why its merge was last put off (every chunk read; a worker tries again)
    merge_error: str | None
    percent: float
    eta_seconds: float | None
    updated_at: datetime

    @classmethod
    def of(cls, document: Document, progress: ChunkProgress, now: datetime) -> ProgressView:
        return cls(
            document_id=document.id,
            status=document.progress_status,
            total=progress.total,
            pending=progress.pending,
            processing=progress.processing,
            completed=progress.completed,
            failed=progress.failed,
            pages_done=progress.pages_completed,
            pages_total=progress.pages_total,
            pages_failed=document.pages_failed,
            merge_error=document.merge_error if document.ocr_status is DocumentStatus.PROCESSING else None,
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
    language: str  # tesseract's codes its pages are read in: eng, rus, eng+deu
    result_checksum: str | None
    error_message: str | None
    pages_failed: int
    merge_error: str | None  # why its merge was last put off (a retryable error); it is still processing
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
    language: str
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
    # what the file holds that is not read, or how it was read: an owner password, repaired or
    # lost pages, hidden layers, attached files, a dynamic XFA form (one line each, as `run` says)
    warnings: list[str] = []

    @classmethod
    def of(cls, started: StartedDocument) -> StartedView:
        return cls(
            document=DocumentView.of(started.document),
            chunks=len(started.chunks),
            warnings=list(started.info.warnings),
        )


class PageErrorView(CamelModel):
    code: str
    message: str


class PageView(CamelModel):
    page_number: int
    text: str
    confidence: float
    source: str
    error: PageErrorView | None  # the page could not be read; its text is empty
    rotation: int | None  # degrees it was turned clockwise before OCR
    skew: float | None  # degrees of skew straightened before OCR


class FailedPageView(CamelModel):
    page_number: int
    code: str
    message: str


class ResultView(CamelModel):
    document_id: UUID
    filename: str
    page_count: int
    status: ProgressStatus  # completed, or completed_with_errors when failed_pages is not empty
    language: str | None  # what the pages were read in (None: a result merged before languages)
    mean_confidence: float
    low_confidence_pages: list[int]
    failed_pages: list[FailedPageView]
    pages: list[PageView]
    text: str

    @classmethod
    def of(cls, merged: MergedResult) -> ResultView:
        return cls(
            document_id=merged.document_id,
            filename=merged.filename,
            page_count=merged.page_count,
            status=ProgressStatus.COMPLETED_WITH_ERRORS if merged.failed_pages else ProgressStatus.COMPLETED,
            language=merged.language,
            mean_confidence=merged.mean_confidence,
            low_confidence_pages=list(merged.low_confidence_pages),
            failed_pages=[FailedPageView.model_validate(f.model_dump()) for f in merged.failed_pages],
            pages=[
                PageView(
                    page_number=p.page_number,
                    text=p.text,
                    confidence=p.confidence,
                    source=p.source,
                    error=PageErrorView.model_validate(p.error.model_dump()) if p.error else None,
                    rotation=p.rotation,
                    skew=p.skew,
                )
                for p in merged.pages
            ],
            text=merged.text(),
        )
