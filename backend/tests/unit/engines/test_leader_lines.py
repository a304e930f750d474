"""The leaders taken off a page are put back in tesseract's words of it
(app.engines._leader_lines): each after its title, with its number moved from wherever
tesseract read it to the title's line; what follows a leader that tesseract dropped is read
again, and only what follows a leader is kept of that reading."""

from __future__ import annotations

from PIL import Image, ImageDraw

from app.engines._leader_lines import after_strips, leader_words, placed, unread
from app.engines._leaders import Leader
from app.engines._tesseract_exec import TsvWord, words_to_text

DPI = 300


def _word(text: str, left: int, top: int, key: tuple[int, int, int] = (1, 1, 1), width: int = 0) -> TsvWord:
    return TsvWord(*key, text, 90.0, left, top, width or 20 * len(text), 36)


def _leader(left: int, right: int, feet: int, dots: int = 20, *, drop: float = 0.0) -> Leader:
    """A leader whose dots stand with their feet on row feet at its left end (drop rows lower at
    its right)."""
    return Leader(left, feet - 6, right, feet + round(drop), dots, False, feet - 3, feet - 3 + drop)


def test_a_number_read_in_a_column_of_its_own_joins_its_title_after_the_leader() -> None:
    """tesseract read the titles, then the numbers as a block of their own at the page's foot."""
    words = [
        _word("1", 300, 300),
        _word("Introduction", 340, 300),
        _word("2", 300, 400, (1, 2, 1)),
        _word("Methods", 340, 400, (1, 2, 1)),
        _word("3", 2000, 300, (2, 1, 1)),
        _word("17", 2000, 400, (2, 1, 2)),
    ]
    leaders = [_leader(640, 1980, 336, 40), _leader(540, 1980, 436, 43)]
    out = leader_words(words, leaders, DPI)
    assert words_to_text(out) == f"1 Introduction {'.' * 40} 3\n\n2 Methods {'.' * 43} 17"
    dots = next(word for word in out if word.text.startswith("."))
    assert (dots.left, dots.top, dots.left + dots.width, dots.top + dots.height) == (640, 330, 1980, 336)
    assert dots.confidence == 90.0  # its neighbours'


def test_words_after_a_number_on_its_line_go_with_it_and_a_far_one_does_not() -> None:
    words = [
        _word("Coffee", 300, 300),
        _word("2.50", 2000, 300, (2, 1, 1)),
        _word("each", 2100, 300, (2, 1, 1)),
        _word("Other", 2300 + 2 * DPI, 300, (2, 1, 1)),
    ]
    out = leader_words(words, [_leader(440, 1980, 336)], DPI)
    assert words_to_text(out) == f"Coffee {'.' * 20} 2.50 each\n\nOther"


def test_the_rest_of_a_row_follows_its_number_up_to_the_next_entry_of_the_row() -> None:
    """A statement's second column of figures, read as a column of its own, joins the row; in a
    table of contents set in two columns, the right column's entry stays where it was read."""
    statement = [
        _word("Revenue", 300, 300),
        _word("1,204", 1700, 300, (2, 1, 1)),
        _word("998", 2100, 300, (3, 1, 1)),
    ]
    out = leader_words(statement, [_leader(460, 1680, 336)], DPI)
    assert words_to_text(out) == f"Revenue {'.' * 20} 1,204 998"
    columns = [
        _word("Intro", 300, 300),
        _word("3", 1100, 300, (1, 2, 1)),
        _word("Results", 1300, 300, (2, 1, 1)),
        _word("40", 2200, 300, (2, 2, 1)),
    ]
    out = leader_words(columns, [_leader(420, 1080, 336), _leader(1460, 2180, 336)], DPI)
    assert words_to_text(out) == f"Intro {'.' * 20} 3\n\nResults {'.' * 20} 40"


def test_a_form_line_has_its_leader_after_its_label_and_a_second_after_the_second_label() -> None:
    words = [_word("Signed", 300, 300), _word("Date", 1400, 300)]
    leaders = [_leader(460, 1360, 336, 30), _leader(1520, 2200, 336, 25)]
    assert words_to_text(leader_words(words, leaders, DPI)) == f"Signed {'.' * 30} Date {'.' * 25}"


def test_a_leader_with_no_title_starts_its_numbers_line_where_the_number_was_read() -> None:
    words = [
        _word("Heading", 300, 200),
        _word("12", 2000, 300, (1, 2, 1)),
        _word("After", 300, 500, (1, 3, 1)),
    ]
    out = leader_words(words, [_leader(300, 1980, 336)], DPI)
    assert words_to_text(out) == f"Heading\n\n{'.' * 20} 12\n\nAfter"


def test_a_leader_with_no_word_beside_it_adds_nothing() -> None:
    """A dotted rule between paragraphs."""
    words = [_word("Above", 300, 200), _word("Below", 300, 500, (1, 2, 1))]
    assert leader_words(words, [_leader(300, 2200, 336)], DPI) == words


def test_level_follows_the_leaders_tilt() -> None:
    """Across 5 inches a page tilted a degree and a half drifts 40 rows (more than a line's
    letters are tall): the number stands that much lower than its title, and the next line's
    title is not taken for this line's."""
    words = [
        _word("Title", 300, 300),
        _word("9", 2000, 340, (2, 1, 1)),
        _word("Next", 300, 392, (1, 2, 1)),
    ]
    out = leader_words(words, [_leader(420, 1980, 336, drop=40)], DPI)
    assert words_to_text(out) == f"Title {'.' * 20} 9\n\nNext"
    flat = leader_words(words, [_leader(420, 1980, 336)], DPI)
    assert words_to_text(flat) == f"Title {'.' * 20}\n\n9\n\nNext"  # 9 is not level with a flat one


def test_what_is_read_again_after_leaders_keeps_only_what_follows_one() -> None:
    """The strips read again hold a number and a speck read as a letter, far from the leader."""
    leaders = [_leader(420, 1980, 336)]
    read = [_word("5", 30, 40, (1, 1, 1)), _word("x", 30 + 2 * DPI, 40, (1, 1, 2))]
    kept = placed(read, (1980, 296), 7, leaders, DPI)
    assert [(word.text, word.left, word.top, word.block) for word in kept] == [("5", 2010, 336, 8)]


def test_ink_after_a_leader_with_nothing_read_there_is_unread_and_its_strip_is_cut_out() -> None:
    page = Image.new("L", (2550, 800), 255)
    draw = ImageDraw.Draw(page)
    draw.rectangle((2010, 300, 2040, 336), fill=0)  # a number tesseract dropped
    draw.rectangle((2010, 600, 2040, 636), fill=0)  # one it read
    words = [
        _word("Title", 300, 300),
        _word("Other", 300, 600, (1, 2, 1)),
        _word("8", 2010, 600, (2, 1, 1), width=30),
    ]
    first, second, empty = _leader(420, 1980, 336), _leader(420, 1980, 636), _leader(420, 1980, 136)
    assert unread(words, [first, second, empty], page, DPI) == [first]
    strips, corner = after_strips(words, [first], page, DPI)
    assert corner[0] == 1980
    assert corner[1] < 300
    assert strips.width == round(1.5 * DPI)
    assert strips.crop((30, 300 - corner[1], 61, 337 - corner[1])).getextrema() == (0, 0)
