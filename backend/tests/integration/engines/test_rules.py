"""Thin rules that touch text are painted out before tesseract reads a scan (app.engines._rules),
and rules clear of it are left where they are."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from app.engines._pages import open_pdf
from app.engines._rules import unruled
from app.engines.tesseract import TesseractEngine, _render, _Rendered
from tests.corpus.rules import KINDS, ruled_lines_image, ruled_table_image, save_scan
from tests.integration.engines.test_denoise import _page_image
from tests.pdf_factories import cer


def _read(path: Path) -> str:
    (page,) = TesseractEngine().recognize(path.read_bytes(), 1)
    return page.text


@pytest.mark.parametrize("kind", KINDS)
def test_text_touching_a_rule_is_read_right(tmp_path: Path, kind: str) -> None:
    """Read as they came: underlined at the letters' feet, 100 % of the characters wrong (nothing
    read); a pixel below them, 21 %; every third line underlined twice, 3 %; every third line
    struck through, 23 %."""
    image, text = ruled_lines_image(kind, every=1 if kind in ("underlined", "a_pixel_below") else 3)

    assert cer(text, _read(save_scan(image, tmp_path / "ruled.pdf"))) < 0.01


@pytest.mark.parametrize("seed", [1, 2])
def test_underlined_text_on_an_economy_scan_is_read(
    tmp_path: Path, seed: int, bench_samples: ModuleType
) -> None:
    """Blurred, grey and a fraction of a degree askew (not enough to be straightened for its own
    sake): every underlined line was lost (100 %), even with three pixels between rule and
    letters, which the blur fills with grey."""
    image, text = ruled_lines_image("underlined")
    apart, apart_text = ruled_lines_image("clear_below")

    assert cer(text, _read(save_scan(bench_samples.degrade_scan(image, seed), tmp_path / "scan.pdf"))) < 0.05
    assert (
        cer(apart_text, _read(save_scan(bench_samples.degrade_scan(apart, seed), tmp_path / "apart.pdf")))
        < 0.05
    )


@pytest.mark.parametrize("tilt", [0.4, 1.5])
def test_a_tilted_page_of_underlined_lines_is_read_right(tmp_path: Path, tilt: float) -> None:
    """Tilted 0.4 degrees (not straightened but for its rules) the page read 36 % wrong, and 1.5
    degrees (straightened) 100 %."""
    image, text = ruled_lines_image("underlined")
    tilted = image.rotate(tilt, resample=Image.Resampling.BICUBIC, fillcolor=255)

    assert cer(text, _read(save_scan(tilted, tmp_path / "tilted.pdf"))) < 0.01


def test_a_page_of_underlined_lines_lying_on_its_side_is_read_right(tmp_path: Path) -> None:
    """Its rules run up and down the image: they are looked for that way."""
    image, text = ruled_lines_image("underlined")
    path = save_scan(image.transpose(Image.Transpose.ROTATE_90), tmp_path / "sideways.pdf")

    with open_pdf(path.read_bytes()) as document:
        rendered = _render(document, 0, 1)
    assert isinstance(rendered, _Rendered)
    assert rendered.sideways
    assert rendered.unruled
    assert cer(text, _read(path)) < 0.01


def test_a_table_whose_rules_are_clear_of_its_text_is_left_as_it_is(tmp_path: Path) -> None:
    """Without its rules tesseract reads a table column by column: a table like this one read
    71 % wrong with every rule painted out, 0.3 % with its rules."""
    image, text = ruled_table_image()
    path = save_scan(image, tmp_path / "table.pdf")

    assert unruled(_page_image(path), 300)[1] is False
    assert cer(text, _read(path)) < 0.02


def test_a_table_whose_text_sits_on_its_rules_is_left_as_it_is(tmp_path: Path) -> None:
    """Its rules touch its text, but rules up and down the page meet them: tesseract finds the
    table from its grid and reads it row by row. With its rules painted out this page read 73 %
    wrong, column by column."""
    image, text = ruled_table_image(on_rules=True)
    path = save_scan(image, tmp_path / "table.pdf")

    assert unruled(_page_image(path), 300)[1] is False
    assert cer(text, _read(path)) < 0.2


def test_pages_without_rules_come_back_as_they_were(plain_pages: dict[str, Image.Image]) -> None:
    """The app's sample scans (serif print whose letters' feet meet on a row), the benchmark's
    economy and dense scans: no run of ink on them is taken for a rule."""
    for name, image in plain_pages.items():
        assert unruled(image, 300) == (image, False), name
