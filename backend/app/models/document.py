"""Document records."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import ConfigDict, Field

from app.models.ocr_chunk import CamelModel, Sha256Hex


class DocumentStatus(StrEnum):
    PENDING = "pending"  # registered, not planned yet
    PROCESSING = "processing"  # chunks exist and some can still move
    COMPLETED = "completed"  # merged result written
    FAILED = "failed"  # some chunk can no longer move: needs human review


class DocumentCreate(CamelModel):
    matter_id: UUID
    filename: Annotated[str, Field(min_length=1, max_length=1024)]
    source_path: Annotated[str, Field(max_length=1024)] | None = None
    page_count: Annotated[int, Field(ge=1)]
    file_sha256: Sha256Hex
    engine: Annotated[str, Field(min_length=1, max_length=64)] = "auto"
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
    result_storage_path: str | None = None
    result_checksum: str | None = None
    error_message: str | None = None
    ocr_started_at: datetime | None = None
    ocr_completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: Any) -> Document:
        return cls.model_validate(dict(row))
