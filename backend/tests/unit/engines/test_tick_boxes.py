"""Empty boxes to tick are found and painted with the paper, and put back as words in the lines
they stand on (app.engines._tick_boxes); letters, boxes with something in them, a table's cells
and a pattern of squares are not boxes."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from app.engines._tesseract_exec import TsvWord, words_to_text
from app.engines._tick_boxes import MAX_BOXES, TEXT, TickBox, box_words, without_boxes
from tests.corpus.leaders import FACES

DPI = 300


def _page() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    page = Image.new("L", (2550, 1200), 255)
    return page, ImageDraw.Draw(page)


def _box(draw: ImageDraw.ImageDraw, x: int, y: int, side: int, width: int = 3) -> None:
    draw.rectangle((x, y, x + side, y + side), outline=0, width=width)


@pytest.mark.parametrize(("points", "width"), [(9.0, 2), (12.0, 3), (14.0, 4)])
def test_an_empty_box_is_found_and_painted_and_its_label_left(points: float, width: int) -> None:
    page, draw = _page()
    side = round(points * 0.8 * DPI / 72)
    font = ImageFont.truetype(FACES["sans"], round(points * DPI / 72))
    for x in (400, 1400):
        _box(draw, x, 300, side, width)
        draw.text((x + 1.5 * side, 300 - side // 4), "Yes", font=font, fill=0)
    label = page.crop((400 + side + 10, 250, 1300, 450))
    clean, boxes = without_boxes(page, DPI)
    assert len(boxes) == 2
    for box, x in zip(sorted(boxes, key=lambda box: box.left), (400, 1400), strict=True):
        assert box.left <= x
        assert box.top <= 300
        assert x + side < box.right <= x + side + 10
        assert 300 + side < box.bottom <= 300 + side + 10
        assert clean.crop((box.left, box.top, box.right, box.bottom)).getextrema()[0] == 255
    assert clean.crop((400 + side + 10, 250, 1300, 450)).tobytes() == label.tobytes()


def test_letters_are_not_boxes() -> None:
    """Letters with straight sides or an empty bowl, large (a D, a 0, an O, an H, an n turned on
    its side as a label set up a margin has it)."""
    page, draw = _page()
    font = ImageFont.truetype(FACES["serif"], 120)
    draw.text((300, 300), "D 0 O H П [] n", font=font, fill=0)
    turned = Image.new("L", (400, 160), 255)
    ImageDraw.Draw(turned).text((10, 10), "n n n", font=ImageFont.truetype(FACES["serif"], 42), fill=0)
    page.paste(turned.rotate(90, expand=True), (2000, 300))
    assert without_boxes(page, DPI) == (page, ())


def test_a_box_with_something_in_it_is_left_for_tesseract() -> None:
    """A tick, a cross, a letter written a letter to a box."""
    page, draw = _page()
    for x in (400, 700, 1000):
        _box(draw, x, 300, 50)
    draw.line((410, 330, 425, 345, 445, 305), fill=0, width=4)
    draw.line((705, 305, 745, 345), fill=0, width=4)
    draw.line((705, 345, 745, 305), fill=0, width=4)
    draw.text((1012, 300), "A", font=ImageFont.truetype(FACES["sans"], 44), fill=0)
    assert without_boxes(page, DPI)[1] == ()


def test_a_tables_cells_and_boxes_sharing_sides_are_not_boxes_to_tick() -> None:
    """A row of boxes sharing sides (a field written a letter to a box) and a table's cells have
    sides longer than a box's; a column of square cells has each cell's neighbours' sides
    against its top and bottom: none is clear all round."""
    page, draw = _page()
    for x in range(400, 1000, 50):
        _box(draw, x, 300, 50)
    for row in range(3):
        for column in range(4):
            _box(draw, 1200 + 60 * column, 600 + 60 * row, 60)
    for row in range(5):
        _box(draw, 2000, 300 + 50 * row, 50)
    assert without_boxes(page, DPI)[1] == ()


def test_a_square_open_on_one_side_is_not_a_box() -> None:
    page, draw = _page()
    draw.line((400, 300, 450, 300, 450, 350, 400, 350), fill=0, width=3)
    assert without_boxes(page, DPI)[1] == ()


def test_a_box_smaller_than_a_seven_point_ones_is_not_a_box() -> None:
    """0.07 inches: smaller than the box a form sets beside 7-point type (0.08)."""
    page, draw = _page()
    _box(draw, 400, 300, 21, 2)
    assert without_boxes(page, DPI)[1] == ()
    _box(draw, 800, 300, 27, 2)
    assert len(without_boxes(page, DPI)[1]) == 1


def test_a_page_of_squares_is_a_pattern_left_as_it_came() -> None:
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    squares = 0
    for y in range(100, 3200, 100):
        for x in range(100, 2500, 100):
            _box(draw, x, y, 40)
            squares += 1
    assert squares > MAX_BOXES
    assert without_boxes(page, DPI) == (page, ())


def _line(texts: list[tuple[str, int]], key: tuple[int, int, int], top: int = 300) -> list[TsvWord]:
    return [TsvWord(*key, text, 90.0, left, top, 20 * len(text), 40) for text, left in texts]


def test_a_box_goes_before_its_label_in_the_nearest_line_level_with_it() -> None:
    """The question's line is level with the box too, but further away than its label's."""
    words = _line([("Was", 300), ("it", 400), ("paid?", 460)], (1, 1, 1))
    words += _line([("Yes", 1760)], (2, 1, 1)) + _line([("No", 2030)], (3, 1, 1))
    boxes = [TickBox(1700, 300, 1742, 342), TickBox(1960, 302, 2002, 344)]
    out = box_words(words, boxes)
    assert words_to_text(out) == f"Was it paid?\n\n{TEXT} Yes\n\n{TEXT} No"
    (first,) = [word for word in out if word.left == 1700]
    assert (first.block, first.top, first.width, first.height, first.confidence) == (2, 300, 42, 42, 90.0)


def test_a_box_level_with_no_line_is_left_out() -> None:
    words = _line([("Was", 300), ("it", 400), ("paid?", 460)], (1, 1, 1))
    assert box_words(words, [TickBox(1700, 900, 1742, 942)]) == words
