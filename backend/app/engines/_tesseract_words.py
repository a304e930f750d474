"""The words tesseract recognized on a page, taken from libtesseract in one walk.

The TSV (TessBaseAPIGetTsvText, what `tesseract ... tsv` prints) walks the results in reading
order with a ResultIterator. To place each word in its line's reading order, that iterator walks
back to the page's first word and forward again (PAGE_RES_IT::restart_row), so its cost grows
with the square of the words on the page: on a 300 DPI page of 10-point prose (about 850 words)
it took 0.39-0.51 s of CPU, a tenth of tesseract's reading of the page (4.3-4.7 s), where a
page of 180 words takes 0.02 s.

Where every word reads left to right, reading order is the order tesseract keeps its results
in, and an LTRResultIterator walks them once: 0.01-0.02 s on the same page, with the same
block, paragraph and line numbers, boxes, confidences and text as the TSV's word rows
(tests/integration/engines/test_tesseract_api.py). A page with a word in a right-to-left script
(Hebrew, Arabic, Syriac, Thaana, or Arabic digits) is taken from the TSV, which puts such words
in reading order.

The C API hands out no LTRResultIterator. Its three members used here are called by their C++
symbols (GCC's and Clang's name mangling, as on Linux and macOS): TessBaseAPI::GetLTRIterator
and LTRResultIterator's GetUTF8Text and Confidence, which are not virtual, so the C API's own
functions would call ResultIterator's. Moving, the beginnings of blocks, paragraphs and lines, and
boxes are PageIterator's and go through the C API. A library that does not export the three
symbols is read from the TSV.
"""

from __future__ import annotations

import ctypes
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.engines._tesseract_exec import TsvWord, tsv_words

# tesseract::PageIteratorLevel
_BLOCK, _PARAGRAPH, _LINE, _WORD = 0, 1, 2, 3
# The command's header row: the library gives the rows alone.
_TSV_HEADER = (
    "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
)
# Bidirectional classes that make ResultIterator reorder a line.
_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN", "RLE", "RLO", "RLI"})


@dataclass(frozen=True)
class _Members:
    """LTRResultIterator's members that the C API does not reach."""

    ltr_iterator: Callable[..., Any]
    text: Callable[..., Any]
    confidence: Callable[..., Any]


@cache
def _members(lib: ctypes.CDLL) -> _Members | None:
    pointer, level, real = ctypes.c_void_p, ctypes.c_int, ctypes.c_float
    signatures: tuple[tuple[str, list[Any], Any], ...] = (
        ("_ZN9tesseract11TessBaseAPI14GetLTRIteratorEv", [pointer], pointer),
        ("_ZNK9tesseract17LTRResultIterator11GetUTF8TextENS_17PageIteratorLevelE", [pointer, level], pointer),
        ("_ZNK9tesseract17LTRResultIterator10ConfidenceENS_17PageIteratorLevelE", [pointer, level], real),
    )
    found = []
    for symbol, argtypes, restype in signatures:
        try:
            function = lib[symbol]
        except AttributeError:  # not exported by this build of the library
            return None
        function.argtypes = argtypes
        function.restype = restype
        found.append(function)
    return _Members(*found)


def page_words(lib: ctypes.CDLL, handle: int) -> list[TsvWord] | None:
    """The words of the page handle has recognized, as the TSV's word rows give them; None if
    tesseract has no results to give."""
    members = _members(lib)
    if members is not None:
        words = _walk(lib, members, handle)
        if words is None or not any(_right_to_left(word.text) for word in words):
            return words
    return _from_tsv(lib, handle)


def _from_tsv(lib: ctypes.CDLL, handle: int) -> list[TsvWord] | None:
    text = lib.TessBaseAPIGetTsvText(handle, 0)
    if not text:
        return None
    try:
        tsv = ctypes.string_at(text).decode("utf-8", "replace")
    finally:
        lib.TessDeleteText(text)
    return tsv_words(_TSV_HEADER + tsv, 1)[0]


def _walk(lib: ctypes.CDLL, members: _Members, handle: int) -> list[TsvWord] | None:
    """One pass over the results in tesseract's order, numbering blocks, paragraphs and lines as
    the TSV does: a position with no word is passed over, a word whose text is blank is
    counted but not kept."""
    iterator = members.ltr_iterator(handle)
    if not iterator:
        return None
    words: list[TsvWord] = []
    block = paragraph = line = 0
    left, top, right, bottom = (ctypes.c_int() for _ in range(4))
    box = (ctypes.byref(left), ctypes.byref(top), ctypes.byref(right), ctypes.byref(bottom))
    try:
        while True:
            text = members.text(iterator, _WORD)  # null where there is no word
            if text:
                try:
                    word = ctypes.string_at(text).decode("utf-8", "replace").strip()
                finally:
                    lib.TessDeleteText(text)
                if lib.TessPageIteratorIsAtBeginningOf(iterator, _BLOCK):
                    block, paragraph, line = block + 1, 0, 0
                if lib.TessPageIteratorIsAtBeginningOf(iterator, _PARAGRAPH):
                    paragraph, line = paragraph + 1, 0
                if lib.TessPageIteratorIsAtBeginningOf(iterator, _LINE):
                    line += 1
                if word:
                    lib.TessPageIteratorBoundingBox(iterator, _WORD, *box)
                    # The TSV prints the confidence with six decimals (std::to_string).
                    confidence = float(f"{members.confidence(iterator, _WORD):f}")
                    words.append(
                        TsvWord(
                            block=block,
                            paragraph=paragraph,
                            line=line,
                            text=word,
                            confidence=max(0.0, confidence),
                            left=left.value,
                            top=top.value,
                            width=right.value - left.value,
                            height=bottom.value - top.value,
                        )
                    )
            if not lib.TessPageIteratorNext(iterator, _WORD):
                return words
    finally:
        lib.TessPageIteratorDelete(iterator)


def _right_to_left(text: str) -> bool:
    return any(unicodedata.bidirectional(character) in _RIGHT_TO_LEFT for character in text)
