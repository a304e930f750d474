"""An engine's pages as a chunk result stores them (one mapping for workers and the planner)."""

from __future__ import annotations

from collections.abc import Iterable

from app.engines.base import PageResult
from app.models.results import PageFailure, PageText, WordBox


def page_texts(pages: Iterable[PageResult]) -> tuple[PageText, ...]:
    return tuple(
        PageText(
            page_number=p.page_number,
            text=p.text,
            confidence=p.confidence,
            source=p.source,
            words=tuple(WordBox(text=w.text, confidence=w.confidence, bbox=w.bbox) for w in p.words) or None,
            error=PageFailure(code=p.error.code, message=p.error.message) if p.error else None,
            rotation=p.rotation,
            skew=p.skew,
            dpi=p.dpi,
        )
        for p in pages
    )
