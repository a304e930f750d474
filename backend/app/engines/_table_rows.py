"""A table without rules, read row by row where tesseract read it a column at a time.

tesseract finds a page's blocks by the space between them and reads them one after another. A
table set without rules has space down the page between its columns, so each column comes out
on its own: a bank statement's dates, then its payees, then its balances (a statement of 24 rows
read 68 % wrong so, ocrmypdf 73 %), and a reader cannot tell which amount went with which day.

The page's lines, but those of blocks of running text (PROSE_LINES lines or more, mostly of prose:
_row_cells.PROSE_WORDS words or more with no gap WIDE between two of them, about as wide as each
other), are put in columns by their left or right edges (_row_cells.aligned_columns). Two columns
share rows when at least MIN_ROWS of their lines, and MOST of the shorter column's, stand level
(_row_cells.level) with a line of the other beside them. Columns that share rows, and those that
share rows with them, are a table when one of them is a column of figures (NUMERIC of its lines
mostly digits), or one is a column of cells at most CELLS as wide as the widest and none is
mostly prose. What is left as it is: a list set in columns of alike entries (read down each, as
it is set), prose set in columns, and a sidebar of prose beside prose.

A table's lines, from its first shared row to its last (and the lines that go on below that, as
a cell's second line), are put in rows top to bottom, each row's lines left to right; the table
is one block, where its first line was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from statistics import median

from app.engines._row_cells import (
    CELLS,
    MIN_ROWS,
    MOST,
    PROSE_WORDS,
    aligned_columns,
    level,
    running_text,
)
from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import Key, Line, key_of, text_lines

NUMERIC = 0.6  # of a column's lines: a column of figures has this share of lines mostly digits
PROSE_LINES = 3  # a block of running text has at least this many lines
WIDE = 2.0  # line heights: a gap between two words this wide parts a row's cells, not words


def table_rows(words: Sequence[TsvWord]) -> list[TsvWord]:
    """tesseract's words of a page with each table it read a column at a time put in rows."""
    lines = text_lines(words)
    figures, prose = _kinds(words, lines)
    blocks: dict[int, list[Line]] = {}
    for line in lines.values():
        blocks.setdefault(line.key[0], []).append(line)
    running = {
        block
        for block, body in blocks.items()
        if len(body) >= PROSE_LINES and running_text(body) and _mostly(body, prose)
    }
    columns = aligned_columns([line for line in lines.values() if line.key[0] not in running])
    tables = [
        table
        for table in _sharing_rows(columns)
        if _a_table([columns[index] for index in table], figures, prose)
    ]
    if not tables:
        return list(words)
    rows: dict[Key, Key] = {}  # each line of a table: the key of the row it is now part of
    fresh = max(word.block for word in words) + 1
    for number, table in enumerate(tables):
        rows |= _rows([line for index in sorted(table) for line in columns[index]], fresh + number)
    return _reordered(words, rows)


def _kinds(words: Sequence[TsvWord], lines: dict[Key, Line]) -> tuple[set[Key], set[Key]]:
    """The keys of the lines that are figures (mostly digits: amounts, dates, page numbers),
    and of those that are prose (PROSE_WORDS words or more, none WIDE apart: a row of a table
    read as one line has its cells far apart)."""
    by_line: dict[Key, list[TsvWord]] = {}
    for word in words:
        by_line.setdefault(key_of(word), []).append(word)
    figures, prose = set(), set()
    for key, line in by_line.items():
        characters = [character for word in line for character in word.text if character.isalnum()]
        if characters and 2 * sum(character.isdigit() for character in characters) >= len(characters):
            figures.add(key)
        ordered = sorted(line, key=lambda word: word.left)
        gaps = (after.left - (before.left + before.width) for before, after in pairwise(ordered))
        if len(line) >= PROSE_WORDS and max(gaps, default=0) < WIDE * lines[key].height:
            prose.add(key)
    return figures, prose


def _mostly(lines: list[Line], kind: set[Key]) -> bool:
    return 2 * sum(1 for line in lines if line.key in kind) > len(lines)


def _sharing_rows(columns: list[list[Line]]) -> list[set[int]]:
    """The columns (by index) in groups that share rows: at least MIN_ROWS of the shorter
    column's lines, and MOST of them, level with a line of the other beside them."""
    column_of = {line.key: index for index, column in enumerate(columns) for line in column}
    level_with: dict[tuple[int, int], set[Key]] = {}  # (a column, another): its lines level with the other's
    for one, other in _level_pairs([line for column in columns for line in column]):
        first, second = column_of[one.key], column_of[other.key]
        if first != second:
            level_with.setdefault((first, second), set()).add(one.key)
            level_with.setdefault((second, first), set()).add(other.key)
    neighbours: dict[int, set[int]] = {index: set() for index in range(len(columns))}
    for (first, second), keys in level_with.items():
        if len(columns[first]) <= len(columns[second]) and len(keys) >= max(
            MIN_ROWS, MOST * len(columns[first])
        ):
            neighbours[first].add(second)
            neighbours[second].add(first)
    groups: list[set[int]] = []
    seen: set[int] = set()
    for index in neighbours:
        if index in seen or not neighbours[index]:
            continue
        group: set[int] = set()
        todo = [index]
        while todo:
            current = todo.pop()
            if current not in group:
                group.add(current)
                todo.extend(neighbours[current] - group)
        seen |= group
        groups.append(group)
    return groups


def _level_pairs(lines: list[Line]) -> list[tuple[Line, Line]]:
    """The pairs of lines that stand level, side by side (one sweep down the page: only lines
    that overlap in height are compared)."""
    ordered = sorted(lines, key=lambda line: line.top)
    pairs = []
    for index, line in enumerate(ordered):
        for other in ordered[index + 1 :]:
            if other.top >= line.bottom:
                break
            if level(line, other) and _beside(line, other):
                pairs.append((line, other))
    return pairs


def _beside(one: Line, other: Line) -> bool:
    """Whether two lines are side by side, neither over the other."""
    return one.right <= other.left or other.right <= one.left


def _a_table(columns: list[list[Line]], figures: set[Key], prose: set[Key]) -> bool:
    """Whether columns that share rows are a table: one of them a column of figures; or one of
    them a column of cells narrower (CELLS) than the widest, and none of them mostly prose."""
    if any(sum(1 for line in column if line.key in figures) >= NUMERIC * len(column) for column in columns):
        return True
    if any(_mostly(column, prose) for column in columns):
        return False  # prose beside a narrow column of prose: a sidebar, a book's marginal notes
    widths = [median(line.width for line in column) for column in columns]
    return min(widths) <= CELLS * max(widths)


def _rows(lines: list[Line], block: int) -> dict[Key, Key]:
    """A table's lines, from the first that shares a row to the last (and the lines that go on
    below it, each less than a line's height under the one before), in rows keyed (block, 1, n)
    top to bottom. A line joins a row above it when it is level with one of the row's lines (a
    tilted row's far cells are level only through those between) and beside all of them."""
    shared = [line for pair in _level_pairs(lines) for line in pair]
    top, bottom = min(line.top for line in shared), max(line.bottom for line in shared)
    for line in sorted(lines, key=lambda line: line.top):
        if bottom < line.bottom and line.top - bottom <= line.height:
            bottom = line.bottom  # the last row's cell goes on a line below
    inside = sorted(
        (line for line in lines if line.top >= top and line.bottom <= bottom),
        key=lambda line: (line.top, line.left),
    )
    rows: list[list[Line]] = []
    for line in inside:
        row = next(
            (
                row
                for row in reversed(rows[-3:])
                if any(level(other, line) for other in row) and all(_beside(line, other) for other in row)
            ),
            None,
        )
        if row is None:
            rows.append([line])
        else:
            row.append(line)
    out: dict[Key, Key] = {}
    for number, row in enumerate(rows, start=1):
        for line in sorted(row, key=lambda line: line.left):
            out[line.key] = (block, 1, number)
    return out


def _reordered(words: Sequence[TsvWord], rows: dict[Key, Key]) -> list[TsvWord]:
    """The words with each table's lines taken out and put back, row by row, where its first
    line was."""
    by_line: dict[Key, list[TsvWord]] = {}
    for word in words:
        by_line.setdefault(key_of(word), []).append(word)
    tables: dict[int, list[Key]] = {}  # by a table's block: its lines, a row at a time
    for line, row in sorted(rows.items(), key=lambda item: item[1]):  # stable: a row left to right
        tables.setdefault(row[0], []).append(line)
    out: list[TsvWord] = []
    for key, line_words in by_line.items():
        if key not in rows:
            out.extend(line_words)
        elif rows[key][0] in tables:  # the table's first line: the whole table goes here
            for member in tables.pop(rows[key][0]):
                block, paragraph, number = rows[member]
                out.extend(
                    replace(word, block=block, paragraph=paragraph, line=number) for word in by_line[member]
                )
    return out
