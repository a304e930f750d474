"""Lone specks of dust are painted with the paper before tesseract reads a page
(app.engines._specks); text, its periods and a leader's dots are not, and a page with little
dust is left as it came."""

from __future__ import annotations

import pytest
from PIL import Image, ImageChops, ImageDraw

from app.engines._specks import despeckled
from app.pdf.samples import page_text, render_scan
from tests.corpus.specks import contents_page, dusted, dusty_fax, dusty_page


def _ink(image: Image.Image) -> Image.Image:
    return image.convert("L").point(lambda v: 255 if v < 128 else 0)


def _count(mask: Image.Image) -> int:
    return mask.histogram()[255]


def _cleaned(clean: Image.Image, dirty: Image.Image, dpi: int = 300) -> float:
    """Despeckles dirty, a page as clean with dust on it: asserts it was cleaned and lost no pixel
    of clean's ink, and gives the share of the dust's ink it lost."""
    out, was = despeckled(dirty, dpi)
    assert was
    lost = ImageChops.subtract(_ink(dirty), _ink(out))  # ink in dirty that out has not
    assert _count(ImageChops.darker(_ink(clean), lost)) == 0
    dust = ImageChops.subtract(_ink(dirty), _ink(clean))
    return _count(ImageChops.darker(dust, lost)) / _count(dust)


@pytest.mark.parametrize("points", [11.5, 8.0])
@pytest.mark.parametrize("seed", [1, 2])
def test_lone_specks_are_painted_and_no_letter_or_period_is(seed: int, points: float) -> None:
    """Every pixel of the page's own ink is kept: periods (lone but for their word), i's dots and
    commas among them; most of the dust's is painted (what is left touches or nears a letter)."""
    dirty, clean, _ = dusty_page(seed, points=points)
    assert _cleaned(clean, dirty) > 0.6


def test_a_speck_just_past_a_period_goes_and_the_period_stays() -> None:
    """The cells beside a lone speck are painted with it, but not one with ink of its own: here
    the far side of a period (5 x 5 pixels) whose own word (a stem 3 cells to its left) is out
    of the speck's reach, with the speck a cell past it, in cells of 4 x 4 pixels at 300 DPI."""
    clean = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(clean)
    for top in range(400, 3000, 200):
        draw.rectangle((988, top - 20, 990, top + 9), fill=0)  # the word's last stem
        draw.rectangle((1000, top, 1004, top + 4), fill=0)  # its period, across two cells
    dirty = dusted(clean, 4)
    draw = ImageDraw.Draw(dirty)
    for top in range(400, 3000, 200):
        draw.rectangle((970, top - 40, 1040, top + 40), fill=255)  # no dust near but the speck
        draw.rectangle((988, top - 20, 990, top + 9), fill=0)
        draw.rectangle((1000, top, 1004, top + 4), fill=0)
        draw.rectangle((1009, top + 1, 1010, top + 2), fill=0)  # the speck, in the next cell but one
    _cleaned(clean, dirty)
    out, _ = despeckled(dirty, 300)
    assert all(out.getpixel((1009, top + 1)) > 128 for top in range(400, 3000, 200))


def test_a_leaders_dots_are_kept_while_the_dust_around_them_goes() -> None:
    """A table of contents' dotted leaders are rows of marks as small and as far from letters as
    dust: each is kept when it is one of a row (its end dots too), dust beside them is not."""
    for leader in (" .", "."):
        clean, _ = contents_page(leader=leader)
        assert _cleaned(clean, dusted(clean, 7)) > 0.5, leader
        assert despeckled(clean, 300) == (clean, False)  # nor cleaned alone: no dust, no cleaning


def test_a_fax_at_200_dpi_is_cleaned_in_cells_of_its_own_size() -> None:
    fax, clean, _ = dusty_fax(1)
    assert _cleaned(clean, fax.convert("L"), dpi=200) > 0.6


def test_a_page_with_little_dust_is_left_as_it_came() -> None:
    """Below MIN_SPECKS lone marks a square inch a page is not touched: what is lone on a page
    without much dust (a dash alone in a table's cell, a middle dot between spaces) is kept."""
    clean = render_scan(page_text(0, 3))
    assert despeckled(clean, 300) == (clean, False)
    few = dusted(clean, 3, specks=150)
    assert despeckled(few, 300) == (few, False)


@pytest.mark.parametrize("mode", ["1", "RGB"])
def test_only_gray_pages_are_looked_at(mode: str) -> None:
    page = dusty_page(1)[0].convert(mode)
    assert despeckled(page, 300) == (page, False)


@pytest.mark.parametrize("size", [(1, 1), (3, 500), (8, 8)])
def test_tiny_pages_are_left_or_cleaned_without_error(size: tuple[int, int]) -> None:
    page = Image.new("L", size, 0)
    out, _ = despeckled(page, 300)
    assert out.size == size
