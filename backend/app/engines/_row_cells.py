"""A column of short cells that tesseract read on its own, put back on the rows it stands on.

tesseract finds a page's blocks by the space between them, and reads them one after another.
A table of contents without leaders, a form's questions with their boxes to tick, a price list
or a table without rules has a wide gap down the page between its titles and its numbers, its
questions and its answers: tesseract reads all the titles, then all the numbers (a table of
contents of 24 entries read 23 % wrong so, ocrmypdf alike), and a reader gets a list of numbers
with nothing to say what each is for.

Short lines (no wider than SHORT line heights, in a block of tesseract's with no longer line)
whose left or right edges line up (within ALIGNED of a line's height) are a column. It is such a
column when at least MIN_ROWS of its lines, and MOST of them, stand level with a line to their
left, and are at most CELLS as wide as those lines: each of them then goes at the end of the
line it stands level with (the nearest to its left). Columns are taken left to right, so a
second column (a form's "No" after its "Yes") follows the first. Level means sharing LEVEL of
the shorter line's height. What is left as it is: a block with a long line (prose); lines as
wide as those beside them (a list set in two columns, read down each); lines beside a column of
prose (PROSE_WORDS words a line or more, each about as wide as the widest: running text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from statistics import median

from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import Key, Line, text_lines

SHORT = 12.0  # line heights: a cell's line is no wider than this (a column of prose: 15-25)
MIN_ROWS = 3  # lines of a column that must stand level with a line to their left
MOST = 0.6  # and this share of its lines
LEVEL = 0.5  # of the shorter line's height, shared by two lines that stand level
PROSE_WORDS = 6  # lines of this many words (the median) as wide as each other are prose
FILLED = 0.85  # the median line is at least this share of the widest in a column of prose
CELLS = 0.6  # a column's lines are at most this share as wide as those they stand beside
ALIGNED = 0.5  # of a line's height: lines whose left or right edges are this near are a column


def level(one: Line, other: Line) -> bool:
    """Whether two lines stand level: they share LEVEL of the shorter one's height."""
    shared = min(one.bottom, other.bottom) - max(one.top, other.top)
    return shared >= LEVEL * min(one.height, other.height)


def cells_on_rows(words: Sequence[TsvWord]) -> list[TsvWord]:
    """tesseract's words of a page with each column of short cells read on its own moved to
    the ends of the lines its cells stand level with."""
    lines = text_lines(words)
    prose = {line.key[0] for line in lines.values() if line.width > SHORT * line.height}
    cells = [line for line in lines.values() if line.key[0] not in prose]
    host: dict[Key, Key] = {}  # a moved line's key: the key of the line it now ends
    for column in sorted(aligned_columns(cells), key=lambda column: min(line.left for line in column)):
        keys = {line.key for line in column}
        pairs = [(line, partner) for line in column if (partner := _partner(line, lines, keys)) is not None]
        if len(pairs) < MIN_ROWS or len(pairs) < MOST * len(column):
            continue
        partners = [partner for _, partner in pairs]
        if median(line.width for line, _ in pairs) > CELLS * median(line.width for line in partners):
            continue  # as wide as what they stand beside: a list in two columns, read down each
        if running_text(partners):
            continue  # a list beside a column of prose
        for line, partner in pairs:
            host[line.key] = partner.key
            del lines[line.key]
            lines[partner.key] = partner.joined(line)
    if not host:
        return list(words)
    return _moved(words, host)


def aligned_columns(cells: list[Line]) -> list[list[Line]]:
    """The cells in columns: lines whose left edges, or right edges, are within ALIGNED of a
    line's height of each other, and of each other's, are one column (a column of figures is
    set flush right, a column of words flush left)."""
    columns: list[list[Line]] = []
    for cell in sorted(cells, key=lambda cell: cell.left):
        joined = [column for column in columns if any(_aligned(cell, other) for other in column)]
        merged = [cell] + [line for column in joined for line in column]
        columns = [column for column in columns if column not in joined] + [merged]
    return columns


def _aligned(one: Line, other: Line) -> bool:
    reach = ALIGNED * min(one.height, other.height)
    return abs(one.left - other.left) <= reach or abs(one.right - other.right) <= reach


def running_text(lines: list[Line]) -> bool:
    """Whether lines are a column of prose: PROSE_WORDS words a line or more, and about as wide
    as each other (FILLED of the widest), where titles and questions come short and long."""
    widths = [line.width for line in lines]
    return median(line.words for line in lines) >= PROSE_WORDS and median(widths) >= FILLED * max(widths)


def _partner(line: Line, lines: dict[Key, Line], column: set[Key]) -> Line | None:
    """The nearest line to the left of line, outside its column, level with it (None if none)."""
    beside = [
        other
        for other in lines.values()
        if other.key not in column and other.right <= line.left and level(other, line)
    ]
    return max(beside, key=lambda other: other.right, default=None)


def _moved(words: Sequence[TsvWord], host: dict[Key, Key]) -> list[TsvWord]:
    """The words with each moved line after the line it ends (after the lines moved there before
    it, in the order they were moved: left to right), keyed as that line."""

    def root(key: Key) -> Key:
        while key in host:
            key = host[key]
        return key

    guests: dict[Key, list[Key]] = {}
    for key in host:  # in the order they were moved
        guests.setdefault(root(key), []).append(key)
    by_line: dict[Key, list[TsvWord]] = {}
    for word in words:
        by_line.setdefault((word.block, word.paragraph, word.line), []).append(word)
    out: list[TsvWord] = []
    for key, line in by_line.items():
        if key in host:
            continue
        out.extend(line)
        for guest in guests.get(key, []):
            out.extend(replace(word, block=key[0], paragraph=key[1], line=key[2]) for word in by_line[guest])
    return out
