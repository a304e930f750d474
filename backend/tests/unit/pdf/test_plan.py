from __future__ import annotations

import pytest

from app.core.errors import InvalidInputError
from app.pdf.plan import default_chunk_pages, plan_chunks


def covers(ranges: list, pages: int) -> bool:  # type: ignore[type-arg]
    numbers = [n for r in ranges for n in range(r.page_start, r.page_end + 1)]
    return numbers == list(range(1, pages + 1)) and [r.chunk_index for r in ranges] == list(
        range(len(ranges))
    )


@pytest.mark.parametrize("pages", [1, 2, 7, 20, 99, 2000, 3001])
@pytest.mark.parametrize("workers", [1, 2, 8])
def test_default_plan_covers_every_page_once(pages: int, workers: int) -> None:
    assert covers(plan_chunks(pages, None, workers, "auto"), pages)


def test_small_scan_keeps_every_worker_busy() -> None:
    ranges = plan_chunks(20, None, 2, "tesseract")
    assert len(ranges) >= 2 * 2  # several chunks per worker, so none idles while one finishes


def test_big_file_has_bounded_chunk_count() -> None:
    ranges = plan_chunks(2000, None, 2, "auto")
    assert len(ranges) <= 100
    assert default_chunk_pages(2000, 2) == 50


def test_explicit_chunk_pages_and_vision_multiples() -> None:
    assert [r.page_count for r in plan_chunks(10, 4, 2, "auto")] == [4, 4, 2]
    assert all(r.page_count % 5 == 0 for r in plan_chunks(23, 7, 2, "google-vision")[:-1])
    assert plan_chunks(23, 7, 2, "google-vision")[0].page_count == 10


@pytest.mark.parametrize(("pages", "chunk_pages"), [(0, None), (-3, None), (5, 0)])
def test_bad_plans(pages: int, chunk_pages: int | None) -> None:
    with pytest.raises(InvalidInputError):
        plan_chunks(pages, chunk_pages, 2, "auto")
