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

# 2 added per page error, rotation, skew and dpi, the chunk's language and the merged failed_pages;
# 3 the chunk's text_layer and the merged searchable_pdf. Files of earlier versions still read.
RESULT_SCHEMA_VERSION: Literal[3] = 3
SchemaVersion = Literal[1, 2, 3]

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
PageSource = Literal["ocr", "text-layer"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WordBox(_Frozen):
    text: str
    confidence: Confidence
    # x0, y0, x1, y1 in pixels of the image OCR read: the page rendered at its dpi (300 unless the
    # page says), turned clockwise by its rotation and straightened by its skew.
    bbox: tuple[int, int, int, int]


class PageFailure(_Frozen):
    """Why a page has no text (its chunk and document completed without it)."""

    code: str  # page_too_large, page_render_failed, resource_limit, tesseract_failed, ...
    message: str


class PageText(_Frozen):
    page_number: Annotated[int, Field(ge=1)]
    text: str
    confidence: Confidence
    source: PageSource
    words: tuple[WordBox, ...] | None = None
    error: PageFailure | None = None  # set: the page could not be read, its text is empty
    rotation: int | None = None  # degrees turned clockwise before OCR (0/90/180/270); None: not OCR'd
    # Degrees of counter-clockwise tilt straightened before OCR (the image was turned by -skew about
    # its centre, keeping its size); 0.0: within a degree of level, left as it was. None: not OCR'd.
    skew: float | None = None
    dpi: int | None = None  # set when OCR'd below 300 DPI (a page too large for the pixel cap)


class FailedPage(_Frozen):
    page_number: Annotated[int, Field(ge=1)]
    code: str
    message: str


class StoredFile(_Frozen):
    """A file stored beside a result, named with its checksum so the result's own checksum covers it."""

    path: str
    sha256: str
    bytes: Annotated[int, Field(ge=0)]


class ChunkResult(_Frozen):
    schema_version: SchemaVersion = RESULT_SCHEMA_VERSION
    document_id: UUID
    chunk_index: int
    page_start: int
    page_end: int
    engine: str
    engine_version: str
    pages: tuple[PageText, ...]
    language: str | None = None  # tesseract's language codes the pages were OCR'd with (eng+deu)
    # The invisible text of the pages OCR read, one PDF page per chunk page (app.pdf.text_layer);
    # None when no page has words (all text layer, blank or failed).
    text_layer: StoredFile | None = None

    def to_bytes(self) -> bytes:
        return _canonical(self.model_dump(mode="json"))

    def has_words(self) -> bool:
        return any(p.words for p in self.pages)

    def covers_its_range(self) -> bool:
        return [p.page_number for p in self.pages] == list(range(self.page_start, self.page_end + 1))


class MergedChunk(_Frozen):
    chunk_index: int
    page_start: int
    page_end: int
    result_storage_path: str
    result_checksum: str


class MergedResult(_Frozen):
    schema_version: SchemaVersion = RESULT_SCHEMA_VERSION
    document_id: UUID
    filename: str
    page_count: int
    engines: tuple[str, ...]
    mean_confidence: Confidence
    low_confidence_threshold: Confidence
    low_confidence_pages: tuple[int, ...]  # need human review
    pages: tuple[PageText, ...]  # without word boxes; those stay in the chunk results
    chunks: tuple[MergedChunk, ...]
    failed_pages: tuple[FailedPage, ...] = ()  # pages that could not be read, and why
    language: str | None = None
    # The original PDF with each OCR'd page's text layer grafted on; None when no page was OCR'd
    # (the original's own text is all there is) or searchable PDFs are turned off.
    searchable_pdf: StoredFile | None = None
    searchable_pdf_error: str | None = None  # why grafting failed, when it did (the text stands)

    def to_bytes(self) -> bytes:
        return _canonical(self.model_dump(mode="json"))

    def text(self) -> str:
        """Page texts in page order, joined by form feeds."""
        return "\f".join(p.text for p in self.pages)


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
