"""Receiving an uploaded PDF: streamed to a file, hashed as it arrives, refused at the limit.

The routes that take uploads declare no body parameters, so FastAPI reads no
body before their dependencies ran: a request without a valid token is 401, and
one for a matter the caller may not write to is refused, before a byte of the
file is read. The body is then read here block by block: a multipart form
(`file` and small text fields) or a bare `application/pdf` body. Crossing
MAX_UPLOAD_BYTES is 413 at once (or before reading anything, when
Content-Length already says so), and no more than a block is ever held in memory.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from fastapi import Request
from python_multipart.multipart import MultipartParser, parse_options_header

from app.api.errors import PayloadTooLargeError
from app.core.errors import InvalidInputError, OCRError

if TYPE_CHECKING:  # a TypedDict python-multipart declares for type checkers only
    from python_multipart.multipart import MultipartCallbacks

FIELD_LIMIT = 4096  # bytes of one text field
FIELDS_LIMIT = 16  # text fields in one form


class MalformedUploadError(InvalidInputError):
    code = "invalid_input"


class UploadsBusyError(OCRError):
    """The API is receiving as many uploads as it allows at once; try again shortly."""

    code = "too_many_uploads"
    retryable = True
    retry_after_seconds = 5


@dataclass
class ReceivedUpload:
    path: Path
    size: int
    sha256: str
    filename: str | None
    fields: dict[str, str] = field(default_factory=dict)


class UploadSlots:
    """At most `limit` uploads received at once per API process; beyond it, 503 with Retry-After
    (each upload may hold up to MAX_UPLOAD_BYTES of disk and a planning thread)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0

    def __enter__(self) -> UploadSlots:
        if self.in_use >= self.limit:
            raise UploadsBusyError(f"{self.limit} uploads are being received; try again shortly")
        self.in_use += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.in_use -= 1


async def receive_pdf(
    request: Request,
    dest: Path,
    limit: int,
    *,
    on_field: Callable[[str, str], Awaitable[None]] | None = None,
) -> ReceivedUpload:
    """Stream the request's PDF into dest. on_field sees each text field of a form as soon as it
    has arrived (the legacy route checks its matterId there, before the file when it comes first)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit + FIELDS_LIMIT * FIELD_LIMIT:
        raise PayloadTooLargeError(f"the upload is larger than the {limit} byte limit")
    kind, params = parse_options_header(request.headers.get("content-type"))
    with dest.open("wb") as out:
        sink = _Sink(out, limit)
        if kind == b"multipart/form-data":
            return await _receive_form(request, sink, dest, params.get(b"boundary"), on_field)
        if kind in (b"application/pdf", b"application/octet-stream"):
            async for block in request.stream():
                await sink.write(block)
            filename = request.query_params.get("filename")
            return ReceivedUpload(dest, sink.size, sink.hash.hexdigest(), filename)
    raise MalformedUploadError("send the PDF as multipart/form-data (a `file` field) or as application/pdf")


class _Sink:
    def __init__(self, out: BinaryIO, limit: int) -> None:
        self.out, self.limit = out, limit
        self.size = 0
        self.hash = hashlib.sha256()

    async def write(self, block: bytes) -> None:
        self.size += len(block)
        if self.size > self.limit:
            raise PayloadTooLargeError(f"the upload is larger than the {self.limit} byte limit")
        self.hash.update(block)
        await asyncio.to_thread(self.out.write, block)


async def _receive_form(
    request: Request,
    sink: _Sink,
    dest: Path,
    boundary: bytes | None,
    on_field: Callable[[str, str], Awaitable[None]] | None,
) -> ReceivedUpload:
    if not boundary:
        raise MalformedUploadError("a multipart body needs a boundary")
    form = _Form()
    parser = MultipartParser(boundary, form.callbacks())
    async for block in request.stream():
        parser.write(block)
        for data in form.take_file_data():
            await sink.write(data)
        for name, value in form.take_fields():
            if on_field is not None:
                await on_field(name, value)
    parser.finalize()
    if not form.file_seen:
        raise MalformedUploadError("the form has no `file` field")
    return ReceivedUpload(dest, sink.size, sink.hash.hexdigest(), form.filename, form.fields)


class _Form:
    """Collects what python-multipart's push parser reports; the caller drains it after each block."""

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.filename: str | None = None
        self.file_seen = False
        self._file_data: list[bytes] = []
        self._new_fields: list[tuple[str, str]] = []
        self._header_field = b""
        self._header_value = b""
        self._disposition: dict[bytes, bytes] = {}
        self._value = bytearray()
        self._in_file = False
        self._in_field: str | None = None

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self._part_begin,
            "on_header_field": lambda data, start, end: self._append("_header_field", data[start:end]),
            "on_header_value": lambda data, start, end: self._append("_header_value", data[start:end]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._part_data,
            "on_part_end": self._part_end,
        }

    def _append(self, name: str, data: bytes) -> None:
        setattr(self, name, getattr(self, name) + data)

    def _part_begin(self) -> None:
        self._disposition, self._value = {}, bytearray()
        self._in_file, self._in_field = False, None

    def _header_end(self) -> None:
        if self._header_field.strip().lower() == b"content-disposition":
            _, self._disposition = parse_options_header(self._header_value)
        self._header_field = self._header_value = b""

    def _headers_finished(self) -> None:
        name = self._disposition.get(b"name", b"").decode("utf-8", "replace")
        if name == "file":
            if self.file_seen:
                raise MalformedUploadError("send one `file` per upload")
            self.file_seen = self._in_file = True
            raw = self._disposition.get(b"filename")
            self.filename = raw.decode("utf-8", "replace") if raw is not None else None
        elif b"filename" in self._disposition:
            raise MalformedUploadError(f"unexpected file field {name!r}; the PDF goes in `file`")
        else:
            if len(self.fields) >= FIELDS_LIMIT:
                raise MalformedUploadError("too many form fields")
            self._in_field = name

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file:
            self._file_data.append(bytes(data[start:end]))
        elif self._in_field is not None:
            self._value += data[start:end]
            if len(self._value) > FIELD_LIMIT:
                raise MalformedUploadError(f"the form field {self._in_field!r} is too long")

    def _part_end(self) -> None:
        if self._in_field is not None:
            value = self._value.decode("utf-8", "replace")
            self.fields[self._in_field] = value
            self._new_fields.append((self._in_field, value))
        self._in_file, self._in_field = False, None

    def take_file_data(self) -> list[bytes]:
        data, self._file_data = self._file_data, []
        return data

    def take_fields(self) -> list[tuple[str, str]]:
        fields, self._new_fields = self._new_fields, []
        return fields
