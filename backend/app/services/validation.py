"""Input checks of OCRChunkService: ids, models, worker ids, results and chunk ranges.

Each turns bad input into InvalidInputError (or DuplicateChunkError) before
anything reaches the database.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TypeVar
from uuid import UUID

from pydantic import BaseModel, ValidationError

from app.core.errors import DuplicateChunkError, InvalidInputError, LeaseLostError
from app.models.document import Document, FinalizeLease
from app.models.ocr_chunk import ChunkLease, ChunkRange

IdLike = UUID | str


def as_uuid(value: IdLike, what: str = "id") -> UUID:
    """Parse an id, raising InvalidInputError (never ValueError) for garbage."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        raise InvalidInputError(f"{what} is not a valid UUID: {value!r}") from None


M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], value: object) -> M:
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or model.__name__
        raise InvalidInputError(f"invalid {where}: {first['msg']}") from None


def worker_id_of(worker_id: str) -> str:
    if not isinstance(worker_id, str) or not worker_id.strip() or len(worker_id) > 200:
        raise InvalidInputError("worker_id must be a non-empty string of at most 200 characters")
    return worker_id


def lease_lost(lease: ChunkLease) -> LeaseLostError:
    return LeaseLostError(
        f"lease on chunk {lease.chunk_id} (worker {lease.worker_id}, attempt {lease.attempt}) is lost",
        chunk_id=lease.chunk_id,
        attempt=lease.attempt,
        worker_id=lease.worker_id,
    )


def finalize_lease_lost(lease: FinalizeLease) -> LeaseLostError:
    return LeaseLostError(
        f"finalize lease on document {lease.document_id} (worker {lease.worker_id}, "
        f"attempt {lease.attempt}) is lost",
        document_id=lease.document_id,
        attempt=lease.attempt,
        worker_id=lease.worker_id,
    )


def result_fields(path: str, checksum: str) -> tuple[str, str]:
    if not isinstance(path, str) or not path or len(path) > 1024:
        raise InvalidInputError("result_storage_path must be 1 to 1024 characters")
    if (
        not isinstance(checksum, str)
        or len(checksum) != 64
        or any(c not in "0123456789abcdef" for c in checksum)
    ):
        raise InvalidInputError("result_checksum must be a lowercase SHA-256 hex digest")
    return path, checksum


def check_ranges(document: Document, ranges: Sequence[ChunkRange]) -> None:
    """Refuse duplicate indexes, overlapping ranges and pages past the document's end."""
    seen: set[int] = set()
    for r in ranges:
        if r.chunk_index in seen:
            raise DuplicateChunkError(
                f"chunk_index {r.chunk_index} appears twice for document {document.id}",
                document_id=document.id,
                chunk_index=r.chunk_index,
            )
        seen.add(r.chunk_index)
        if r.page_end > document.page_count:
            raise InvalidInputError(
                f"chunk {r.chunk_index} ends at page {r.page_end} but the document has "
                f"{document.page_count} pages"
            )
    ordered = sorted(ranges, key=lambda r: r.page_start)
    for before, after in itertools.pairwise(ordered):
        if after.page_start <= before.page_end:
            raise InvalidInputError(
                f"chunks {before.chunk_index} and {after.chunk_index} overlap "
                f"(pages {before.page_start}-{before.page_end} and {after.page_start}-{after.page_end})"
            )
