"""The pages an OCR process's task has read so far, kept where its pool finds them if it dies.

When an OCR process dies mid-chunk (a page that aborts PDFium, the OOM killer, kill -9, a page
past its CPU time), the chunk runs again without the page it died on. Without this it also read
again every page it had read before that page: up to a chunk of tesseract's work for each death.
Each page the engine finishes is appended to a file of the task's own (OcrPool._tracked opens it,
under the pool's directory of running tasks, in /dev/shm where there is one); the pool reads the
file back when the process dies and hands the pages to the OcrProcessDiedError, and the next run
of the chunk leaves them out (recognize_in_process's `read`).

A record is the page's length (4 bytes, little-endian) and the page pickled, as the executor
returns a task's result from the same process. A process killed mid-write leaves a short last
record, which is dropped. A task records at most MAX_BYTES (about 200 dense pages of words;
/dev/shm is 64 MiB in a default Docker container, and the pool's processes share it): the pages
past that are read again after a death, as are all of them where the file cannot be written.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
from pathlib import Path

from app.engines.base import PageResult

MAX_BYTES = 8 << 20
_LENGTH = struct.Struct("<I")
_descriptor: int | None = None  # the running task's file of pages read (O_APPEND), if any
_written = 0  # bytes the running task has recorded


def record_to(descriptor: int | None) -> None:
    """Inside an OCR process: where the running task's pages go from now on (None: nowhere)."""
    global _descriptor, _written
    _descriptor, _written = descriptor, 0


def page_read(result: PageResult) -> None:
    """Inside an OCR process: the engine has finished this page (a failed page included)."""
    global _written
    if _descriptor is None:
        return
    record = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    if _written + _LENGTH.size + len(record) > MAX_BYTES:
        return  # this page is read again after a death
    with contextlib.suppress(OSError):  # a full /dev/shm: the page is read again after a death
        _written += os.write(_descriptor, _LENGTH.pack(len(record)) + record)


def pages_read(path: Path) -> list[PageResult]:
    """The pages a dead process's task recorded in `path` (none when there is no such file)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    pages: list[PageResult] = []
    offset = 0
    while offset + _LENGTH.size <= len(data):
        (length,) = _LENGTH.unpack_from(data, offset)
        start, offset = offset + _LENGTH.size, offset + _LENGTH.size + length
        if offset > len(data):
            break  # the process died while it wrote this record
        try:
            page = pickle.loads(data[start:offset])
        except Exception:
            break
        if isinstance(page, PageResult):
            pages.append(page)
    return pages
