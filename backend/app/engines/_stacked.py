"""A column of short items stacked down the page, which tesseract read as vertical writing.

tesseract 5 takes a narrow column of short items set at an even pitch, as a pleading's line
numbers down its margin (1 to 28, one beside each line of text), for a line of vertical writing,
and reads it so: on such a page "ON DH FF WwW NY" (confidence 0-68) for the numbers 2 to 7, and
nothing at all for the other 22.

A line of tesseract's at least STACKED times as tall as it is wide, and STACKED times as tall as
the page's usual line, is such a column. The page's strip down that line's width (a usual line's
height either side), the words read elsewhere blanked, is read again as one block of lines; what
is kept of that reading (_dropped.kept: confident words) takes the line's place when it is more
confident than the line was. A label set up the margin, truly vertical, reads with confidence 95
or so, and is kept as read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import mean, median

from app.engines._tesseract_exec import TsvWord
from app.engines._text_lines import Box, Line, key_of, text_lines

STACKED = 3.0  # a line this many times as tall as it is wide, and as the page's usual line


def stacked_lines(words: Sequence[TsvWord]) -> list[Line]:
    """The lines tesseract read as vertical writing that are a column of items stacked down the
    page: STACKED times as tall as wide and as the usual line."""
    lines = text_lines(words).values()
    usual = _usual(lines)
    return [line for line in lines if usual and line.height >= STACKED * max(line.width, usual)]


def strip_of(line: Line, words: Sequence[TsvWord], size: tuple[int, int]) -> tuple[Box, list[TsvWord]]:
    """The box down the page (size: its width and height) a usual line's height either side of
    line, and the words read elsewhere, to blank in it."""
    margin = _usual(text_lines(words).values())
    box = (max(0, line.left - margin), 0, min(size[0], line.right + margin), size[1])
    return box, [word for word in words if key_of(word) != line.key]


def _usual(lines: Iterable[Line]) -> int:
    """The height of the page's usual line (of those wider than tall); 0 with none."""
    across = [line.height for line in lines if line.width > line.height]
    return round(median(across)) if across else 0


def replaced(words: Sequence[TsvWord], line: Line, found: Sequence[TsvWord]) -> list[TsvWord]:
    """The words with line's replaced by found (moved to the page) when found is read more
    confidently; the words as they were otherwise."""
    own = [word for word in words if key_of(word) == line.key]
    if not found or mean(word.confidence for word in found) <= mean(word.confidence for word in own):
        return list(words)
    out: list[TsvWord] = []
    for word in words:
        if key_of(word) != line.key:
            out.append(word)
        elif word is own[0]:
            out.extend(found)
    return out
