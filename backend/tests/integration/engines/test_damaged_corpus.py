"""The damaged-file corpus through planning's inspect and cut and the default engine: every page
the repair kept is read, every page it lost is a failed page (page_lost) that says why, and a
file that cannot be read at all is refused with the code the corpus names."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from app.core.errors import OCRError
from app.engines.auto import AutoEngine
from app.pdf.inspect import inspect_pdf
from app.pdf.plan import PageRange
from app.pdf.split import split_pdf
from tests.corpus.damaged import build_all
from tests.pdf_factories import cer


def test_every_kept_page_is_read_and_every_lost_page_is_failed(tmp_path: Path) -> None:
    engine = AutoEngine()
    checked = 0
    for case in build_all(tmp_path):
        fixture = case.fixture
        if case.error_code is not None:
            with pytest.raises(OCRError) as refused:
                inspect_pdf(fixture.path)
            assert refused.value.code == case.error_code, fixture.name
            continue
        kept = tmp_path / f"{fixture.name}-repair"
        kept.mkdir()
        with capture_logs() as logs:  # as planning does: the repaired copy inspect made is cut
            info = inspect_pdf(fixture.path, keep_repair_in=kept)
            ((_, chunk),) = list(split_pdf(info.pages_file, [PageRange(0, 1, info.page_count)]))
        repairs = [entry for entry in logs if entry["event"] == "pdf_repaired"]
        assert len(repairs) == (info.readable is not None), fixture.name  # never rebuilt twice
        assert info.page_count == len(fixture.expected), fixture.name
        assert info.lost_pages == case.lost_pages, fixture.name
        pages = engine.recognize(chunk, 1)
        for page, expected in zip(pages, fixture.expected, strict=True):
            where = (fixture.name, page.page_number)
            if page.page_number in case.lost_pages:
                assert page.error is not None, where
                assert page.error.code == "page_lost", where
                assert page.error.message.startswith(
                    f"page {page.page_number} was lost in the damaged file: "
                )
                assert page.text == "", where
            else:
                assert page.error is None, (where, page.error)
                assert cer(expected, page.text) < 0.05, (where, page.text[:120])
        checked += 1
    assert checked >= 5  # the corpus's repairable files all ran
