"""uvicorn's HTTP/1.1 protocol (h11), answering a request it cannot parse in the API's error shape.

uvicorn refuses such a request itself, before the app sees it (a malformed request line, a
header block over its limit), with `400` and a `text/plain` body: the one refusal of the API
without `{"error": {"code", "message"}}`. `chunk-ocr serve` runs uvicorn with this protocol;
under `uvicorn app.main:app`, pass `--http app.api.http_protocol:JsonRefusalsH11Protocol`.
"""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.api.errors import error_body
from app.api.headers import COMMON_HEADERS

MALFORMED_REQUEST = "malformed_request"  # the code of a request uvicorn could not parse


class JsonRefusalsH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        body = json.dumps(error_body(MALFORMED_REQUEST, msg), separators=(",", ":")).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *COMMON_HEADERS,  # what the app's answers carry (its middleware never sees this one)
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()
