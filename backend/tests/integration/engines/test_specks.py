"""Dusty scans read right once their lone specks are painted out (app.engines._specks), and the
pages the benchmark reads are left as they came."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.engines._pages import open_pdf
from app.engines._specks import despeckled
from app.engines.tesseract import _render, _Rendered
from app.pdf.samples import DPI, page_text, render_scan, wrapped
from tests.corpus.specks import dusted, dusty_fax, dusty_page
from tests.integration.engines.scans import read_text
from tests.pdf_factories import cer


@pytest.mark.parametrize("seed", [1, 2])
def test_a_dusty_page_is_read_right(tmp_path: Path, seed: int) -> None:
    """Read as it came: 5.8 % and 6.2 % of the characters wrong. What is left touches or nears
    letters (a speck in a word's gap is read as a period)."""
    dirty, _, text = dusty_page(seed)
    assert cer(text, read_text(dirty, tmp_path / "dusty.pdf")) < 0.04


def test_a_dusty_economy_scan_is_read_right(tmp_path: Path, bench_samples: ModuleType) -> None:
    """Small type through the benchmark's economy scan (blur, grey paper, noise) under 2,000
    specks: read as it came, 4.9 % wrong."""
    text = page_text(2, 5)
    scan = bench_samples.degrade_scan(dusted(render_scan(text, points=8), 5, specks=2000), 7)
    assert cer(wrapped(text), read_text(scan, tmp_path / "economy.pdf")) < 0.025


@pytest.mark.parametrize("seed", [1, 2])
def test_a_dusty_fax_is_read_right(tmp_path: Path, seed: int) -> None:
    """A 200 DPI black and white page with 2,500 specks of a pixel or two: read as it came,
    2.1 % and 3.3 % wrong."""
    fax, _, text = dusty_fax(seed)
    assert cer(text, read_text(fax, tmp_path / "fax.pdf", dpi=200)) < 0.015


def test_the_engine_paints_the_dust_and_says_so(tmp_path: Path) -> None:
    dirty, _, _ = dusty_page(1)
    dirty.save(tmp_path / "dusty.pdf", "PDF", resolution=DPI)
    with open_pdf((tmp_path / "dusty.pdf").read_bytes()) as document:
        rendered = _render(document, 0, 1)
    assert isinstance(rendered, _Rendered)
    assert rendered.despeckled


def test_the_benchmarks_pages_and_the_sample_scan_come_back_as_they_were(
    plain_pages: dict[str, Image.Image],
) -> None:
    """The economy scan has 40-120 specks of its own, under MIN_SPECKS a square inch."""
    for name, image in plain_pages.items():
        assert despeckled(image, 300) == (image, False), name
