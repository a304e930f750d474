"""A file's SHA-256, the checksum every stored object and uploaded PDF is named and checked by."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The file's SHA-256, hex, read a mebibyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
