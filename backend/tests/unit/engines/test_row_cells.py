"""A column of short cells that tesseract read on its own goes at the end of the lines it stands
level with (app.engines._row_cells); lists set in two columns, lists beside prose and prose are
left as tesseract read them."""

from __future__ import annotations

from app.engines._row_cells import cells_on_rows
from app.engines._tesseract_exec import TsvWord, words_to_text

HEIGHT = 40


def _line(text: str, left: int, row: int, key: tuple[int, int, int]) -> list[TsvWord]:
    """The words of text on row (HEIGHT tall, 100 apart), from left, 20 pixels a character."""
    words, x = [], left
    for word in text.split():
        words.append(TsvWord(*key, word, 90.0, x, 300 + 100 * row, 20 * len(word), HEIGHT))
        x += 20 * len(word) + 20
    return words


def test_page_numbers_read_after_the_titles_go_at_the_end_of_their_titles() -> None:
    titles = ["1 Introduction", "2 Methods of the survey", "3 What the survey found", "4 Notes"]
    words = [word for row, title in enumerate(titles) for word in _line(title, 300, row, (1, row + 1, 1))]
    words += [
        word
        for row, number in enumerate(["3", "17", "42", "108"])
        for word in _line(number, 2200, row, (2, 1, row + 1))
    ]
    assert words_to_text(cells_on_rows(words)).split("\n\n") == [
        "1 Introduction 3",
        "2 Methods of the survey 17",
        "3 What the survey found 42",
        "4 Notes 108",
    ]


def test_a_forms_answers_each_read_as_a_block_of_its_own_follow_their_question() -> None:
    """tesseract made each "Yes" a block of its own, and each "No": the second column follows
    the first."""
    words: list[TsvWord] = []
    for row in range(4):
        words += _line(f"Question {row} was it answered?", 300, row, (1, row + 1, 1))
    for row in range(4):
        words += _line("Yes", 1700, row, (2 + row, 1, 1))
        words += _line("No", 1950, row, (10 + row, 1, 1))
    lines = words_to_text(cells_on_rows(words)).split("\n\n")
    assert lines == [f"Question {row} was it answered? Yes No" for row in range(4)]


def test_a_list_in_two_columns_is_read_down_each() -> None:
    """Its right column's items are as wide as the left's: not cells of the left's rows."""
    left = ["apples", "pears", "plums", "cherries"]
    right = ["carrots", "onions", "leeks", "beans"]
    words = [word for row, item in enumerate(left) for word in _line(item, 300, row, (1, 1, row + 1))]
    words += [word for row, item in enumerate(right) for word in _line(item, 1400, row, (2, 1, row + 1))]
    assert cells_on_rows(words) == words


def test_a_list_beside_a_column_of_prose_is_left_as_read() -> None:
    prose = [
        "the tenant reported a leak under the sink",
        "on the fourth of June and the plumber came",
        "two days later with the part that was needed",
        "and the kitchen was dry again by the evening",
    ]
    words = [word for row, line in enumerate(prose) for word in _line(line, 300, row, (1, 1, row + 1))]
    words += [
        word
        for row, item in enumerate(["Leaks", "Parts", "Dates", "Costs"])
        for word in _line(item, 1500, row, (2, 1, row + 1))
    ]
    assert cells_on_rows(words) == words


def test_short_lines_in_a_block_of_prose_are_not_cells() -> None:
    """A right column's short centred lines stand level with the left column's lines, but
    their block has long lines: prose."""
    words: list[TsvWord] = []
    for row in range(6):
        words += _line(f"Item {row} of the list", 300, row, (1, row + 1, 1))
        if row % 2:
            words += _line("* * *", 1800, row, (2, 1, row + 1))
        else:
            words += _line(
                "a long line of running text in the right column of the page", 1400, row, (2, 1, row + 1)
            )
    assert cells_on_rows(words) == words


def test_fewer_than_three_rows_are_left_as_read() -> None:
    """A footer's page number level with its left half is not a column."""
    words = _line("Annual report", 300, 0, (1, 1, 1)) + _line("Page 3", 2100, 0, (2, 1, 1))
    words += _line("Draft", 300, 1, (3, 1, 1)) + _line("12", 2100, 1, (4, 1, 1))
    assert cells_on_rows(words) == words
