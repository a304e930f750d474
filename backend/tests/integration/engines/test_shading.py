"""Unevenly lit scans, and shaded bands under black text, have their paper evened out before
tesseract reads them (app.engines._shading); evenly lit pages, and white text on grey, are read
as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw

from app.engines._shading import DARK, evened, is_uneven, paper_levels, shaded_bands
from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import font, make_scanned_pdf
from tests.corpus.noisy_scans import noisy_scan_pdf
from tests.corpus.orientation import scanner
from tests.corpus.shading import KINDS, banded_image, banded_scan_pdf, light, shaded_image, shaded_scan_pdf
from tests.integration.engines.test_denoise import _page_image
from tests.pdf_factories import cer


@pytest.mark.parametrize("kind", KINDS)
def test_an_unevenly_lit_scan_is_read_right(tmp_path: Path, kind: str) -> None:
    """Read as it came, the shaded text was lost: 56 % of the characters wrong under the lamp,
    5 % on the gutter, 10 % under the stain."""
    text = shaded_scan_pdf(tmp_path / "shaded.pdf", kind)

    (page,) = TesseractEngine().recognize((tmp_path / "shaded.pdf").read_bytes(), 1)

    assert cer(text, page.text) < 0.01
    assert page.confidence > 0.85


@pytest.mark.parametrize("kind", KINDS)
def test_the_evened_paper_is_even(kind: str) -> None:
    image, _ = shaded_image(kind)
    assert is_uneven(paper_levels(image, 300))

    flat, was = evened(image, 300)

    assert was
    assert not is_uneven(paper_levels(flat, 300))
    paper = paper_levels(flat, 300).histogram()
    # the darkest paper was LIGHT_LEFT (0.35) of white; now most of it is near white, and 95 %
    # of it over three quarters of white (the steep edge of a stain is evened less)
    assert sum(paper[240:]) > 0.5 * sum(paper)
    assert sum(paper[192:]) > 0.95 * sum(paper)


def test_evenly_lit_pages_are_read_as_they_came(tmp_path: Path) -> None:
    """A clean scan, an office scanner's (grey paper, specks of dust) and a grainy one: none is
    evened (each would pay about 0.04 s for nothing)."""
    make_scanned_pdf(tmp_path / "clean.pdf", pages=1, seed=2)
    noisy_scan_pdf(tmp_path / "grainy.pdf")
    clean = _page_image(tmp_path / "clean.pdf")
    for name, image in (
        ("clean", clean),
        ("office scanner", scanner(clean, seed=3)),
        ("grainy", _page_image(tmp_path / "grainy.pdf")),
    ):
        assert evened(image, 300) == (image, False), name


def test_mild_light_falloff_is_left_alone() -> None:
    """Paper a fifth darker at one side than the other: tesseract reads it as it is."""
    image, _ = shaded_image("lamp", darkest=0.8)

    assert evened(image, 300) == (image, False)


def test_what_is_darker_than_paper_is_left_as_it_is() -> None:
    """A black band with white text on it, on a lamp-lit page: the band is not paper, so it is
    not brightened (its grain would be, to white noise) and its white text stays."""
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    band = (300, 300, 2250, 1100)
    draw.rectangle(band, fill=DARK // 2)
    draw.text((400, 800), "WHITE ON BLACK", fill=255, font=font(28))
    for y in range(1300, 3000, 60):
        draw.text((300, y), "Prose on the lit part of the page, line after line.", fill=0, font=font(10))
    lit = ImageChops.multiply(page, light(page.size, "lamp"))

    flat, was = evened(lit, 300)

    assert was
    inside = (band[0] + 150, band[1] + 150, band[2] - 150, 800 - 150)  # the band, clear of its text
    assert ImageChops.difference(flat.crop(inside), lit.crop(inside)).getbbox() is None


def _white_text(image: Image.Image, band: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The band's part under its white text: from the band's left end to a letter's width past
    its last white letter (past that, the band's bare end may be evened)."""
    letters = image.crop(band).point([255 if level == 255 else 0 for level in range(256)]).getbbox()
    assert letters is not None
    return band[0], band[1], band[0] + letters[2] + 60, band[3]


def _read(path: Path) -> PageResult:
    (page,) = TesseractEngine().recognize(path.read_bytes(), 1)
    return page


@pytest.mark.parametrize("band", [100, 128, 160])
def test_black_text_on_shaded_bands_is_read_right(tmp_path: Path, band: int) -> None:
    """Read as it came, the text on every third line's band was lost (35 % of the page wrong):
    the band is narrower than the paper's measure, and tesseract's threshold made it black."""
    text = banded_scan_pdf(tmp_path / "banded.pdf", band)

    assert cer(text, _read(tmp_path / "banded.pdf").text) < 0.01


def test_rows_shaded_one_after_another_are_read_right(tmp_path: Path) -> None:
    """Every line on its band, 20 white pixels between: read as it came, nothing was read."""
    text = banded_scan_pdf(tmp_path / "rows.pdf", 128, every=1)

    assert cer(text, _read(tmp_path / "rows.pdf").text) < 0.01


@pytest.mark.parametrize("band", [80, 128])
def test_white_text_on_shaded_bands_stays(tmp_path: Path, band: int) -> None:
    """White on grey: evened, the band would go white and its text with it. Where its text is, such
    a band is left as it is (its bare end beyond may be evened), and it reads as before."""
    image, text = banded_image(band, text=255)
    flat, _ = evened(image, 300)

    lettered = _white_text(image, (280, 290, 2270, 360))  # the first band, where its text is
    assert ImageChops.difference(flat.crop(lettered), image.crop(lettered)).getbbox() is None
    image.save(tmp_path / "white.pdf", "PDF", resolution=300)
    assert cer(text, _read(tmp_path / "white.pdf").text) < 0.01


def test_a_white_header_over_shaded_rows_keeps_its_text(tmp_path: Path) -> None:
    """A table's dark header row in white, its other rows shaded light behind black: the rows are
    evened, the header is not."""
    image, text = banded_image(200, every=2, header=90)
    flat, was = evened(image, 300)

    header = _white_text(image, (280, 290, 2270, 360))
    assert was
    assert ImageChops.difference(flat.crop(header), image.crop(header)).getbbox() is None
    image.save(tmp_path / "header.pdf", "PDF", resolution=300)
    assert cer(text, _read(tmp_path / "header.pdf").text) < 0.01


def test_large_grey_letters_are_no_band() -> None:
    """A heading of 48-point letters in mid grey: its strokes are narrower than a band."""
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    draw.text((300, 200), "Annual Report 2026", font=font(48), fill=128)
    for y in range(600, 3000, 60):
        draw.text((300, y), "Prose on the page, line after line, in black.", fill=0, font=font(10))

    assert shaded_bands(page, 300) is None
    assert evened(page, 300) == (page, False)
