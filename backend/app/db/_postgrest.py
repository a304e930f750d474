"""PostgREST answers that postgrest-py does not classify for us.

postgrest-py keeps no HTTP status on ``APIError``. A 5xx (or 408/429) whose body
names no SQLSTATE means PostgREST lost its database (PGRST000-003) or a gateway
in front of it failed (JSON without a code, an HTML page): a response hook on
the HTTP client recognises these before the body is parsed, so the repository
can report them as retryable.
"""

from __future__ import annotations

import json
import re

import httpx

_SQLSTATE = re.compile(r"[0-9A-Z]{5}")  # PostgREST's own codes are PGRST + 3 digits
# Statuses meaning "try again later" when the body names no SQLSTATE (same set as the blob store).
_RETRY_LATER_STATUS = frozenset({408, 429})


class UnavailableResponse(Exception):
    """Raised by the response hook; turned into RepositoryUnavailableError by ``_translated``."""

    def __init__(self, status: int, code: str | None) -> None:
        super().__init__(f"HTTP {status}" + (f" ({code})" if code else ""))
        self.status = status
        self.code = code


def _error_code(response: httpx.Response) -> str | None:
    try:
        body = json.loads(response.content)
    except ValueError:  # a proxy's HTML page, or no body at all
        return None
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


async def reject_unavailable(response: httpx.Response) -> None:
    """httpx response hook: raise for answers that mean the database is out of reach."""
    if response.status_code < 500 and response.status_code not in _RETRY_LATER_STATUS:
        return
    await response.aread()
    code = _error_code(response)
    if code is None or not _SQLSTATE.fullmatch(code):
        raise UnavailableResponse(response.status_code, code)


def install_hook(http: httpx.AsyncClient) -> None:
    hooks = http.event_hooks
    if reject_unavailable not in hooks["response"]:
        http.event_hooks = {
            "request": hooks["request"],
            "response": [*hooks["response"], reject_unavailable],
        }
