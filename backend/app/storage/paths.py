"""Object paths in the bucket, as the design fixes them."""

from __future__ import annotations

from uuid import UUID


def document_prefix(matter_id: UUID, document_id: UUID) -> str:
    return f"{matter_id}/{document_id}"


def source_pdf_path(matter_id: UUID, document_id: UUID) -> str:
    """The original upload, kept when OCR is started later (POST /documents/{id}/ocr)."""
    return f"{document_prefix(matter_id, document_id)}/source.pdf"


def chunk_input_path(matter_id: UUID, document_id: UUID, chunk_index: int) -> str:
    return f"{document_prefix(matter_id, document_id)}/input/{chunk_index:05d}.pdf"


def chunk_result_path(matter_id: UUID, document_id: UUID, chunk_index: int, sha256: str) -> str:
    """Immutable and content-addressed: the same result always lands on the same path."""
    return f"{document_prefix(matter_id, document_id)}/chunks/{chunk_index:05d}-{sha256[:16]}.json"


def merged_json_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.json"


def merged_text_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.txt"
