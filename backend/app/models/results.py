"""What OCR produces: per-chunk result files and the merged document result.

These are storage formats (snake_case JSON, versioned by schema_version), not
API bodies. Chunk results serialise deterministically, so the same OCR output
always has the same bytes, the same SHA-256 and the same content-addressed path.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

RESULT_SCHEMA_VERSION = 1

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
PageSource = Literal["ocr", "text-layer"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WordBox(_Frozen):
    text: str
    confidence: Confidence
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels of the 300 DPI render


class PageText(_Frozen):
    page_number: Annotated[int, Field(ge=1)]
    text: str
    confidence: Confidence
    source: PageSource
    words: tuple[WordBox, ...] | None = None


class ChunkResult(_Frozen):
    schema_version: Literal[1] = 1
    document_id: UUID
    chunk_index: int
    page_start: int
    page_end: int
    engine: str
    engine_version: str
    pages: tuple[PageText, ...]

    def to_bytes(self) -> bytes:
        return _canonical(self.model_dump(mode="json"))

    def covers_its_range(self) -> bool:
        return [p.page_number for p in self.pages] == list(range(self.page_start, self.page_end + 1))


class MergedChunk(_Frozen):
    chunk_index: int
    page_start: int
    page_end: int
    result_storage_path: str
    result_checksum: str


class MergedResult(_Frozen):
    schema_version: Literal[1] = 1
    document_id: UUID
    filename: str
    page_count: int
    engines: tuple[str, ...]
    mean_confidence: Confidence
    low_confidence_threshold: Confidence
    low_confidence_pages: tuple[int, ...]  # need human review
    pages: tuple[PageText, ...]  # without word boxes; those stay in the chunk results
    chunks: tuple[MergedChunk, ...]

    def to_bytes(self) -> bytes:
        return _canonical(self.model_dump(mode="json"))

    def text(self) -> str:
        """Page texts in page order, joined by form feeds."""
        return "\f".join(p.text for p in self.pages)


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
