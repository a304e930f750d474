"""Blob store errors."""

from __future__ import annotations

from app.core.errors import OCRError


class StorageError(OCRError):
    """The blob store failed in a way that may pass (network, 5xx)."""

    code = "storage_error"
    retryable = True


class StoragePermanentError(StorageError):
    """The blob store refused the request and will refuse it again (bad path, auth, too large)."""

    code = "storage_refused"
    retryable = False


class ObjectNotFoundError(StorageError):
    code = "object_not_found"
    retryable = False


class ChecksumMismatchError(StorageError):
    """The stored bytes do not hash to the checksum in the row: never use them.

    Retryable: the cure is to produce the object again (OCR the chunk again).
    """

    code = "checksum_mismatch"
    retryable = True
