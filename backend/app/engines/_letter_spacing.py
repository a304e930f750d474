"""Letter-spaced words kept whole: a space PDFium made between the letters of a word drawn with
tracking is left out.

A heading set with letter spacing (CSS `letter-spacing`, a word processor's expanded
characters) is drawn a character at a time, or with an offset after each one, and PDFium makes a
space wherever characters are drawn apart by about a fifth of an em or more: "A i r P o l l u t i o
n" for "Air Pollution". pdftotext does the same. The word gaps are still there, wider than the
letter gaps by a space's advance (and the tracking again), or drawn as a space.

So a row's run of four or more letters (or punctuation; not digits or signs), most of them
pieces of one character (the others a kerned pair or more, "To", "TAT", whose letters are
apart where a word's touch), with most of its gaps filled by PDFium, is read as letter-spaced
when its gaps are of two kinds only: as wide as its usual one (the median: a word has more
letters than gaps after it), give or take _EVEN of the row's character height, which are left
out, and WORD_GAP wider, which are word gaps. A single-letter word a space away at either end is
left out of the run. The run must show words apart (a word gap, a drawn space), or be one word
of capitals alone on its row ("C O N T E N T S", "Y E A R S ."), or go on a phrase that ended
the row before, spaced alike, and end with a word gap or its row.

Single-letter words in prose ("the sets a b c d here") are as far apart as the words around
them, and stay apart; cells of a table of one-character values a fixed pitch apart are as far
apart as their widths let them be, or further than _MAX_TRACKING, and stay apart. What geometry
cannot tell is left: a row of nothing but capitals as far apart as a letter-spaced word's ("A B
C D" alone on a row) is read as one word, and so is a table row of one-letter cells evenly
apart in groups ("q w e r t y   a s d f g h"). A letter-spaced word of three letters or fewer
alone at the start or end of a row, tracking under a fifth of an em (PDFium spaces only some
letters), and small capitals with tracking stay as PDFium gives them.

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
_MIN_PIECES = 4  # pieces of a run read as letters
_KERNED = 0.05  # of a row's character height: two letters this far apart are letter-spaced, not touching
_SAME_SIZE = 0.05  # of a row's character height: rows this close in height may be set alike
# Of a row's character height: a letter-spaced run's letters are this close to its usual gap
# (tracking spaces every letter alike, but for kerning), and every other gap PDFium filled in it
# is a word gap (WORD_GAP wider); a table's cells of one character a fixed pitch apart are as
# far apart as their widths let them be, and are left.
_EVEN = 0.06
# Of a row's character height: the row's other words this much further apart (or closer) than a
# run's letters tell a single-letter word next to the run from one of its letters.
_DISTINCT = 0.04
_CLOSING = frozenset({"Po", "Pe", "Pf"})  # punctuation a letter-spaced word may end with
_WORD_PUNCTUATION = _CLOSING | {"Ps", "Pi"}  # and begin with
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
        usual, give or take _EVEN, and nearer that than the row's other words are (when theirs
        is another gap)."""
        if abs(gap - self.letter_gap) > _EVEN * self.unit:
            return False
        if self.word_gap is None or abs(self.word_gap - self.letter_gap) < _DISTINCT * self.unit:
            return True  # no other words on the row, or as far apart as these letters: no telling
        return abs(gap - self.letter_gap) < abs(gap - self.word_gap)

    def words(self, gap: float) -> bool:
        """Whether characters that far apart are in two words spaced so."""
        return gap >= self.letter_gap + WORD_GAP * self.unit

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
        _letter_like(piece) and (len(piece) == 1 or _spaced_apart(piece, a, b, gaps, unit))
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
        if usual is not None and 0 < usual <= _MAX_TRACKING * unit and _may_be_spaced_out(run, inside):
            spacing = Tracking(usual, unit, word_gap)
            after = before if first == 0 else None
            alone = first == 0 and last == len(pieces)
            evenly = _evenly_spaced(out, inside, spacing)
            phrase = evenly is not None and _words_apart(evenly, spacing)
            # a phrase from the row before goes on: it ends here (a word gap after it) or with the row
            ends = last == len(pieces) or spacing.words(separators[last - 1].gap)
            goes_on = (
                ends and after is not None and after.tracking is not None and after.tracking.alike(spacing)
            )
            if evenly is not None and (phrase or goes_on or (alone and _one_word(run))):
                joined += _join_letters(out, evenly, spacing)
                # a phrase may go on to the next row (a word alone on its row does not)
                tracking = spacing if (phrase or goes_on) and evenly[-1:] == inside[-1:] else None
                if (
                    phrase
                    and after is not None
                    and after.tail is not None
                    and spacing.alike(after.tail.tracking)
                ):
                    joined += _join_letters(out, after.tail.separators, after.tail.tracking)
            elif last == len(pieces) and evenly is not None:
                tail = _Run(evenly, spacing)
        first = last + 1
    return Joined(joined, tracking, tail)


def _letter_like(piece: str) -> bool:
    """Whether each of the piece's characters is a letter or punctuation a word may have (not a
    mathematical sign, "x + y = z", nor a digit: one-digit cells of a table are evenly apart)."""
    return all(char.isalpha() or unicodedata.category(char) in _WORD_PUNCTUATION for char in piece)


def _may_be_spaced_out(run: list[str], inside: list[Separator]) -> bool:
    """Whether the run may be a letter-spaced word's letters spaced out by PDFium: four pieces
    or more, most of one character, most of the gaps between them filled by PDFium (a writer
    that draws a space between letters tracks them itself)."""
    made = sum(separator.made for separator in inside)
    return (
        len(run) >= _MIN_PIECES
        and sum(len(piece) == 1 for piece in run) * 2 >= len(run)
        and made * 2 > len(inside)
    )


def _evenly_spaced(out: list[str], inside: list[Separator], spacing: Tracking) -> list[Separator] | None:
    """The run's separators, or all but its first or last (a single-letter word next to a
    letter-spaced phrase, a space apart), when each gap PDFium filled is a letter gap or a word
    gap of its spacing, or a full stop's drawn closer; None when the gaps are spread out (a
    table's cells of one character, a fixed pitch apart, are as far apart as their widths let
    them be)."""
    for trimmed in (inside, inside[1:], inside[:-1], inside[1:-1]):
        if len(trimmed) < _MIN_PIECES - 1:
            break
        if all(
            not separator.made
            or spacing.letters(separator.gap)
            or spacing.words(separator.gap)
            or (_hugs(out, separator) and separator.gap < spacing.letter_gap)
            for separator in trimmed
        ):
            return trimmed
    return None


def _words_apart(evenly: list[Separator], spacing: Tracking) -> bool:
    """Whether the run shows words apart: a word gap of its spacing, or a space drawn."""
    return any(not separator.made or spacing.words(separator.gap) for separator in evenly)


def _hugs(out: list[str], separator: Separator) -> bool:
    """Whether the separator is before a full stop, a comma or a closing bracket."""
    following = out[separator.at + 1][:1] if separator.at + 1 < len(out) else ""
    return bool(following) and unicodedata.category(following) in _CLOSING


def _usual_gap(separators: list[Separator]) -> float | None:
    """The median gap PDFium filled (a word has more letters than gaps after it)."""
    made = sorted(separator.gap for separator in separators if separator.made)
    return made[len(made) // 2] if made else None


def _spaced_apart(piece: str, a: int, b: int, gaps: Mapping[int, float], unit: float) -> bool:
    """Whether the characters of the piece (between out[a] and out[b]) are all apart, as a
    letter-spaced word's that PDFium did not space out (a kerned pair, "To"; "TAT" of
    "S TAT E M E N T"), not touching as a word's."""
    apart = sum(1 for at in range(a + 1, b) if gaps.get(at, 0.0) >= _KERNED * unit)
    return apart == len(piece) - 1


def _one_word(run: list[str]) -> bool:
    """Whether the run may be one word of _MIN_PIECES pieces or more: capitals, punctuation at its
    ends only ("C O N T E N T S :"; a row of small letters, "a b c d", is more likely a list's)."""
    inner = list(run)
    while inner and not inner[0].isalnum():
        inner.pop(0)
    while inner and not inner[-1].isalnum():
        inner.pop()
    return len(inner) >= _MIN_PIECES and all(piece.isalpha() and piece.isupper() for piece in inner)


def _join_letters(out: list[str], separators: list[Separator], tracking: Tracking) -> int:
    """Leave out the spaces PDFium made between letters spaced so, and before a full stop or a
    closing bracket drawn closer (kerned: "y ."); how many."""
    joined = 0
    for separator in separators:
        if separator.made and (
            tracking.letters(separator.gap) or (_hugs(out, separator) and separator.gap < tracking.letter_gap)
        ):
            out[separator.at] = ""
            joined += 1
    return joined
