"""Input checks of OCRChunkService: ids, models, worker ids, results and chunk ranges.

Each turns bad input into InvalidInputError (or DuplicateChunkError) before
anything reaches the database.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TypeVar
from uuid import UUID

from pydantic import BaseModel, TypeAdapter, ValidationError

from app.core.errors import DuplicateChunkError, InvalidInputError, LeaseLostError
from app.models.document import Document, FinalizeLease
from app.models.limits import (
    ERROR_CODE_MAX,
    STORAGE_PATH_MAX,
    WORKER_ID_MAX,
    ErrorCodeText,
    Sha256Hex,
    StoragePath,
    WorkerId,
)
from app.models.ocr_chunk import ChunkLease, ChunkRange

IdLike = UUID | str


def as_uuid(value: IdLike, what: str = "id") -> UUID:
    """Parse an id, raising InvalidInputError (never ValueError) for garbage."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except (ValueError, TypeError, AttributeError):
        shown = str(value)
        shown = shown if len(shown) <= 40 else shown[:40] + "..."  # an error echoes no payload
        raise InvalidInputError(f"{what} is not a valid UUID: {shown!r}") from None


M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


def validated(model: type[M], value: object) -> M:
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or model.__name__
        raise InvalidInputError(f"invalid {where}: {first['msg']}") from None


def checked(kind: TypeAdapter[T], value: object, what: str, rule: str) -> T:
    """value as the field type kind (app.models.limits), or InvalidInputError naming the rule."""
    try:
        return kind.validate_python(value, strict=True)
    except ValidationError:
        raise InvalidInputError(f"{what} must be {rule}") from None


_WORKER_ID = TypeAdapter(WorkerId)
_STORAGE_PATH = TypeAdapter(StoragePath)
_SHA256 = TypeAdapter(Sha256Hex)
_ERROR_CODE = TypeAdapter(ErrorCodeText)


def worker_id_of(worker_id: str) -> str:
    return checked(
        _WORKER_ID, worker_id, "worker_id", f"a non-empty string of at most {WORKER_ID_MAX} characters"
    )


def error_code_of(error_code: str) -> str:
    return checked(_ERROR_CODE, error_code, "error_code", f"1 to {ERROR_CODE_MAX} characters")


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
    return (
        checked(_STORAGE_PATH, path, "result_storage_path", f"1 to {STORAGE_PATH_MAX} characters"),
        checked(_SHA256, checksum, "result_checksum", "a lowercase SHA-256 hex digest"),
    )


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
