"""The reference progress page: static HTML and JavaScript, no build step, and the one library it
loads (supabase-js, for Realtime), shipped with it."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Header, Response, status
from fastapi.responses import HTMLResponse

router = APIRouter(tags=["pages"])
_STATIC = Path(__file__).resolve().parent.parent / "static"
_PAGE = (_STATIC / "progress.html").read_text(encoding="utf-8")
# supabase-js's browser bundle (static/vendor/supabase-js/README.md says which version).
_SUPABASE_JS = (_STATIC / "vendor" / "supabase-js" / "supabase.js").read_bytes()
_SUPABASE_JS_ETAG = '"' + hashlib.sha256(_SUPABASE_JS).hexdigest()[:32] + '"'


def _hashes(tag: str) -> str:
    """The CSP hash sources of the page's inline <tag> elements: only they may run or apply."""
    bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", _PAGE, flags=re.DOTALL)
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
        for body in bodies
    )


# The page runs its own script and style and the bundle it ships, nothing injected into it; it
# talks to the API and Supabase wherever its fragment says they are (http(s), and wss for
# Realtime); no other site may frame it (a token in its fragment is a session), and it sends no
# Referer (its URL holds the document id).
_SECURITY_HEADERS = {
    "Content-Security-Policy": "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' {_hashes('script')}",
            f"style-src {_hashes('style')}",
            "connect-src 'self' http: https: ws: wss:",
            "img-src 'self' data: blob:",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


@router.get("/ui/documents/{document_id}", response_class=HTMLResponse, include_in_schema=False)
async def progress_page(document_id: str) -> HTMLResponse:
    """The page reads the document id from its URL and the bearer token from the URL fragment
    (#token=...) or localStorage; it never sends the token anywhere but the API and, when given
    the project's URL and anon key (#supabaseUrl=...&anonKey=...), Supabase Realtime. Those and
    the API's origin (#api=...) are taken only in a fragment with the token, and remembered with it."""
    return HTMLResponse(_PAGE, headers={"Cache-Control": "no-cache", **_SECURITY_HEADERS})


@router.get("/ui/vendor/supabase-js/supabase.js", include_in_schema=False)
async def supabase_js(if_none_match: Annotated[str | None, Header()] = None) -> Response:
    """The bundle the page loads to join its Realtime channel; revalidated by ETag."""
    headers = {"ETag": _SUPABASE_JS_ETAG, "Cache-Control": "public, max-age=3600"}
    if if_none_match is not None and _SUPABASE_JS_ETAG in {t.strip() for t in if_none_match.split(",")}:
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    return Response(_SUPABASE_JS, media_type="text/javascript", headers=headers)
