"""Vertical writing (Japanese, Chinese, Korean set in columns) read column by column, right to left.

PDFium's text page takes a page's columns in the order it finds them, left to right, and its
bounded text runs them together on one line: a page set in columns came out last column first,
several columns to a line. pdftotext reads them right to left, one a line.

A page is read as vertical writing when most of its neighbouring characters stand one below the
other, not side by side. Its lines (as PDFium breaks them) set down the page are cut into
columns wherever the next character stands higher than the last (the top of the next column),
and the columns are read right to left, each top to bottom, one a line; lines set across the
page (a title, a page number) stay whole, those above the columns first and the rest after
them. Spaces PDFium made between characters are left out (vertical CJK has none). Every other
page, and every page without CJK, keeps PDFium's text.
"""

from __future__ import annotations

import itertools
import re

import pypdfium2 as pdfium

from app.engines._page_chars import BREAKS, Bounds, PageChar, Pair, page_lines, sampled_pairs

# Kana, CJK ideographs (and extension A), compatibility ideographs, Hangul syllables, fullwidth
# forms and the CJK symbols and punctuation (、。「」).
_CJK = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff00-\uffef]")
VERTICAL_SHARE = 2 / 3  # of neighbouring characters one below the other, for a page to be read so


def may_be_vertical(text: str) -> bool:
    """Whether text has CJK (a search at C speed: most pages have none)."""
    return _CJK.search(text) is not None


def column_order(textpage: pdfium.PdfTextPage, bounds: Bounds | None, turn: int = 0) -> str | None:
    """The page's text column by column, right to left, when it is set in columns; else None."""
    if not _vertical(sampled_pairs(textpage, turn)):  # most CJK pages are set in lines: asked cheaply
        return None
    lines = page_lines(textpage, bounds, turn)
    if not _vertical([pair for line in lines for pair in itertools.pairwise(_drawn(line))]):
        return None
    columns: list[list[PageChar]] = []
    across: list[list[PageChar]] = []  # lines set across the page (a title, a page number)
    for line in lines:
        drawn = _drawn(line)
        if len(drawn) > 1 and not _vertical(list(itertools.pairwise(drawn))):
            across.append(drawn)
        else:
            columns += _split(drawn)
    if not columns:
        return None
    top = max(char.y for column in columns for char in column)
    above = sorted((line for line in across if _mean_y(line) > top), key=lambda line: -_mean_y(line))
    below = sorted((line for line in across if _mean_y(line) <= top), key=lambda line: -_mean_y(line))
    columns.sort(key=lambda column: -_mean_x(column))
    return "\n".join("".join(char.text for char in unit) for unit in [*above, *columns, *below])


def _split(drawn: list[PageChar]) -> list[list[PageChar]]:
    """A line of characters one below the other, cut into columns where the next character stands
    higher than the last by more than half a character's step (the top of the next column)."""
    steps = sorted(before.y - after.y for before, after in itertools.pairwise(drawn) if before.y > after.y)
    pitch = steps[len(steps) // 2] if steps else 0.0
    columns: list[list[PageChar]] = []
    for char in drawn:
        if not columns or char.y > columns[-1][-1].y + pitch / 2:
            columns.append([])
        columns[-1].append(char)
    return columns


def _mean_x(chars: list[PageChar]) -> float:
    return sum(char.x for char in chars) / len(chars)


def _mean_y(chars: list[PageChar]) -> float:
    return sum(char.y for char in chars) / len(chars)


def _drawn(line: list[PageChar]) -> list[PageChar]:
    return [char for char in line if not char.generated and char.text not in BREAKS]


def _vertical(pairs: list[Pair]) -> bool:
    """Whether most of these neighbouring characters stand one below the other."""
    below = sum(before.y - after.y > abs(after.x - before.x) for before, after in pairs)
    return below > 0 and below >= VERTICAL_SHARE * len(pairs)
