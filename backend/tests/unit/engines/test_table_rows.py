"""A table tesseract read a column at a time is put back in rows (app.engines._table_rows);
lists and prose set in columns are left as tesseract read them."""

from __future__ import annotations

from app.engines._table_rows import table_rows
from app.engines._tesseract_exec import TsvWord, words_to_text

HEIGHT = 40

DATES = ["01 Mar", "01 Mar", "02 Mar", "03 Mar"]
PAYEES = ["Salary HARBOUR LTD", "Cash withdrawal", "Direct debit COUNCIL TAX", "Refund ARGOS"]
BALANCES = ["1,121.47", "492.80", "465.83", "-85.48"]


def _line(text: str, left: int, top: int, key: tuple[int, int, int]) -> list[TsvWord]:
    """The words of text at top (HEIGHT tall), from left, 20 pixels a character."""
    words, x = [], left
    for word in text.split():
        words.append(TsvWord(*key, word, 90.0, x, top, 20 * len(word), HEIGHT))
        x += 20 * len(word) + 20
    return words


def _column(texts: list[str], left: int, block: int, *, first: int = 0, tilt: int = 0) -> list[TsvWord]:
    """A block of lines 100 pixels apart from row first, each lowered by tilt."""
    return [
        word
        for row, text in enumerate(texts)
        for word in _line(text, left, 300 + 100 * (first + row) + tilt, (block, 1, row + 1))
    ]


def _statement(tilt: int = 0) -> list[TsvWord]:
    return (
        _column(DATES, 300, 1)
        + _column(PAYEES, 600, 2, tilt=tilt // 2)
        + _column(BALANCES, 2000, 3, tilt=tilt)
    )


def test_a_statement_read_a_column_at_a_time_is_read_a_row_to_a_line() -> None:
    rows = words_to_text(table_rows(_statement())).splitlines()
    assert rows == [" ".join(cells) for cells in zip(DATES, PAYEES, BALANCES, strict=True)]


def test_a_tilted_rows_far_cells_join_it_through_the_cells_between() -> None:
    """Its balance is 24 pixels lower than its date (a 0.8 degree tilt over 1,700 pixels): not
    level with the date, but level with the payee between them."""
    rows = words_to_text(table_rows(_statement(tilt=24))).splitlines()
    assert rows == [" ".join(cells) for cells in zip(DATES, PAYEES, BALANCES, strict=True)]


def test_a_cells_second_line_follows_its_row() -> None:
    """Each description goes on a line 50 pixels below its first (10 pixels apart), with
    nothing beside it; each row a block of its own, as tesseract makes of rows far apart."""
    rows = [
        ("A-100", "The board approved the budget", "subject to a review", "804.75"),
        ("A-101", "The farm has belonged", "to the same family", "351.13"),
        ("A-102", "The ferry ran twice a day", "weather permitting", "244.98"),
    ]
    words: list[TsvWord] = []
    for row, (reference, first, second, amount) in enumerate(rows):
        top = 300 + 200 * row
        words += _line(reference, 300, top, (1 + 4 * row, 1, 1))
        words += _line(first, 600, top, (2 + 4 * row, 1, 1)) + _line(
            second, 600, top + 50, (2 + 4 * row, 1, 2)
        )
        words += _line(amount, 2000, top, (3 + 4 * row, 1, 1))
    assert words_to_text(table_rows(words)).splitlines() == [
        "A-100 The board approved the budget 804.75",
        "subject to a review",
        "A-101 The farm has belonged 351.13",
        "to the same family",
        "A-102 The ferry ran twice a day 244.98",
        "weather permitting",
    ]


def test_the_table_keeps_its_place_between_the_text_before_and_after_it() -> None:
    before = _line("Statement of account", 300, 100, (1, 1, 1))
    after = _line("Thank you for banking with us", 300, 800, (9, 1, 1))
    table = _column(DATES, 300, 2) + _column(PAYEES, 600, 3) + _column(BALANCES, 2000, 4)
    text = words_to_text(table_rows(before + table + after))
    rows = "\n".join(" ".join(cells) for cells in zip(DATES, PAYEES, BALANCES, strict=True))
    assert text == f"Statement of account\n\n{rows}\n\nThank you for banking with us"


def test_labels_and_their_values_are_read_a_pair_to_a_line() -> None:
    """No figures; the labels are short cells, narrower than the values."""
    labels = ["Name", "Branch", "Status", "Manager"]
    values = ["Margaret Ellis of Bristol", "Portsmouth Quay office", "Active since March", "John Harper"]
    words = _column(labels, 300, 1) + _column(values, 900, 2)
    assert words_to_text(table_rows(words)).splitlines() == [
        f"{label} {value}" for label, value in zip(labels, values, strict=True)
    ]


def test_a_list_in_two_columns_is_read_down_each() -> None:
    """No figures, and its columns as wide as each other."""
    words = _column(["apples", "pears", "plums", "cherries"], 300, 1)
    words += _column(["carrots", "onions", "leeks", "beans"], 1400, 2)
    assert table_rows(words) == words


def test_a_sidebar_of_prose_beside_prose_is_read_a_column_at_a_time() -> None:
    """The sidebar's lines are short and narrow, but the lines beside them are prose (six words
    or more); each paragraph a block of two lines, too few to be taken for prose alone."""
    main = [
        "the tenant reported a leak under the sink",
        "on the fourth of June and the plumber came",
        "two days later with the part that was needed",
        "and the kitchen was dry again by the evening",
    ]
    side = ["the minutes of the", "last meeting were", "read and approved", "without changes"]
    words = _column(main[:2], 300, 1) + _column(main[2:], 300, 2, first=2)
    words += _column(side[:2], 1600, 3) + _column(side[2:], 1600, 4, first=2)
    assert table_rows(words) == words


def test_a_block_of_prose_takes_no_part_in_a_table() -> None:
    """A column of figures beside a block of running text: the figures have no column to share
    rows with (a block of three or more lines of prose is left out)."""
    prose = [
        "the tenant reported a leak under the sink",
        "on the fourth of June and the plumber came",
        "two days later with the part that was needed",
        "and the kitchen was dry again by the evening",
    ]
    words = _column(prose, 300, 1) + _column(BALANCES, 2000, 2)
    assert table_rows(words) == words


def test_two_rows_are_not_a_table() -> None:
    words = _column(DATES[:2], 300, 1) + _column(PAYEES[:2], 600, 2) + _column(BALANCES[:2], 2000, 3)
    assert table_rows(words) == words
