"""A Supabase Storage stand-in at the HTTP level: objects in memory, Storage's URLs and bodies.

Uploads are parsed from the real multipart body supabase-py sends; errors use
Storage's JSON shape ({"statusCode": "404", "error": "not_found", ...}).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

import httpx

from tests.postgrest_fake import SUPABASE_URL

STORAGE_URL = f"{SUPABASE_URL}/storage/v1"


@dataclass
class StoredUpload:
    data: bytes
    content_type: str
    metadata: dict[str, Any] | None
    upsert: bool


@dataclass
class FakeStorage:
    bucket: str = "ocr-chunks"
    objects: dict[str, StoredUpload] = field(default_factory=dict)
    requests: list[httpx.Request] = field(default_factory=list)
    fail_next: list[httpx.Response] = field(default_factory=list)
    # Answers for uploads only, each used once: the first entry whose predicate accepts the
    # object's name answers that upload instead of storing it (other uploads are unaffected).
    fail_uploads: list[tuple[Callable[[str], bool], httpx.Response]] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.fail_next:
            return self.fail_next.pop(0)
        path = request.url.path.removeprefix("/storage/v1/")
        if request.method == "POST" and path.startswith(f"object/{self.bucket}/"):
            name = path.removeprefix(f"object/{self.bucket}/")
            for index, (matches, answer) in enumerate(self.fail_uploads):
                if matches(name):
                    del self.fail_uploads[index]
                    return answer
            return self._upload(name, request)
        if request.method == "POST" and path.startswith(f"object/sign/{self.bucket}/"):
            name = path.removeprefix(f"object/sign/{self.bucket}/")
            if name not in self.objects:
                return _error(400, "not_found", "Object not found", status_code="404")
            expires = int(json.loads(request.content)["expiresIn"])
            return httpx.Response(
                200, json={"signedURL": f"/object/sign/{self.bucket}/{name}?token=fake-{expires}"}
            )
        if request.method == "GET" and path.startswith(f"object/info/{self.bucket}/"):
            name = path.removeprefix(f"object/info/{self.bucket}/")
            if name not in self.objects:
                return _error(404, "not_found", "Object not found")
            return httpx.Response(200, json={"name": name, "size": len(self.objects[name].data)})
        if request.method == "GET" and path.startswith(f"object/{self.bucket}/"):
            name = path.removeprefix(f"object/{self.bucket}/")
            if name not in self.objects:
                # Storage answers a missing object with HTTP 400 and the 404 in the body
                return _error(400, "not_found", "Object not found", status_code="404")
            stored = self.objects[name]
            return httpx.Response(200, content=stored.data, headers={"content-type": stored.content_type})
        if request.method == "DELETE" and path == f"object/{self.bucket}":
            for name in json.loads(request.content)["prefixes"]:
                self.objects.pop(name, None)
            return httpx.Response(200, json=[])
        return _error(400, "InvalidRequest", f"unexpected {request.method} {path}")

    def _upload(self, name: str, request: httpx.Request) -> httpx.Response:
        upsert = request.headers.get("x-upsert") == "true"
        if name in self.objects and not upsert:
            return _error(400, "Duplicate", "The resource already exists", status_code="409")
        message = BytesParser(policy=HTTP).parsebytes(
            b"Content-Type: " + request.headers["content-type"].encode() + b"\r\n\r\n" + request.content
        )
        fields: dict[str, Any] = {}
        for part in message.iter_parts():
            field_name = part.get_param("name", header="content-disposition")
            fields[str(field_name)] = (part.get_content_type(), part.get_payload(decode=True))
        content_type, data = fields["file"]
        metadata = json.loads(fields["metadata"][1]) if "metadata" in fields else None
        self.objects[name] = StoredUpload(data, content_type, metadata, upsert)
        return httpx.Response(
            200, json={"Key": f"{self.bucket}/{name}", "Id": "00000000-0000-0000-0000-000000000000"}
        )


def _error(http_status: int, error: str, message: str, status_code: str | None = None) -> httpx.Response:
    body = {"statusCode": status_code or str(http_status), "error": error, "message": message}
    return httpx.Response(http_status, json=body)
