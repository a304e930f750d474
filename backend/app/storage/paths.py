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
    matter_id: UUID, document_id: UUID, chunk_index: int, input_sha256: str, engine: str, language: str
) -> str:
    """Where a chunk's result lives, from what its row already knows: index, input, language and
    engine (the same pages read in another language are another result).

    Any later attempt finds (and, once it verifies, reuses) a result an earlier
    attempt stored but could not record, for example during a database outage.
    The language's `+` becomes `.` (codes have neither dots nor hyphens, so names stay
    distinct): eng+deu is `00003-<sha>-eng.deu-tesseract.json`.
    """
    name = f"{chunk_index:05d}-{input_sha256[:16]}-{language.replace('+', '.')}-{engine}.json"
    return f"{document_prefix(matter_id, document_id)}/chunks/{name}"


def chunk_layer_path(result_path: str) -> str:
    """A chunk's text layer, beside its JSON result and named like it."""
    return result_path.removesuffix(".json") + ".layer.pdf"


def merged_pdf_path(matter_id: UUID, document_id: UUID) -> str:
    """The searchable PDF: the original's pages with the OCR'd text laid over them."""
    return f"{document_prefix(matter_id, document_id)}/result.pdf"


def merged_json_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.json"


def merged_text_path(matter_id: UUID, document_id: UUID) -> str:
    return f"{document_prefix(matter_id, document_id)}/result.txt"
