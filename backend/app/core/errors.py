"""Domain errors.

Every error the service layer raises is an ``OCRError``. Each class says, as
data, whether retrying the same operation later can succeed (``retryable``)
and carries a stable ``code`` used in chunk rows, HTTP bodies and CLI output.
Driver errors (asyncpg, PostgREST, storage3, gRPC) are translated into these
once, at the adapter boundary; nothing above it inspects driver exceptions or
message text.
"""

from __future__ import annotations

from typing import ClassVar


class OCRError(Exception):
    """Base of every domain error."""

    code: ClassVar[str] = "ocr_error"
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context

    def __str__(self) -> str:
        return self.message


# -- input --------------------------------------------------------------------


class InvalidInputError(OCRError):
    """The caller passed something that can never be valid (bad id, bad range)."""

    code = "invalid_input"


class ResourceLimitError(OCRError):
    """The input needs more than a configured limit allows (decoded bytes of a page, memory of an
    OCR process): the same input needs the same again, so retrying cannot help."""

    code = "resource_limit"


class ConfigurationError(OCRError):
    """A setting is missing or invalid; raised at start-up."""

    code = "configuration_error"


# -- lookups and state --------------------------------------------------------


class NotFoundError(OCRError):
    code = "not_found"


class ChunkNotFoundError(NotFoundError):
    code = "chunk_not_found"


class DocumentNotFoundError(NotFoundError):
    code = "document_not_found"


class MatterNotFoundError(NotFoundError):
    code = "matter_not_found"


class ForbiddenError(OCRError):
    """The caller belongs to the matter but their role may not do this (a viewer acting): HTTP 403."""

    code = "forbidden"


class ConflictError(OCRError):
    code = "conflict"


class DuplicateChunkError(ConflictError):
    """A chunk with the same (document_id, chunk_index) already exists."""

    code = "duplicate_chunk"


class DuplicateDocumentError(ConflictError):
    code = "duplicate_document"


class InvalidStatusTransitionError(ConflictError):
    """The move is not in VALID_STATUS_TRANSITIONS (raised by Python or the trigger)."""

    code = "invalid_status_transition"


class OCRAlreadyStartedError(ConflictError):
    """The document's OCR was started already (a second start, or two at once)."""

    code = "ocr_already_started"


class LeaseLostError(ConflictError):
    """The lease token no longer matches the row: another attempt owns the chunk."""

    code = "lease_lost"


# -- infrastructure -----------------------------------------------------------


class RepositoryError(OCRError):
    """The database answered with an error we do not expect (a bug or a schema drift)."""

    code = "database_error"


class SchemaMissingError(RepositoryError):
    """The database lacks a table or function of ours: it was never migrated, or not lately."""

    code = "schema_missing"


class RepositoryUnavailableError(RepositoryError):
    """The database could not be reached or asked us to try again."""

    code = "database_unavailable"
    retryable = True


class QueueUnavailableError(OCRError):
    """Redis (the job queue) could not be reached; the sweep re-enqueues from the database."""

    code = "queue_unavailable"
    retryable = True
