"""The paper's measure (app.engines._shading): when a page's paper counts as uneven, and the
division by it."""

from __future__ import annotations

import random

from PIL import Image, ImageChops, ImageMath

from app.engines._shading import (
    DARK,
    STRIP_ROWS,
    UNEVEN,
    _divided,
    is_uneven,
    paper_levels,
)


def _paper(levels: list[int]) -> Image.Image:
    """A paper map of one column per level, each 10 pixels tall."""
    image = Image.new("L", (len(levels), 10))
    image.putdata([level for _ in range(10) for level in levels])
    return image


def test_uneven_paper_is_a_spread_of_uneven_levels_or_more() -> None:
    assert not is_uneven(_paper([230] * 100))
    assert is_uneven(_paper([230 - UNEVEN] * 10 + [230] * 90))
    assert not is_uneven(_paper([231 - UNEVEN] * 10 + [230] * 90))
    # a few darker points (under 5 % of the page: a smudge) do not make it uneven
    assert not is_uneven(_paper([100] * 4 + [230] * 96))


def test_what_is_darker_than_dark_is_not_paper() -> None:
    """A black band, a photograph's shadows or an inverted page's background next to white paper
    is no shading."""
    assert not is_uneven(_paper([DARK - 1] * 50 + [250] * 50))
    assert not is_uneven(_paper([0] * 100))


def test_the_paper_is_found_between_lines_of_text() -> None:
    """Lines of black text on white paper (letter height ~ 40 px, 60 px apart at 300 DPI): the
    paper measured around every point is white, not the grey a line averages to."""
    page = Image.new("L", (2550, 3300), 255)
    for top in range(300, 3000, 60):
        page.paste(0, (300, top, 2250, top + 40))

    levels = paper_levels(page, 300)

    assert levels.getextrema() == (255, 255)


def test_a_page_is_divided_by_its_paper_a_band_at_a_time_without_seams() -> None:
    """Band by band (STRIP_ROWS rows, so a 160-megapixel page is never held in floats), as the
    whole page at once would be, to within a grey level."""
    rng = random.Random(7)
    height = STRIP_ROWS * 3 + 17
    page = Image.frombytes("L", (300, height), rng.randbytes(300 * height))
    paper = Image.linear_gradient("L").resize((40, height // 8)).point(lambda level: 100 + level // 2)

    flat = _divided(page, paper)

    whole = ImageMath.lambda_eval(
        lambda m: m["convert"](m["page"] * 255 / m["paper"], "L"),
        page=page,
        paper=paper.resize(page.size, Image.Resampling.BILINEAR),
    )
    assert ImageChops.difference(flat, whole).getextrema()[1] <= 1
    # brightened where the paper is dark, clipped to white where the page is lighter than it
    assert flat.getextrema()[1] == 255
