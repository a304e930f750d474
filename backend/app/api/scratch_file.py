"""A file response served from a scratch directory that is removed once the answer is sent,
whatever the answer: Starlette's FileResponse answers a Range it refuses (400, 416) with a
response of its own and skips its background task, so a scratch copy of the file was left behind
for each such request (any reader could fill the API's disk with copies of a searchable PDF).

A Range it cannot use is answered as the rest of the API answers: a malformed one is ignored and
the whole file sent (RFC 9110 14.2 lets a server ignore Range), one past the end of the file is
416 `range_not_satisfiable` in the API's JSON error shape, with `Content-Range: bytes */size`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.responses import FileResponse, JSONResponse, MalformedRangeHeader, RangeNotSatisfiable
from starlette.types import Receive, Scope, Send

from app.api.errors import error_body


class ScratchFileResponse(FileResponse):
    """FileResponse of a file inside `scratch`, a directory of its own that goes after the answer
    (None: a file that stays, sent with the same answers to a Range)."""

    def __init__(self, path: Path, *, scratch: Path | None, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.scratch = scratch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            refused = _refused_range(scope, self.path)
            if refused is not None:
                await refused(scope, receive, send)
            else:
                await super().__call__(scope, receive, send)
        finally:
            if self.scratch is not None:
                await anyio.to_thread.run_sync(shutil.rmtree, self.scratch, True)


def _refused_range(scope: Scope, path: str | os.PathLike[str]) -> JSONResponse | None:
    """The 416 for a Range past the file's end; a malformed Range is dropped from `scope`."""
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    ranges = [value for name, value in headers if name == b"range"]
    if not ranges or any(name == b"if-range" for name, _ in headers):
        return None  # none, or one Starlette may not use (a stale If-Range): its answer is a 200
    size = Path(path).stat().st_size
    try:
        FileResponse._parse_range_header(ranges[0].decode("latin-1"), size)
    except MalformedRangeHeader:
        scope["headers"] = [(name, value) for name, value in headers if name != b"range"]
    except RangeNotSatisfiable:
        body = error_body("range_not_satisfiable", f"the requested range is outside the file's {size} bytes")
        return JSONResponse(body, status_code=416, headers={"Content-Range": f"bytes */{size}"})
    return None
