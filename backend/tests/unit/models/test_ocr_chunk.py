from __future__ import annotations

import uuid

import pytest
from pydantic import ValidationError

from app.models.ocr_chunk import ChunkProgress, ChunkRange, ChunkStatus, DocumentOCRChunkCreate


def test_range_rules() -> None:
    assert ChunkRange(chunk_index=0, page_start=3, page_end=3).page_count == 1
    for bad in (
        {"page_start": 0, "page_end": 1},
        {"page_start": 4, "page_end": 3},
        {"page_start": -1, "page_end": 2},
    ):
        with pytest.raises(ValidationError):
            ChunkRange(chunk_index=0, **bad)
    with pytest.raises(ValidationError):
        ChunkRange(chunk_index=-1, page_start=1, page_end=1)


def test_camel_case_aliases_and_population_by_name() -> None:
    ids = {"matter_id": uuid.uuid4(), "document_id": uuid.uuid4()}
    by_name = DocumentOCRChunkCreate(chunk_index=1, page_start=1, page_end=5, **ids)
    by_alias = DocumentOCRChunkCreate.model_validate(
        {
            "chunkIndex": 1,
            "pageStart": 1,
            "pageEnd": 5,
            "matterId": ids["matter_id"],
            "documentId": ids["document_id"],
        }
    )
    assert by_name == by_alias
    assert set(by_name.model_dump(by_alias=True)) == {
        "chunkIndex",
        "pageStart",
        "pageEnd",
        "inputStoragePath",
        "inputChecksum",
        "matterId",
        "documentId",
    }


def test_status_values() -> None:
    assert [s.value for s in ChunkStatus] == ["pending", "processing", "completed", "failed"]


def test_progress_derivations() -> None:
    doc = uuid.uuid4()
    stuck = ChunkProgress(document_id=doc, total=3, completed=2, failed=1, pages_total=30, pages_completed=20)
    assert stuck.is_stuck
    assert stuck.percent == 66.67
    retrying = stuck.model_copy(update={"failed_retryable": 1})
    assert not retrying.is_stuck
    done = ChunkProgress(document_id=doc, total=2, completed=2, pages_total=4, pages_completed=4)
    assert done.is_complete
    assert done.percent == 100.0
