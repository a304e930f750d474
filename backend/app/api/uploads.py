"""Receiving an uploaded PDF: streamed to a file, hashed as it arrives, refused at the limit.

The routes that take uploads declare no body parameters, so FastAPI reads no
body before their dependencies ran: a request without a valid token is 401, and
one for a matter the caller may not write to is refused, before a byte of the
file is read. The body is then read here block by block: a multipart form
(`file` and small text fields) or a bare `application/pdf` body. Crossing
MAX_UPLOAD_BYTES is 413 at once (or before reading anything, when
Content-Length already says so), and no more than a block is ever held in memory.
A body that stops arriving for UPLOAD_IDLE_SECONDS is 408 and gives its slot back (four
stalled uploads held every slot, and every user's uploads were 503, for as long as their
connections stayed open); one user holds at most all slots but one. A form that cannot be parsed,
or ends before its closing boundary, is 422; a client that hangs up is an incomplete upload.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import parse_qsl
from uuid import UUID

from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, MultipartState, parse_options_header
from starlette.requests import ClientDisconnect

from app.api.errors import PayloadTooLargeError, UploadStalledError
from app.core.errors import InvalidInputError, OCRError
from app.core.filenames import shown_name

if TYPE_CHECKING:  # a TypedDict python-multipart declares for type checkers only
    from python_multipart.multipart import MultipartCallbacks

FIELD_LIMIT = 4096  # bytes of one text field
FIELDS_LIMIT = 16  # text fields in one form
# The slowest average an upload body may arrive at once past its first UPLOAD_IDLE_SECONDS: 200 MiB
# in under four hours (128 kbit/s).
MIN_BYTES_PER_SECOND = 16 * 1024


class MalformedUploadError(InvalidInputError):
    code = "invalid_input"


class IncompleteUploadError(InvalidInputError):
    """The client hung up before the body was complete (no one reads the answer)."""

    code = "upload_incomplete"


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
    """At most `limit` uploads received at once per API process, and all but one of them (at
    least one) for one user, so no one user holds every slot; beyond it, 503 with Retry-After
    (each upload may hold up to MAX_UPLOAD_BYTES of disk and a planning thread)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.per_user = max(1, limit - 1)
        self.in_use = 0
        self._by_user: Counter[UUID] = Counter()

    @contextmanager
    def taken_by(self, user: UUID) -> Iterator[None]:
        if self.in_use >= self.limit:
            raise UploadsBusyError(f"{self.limit} uploads are being received; try again shortly")
        if self._by_user[user] >= self.per_user:
            raise UploadsBusyError(f"you are sending {self.per_user} uploads already; try again shortly")
        self.in_use += 1
        self._by_user[user] += 1
        try:
            yield
        finally:
            self.in_use -= 1
            self._by_user[user] -= 1
            if not self._by_user[user]:
                del self._by_user[user]


async def receive_pdf(
    request: Request,
    dest: Path,
    limit: int,
    *,
    idle_seconds: float,
    on_field: Callable[[str, str], Awaitable[None]] | None = None,
    on_file: Callable[[], Awaitable[None]] | None = None,
) -> ReceivedUpload:
    """Stream the request's PDF into dest. on_field sees each text field of a form as soon as it
    has arrived (the legacy route checks its matterId there), and on_file is awaited once, before
    the first byte of the file is kept (the fields that arrived with it seen first): the legacy
    route refuses a file that comes before its matterId there, and takes its upload slot.
    A body from which nothing arrives for idle_seconds is UploadStalledError."""
    body_limit = limit + FIELDS_LIMIT * FIELD_LIMIT
    if _declared_over(request.headers.get("content-length"), body_limit):
        raise PayloadTooLargeError(f"the upload is larger than the {limit} byte limit")
    kind, params = parse_options_header(request.headers.get("content-type"))
    with dest.open("wb") as out:
        sink = _Sink(out, limit)
        blocks = _at_most(body_blocks(request, idle_seconds), body_limit)
        if kind == b"multipart/form-data":
            return await _receive_form(blocks, sink, dest, params.get(b"boundary"), on_field, on_file)
        if kind in (b"application/pdf", b"application/octet-stream"):
            if on_file is not None:
                await on_file()
            async for block in blocks:
                await sink.write(block)
            filename = request.query_params.get("filename")
            return ReceivedUpload(dest, sink.size, sink.hash.hexdigest(), filename)
    raise MalformedUploadError("send the PDF as multipart/form-data (a `file` field) or as application/pdf")


OPTIONS_LIMIT = FIELDS_LIMIT * FIELD_LIMIT  # bytes of a body of options only (no file)


def _declared_over(declared: str | None, limit: int) -> bool:
    """Whether a Content-Length says more than limit (a number too long to convert says more)."""
    if declared is None or not (declared.isascii() and declared.isdigit()):
        return False
    return len(declared) > len(str(limit)) or int(declared) > limit


async def receive_options(request: Request, allowed: set[str], *, idle_seconds: float) -> dict[str, str]:
    """The options of a request that carries no file (query parameters, then a small url-encoded
    or multipart form, or no body): read after the route's dependencies (the token, the caller's
    rights), at most OPTIONS_LIMIT bytes of it. A body of another kind, or a name not in allowed,
    is MalformedUploadError: an option the caller meant must not be ignored."""
    if _declared_over(request.headers.get("content-length"), OPTIONS_LIMIT):
        raise PayloadTooLargeError(f"a body of options is at most {OPTIONS_LIMIT} bytes")
    body = bytearray()
    async for block in body_blocks(request, idle_seconds):
        body += block
        if len(body) > OPTIONS_LIMIT:
            raise PayloadTooLargeError(f"a body of options is at most {OPTIONS_LIMIT} bytes")
    form = _options_form(bytes(body), request.headers.get("content-type")) if body else []
    options = options_once([*request.query_params.multi_items(), *form])
    unknown = set(options) - allowed
    if unknown:
        raise MalformedUploadError(
            f"unknown field {sorted(unknown)[0]!r}; this takes {', '.join(sorted(allowed))}"
        )
    return options


def options_once(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The options, each by its name; one given twice with two values (twice in the query or the
    form, or in both) is MalformedUploadError: which one was meant cannot be known, and taking the
    last (a form's) or the first (a query's) had been silent."""
    options: dict[str, str] = {}
    for name, value in pairs:
        if options.setdefault(name, value) != value:
            raise MalformedUploadError(
                f"{name}: given twice, as {shown_name(options[name], 40)!r} and {shown_name(value, 40)!r}"
            )
    return options


def _options_form(body: bytes, content_type: str | None) -> list[tuple[str, str]]:
    kind, params = parse_options_header(content_type)
    if kind == b"application/x-www-form-urlencoded":
        try:
            pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=FIELDS_LIMIT)
        except (UnicodeDecodeError, ValueError) as exc:
            raise MalformedUploadError(f"the form cannot be read: {exc}") from None
        return pairs
    if kind == b"multipart/form-data" and params.get(b"boundary"):
        form = _Form()
        try:
            parser = MultipartParser(params[b"boundary"], form.callbacks())
            parser.write(body)
        except FormParserError as exc:
            raise MalformedUploadError(f"the multipart form cannot be read: {exc}") from None
        if parser.state != MultipartState.END:
            raise MalformedUploadError("the multipart form ended before its closing boundary")
        if form.file_seen:
            raise MalformedUploadError("this takes no file")
        return list(form.fields.items())
    raise MalformedUploadError("send options as form fields (url-encoded or multipart) or query parameters")


def chunk_pages_option(value: str | None) -> int | None:
    """The chunkPages option: None (by size) when not given, else a whole number from 1 to 1000."""
    if value is None or value == "":
        return None
    # At most 4 digits before int(): Python refuses to convert over 4,300 (a 500 for 4,301)
    if not (value.isascii() and value.isdigit() and len(value) <= 4) or not 1 <= int(value) <= 1000:
        raise MalformedUploadError("chunkPages: must be a whole number from 1 to 1000")
    return int(value)


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


async def body_blocks(request: Request, idle_seconds: float) -> AsyncIterator[bytes]:
    """The request's body as it arrives; UploadStalledError when nothing comes for idle_seconds,
    or when, after its first idle_seconds, it has come slower than MIN_BYTES_PER_SECOND on average
    (a byte a second is never silent for long, and held an upload slot for as long as the client
    liked: four such bodies kept every other upload out); IncompleteUploadError when the client
    hangs up."""
    stream = request.stream().__aiter__()
    started, received = time.monotonic(), 0
    while True:
        try:
            block = await asyncio.wait_for(stream.__anext__(), idle_seconds)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise UploadStalledError(f"nothing of the body arrived for {idle_seconds:g} s") from None
        except ClientDisconnect:
            raise IncompleteUploadError("the client closed the connection before the body ended") from None
        received += len(block)
        elapsed = time.monotonic() - started
        if elapsed > idle_seconds and received < MIN_BYTES_PER_SECOND * elapsed:
            raise UploadStalledError(
                f"the body arrived at {received / elapsed:,.0f} bytes/s, under the "
                f"{MIN_BYTES_PER_SECOND:,} an upload must keep"
            )
        yield block


async def _at_most(blocks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    """blocks, until more than limit bytes have come: PayloadTooLargeError (the body as a whole,
    the file's form fields and whatever follows the form's end included, where only the file
    was counted: a chunked form of 300 MiB of fields was read to its end)."""
    received = 0
    async for block in blocks:
        received += len(block)
        if received > limit:
            raise PayloadTooLargeError(f"the upload is larger than the {limit} byte limit")
        yield block


async def _receive_form(
    blocks: AsyncIterator[bytes],
    sink: _Sink,
    dest: Path,
    boundary: bytes | None,
    on_field: Callable[[str, str], Awaitable[None]] | None,
    on_file: Callable[[], Awaitable[None]] | None,
) -> ReceivedUpload:
    if not boundary:
        raise MalformedUploadError("a multipart body needs a boundary")
    form = _Form()
    try:
        parser = MultipartParser(boundary, form.callbacks())
    except FormParserError as exc:  # a boundary it will not take (too long)
        raise MalformedUploadError(f"the multipart form cannot be read: {exc}") from None
    async for block in blocks:
        try:
            parser.write(block)
        except FormParserError as exc:
            raise MalformedUploadError(f"the multipart form cannot be read: {exc}") from None
        for name, value in form.take_fields():
            if on_field is not None:
                await on_field(name, value)
        if (file_data := form.take_file_data()) and on_file is not None:
            await on_file()
            on_file = None
        for data in file_data:
            await sink.write(data)
    parser.finalize()
    if parser.state != MultipartState.END:
        raise MalformedUploadError("the multipart form ended before its closing boundary")
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
            options_once([*self.fields.items(), (self._in_field, value)])  # a field twice: refused
            self.fields[self._in_field] = value
            self._new_fields.append((self._in_field, value))
        self._in_file, self._in_field = False, None

    def take_file_data(self) -> list[bytes]:
        data, self._file_data = self._file_data, []
        return data

    def take_fields(self) -> list[tuple[str, str]]:
        fields, self._new_fields = self._new_fields, []
        return fields
