"""Plan page ranges for a document."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.errors import InvalidInputError

CHUNKS_PER_WORKER = 16  # enough that the last chunks of a small file still keep every worker busy
MAX_CHUNK_PAGES = 50  # bounds the work one lost lease throws away, and the chunk count of a big file
VISION_PAGES_PER_REQUEST = 5  # the synchronous Vision API's limit per request


@dataclass(frozen=True, slots=True)
class PageRange:
    chunk_index: int
    page_start: int  # 1-based, inclusive
    page_end: int

    @property
    def page_count(self) -> int:
        return self.page_end - self.page_start + 1


def default_chunk_pages(page_count: int, workers: int) -> int:
    """ceil(pages / (workers * 16)), between 1 and 50.

    A 20-page scan on 2 workers gets 1-page chunks (20 chunks: the workers end
    within one page of each other, and a chunk's few database round trips are
    about 1 % of a page's OCR); a 2,000-page file gets 50-page chunks (40
    chunks: per-chunk overhead stays negligible even for text-layer pages).
    """
    return max(1, min(MAX_CHUNK_PAGES, math.ceil(page_count / (max(1, workers) * CHUNKS_PER_WORKER))))


def plan_chunks(page_count: int, chunk_pages: int | None, workers: int, engine: str) -> list[PageRange]:
    if page_count < 1:
        raise InvalidInputError("a document needs at least one page")
    if chunk_pages is not None and chunk_pages < 1:
        raise InvalidInputError("chunk_pages must be at least 1")
    size = chunk_pages or default_chunk_pages(page_count, workers)
    if engine == "google-vision":  # whole requests only: round up to a multiple of 5
        size = math.ceil(size / VISION_PAGES_PER_REQUEST) * VISION_PAGES_PER_REQUEST
    return [
        PageRange(index, start, min(start + size - 1, page_count))
        for index, start in enumerate(range(1, page_count + 1, size))
    ]
