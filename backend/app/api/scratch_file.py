"""A file response served from a scratch directory that is removed once the answer is sent,
whatever the answer: Starlette's FileResponse answers a Range it refuses (400, 416) with a
response of its own and skips its background task, so a scratch copy of the file was left behind
for each such request (any reader could fill the API's disk with copies of a searchable PDF)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.responses import FileResponse
from starlette.types import Receive, Scope, Send


class ScratchFileResponse(FileResponse):
    """FileResponse of a file inside `scratch`, a directory of its own that goes after the answer."""

    def __init__(self, path: Path, *, scratch: Path, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.scratch = scratch

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await anyio.to_thread.run_sync(shutil.rmtree, self.scratch, True)
