"""Object paths in the bucket, as the design fixes them."""

from __future__ import annotations

from uuid import UUID


def document_prefix(matter_id: UUID, document_id: UUID) -> str:
    return f"{matter_id}/{document_id}"


def source_pdf_path(matter_id: UUID, document_id: UUID) -> str:
    """The original upload, kept when OCR is started later (POST /documents/{id}/ocr)."""
    return f"{document_prefix(matter_id, document_id)}/source.pdf"


def chunk_input_path(matter_id: UUID, document_id: UUID, plan_id: str, chunk_index: int) -> str:
    """A chunk's pages, under the plan that cut them.

    Each start of a document cuts under its own plan id, so when two starts race
    and one loses, the loser deletes only what it uploaded, never the winner's inputs.
    """
    return f"{document_prefix(matter_id, document_id)}/input/{plan_id}/{chunk_index:05d}.pdf"


def chunk_result_path(
    matter_id: UUID, document_id: UUID, chunk_index: int, input_sha256: str, engine: str
) -> str:
    """Where a chunk's result lives, from what its row already knows: index, input and engine.

    Any later attempt finds (and, once it verifies, reuses) a result an earlier
    attempt stored but could not record, for example during a database outage.
    """
    name = f"{chunk_index:05d}-{input_sha256[:16]}-{engine}.json"
    return f"{document_prefix(matter_id, document_id)}/chunks/{name}"


def merged_json_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.json"


def merged_text_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.txt"
