"""What the rules step (app.engines._rules) takes for a rule, when a rule touches text, and what
it paints out, on drawn pages."""

from __future__ import annotations

from PIL import Image, ImageDraw

from app.engines._rules import MAX_RUNS, RULE_INCHES, Rule, has_rules, measured, runs, unruled
from app.pdf.samples import page_text, render_scan

DPI = 300
SIZE = (1200, 400)


def _page(paper: int = 255) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("L", SIZE, paper)
    return image, ImageDraw.Draw(image)


def _letters(
    draw: ImageDraw.ImageDraw, feet: int, *, left: int = 200, right: int = 1000, tall: int = 30
) -> None:
    """Letter-like strokes 4 pixels wide and 30 tall (0.1 inch at 300 DPI), 9 pixels apart,
    their feet on row feet."""
    for x in range(left, right, 13):
        draw.rectangle((x, feet - tall, x + 3, feet), fill=0)


def _rules_of(image: Image.Image) -> set[Rule]:
    return {rule for left, right, row in runs(image, DPI) if (rule := measured(image, left, right, row, DPI))}


def test_a_rule_is_measured_to_its_rows_and_ends() -> None:
    image, draw = _page()
    draw.rectangle((203, 200, 990, 202), fill=0)

    assert _rules_of(image) == {Rule(203, 991, 200, 202)}


def test_a_bar_too_thick_a_run_too_short_and_letters_are_no_rules() -> None:
    image, draw = _page()
    draw.rectangle((100, 50, 1100, 70), fill=0)  # 21 rows: a black band
    draw.rectangle((100, 150, 100 + round(RULE_INCHES * DPI) - 10, 152), fill=0)
    _letters(draw, 300)

    assert _rules_of(image) == set()
    assert not has_rules(image, DPI)
    assert unruled(image, DPI) == (image, False)


def test_a_page_of_print_has_no_rules() -> None:
    """The app's sample scan: 11.5-point serif print whose letters' feet meet along a row."""
    image = render_scan(page_text(0, 5, 6))

    assert not has_rules(image, DPI)


def test_a_rule_clear_of_the_letters_is_left_where_it_is() -> None:
    image, draw = _page()
    _letters(draw, 200)
    draw.rectangle((180, 210, 1020, 212), fill=0)  # nine rows below the letters' feet

    assert has_rules(image, DPI)
    assert unruled(image, DPI) == (image, False)


def test_a_rule_at_the_letters_feet_is_painted_out_but_where_strokes_cross_it() -> None:
    image, draw = _page(paper=230)
    _letters(draw, 200)
    draw.rectangle((180, 201, 1020, 203), fill=0)
    draw.rectangle((500, 170, 503, 230), fill=0)  # a descender through it

    clean, changed = unruled(image, DPI)

    assert changed
    pixels = clean.load()
    assert pixels is not None
    assert all(pixels[x, y] == 230 for x in range(180, 1021) if not 500 <= x <= 503 for y in (201, 202, 203))
    assert all(pixels[x, y] == 0 for x in range(500, 504) for y in range(170, 231))  # the descender, whole
    assert all(pixels[x, y] == 0 for x in (200, 213, 226) for y in range(170, 201))  # the letters, whole
    assert image.getpixel((600, 202)) == 0  # the page it was given is left as it came


def test_both_lines_of_a_double_underline_are_painted_out() -> None:
    """The lower line is not a stroke crossing the upper one: it is a rule itself."""
    image, draw = _page()
    _letters(draw, 200)
    draw.rectangle((180, 201, 1020, 202), fill=0)
    draw.rectangle((180, 205, 1020, 206), fill=0)

    clean, changed = unruled(image, DPI)

    assert changed
    assert clean.crop((180, 201, 1021, 207)).getextrema() == (255, 255)


def test_a_rule_a_pixel_off_the_letters_touches_them() -> None:
    image, draw = _page()
    _letters(draw, 200)
    draw.rectangle((180, 202, 1020, 204), fill=0)

    clean, changed = unruled(image, DPI)

    assert changed
    assert clean.crop((180, 202, 1021, 205)).getextrema() == (255, 255)


def test_a_rule_that_a_rule_up_and_down_the_page_meets_is_left_whatever_touches_it() -> None:
    """A table's rule with its text standing on it: tesseract finds the table from its grid."""
    image, draw = _page()
    _letters(draw, 200, left=260, right=900)
    draw.rectangle((180, 201, 1020, 203), fill=0)
    draw.rectangle((180, 100, 182, 300), fill=0)  # the table's side, 0.67 inch long

    assert has_rules(image, DPI)
    assert unruled(image, DPI) == (image, False)


def test_rules_up_to_the_page_edges_are_measured_within_it() -> None:
    image, draw = _page()
    _letters(draw, 200, left=0, right=SIZE[0])
    draw.rectangle((0, 201, SIZE[0] - 1, 203), fill=0)

    clean, changed = unruled(image, DPI)

    assert changed
    assert clean.size == image.size
    assert clean.crop((0, 201, SIZE[0], 204)).getextrema() == (255, 255)


def test_a_page_too_small_to_sample_or_at_a_low_resolution_is_looked_at_whole() -> None:
    """A page rendered at 72 DPI (a huge page's resolution is lowered to fit the page budget),
    and pages smaller than a sample's step, are looked at without error."""
    tiny = Image.new("L", (3, 1), 0)
    assert unruled(tiny, DPI) == (tiny, False)

    image, draw = _page()
    _letters(draw, 200, tall=8)  # 0.1 inch at 72 DPI
    draw.rectangle((180, 201, 1020, 201), fill=0)  # a pixel thick, as 3 pixels at 300 DPI are at 72
    clean, changed = unruled(image, 72)

    assert changed
    assert clean.crop((180, 201, 1021, 202)).getextrema() == (255, 255)


def test_a_row_of_dots_two_pixels_apart_is_no_rule() -> None:
    """A halftone screen's dots in a row (a grey band printed as dots, under text), or a dotted
    line: not a rule, however close to the letters."""
    image, draw = _page()
    _letters(draw, 200)
    for x in range(180, 1020, 8):
        draw.rectangle((x, 201, x + 5, 203), fill=0)

    assert unruled(image, DPI) == (image, False)


def test_a_page_with_more_runs_than_text_has_rules_is_left_unmeasured() -> None:
    """Short dashes touching strokes, row after row (hatching, a pattern): more runs than
    MAX_RUNS, so no rule of it is measured, and the page comes back as it came."""
    image = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(image)
    for y in range(20, 3300, 12):
        for x in range(0, 2550, 100):
            draw.rectangle((x, y, x + 80, y + 2), fill=0)
            draw.rectangle((x + 10, y - 6, x + 13, y - 1), fill=0)

    assert sum(1 for _ in runs(image, DPI)) > MAX_RUNS
    assert not has_rules(image, DPI)
    assert unruled(image, DPI) == (image, False)
