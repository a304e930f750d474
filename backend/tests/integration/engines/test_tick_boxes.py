"""A form's empty boxes to tick read as "☐" beside their labels (app.engines._tick_boxes),
through the engine and real tesseract; the pages the benchmark reads have none."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.engines._tick_boxes import TEXT, without_boxes
from app.engines.tesseract import takes_boxes_off
from app.pdf.samples import DPI
from tests.corpus.forms import checkbox_form_image
from tests.integration.engines.scans import read_text
from tests.pdf_factories import cer


def _answered(read: str) -> int:
    """How many lines have a question's end and its two boxes and answers, in order."""
    return sum(1 for line in read.splitlines() if re.search(rf"\w\?\S? {TEXT} Yes {TEXT} No", line))


@pytest.mark.parametrize("points", [9.0, 12.0])
def test_a_forms_empty_boxes_read_as_boxes_before_their_answers(tmp_path: Path, points: float) -> None:
    """As tesseract read them: "OO" and "Ol" at 9 points, "L]" at 12 (9-10 % of the page wrong
    against its text with the boxes as "☐")."""
    page, text = checkbox_form_image(points=points)
    read = read_text(page, tmp_path / "form.pdf")
    assert _answered(read) == 20
    assert cer(text, read) < 0.01


def test_a_scanned_forms_boxes_read_as_boxes(tmp_path: Path, bench_samples: ModuleType) -> None:
    """Through the benchmark's economy scanner: 13 % wrong as tesseract read the boxes ("C)",
    "C1", "1)", run into the next word); what is left is a box or two the scan broke."""
    page, text = checkbox_form_image()
    read = read_text(bench_samples.degrade_scan(page, 3), tmp_path / "form.pdf")
    assert _answered(read) >= 18
    assert cer(text, read) < 0.04


def test_boxes_are_left_on_pages_in_a_cjk_script() -> None:
    assert takes_boxes_off("eng")
    assert takes_boxes_off("eng+deu")
    assert not takes_boxes_off("jpn")
    assert not takes_boxes_off("eng+chi_sim")


def test_the_benchmarks_pages_have_no_boxes(plain_pages: dict[str, Image.Image]) -> None:
    for name, page in plain_pages.items():
        assert without_boxes(page, DPI) == (page, ()), name
