"""The reference progress page: static HTML and JavaScript, no build step."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter(tags=["pages"])
_PAGE = (Path(__file__).resolve().parent.parent / "static" / "progress.html").read_text(encoding="utf-8")


@router.get("/ui/documents/{document_id}", response_class=HTMLResponse, include_in_schema=False)
async def progress_page(document_id: str) -> HTMLResponse:
    """The page reads the document id from its URL and the bearer token from the URL fragment
    (#token=...) or localStorage; it never sends the token anywhere but the API."""
    return HTMLResponse(_PAGE, headers={"Cache-Control": "no-cache"})
