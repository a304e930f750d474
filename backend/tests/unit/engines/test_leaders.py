"""Dotted leaders are found and painted with the paper before tesseract reads a page
(app.engines._leaders): every dot of each, counted, and nothing else on the page; rows of dots
that are not leaders (an ellipsis, a dotted underline, i's dots, small type) are left alone."""

from __future__ import annotations

import random
import re

import pytest
from PIL import Image, ImageChops, ImageDraw

from app.engines._leaders import Leader, without_leaders
from app.pdf.samples import font, page_text, render_scan
from tests.corpus.leaders import FACES, PITCH, contents_image, form_image, price_list_image

_ENTRY = re.compile(r"^(?P<title>.*?) (?P<dots>\.(?: ?\.)*) (?P<number>\S+)$")


def _ink(image: Image.Image) -> Image.Image:
    return image.point(lambda v: 255 if v < 128 else 0)


def _count(mask: Image.Image) -> int:
    return mask.histogram()[255]


def _dots(text: str) -> list[int]:
    """The number of dots in each line's leader, top to bottom."""
    return [found["dots"].count(".") for line in text.splitlines() if (found := _ENTRY.match(line))]


def _outside(image: Image.Image, leaders: tuple[Leader, ...], grow: int = 2) -> Image.Image:
    """image with the leaders' boxes (grown by a pixel or two) painted white: what is not theirs."""
    out = image.copy()
    for leader in leaders:
        out.paste(255, (leader.left - grow, leader.top - grow, leader.right + grow, leader.bottom + grow))
    return out


def _painted_exactly(page: Image.Image, leaders: tuple[Leader, ...], clean: Image.Image) -> None:
    """No ink is left in the leaders' boxes, and nothing outside them changed."""
    for leader in leaders:
        box = (leader.left, leader.top, leader.right, leader.bottom)
        assert _count(_ink(clean.crop(box))) == 0, leader
    assert ImageChops.difference(_outside(page, leaders), _outside(clean, leaders)).getbbox() is None


@pytest.mark.parametrize("style", sorted(PITCH))
@pytest.mark.parametrize("face", sorted(FACES))
@pytest.mark.parametrize("points", [9.0, 12.0])
def test_each_entrys_leader_is_found_with_every_dot_and_painted_out(
    points: float, face: str, style: str
) -> None:
    page, text = contents_image(3, points=points, face=face, style=style)
    clean, leaders = without_leaders(page, 300)
    ordered = sorted(leaders, key=lambda leader: leader.top)
    assert [leader.dots for leader in ordered] == _dots(text)
    assert {leader.spaced for leader in leaders} == {style != "close"}
    _painted_exactly(page, leaders, clean)


@pytest.mark.parametrize(("points", "face"), [(9.0, "serif"), (12.0, "sans")])
def test_a_leader_of_dashes_is_found_with_every_dash_and_painted_out(points: float, face: str) -> None:
    """Hyphens a quarter em apart ("- - -"): each twice as wide as it is tall or more."""
    page, text = contents_image(3, points=points, face=face, style="dashed")
    clean, leaders = without_leaders(page, 300)
    ordered = sorted(leaders, key=lambda leader: leader.top)
    expected = [line.count("-") for line in text.splitlines()]
    assert [leader.dots for leader in ordered] == expected
    assert {(leader.mark, leader.spaced) for leader in leaders} == {("-", True)}
    _painted_exactly(page, leaders, clean)


def test_long_dashes_are_not_a_leader() -> None:
    """A dashed rule of dashes 0.15 inches long: wider than a leader's."""
    page = Image.new("L", (2550, 600), 255)
    draw = ImageDraw.Draw(page)
    for x in range(300, 2200, 75):
        draw.rectangle((x, 300, x + 45, 303), fill=0)
    assert without_leaders(page, 300) == (page, ())


def test_the_leaders_of_a_price_list_and_of_a_form_are_found() -> None:
    """A form's dotted lines have nothing after them, and one line has two, each after a label."""
    for page, text in (price_list_image(), form_image()):
        clean, leaders = without_leaders(page, 300)
        expected = [run.count(".") for run in re.findall(r"\.(?: ?\.)+", text)]  # not a price's point
        assert sorted(leader.dots for leader in leaders) == sorted(expected)
        _painted_exactly(page, leaders, clean)


def test_a_leader_on_a_page_tilted_less_than_the_engine_straightens_is_found_whole() -> None:
    page, text = contents_image(4, points=11.0)
    tilted = page.rotate(0.7, resample=Image.Resampling.BICUBIC, fillcolor=255)
    _, leaders = without_leaders(tilted, 300)
    assert sorted(leader.dots for leader in leaders) == sorted(_dots(text))
    # Its line is followed from end to end: the dots' middle drifts down the page left to right.
    for leader in leaders:
        assert leader.last - leader.first == pytest.approx(-(leader.right - leader.left) * 0.0122, abs=4)


def test_a_leader_broken_by_a_speck_is_one_leader() -> None:
    """A speck that runs into a dot makes it no dot; the row's two pieces are one leader, and the
    speck is painted with it."""
    page, _ = contents_image(5, points=11.0)
    _, found = without_leaders(page, 300)
    first = min(found, key=lambda leader: leader.top)
    draw = ImageDraw.Draw(page)
    middle = (first.left + first.right) // 2
    draw.ellipse((middle - 6, first.top - 4, middle + 6, first.bottom + 2), fill=0)
    clean, leaders = without_leaders(page, 300)
    again = min(leaders, key=lambda leader: leader.top)
    assert (again.left, again.right) == (first.left, first.right)
    assert again.dots == first.dots
    assert len(leaders) == len(found)
    assert _count(_ink(clean.crop((first.left, first.top, first.right, first.bottom)))) == 0


def test_a_200_dpi_black_and_white_page_has_its_leaders_found() -> None:
    page, text = contents_image(6, points=10.0, dpi=200)
    fax = page.point(lambda v: 255 if v > 128 else 0)
    _, leaders = without_leaders(fax, 200)
    assert sorted(leader.dots for leader in leaders) == sorted(_dots(text))


def test_ellipses_a_dotted_underline_and_small_type_are_not_leaders() -> None:
    prose = render_scan(
        "Wait... she said. And then . . . nothing at all. On ..... and on.\n\n" + page_text(0, 1)
    )
    underlined = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(underlined)
    words = "Words with a dotted line under them"
    draw.text((300, 300), words, font=font(11), fill=0)
    for x in range(300, 300 + round(draw.textlength(words, font=font(11))) - 4, 12):
        draw.ellipse((x, 350, x + 4, 354), fill=0)
    for page in (prose, underlined, render_scan(page_text(0, 2), points=6)):
        clean, leaders = without_leaders(page, 300)
        assert leaders == ()
        assert clean is page


def test_dots_at_an_uneven_pitch_are_not_a_leader() -> None:
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    rng = random.Random(1)
    for y in range(300, 3000, 150):
        x, step = 300, 0
        while x < 2000:
            draw.ellipse((x, y, x + 5, y + 5), fill=0)
            step = rng.choice([pitch for pitch in (12, 20, 35, 60) if pitch != step])  # never twice alike
            x += step
    assert without_leaders(page, 300) == (page, ())


def test_a_coarse_screen_of_dots_is_a_pattern_and_left_as_it_is() -> None:
    """More than MAX_LEADERS rows of even dots, each clear of the next (two blocks of 155 rows,
    20 pixels apart): no page has so many leaders."""
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    for y in range(100, 3200, 20):
        for x in (*range(100, 1100, 15), *range(1300, 2450, 15)):
            draw.rectangle((x, y, x + 3, y + 3), fill=0)
    assert without_leaders(page, 300) == (page, ())


@pytest.mark.parametrize("mode", ["1", "RGB"])
def test_only_gray_pages_are_looked_at(mode: str) -> None:
    page, _ = contents_image(1)
    other = page.convert(mode)
    assert without_leaders(other, 300) == (other, ())
    assert without_leaders(Image.new("L", (5, 5), 255), 300)[1] == ()


def test_a_leaders_text_is_its_dots_close_or_spaced() -> None:
    close = Leader(0, 0, 100, 5, 4, False, 2.5, 2.5)
    assert close.text == "...."
    assert Leader(0, 0, 100, 5, 3, True, 2.5, 2.5).text == ". . ."
    assert Leader(0, 0, 100, 5, 3, True, 2.5, 2.5, "-").text == "- - -"
    assert Leader(0, 0, 100, 5, 3, True, 2.5, 2.5, "-").turned(200, 100).mark == "-"
    turned = Leader(10, 20, 110, 30, 4, False, 22.0, 28.0).turned(200, 100)
    assert (turned.left, turned.top, turned.right, turned.bottom) == (90, 70, 190, 80)
    assert (turned.first, turned.last) == (72.0, 78.0)
    assert turned.middle_at(90) == 72.0
    assert turned.middle_at(190) == 78.0
