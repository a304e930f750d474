"""What tesseract dropped beside a line it read is found as ink no word covers
(app.engines._dropped), and of what is read there again only words are kept."""

from __future__ import annotations

from PIL import Image, ImageDraw

from app.engines._dropped import dropped_boxes, kept, strips
from app.engines._tesseract_exec import TsvWord
from app.pdf.samples import font

DPI = 300


def _page(rows: int = 6) -> tuple[Image.Image, list[TsvWord], list[tuple[int, int, int, int]]]:
    """A page of titles read (their words) and page numbers at the right margin not read (their
    ink boxes)."""
    page = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(page)
    face = font(11)
    words, numbers = [], []
    for row in range(rows):
        y = 300 + 100 * row
        title = f"Chapter {row + 1}"
        draw.text((300, y), title, font=face, fill=0)
        left, top, right, bottom = draw.textbbox((300, y), title, font=face)
        words.append(TsvWord(1, row + 1, 1, title, 95.0, left, top, right - left, bottom - top))
        draw.text((2200, y), str(10 * row + 7), font=face, fill=0)
        numbers.append(draw.textbbox((2200, y), str(10 * row + 7), font=face))
    return page, words, numbers


def test_numbers_no_word_covers_are_found_one_box_each_around_their_ink() -> None:
    page, words, numbers = _page()
    boxes = dropped_boxes(words, page, DPI)
    assert len(boxes) == len(numbers)
    for box, number in zip(sorted(boxes, key=lambda box: box[1]), numbers, strict=True):
        assert all(box[i] <= number[i] for i in (0, 1))  # it holds the number's ink
        assert all(number[i] <= box[i] for i in (2, 3))
    image, corner = strips(page, boxes, words)
    assert corner == (min(box[0] for box in boxes), min(box[1] for box in boxes))
    assert image.getextrema()[0] < 128  # the numbers' ink, on paper


def test_a_word_already_read_is_blanked_on_the_strips() -> None:
    """A box drawn round a field's value is ink no word covers, and holds the value, read
    already: it must not be read twice."""
    page, words, numbers = _page()
    boxes = dropped_boxes(words, page, DPI)
    first = numbers[0]
    read = TsvWord(2, 1, 1, "7", 90.0, first[0], first[1], first[2] - first[0], first[3] - first[1])
    image, corner = strips(page, boxes, [*words, read])
    inside = (first[0] - corner[0], first[1] - corner[1], first[2] - corner[0], first[3] - corner[1])
    assert image.crop(inside).getextrema() == (255, 255)
    second = numbers[1]
    assert (
        image.crop(
            (second[0] - corner[0], second[1] - corner[1], second[2] - corner[0], second[3] - corner[1])
        ).getextrema()[0]
        < 128
    )


def test_a_rule_out_to_a_number_is_not_taken_for_text() -> None:
    """A leader drawn as a line from each title to its number (at the letters' feet, 3 pixels
    thick): the boxes hold the numbers, not the rules. Taken with the rules, the boxes covered
    more than a tenth of a page of 24 entries and were taken for a picture: no number was read
    again."""
    page, words, numbers = _page(24)
    draw = ImageDraw.Draw(page)
    for word, number in zip(words, numbers, strict=True):
        draw.line((word.left + word.width + 30, number[3], number[0] - 30, number[3]), fill=0, width=3)
    boxes = sorted(dropped_boxes(words, page, DPI), key=lambda box: box[1])
    assert len(boxes) == len(numbers)
    for box, number in zip(boxes, numbers, strict=True):
        assert box[0] > number[0] - 100  # around the number, not along the rule
        assert all(box[i] <= number[i] for i in (0, 1))
        assert all(number[i] <= box[i] for i in (2, 3))


def test_what_words_cover_is_not_dropped() -> None:
    page, words, numbers = _page()
    read = [
        TsvWord(2, 1, row + 1, "7", 90.0, n[0], n[1], n[2] - n[0], n[3] - n[1])
        for row, n in enumerate(numbers)
    ]
    assert dropped_boxes(words + read, page, DPI) == []


def test_a_speck_is_not_text_and_a_picture_is_not_read_again() -> None:
    page, words, numbers = _page()
    draw = ImageDraw.Draw(page)
    for number in numbers:
        draw.rectangle(number, fill=255)  # no numbers
        draw.rectangle((number[0], number[1] + 20, number[0] + 2, number[1] + 22), fill=0)  # a speck
    assert dropped_boxes(words, page, DPI) == []
    draw.rectangle((1200, 250, 2500, 1000), fill=40)  # a photograph beside the titles
    assert dropped_boxes(words, page, DPI) == []


def test_only_confident_words_are_kept_not_a_lone_letter_or_sign() -> None:
    """An empty box to tick reads as "N", "}" or "O"; a page number is a digit or more."""
    found = [
        TsvWord(1, 1, 1, "7", 91.0, 10, 20, 15, 30),
        TsvWord(1, 1, 2, "108", 88.0, 10, 60, 40, 30),
        TsvWord(1, 1, 3, "Notes", 80.0, 10, 100, 90, 30),
        TsvWord(1, 1, 4, "N", 85.0, 10, 140, 15, 30),
        TsvWord(1, 1, 5, "}", 90.0, 10, 180, 15, 30),
        TsvWord(1, 1, 6, "42", 30.0, 10, 220, 30, 30),
    ]
    out = kept(found, (2000, 500), 4)
    assert [(word.text, word.left, word.top, word.block) for word in out] == [
        ("7", 2010, 520, 5),
        ("108", 2010, 560, 5),
        ("Notes", 2010, 600, 5),
    ]
