"""Letter-spaced words kept whole: a space PDFium made between the letters of a word drawn with
tracking is left out.

A heading set with letter spacing (CSS `letter-spacing`, a word processor's expanded
characters) is drawn a character at a time, or with an offset after each one, and PDFium makes a
space wherever characters are drawn apart by about a fifth of an em or more: "A i r P o l l u t i o
n" for "Air Pollution". pdftotext does the same. The word gaps are still there, wider than the
letter gaps by a space's advance (and the tracking again), or drawn as a space.

So a row's run of four or more pieces of one character (or two: a kerned pair, "To", which
PDFium did not space out, whose letters are apart where a two-letter word's touch) is read as
a letter-spaced word's letters where the gap PDFium filled is the run's usual one (the median:
a word has more letters than gaps after it), give or take WORD_GAP of the row's character height,
and as words where it is wider or a space was drawn. That is done when the run shows words
apart (a wider gap in it or next to it, a drawn space), or it is one word alone on its row
("C O N T E N T S", "y e a r s ."), or it starts its row and the row before was letter-spaced
alike (then two pieces are enough: a phrase may go on to the next row with a short word, "o f").

Single-letter words in a line of prose ("the sets a b c d here") are apart by the same gap as
the words around them, and stay apart; so do cells of a table of one-character values, further
apart than _MAX_TRACKING. What geometry cannot tell is left: a row of nothing but single letters
as far apart as a letter-spaced word's ("A B C D" alone on a row) is read as one word.

A page is read so only when its bounded text has four one-letter pieces in a row: a search of
its text (0.5 us for a page of 600 characters, 9 for one of 3,500), then a stricter one of the
pages it finds.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping
from typing import NamedTuple

from app.engines._page_chars import WORD_GAP

_MAX_TRACKING = 0.7  # of a row's character height (ascent to descent; about 0.8 em): wider is not tracking
_MIN_PIECES = 4  # pieces of a run read as letters (fewer only after a letter-spaced row)
_KERNED = 0.05  # of a row's character height: two letters this far apart are letter-spaced, not touching
_SAME_SIZE = 0.05  # of a row's character height: rows this close in height may be set alike
# Of a row's character height: a gap this much wider than a letter-spaced run's usual one is a
# word gap. Narrower than WORD_GAP: a single-letter word before a letter-spaced phrase ("a l e a
# k") is as far apart as a space, which may be only a tenth of an em wider than the tracking.
_LETTER_SPREAD = 0.08
# Of a row's character height: the row's other words this much further apart (or closer) than a
# run's letters tell a single-letter word next to the run from one of its letters.
_DISTINCT = 0.04
_CLOSING = frozenset({"Po", "Pe", "Pf"})  # punctuation a letter-spaced word may end with
_CHEAP = re.compile(r" [^ ] [^ ] [^ ] ")  # three one-character pieces (a search that starts on a space)
_STRICT = re.compile(r"(?<![^\W_])[^\W_](?: [^\W_]){3}(?![^\W_])")  # four one-letter (or digit) pieces


class Separator(NamedTuple):
    """A space in a row's text (out, by index) between two characters a gap apart (in points):
    made by PDFium (made) or drawn by the writer."""

    at: int
    gap: float
    made: bool


class Tracking(NamedTuple):
    """A run's letter spacing and its row's character height (both in points)."""

    letter_gap: float  # the usual (median) gap PDFium filled between the run's letters
    unit: float
    word_gap: float | None = None  # the row's gap between words not spaced so (its median), if any

    def letters(self, gap: float) -> bool:
        """Whether characters that far apart are letters of a word spaced so: as far apart as
        usual, less _LETTER_SPREAD wider, WORD_GAP narrower (a kerned pair is drawn closer), and
        nearer that than the row's other words are (when theirs is another gap)."""
        if not -WORD_GAP * self.unit < gap - self.letter_gap < _LETTER_SPREAD * self.unit:
            return False
        if self.word_gap is None or abs(self.word_gap - self.letter_gap) < _DISTINCT * self.unit:
            return True  # no other words on the row, or as far apart as these letters: no telling
        return abs(gap - self.letter_gap) < abs(gap - self.word_gap)

    def alike(self, other: Tracking) -> bool:
        """Whether a run is letter-spaced as this one: its row as high, its letters as far apart."""
        return abs(self.unit - other.unit) <= _SAME_SIZE * self.unit and self.letters(other.letter_gap)


class _Run(NamedTuple):
    """A run that ends its row, not read as letters on its own: a word the next row may show was
    letter-spaced (a phrase going on to the next row)."""

    separators: list[Separator]
    tracking: Tracking


class Joined(NamedTuple):
    """What a row's reading tells the next row's."""

    spaces: int  # left out
    tracking: Tracking | None = None  # of the run of letters that ends the row
    tail: _Run | None = None  # the run that ends the row, when not read as letters


def may_be_letter_spaced(text: str) -> bool:
    """Whether the page's bounded text (text) has four one-letter pieces in a row, as PDFium
    spaces out a letter-spaced word."""
    return _CHEAP.search(text) is not None and _STRICT.search(text) is not None


def join_tracked_letters(
    out: list[str],
    start: int,
    separators: list[Separator],
    unit: float,
    gaps: Mapping[int, float],
    before: Joined | None = None,
) -> Joined:
    """Leave out (in out, the page's text so far, whose row starts at start) the spaces PDFium
    made between the letters of a letter-spaced word on the row, and on the row before (before:
    what its reading told) when this one shows its last word was letter-spaced: separators are
    the row's spaces in order, unit its character height, gaps the gaps (by index in out)
    between its characters with nothing between that are apart."""
    if unit <= 0 or not any(separator.made for separator in separators):
        return Joined(0)
    bounds = [start - 1, *(separator.at for separator in separators), len(out)]
    pieces = ["".join(out[a + 1 : b]) for a, b in itertools.pairwise(bounds)]
    letters = [
        len(piece) == 1 or _spaced_apart(piece, a, b, gaps, unit)
        for piece, (a, b) in zip(pieces, itertools.pairwise(bounds), strict=True)
    ]
    # between two pieces that are not letters: the row's words not letter-spaced
    word_gap = _usual_gap(
        [sep for at, sep in enumerate(separators) if not letters[at] and not letters[at + 1]]
    )
    joined, tracking, tail = 0, None, None
    first = 0  # the run's first piece
    while first < len(pieces):
        last = first
        while last < len(pieces) and letters[last]:
            last += 1
        # pieces[first:last] may be letters, with separators[first:last - 1] between
        run, inside = pieces[first:last], separators[first : last - 1]
        usual = _usual_gap(inside)
        tracking = None
        if usual is not None and 0 < usual <= _MAX_TRACKING * unit and len(run) >= 2:
            spacing = Tracking(usual, unit, word_gap)
            around = [separators[at] for at in (first - 1, last - 1) if 0 <= at < len(separators)]
            after = before if first == 0 else None
            if _letter_spaced(
                run, spacing, inside, around, alone=first == 0 and last == len(pieces), before=after
            ):
                joined += _join_letters(out, inside, spacing)
                tracking = spacing
                if after is not None and after.tail is not None and spacing.alike(after.tail.tracking):
                    joined += _join_letters(out, after.tail.separators, after.tail.tracking)
            elif last == len(pieces):
                tail = _Run(inside, spacing)
        first = last + 1
    return Joined(joined, tracking, tail)


def _letter_spaced(
    run: list[str],
    spacing: Tracking,
    inside: list[Separator],
    around: list[Separator],
    *,
    alone: bool,
    before: Joined | None,
) -> bool:
    """Whether the run's pieces are letters of letter-spaced words: four or more, most of one
    character, that show words apart or are one word alone on the row; or the row starts with
    it and the row before ended in letters spaced alike."""
    if before is not None and before.tracking is not None and before.tracking.alike(spacing):
        return True
    if len(run) < _MIN_PIECES or sum(len(piece) == 1 for piece in run) * 2 < len(run):
        return False
    return _words_apart(spacing, inside, around) or (alone and _one_word(run))


def _usual_gap(separators: list[Separator]) -> float | None:
    """The median gap PDFium filled (a word has more letters than gaps after it)."""
    made = sorted(separator.gap for separator in separators if separator.made)
    return made[len(made) // 2] if made else None


def _words_apart(spacing: Tracking, inside: list[Separator], around: list[Separator]) -> bool:
    """Whether a gap in the run or next to it (around) is wider than its letters', or a space is
    drawn in it."""
    word_gap = spacing.letter_gap + _LETTER_SPREAD * spacing.unit
    return any(not separator.made or separator.gap >= word_gap for separator in inside) or any(
        separator.gap >= word_gap for separator in around
    )


def _spaced_apart(piece: str, a: int, b: int, gaps: Mapping[int, float], unit: float) -> bool:
    """Whether the characters of the piece (between out[a] and out[b]) are all apart, as a
    letter-spaced word's that PDFium did not space out (a kerned pair, "To"; "TAT" of
    "S TAT E M E N T"), not touching as a word's."""
    apart = sum(1 for at in range(a + 1, b) if gaps.get(at, 0.0) >= _KERNED * unit)
    return apart == len(piece) - 1


def _one_word(run: list[str]) -> bool:
    """Whether the run may be one word of _MIN_PIECES pieces or more: letters and digits,
    punctuation at its ends only ("years.", not an equation's "a + b = c")."""
    inner = list(run)
    while inner and not inner[0].isalnum():
        inner.pop(0)
    while inner and not inner[-1].isalnum():
        inner.pop()
    return len(inner) >= _MIN_PIECES and all(piece.isalnum() for piece in inner)


def _join_letters(out: list[str], separators: list[Separator], tracking: Tracking) -> int:
    """Leave out the spaces PDFium made between letters spaced so, and before a full stop or a
    closing bracket drawn closer (kerned: "y ."); how many."""
    joined = 0
    for separator in separators:
        if not separator.made:
            continue
        following = out[separator.at + 1][:1] if separator.at + 1 < len(out) else ""
        hugs = bool(following) and unicodedata.category(following) in _CLOSING
        if tracking.letters(separator.gap) or (hugs and separator.gap < tracking.letter_gap):
            out[separator.at] = ""
            joined += 1
    return joined
