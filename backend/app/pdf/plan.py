"""Plan page ranges (chunks) for a document: a pure function of the page count, the workers and the
pages the engine takes per request."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.core.errors import InvalidInputError

CHUNKS_PER_WORKER = 4  # default_chunk_count: a worker's share in 4 pieces
MIN_CHUNKS_PER_WORKER = 2  # even a huge pool gets two chunks per worker before MAX_CHUNKS applies
MAX_CHUNKS = 200  # per-chunk costs (a row, an upload, a job, a tesseract start) stay small in total
MAX_CHUNK_PAGES = 50  # bounds the work one lost lease throws away
MIN_READ_RUN = 8  # fewer pages read at planning, beside pages to OCR, stay in those pages' chunk
MAX_READ_CHUNK_PAGES = 500  # a chunk read at planning: its result file stays a few MB


@dataclass(frozen=True, slots=True)
class PageRange:
    chunk_index: int  # 0-based
    page_start: int  # 1-based, inclusive
    page_end: int  # 1-based, inclusive

    @property
    def page_count(self) -> int:
        return self.page_end - self.page_start + 1


def default_chunk_count(page_count: int, workers: int) -> int:
    """How many equal chunks the pages left to OCR beside pages read at planning are cut into
    (plan_with_read_pages; a document with no page read tapers, plan_chunks).

    n = workers * 4, at most max(200, workers * 2), at least ceil(pages / 50),
    never more than the pages. Examples: 20 pages on 2 workers -> 8 chunks of
    2-3 pages (4 per worker); 2,000 pages on 2 workers -> 40 chunks of 50;
    2,000 pages on 64 workers -> 200 chunks of 10. Beyond 10,000 pages the
    50-page cap wins and the count grows (200 chunks of 50 at 10,000 pages).
    """
    workers = max(1, workers)
    wanted = min(workers * CHUNKS_PER_WORKER, max(MAX_CHUNKS, workers * MIN_CHUNKS_PER_WORKER))
    return min(page_count, max(wanted, math.ceil(page_count / MAX_CHUNK_PAGES)))


def plan_chunks(
    page_count: int, chunk_pages: int | None, workers: int, pages_per_request: int = 1
) -> list[PageRange]:
    """Cover pages 1..page_count with consecutive ranges, in order, each page exactly once.

    With chunk_pages, every chunk has that many pages but the last. Without
    it, chunks taper (_tapered): large first, single pages last. Why this shape:

    - every worker stays busy to the end: workers pull chunks in order as they
      finish, so they end within about one chunk of each other, and the last
      chunks are the smallest (a 20-page scan on 2 workers: 3, 3, 3, 3, 2, 2,
      1, 1, 1, 1; with 8 equal chunks of 2-3 pages one OCR process sat idle
      for up to a 2-page chunk's time at the end);
    - per-chunk overhead stays negligible: each chunk costs a database row,
      an upload and a queue job (tens of milliseconds; tesseract's model is
      loaded once per OCR process, not per chunk), and chunks are never
      smaller than a 200th of the document (or of two chunks per worker, for a
      large pool), so a 2,000-page file on 2 workers has 45 chunks; a chunk
      never exceeds 50 pages, the most work one lost lease can throw away, nor
      an even share in default_chunk_count() pieces (4 per worker), so the
      first chunks are no larger than equal chunks were.

    For an engine that takes several pages per request (pages_per_request,
    from its app.engines.specs entry: google-vision, 5), chunk sizes are
    multiples of that number, rounded up, so no request is sent half-empty
    but the last.
    """
    if page_count < 1:
        raise InvalidInputError("a document needs at least one page")
    if chunk_pages is not None and chunk_pages < 1:
        raise InvalidInputError("chunk_pages must be at least 1")
    if pages_per_request < 1:
        raise InvalidInputError("pages_per_request must be at least 1")
    batch = pages_per_request
    if batch > 1:
        size = chunk_pages or math.ceil(page_count / default_chunk_count(page_count, workers))
        return _uniform(page_count, math.ceil(size / batch) * batch)
    if chunk_pages is not None:
        return _uniform(page_count, chunk_pages)
    return _tapered(page_count, workers)


def _uniform(page_count: int, size: int) -> list[PageRange]:
    return [
        PageRange(index, start, min(start + size - 1, page_count))
        for index, start in enumerate(range(1, page_count + 1, size))
    ]


def _tapered(page_count: int, workers: int) -> list[PageRange]:
    """Rounds of `workers` equal chunks, each round sharing half the pages left among them
    (factoring: Hummel, Schonberg and Flynn, CACM 35(8), 1992), between a floor that bounds the
    count and the even share of default_chunk_count()."""
    workers = max(1, workers)
    smallest = math.ceil(page_count / max(MAX_CHUNKS, workers * MIN_CHUNKS_PER_WORKER))
    # No chunk larger than an even share in default_chunk_count() pieces: what planning holds of
    # a file in memory at a time (a chunk's PDF, cut and stored) stays what it was.
    largest = min(MAX_CHUNK_PAGES, math.ceil(page_count / default_chunk_count(page_count, workers)))
    sizes: list[int] = []
    left = page_count
    while left > 0:
        size = min(largest, max(smallest, math.ceil(left / (2 * workers))))
        for _ in range(min(workers, math.ceil(left / size))):
            sizes.append(min(size, left))
            left -= sizes[-1]
    return _consecutive(sizes)


def _even(page_count: int, chunks: int) -> list[PageRange]:
    """chunks ranges whose sizes differ by at most one, the larger ones first."""
    base, larger = divmod(page_count, chunks)
    return _consecutive([base + (1 if index < larger else 0) for index in range(chunks)])


def _consecutive(sizes: Sequence[int]) -> list[PageRange]:
    """Ranges of these sizes, in order, from page 1."""
    ranges = []
    start = 1
    for index, size in enumerate(sizes):
        ranges.append(PageRange(index, start, start + size - 1))
        start += size
    return ranges


def plan_with_read_pages(
    read: Sequence[bool], chunk_pages: int | None, workers: int, pages_per_request: int = 1
) -> list[tuple[PageRange, bool]]:
    """Cover pages 1..len(read) like plan_chunks, for a document whose page i+1 was read at
    planning when read[i] (its text layer is its text): (range, read) for each chunk, in order.

    Runs of read pages are chunks of their own, of up to MAX_READ_CHUNK_PAGES pages, that no
    worker ever sees. The pages left to OCR are shared as plan_chunks shares a document of that
    many pages (the same sizes, the same batches), each run of them cut on its own; with no page
    read, the plan is plan_chunks' exactly. A run of fewer than MIN_READ_RUN read pages beside
    pages to OCR joins them (a chunk boundary there would cost more than reading those pages
    again in the worker, which decides per page by the same rule).
    """
    if not read:
        raise InvalidInputError("a document needs at least one page")
    runs = _runs(read)
    if any(not is_read for is_read, _, _ in runs):  # short read runs join the pages to OCR
        runs = _runs(
            [is_read and length >= MIN_READ_RUN for is_read, _, length in runs for _ in range(length)]
        )
    to_ocr = sum(length for is_read, _, length in runs if not is_read)
    planned: list[tuple[PageRange, bool]] = []
    for is_read, first, length in runs:
        if is_read:
            pieces = _even(length, math.ceil(length / MAX_READ_CHUNK_PAGES))
        elif length == len(read):
            pieces = plan_chunks(length, chunk_pages, workers, pages_per_request)
        else:
            size = chunk_pages or math.ceil(to_ocr / default_chunk_count(to_ocr, workers))
            if pages_per_request > 1:
                pieces = plan_chunks(length, size, workers, pages_per_request)
            else:
                pieces = _even(length, math.ceil(length / size))
        for piece in pieces:
            index = len(planned)
            shifted = replace(
                piece, chunk_index=index, page_start=piece.page_start + first, page_end=piece.page_end + first
            )
            planned.append((shifted, is_read))
    return planned


def _runs(flags: Sequence[bool]) -> list[tuple[bool, int, int]]:
    """(flag, pages before the run, run length) for each run of equal flags, in order."""
    runs: list[tuple[bool, int, int]] = []
    for position, flag in enumerate(flags):
        if runs and runs[-1][0] == flag:
            runs[-1] = (flag, runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((flag, position, 1))
    return runs
