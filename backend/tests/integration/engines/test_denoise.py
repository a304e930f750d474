"""Grainy scans are smoothed before tesseract reads them (app.engines._denoise); clean ones are
read as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from app.engines._denoise import NOISY, denoised, noise_level
from app.engines._pages import load_page, open_pdf, page_image, render_dpi
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import make_scanned_pdf
from tests.corpus.noisy_scans import noisy_scan_pdf
from tests.pdf_factories import cer


def _page_image(path: Path) -> Image.Image:
    """The first page's image as the tesseract engine gets it."""
    with open_pdf(path.read_bytes()) as document:
        page = load_page(document, 0, 1)
        try:
            return page_image(document, page, 0, 1, render_dpi(page, 1))
        finally:
            page.close()


@pytest.mark.parametrize("seed", [0, 1])
def test_a_grainy_scan_is_read_right(tmp_path: Path, seed: int) -> None:
    """Read as it came, such a page gave no word right (CER 1.0), and at a confidence that had it
    read a second time, upside down: about 10 s on this one, a minute on others."""
    text = noisy_scan_pdf(tmp_path / "grainy.pdf", seed)

    (page,) = TesseractEngine().recognize((tmp_path / "grainy.pdf").read_bytes(), 1)

    assert cer(text, page.text) < 0.02
    assert page.confidence > 0.8


def test_only_grainy_pages_are_smoothed(tmp_path: Path) -> None:
    noisy_scan_pdf(tmp_path / "grainy.pdf")
    make_scanned_pdf(tmp_path / "clean.pdf", pages=1, seed=2)
    grainy, clean = _page_image(tmp_path / "grainy.pdf"), _page_image(tmp_path / "clean.pdf")

    assert noise_level(grainy) >= NOISY > noise_level(clean) == 0
    smoothed, was = denoised(grainy)
    assert was
    assert noise_level(smoothed) < noise_level(grainy) // 2
    assert denoised(clean) == (clean, False)
