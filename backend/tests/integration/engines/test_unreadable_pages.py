"""The default engine on the unreadable-pages corpus: each page that can be read is read, each
that cannot is a failed page with the code the corpus names, in one pass over the chunk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from app.engines._limits import Limits
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from tests.corpus.unreadable_pages import Unreadable, huge_and_bomb_among_small, poster_among_small
from tests.pdf_factories import cer

MIB = 1 << 20


@pytest.mark.parametrize("build", [huge_and_bomb_among_small, poster_among_small], ids=lambda b: b.__name__)
def test_auto_reads_what_it_can_and_fails_the_rest(
    build: Callable[[Path], Unreadable], tmp_path: Path
) -> None:
    case = build(tmp_path)
    # An OCR process under the default limits, as a worker runs it.
    pool = make_ocr_pool(1, Limits(page_decoded_bytes=512 * MIB, address_space_bytes=2048 * MIB))
    try:
        pages, _ = pool.submit(recognize_in_process, "auto", case.fixture.path.read_bytes(), 1).result(
            timeout=120
        )
    finally:
        stop_ocr_pool(pool)
    assert [p.page_number for p in pages] == list(range(1, len(case.fixture.expected) + 1))
    for page, expected in zip(pages, case.fixture.expected, strict=True):
        if page.page_number in case.failed:
            assert page.error is not None, page.page_number
            assert page.error.code == case.failed[page.page_number]
            assert page.error.message.startswith(f"page {page.page_number}")
            assert (page.text, page.words) == ("", ())
        else:
            assert page.error is None, page.error
            assert cer(expected, page.text) < 0.1, (page.page_number, page.text[:200])
