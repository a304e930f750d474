from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.errors import InvalidInputError
from app.engines.specs import engine_spec
from app.pdf.plan import (
    MAX_CHUNK_PAGES,
    MAX_READ_CHUNK_PAGES,
    MIN_READ_RUN,
    PageRange,
    default_chunk_count,
    plan_chunks,
    plan_with_read_pages,
)

VISION = engine_spec("google-vision").pages_per_request


def assert_covers(ranges: list[PageRange], pages: int) -> None:
    """Consecutive 0-based indexes; pages 1..pages, each once, in order."""
    assert [r.chunk_index for r in ranges] == list(range(len(ranges)))
    assert [n for r in ranges for n in range(r.page_start, r.page_end + 1)] == list(range(1, pages + 1))
    assert all(r.page_end >= r.page_start >= 1 for r in ranges)


@pytest.mark.parametrize("pages", [1, 2, 3, 7, 20, 99, 2000, 2001, 3001, 12_345])
@pytest.mark.parametrize("workers", [1, 2, 3, 8, 64])
@pytest.mark.parametrize("pages_per_request", [1, VISION])
def test_default_plan_covers_every_page_once(pages: int, workers: int, pages_per_request: int) -> None:
    ranges = plan_chunks(pages, None, workers, pages_per_request)
    assert_covers(ranges, pages)
    assert max(r.page_count for r in ranges) <= MAX_CHUNK_PAGES


def test_a_20_page_scan_keeps_two_workers_busy_to_the_end() -> None:
    ranges = plan_chunks(20, None, 2)
    assert len(ranges) >= 2 * 2  # at least two chunks per worker
    # Each round of two chunks takes half the pages left, none more than an even eighth: the last
    # chunks are single pages.
    assert [r.page_count for r in ranges] == [3, 3, 3, 3, 2, 2, 1, 1, 1, 1]
    # Workers pull chunks in order as they finish: alternate pulls give each worker 10 pages.
    assert sum(r.page_count for r in ranges[0::2]) == sum(r.page_count for r in ranges[1::2]) == 10


@pytest.mark.parametrize("workers", [1, 2, 4, 8])
def test_small_files_give_every_worker_a_chunk_and_end_on_single_pages(workers: int) -> None:
    sizes = [r.page_count for r in plan_chunks(20, None, workers)]
    assert len(sizes) >= max(2, workers)
    assert sizes == sorted(sizes, reverse=True)  # largest first
    assert sizes[-1] == 1  # the last chunk, the one the others may wait for, is a single page


@given(st.integers(1, 20_000), st.integers(1, 300))
def test_tapered_plans_never_grow_and_stay_bounded(pages: int, workers: int) -> None:
    sizes = [r.page_count for r in plan_chunks(pages, None, workers)]
    assert sum(sizes) == pages
    assert sizes == sorted(sizes, reverse=True)
    assert max(sizes) <= MAX_CHUNK_PAGES
    # at most the larger of 200, two per worker and what 50-page chunks need, and a last short one
    assert len(sizes) <= max(200, 2 * workers, math.ceil(pages / MAX_CHUNK_PAGES)) + 1


@pytest.mark.parametrize(
    ("workers", "chunks", "size"), [(1, 43, 50), (2, 45, 50), (16, 88, 32), (64, 200, 10)]
)
def test_a_2000_page_file_has_a_bounded_chunk_count(workers: int, chunks: int, size: int) -> None:
    ranges = plan_chunks(2000, None, workers)
    assert len(ranges) == chunks
    assert max(r.page_count for r in ranges) == size


def test_chunk_count_rules() -> None:
    assert default_chunk_count(1, 8) == 1  # never more chunks than pages
    assert default_chunk_count(20, 0) == 4  # workers below 1 count as 1
    assert (
        default_chunk_count(2000, 1000) == 2000
    )  # a huge pool still gets two chunks per worker, capped by pages
    assert default_chunk_count(100_000, 2) == 2000  # past 10,000 pages the 50-page cap rules


def test_explicit_chunk_pages() -> None:
    assert [r.page_count for r in plan_chunks(10, 4, 2)] == [4, 4, 2]
    assert [r.page_count for r in plan_chunks(3, 10, 2)] == [3]
    assert plan_chunks(2, 1, 2) == [PageRange(0, 1, 1), PageRange(1, 2, 2)]


@pytest.mark.parametrize(
    ("pages", "chunk_pages", "workers"),
    [(23, 7, 2), (23, None, 2), (20, None, 2), (2000, None, 64), (9, 1, 4)],
)
def test_google_vision_chunks_are_multiples_of_five(
    pages: int, chunk_pages: int | None, workers: int
) -> None:
    ranges = plan_chunks(pages, chunk_pages, workers, VISION)
    assert_covers(ranges, pages)
    assert all(r.page_count % 5 == 0 for r in ranges[:-1])
    assert ranges[-1].page_count <= ranges[0].page_count


def test_google_vision_rounds_up() -> None:
    assert plan_chunks(23, 7, 2, VISION)[0].page_count == 10
    assert [r.page_count for r in plan_chunks(20, None, 2, VISION)] == [5, 5, 5, 5]


def test_plan_is_pure() -> None:
    assert plan_chunks(77, None, 3) == plan_chunks(77, None, 3)


@pytest.mark.parametrize(("pages", "chunk_pages"), [(0, None), (-3, None), (5, 0), (5, -1)])
def test_bad_plans(pages: int, chunk_pages: int | None) -> None:
    with pytest.raises(InvalidInputError):
        plan_chunks(pages, chunk_pages, 2)


# -- pages read at planning ------------------------------------------------------------


@given(
    read=st.lists(st.booleans(), min_size=1, max_size=400),
    chunk_pages=st.one_of(st.none(), st.integers(1, 60)),
    workers=st.integers(1, 16),
    batch=st.sampled_from([1, 5]),
)
def test_read_plans_cover_every_page_once_and_keep_read_pages_apart(
    read: list[bool], chunk_pages: int | None, workers: int, batch: int
) -> None:
    planned = plan_with_read_pages(read, chunk_pages, workers, batch)
    ranges = [r for r, _ in planned]
    assert [r.chunk_index for r in ranges] == list(range(len(ranges)))
    assert [p for r in ranges for p in range(r.page_start, r.page_end + 1)] == list(range(1, len(read) + 1))
    for page_range, is_read in planned:
        pages = read[page_range.page_start - 1 : page_range.page_end]
        if is_read:  # a read chunk holds only read pages, and no more than its cap
            assert all(pages)
            assert page_range.page_count <= MAX_READ_CHUNK_PAGES


@given(
    pages=st.integers(1, 3000),
    chunk_pages=st.one_of(st.none(), st.integers(1, 60)),
    workers=st.integers(1, 64),
)
def test_with_no_page_read_the_plan_is_plan_chunks(pages: int, chunk_pages: int | None, workers: int) -> None:
    planned = plan_with_read_pages([False] * pages, chunk_pages, workers)
    assert [r for r, _ in planned] == plan_chunks(pages, chunk_pages, workers)
    assert not any(is_read for _, is_read in planned)


def test_a_born_digital_document_is_a_few_read_chunks() -> None:
    planned = plan_with_read_pages([True] * 2000, None, 2)
    assert [(r.page_start, r.page_end, f) for r, f in planned] == [
        (1, 500, True),
        (501, 1000, True),
        (1001, 1500, True),
        (1501, 2000, True),
    ]


def test_a_short_run_of_read_pages_between_scans_stays_with_them() -> None:
    read = [False] * 4 + [True] * (MIN_READ_RUN - 1) + [False] * 4 + [True] * MIN_READ_RUN
    planned = plan_with_read_pages(read, None, 1)
    assert [(r.page_start, r.page_end) for r, f in planned if f] == [(16, 15 + MIN_READ_RUN)]
    assert sum(r.page_count for r, f in planned if not f) == 15  # 4 scans, 7 read pages, 4 scans
