"""SHA-256 of exact bytes, and verification of downloads against a row's checksum."""

from __future__ import annotations

import hashlib

from app.storage.errors import ChecksumMismatchError


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verify(data: bytes, expected: str, *, path: str) -> bytes:
    """Return data if it hashes to expected, else raise ChecksumMismatchError."""
    actual = sha256_hex(data)
    if actual != expected:
        raise mismatch(path, expected, actual)
    return data


def mismatch(path: str, expected: str, actual: str) -> ChecksumMismatchError:
    return ChecksumMismatchError(
        f"{path}: stored object hashes to {actual[:16]}..., the row expects {expected[:16]}...",
        path=path,
        expected=expected,
        actual=actual,
    )
