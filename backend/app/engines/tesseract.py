"""Tesseract on pages rendered at 300 DPI, with per-word confidences.

Each page is rendered (or a bare scan's own image decoded) to 8-bit grayscale
in memory and read by this process's tesseract, whose model is loaded once per
process and language (_tesseract_api.py): a page at a time, so one page image
is held at a time. Pages with nothing on them are answered without OCR. A grainy
page is smoothed (_denoise.py), and an unevenly lit one, or one with shaded bands
under its text, has its paper evened out (_shading.py), and a dusty one has its
lone specks painted out (_specks.py), before anything else looks at it; a page
that needs none of these pays some 25 ms of measuring.
Once it is straight, thin rules that touch its text (an underline at the
letters' feet, a line struck through them) are painted out (_rules.py), and a
page whose rules tilt by a fifth of a degree or more is straightened for them.
Then dotted leaders (a table of contents', a form's) are painted out
(_leaders.py), and put back in the words read, each number moved to its
title's line (_leader_lines.py); and a form's empty boxes to tick are painted
out and put back as "\u2610" before their labels (_tick_boxes.py; not on pages
in a CJK script, whose glyphs hold empty squares). After reading, a column of
items stacked down the page that tesseract read as vertical writing (a
pleading's line numbers) is read again across (_stacked.py), what tesseract
dropped beside a line it read is read again (_dropped.py), a column of short
cells read on its own goes at the end of the lines it stands level with
(_row_cells.py), and a table read a column at a time is put back in rows
(_table_rows.py).

Orientation and skew, in proportion to what a page needs:

- every page's text lines are measured on the rendered image (_orientation.py,
  about 6 ms): a page tilted a degree or more is straightened before it is
  written out (tesseract 5 returns nothing at all for a page tilted 2.5 degrees
  clockwise);
- a page whose lines run up and down is shown to tesseract's orientation
  detection (OSD, about 0.45 s) and read turned the way it guesses;
- a reading that is doubtful (a low mean confidence) is read again the other
  ways up its lines leave: upside down for lines across the page; for lines
  up and down, the other quarter turn and the page as it came. The reading's
  confidence decides, never OSD alone (it is wrong often enough on poor scans
  and sparse pages): a turn is kept only when it reads measurably better than
  the page as it came.

So an upright, straight page costs the measure and nothing else; a page upside
down is read twice; a page on its side is shown to OSD and read once. A step
that fails (OSD, turning an image, a second reading) leaves the page as it
came, logged as `orientation_failed`; without the osd language data, pages on
their side are read both ways. Each page records the turn it was read at
(`rotation`) and the tilt straightened (`skew`); its word boxes are in pixels
of that upright, straightened image.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import pypdfium2 as pdfium
from PIL import Image

from app.core.errors import OCRError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines._annotations import annotation_text, joined_text, undrawn_field_text
from app.engines._denoise import denoised
from app.engines._dropped import dropped_boxes, kept, strips
from app.engines._leader_lines import after_strips, leader_words, placed, unread
from app.engines._leaders import Leader, without_leaders
from app.engines._orientation import LEVEL, MIN_SKEW, Lines, measure, straighten, turn
from app.engines._page_clock import paused_page_clock
from app.engines._pages import (
    RENDER_DPI,
    failed_page,
    is_empty,
    load_page,
    open_pdf,
    page_image,
    render_dpi,
    undecodable_content,
)
from app.engines._read_pages import page_read
from app.engines._row_cells import cells_on_rows
from app.engines._rules import SLANT, has_rules, unruled
from app.engines._shading import evened
from app.engines._specks import despeckled
from app.engines._stacked import replaced, stacked_lines, strip_of
from app.engines._table_rows import table_rows
from app.engines._tesseract_api import PSM_BLOCK, reader
from app.engines._tesseract_api import version as library_version
from app.engines._tesseract_exec import (
    TsvWord,
    detect_orientation,
    scratch_directory,
    tesseract_binary,
    words_to_text,
)
from app.engines._tick_boxes import TickBox, box_words, without_boxes
from app.engines.base import PageResult, Word
from app.engines.errors import TesseractFailedError
from app.engines.languages import has_orientation_data, require_languages

log = get_logger(__name__)
Marks = TypeVar("Marks")  # what a step takes off a page before it is read: leaders, boxes
BOXED_SCRIPTS = ("chi_", "jpn", "kor")  # tesseract's CJK languages: their glyphs hold empty squares


class TesseractEngine:
    name = "tesseract"

    def __init__(self, language: str = DEFAULT_LANGUAGE) -> None:
        self.language = language  # tesseract's -l: eng, rus, eng+deu
        # Fail at construction, not on the first page, when the binary or the language is missing.
        tesseract_binary()
        require_languages(language)
        # Without the osd data pages are still straightened, but never turned by OSD's guess.
        self._can_guess = has_orientation_data()
        self._boxes = takes_boxes_off(language)
        if not self._can_guess:
            log.warning("orientation_unavailable", reason="tesseract has no osd language data")

    def version(self) -> str:
        return library_version()

    def warm(self) -> None:
        """Load the model now (a worker's OCR processes at start-up), not on the first page. Not
        at construction: the planner's text pass builds engines it never reads a scan with."""
        reader(self.language)

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        with open_pdf(pdf_bytes) as document:
            return self.recognize_pages(document, range(len(document)), first_page_number)

    def recognize_pages(
        self,
        document: pdfium.PdfDocument,
        indices: Iterable[int],
        first_page_number: int,
        finish: Callable[[PageResult], PageResult] | None = None,
    ) -> list[PageResult]:
        """OCR the pages at indices (0-based in document), numbered from first_page_number.

        A page that cannot be read (lost, too large, a render error, over a resource limit, or
        refused by tesseract) is a failed page; the others are read. finish: what the caller
        makes of each page's result. Each page is recorded as read once finished
        (_read_pages.page_read), so a run after a death of the OCR process does not read it again."""
        results: list[PageResult] = []
        for index in indices:
            rendered = _render(document, index, first_page_number + index, boxes=self._boxes)
            result = rendered if isinstance(rendered, PageResult) else self._read(rendered)
            if finish is not None:
                result = finish(result)
            page_read(result)
            results.append(result)
        return sorted(results, key=lambda result: result.page_number)

    def _read(self, page: _Rendered) -> PageResult:
        """Read the page as it was rendered (straightened), or turned where tesseract's
        orientation guess says so and the page reads better for it."""
        started = time.perf_counter()
        # Lines that run up and down: guess which way up before the first reading.
        first = self._guess(page) if page.sideways else 0
        readings = self._read_each(page, [first])
        # The page as it came when its turned image could not be made.
        turn = first if first in readings else 0
        # A doubtful reading: read the page the other ways up its lines leave.
        retry = _other_ways_up(page, turn) if _doubtful(readings[turn], turn) else []
        if retry:
            readings |= self._read_again(page, retry)
        rotation = _choose(readings)
        words = readings[rotation]
        log.debug(
            "tesseract_page",
            page=page.number,
            rotation=rotation,
            skew=page.skew,
            denoised=page.denoised,
            evened=page.evened,
            despeckled=page.despeckled,
            unruled=page.unruled,
            leaders=len(page.leaders),
            boxes=len(page.boxes),
            read_again=len(retry),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        if isinstance(words, TesseractFailedError):
            failure = TesseractFailedError(f"page {page.number}: {words.message}", page=page.number)
            return failed_page(page.number, failure)
        words = self._with_leaders(page, self._unstacked(page, words, rotation), rotation)
        words = self._with_dropped(page, words, rotation)
        words = box_words(words, page.boxes) if rotation == 0 else words  # turned: left out
        return _page_result(page, table_rows(cells_on_rows(words)), rotation)

    def _unstacked(self, page: _Rendered, words: list[TsvWord], rotation: int) -> list[TsvWord]:
        """The page's words with each column of items it read as vertical writing read again
        across (_stacked; a page the right way up only)."""
        for line in stacked_lines(words) if rotation == 0 else []:
            box, others = strip_of(line, words, page.image.size)
            image, corner = strips(page.image, [box], others)
            try:
                with paused_page_clock():
                    found = reader(self.language).read(image, dpi=page.dpi, psm=PSM_BLOCK)
            except TesseractFailedError as exc:
                log.warning("stacked_failed", page=page.number, error_code=exc.code, error=exc.message)
                continue
            words = replaced(words, line, kept(found, corner, max(word.block for word in words)))
        return words

    def _with_dropped(self, page: _Rendered, words: list[TsvWord], rotation: int) -> list[TsvWord]:
        """The page's words and what tesseract dropped beside its lines, read again (_dropped;
        a page the right way up only)."""
        boxes = dropped_boxes(words, page.image, page.dpi) if rotation == 0 else []
        if not boxes:
            return words
        image, corner = strips(page.image, boxes, words)
        try:
            with paused_page_clock():
                found = reader(self.language).read(image, dpi=page.dpi, psm=PSM_BLOCK)
        except TesseractFailedError as exc:
            log.warning("dropped_failed", page=page.number, error_code=exc.code, error=exc.message)
            return words
        return [*words, *kept(found, corner, max((word.block for word in words), default=0))]

    def _with_leaders(self, page: _Rendered, words: list[TsvWord], rotation: int) -> list[TsvWord]:
        """The page's words with its dotted leaders put back in their lines (_leader_lines), and
        what follows a leader read again on its own where tesseract dropped it."""
        if not page.leaders:
            return words
        leaders = _leaders_at(page, rotation)
        image = _turned(page, rotation) if rotation else page.image
        missing = unread(words, leaders, image, page.dpi) if image is not None else []
        if image is not None and missing:
            strips, corner = after_strips(words, missing, image, page.dpi)
            try:
                with paused_page_clock():
                    found = reader(self.language).read(strips, dpi=page.dpi, psm=PSM_BLOCK)
            except TesseractFailedError as exc:
                log.warning("leaders_failed", page=page.number, error_code=exc.code, error=exc.message)
                found = []
            block = max((word.block for word in words), default=0)
            words = [*words, *placed(found, corner, block, missing, page.dpi)]
        return leader_words(words, leaders, page.dpi)

    def _guess(self, page: _Rendered) -> int:
        """tesseract's guess of the clockwise turn that makes the page upright (0 without one)."""
        if not self._can_guess:
            return 0
        try:
            with scratch_directory() as scratch:
                path = scratch / f"{page.number:06d}.tif"
                page.image.save(path, format="TIFF", dpi=(page.dpi, page.dpi))
                guess = detect_orientation(path, dpi=page.dpi)
        except OCRError as exc:
            log.warning("orientation_failed", page=page.number, error_code=exc.code, error=exc.message)
            return 0
        except OSError as exc:  # tesseract could not be started (no memory left to fork it, ...)
            log.warning("orientation_failed", page=page.number, error_code="osd_not_started", error=str(exc))
            return 0
        return guess.rotation if guess is not None and guess.confidence >= _MIN_GUESS_CONFIDENCE else 0

    def _read_again(self, page: _Rendered, rotations: list[int]) -> _Readings:
        """The second readings: when they cannot be had (tesseract timed out), the page keeps its
        first."""
        try:
            return self._read_each(page, rotations)
        except OCRError as exc:
            log.warning("orientation_failed", page=page.number, error_code=exc.code, error=exc.message)
            return {}

    def _read_each(self, page: _Rendered, rotations: list[int]) -> _Readings:
        """The readings of the page turned by each of rotations. A turn whose image cannot be
        made is read as the page came instead (or left out, when that is wanted too)."""
        readings: _Readings = {}
        for wanted in rotations:
            rotation, image = wanted, _turned(page, wanted)
            if image is None:
                if 0 in rotations:
                    continue
                rotation, image = 0, page.image
            if rotation in readings:
                continue
            try:
                with paused_page_clock():  # tesseract keeps its own deadline
                    readings[rotation] = reader(self.language).read(image, dpi=page.dpi)
            except TesseractFailedError as refused:
                readings[rotation] = refused
        return readings


# One page's readings by clockwise turn: its words, or tesseract's refusal of that image.
_Readings = dict[int, list[TsvWord] | TesseractFailedError]

# A reading is doubtful below this mean word confidence: pages upside down read at 0.30-0.40 and
# pages turned a quarter the wrong way no better, while scans right way up read at 0.85-0.96
# (and poor ones at 0.60-0.80), so only pages that need it pay for a second reading.
_DOUBTFUL_CONFIDENCE = 0.60
_MIN_JUDGED_LETTERS = 20  # a few words are not enough to tell which way up a page is
# OSD's orientation confidence on a page of text is 10-25; under this its guess is noise.
_MIN_GUESS_CONFIDENCE = 2.0
# A turn wins over the page as it came only when it reads measurably better: this many times as
# many confidently read letters, and _BETTER_BY more. Ties keep the page as it came.
_BETTER_RATIO = 1.10
_BETTER_BY = 10.0


def _other_ways_up(page: _Rendered, turn: int) -> list[int]:
    """The turns to read a page at when its reading at `turn` is doubtful: lines across the page
    leave upside down; lines up and down, the other quarter turn, or none (vertical text), when
    the guess was wrong or there was none."""
    if not page.sideways:
        return [180]
    return [0, (turn + 180) % 360] if turn else [90, 270]


def _doubtful(words: list[TsvWord] | TesseractFailedError, rotation: int) -> bool:
    """Whether a reading leaves the page's orientation in doubt (a turned image tesseract
    refuses does: the page as it came may read)."""
    if isinstance(words, TesseractFailedError):
        return rotation != 0
    letters = sum(len(word.text) for word in words)
    if letters < _MIN_JUDGED_LETTERS:
        return False
    return sum(word.confidence for word in words) / len(words) / 100 < _DOUBTFUL_CONFIDENCE


def _score(words: list[TsvWord] | TesseractFailedError) -> float:
    """Confidently read letters: each word's length weighted by its confidence."""
    if isinstance(words, TesseractFailedError):
        return -1.0
    return sum(len(word.text) * word.confidence / 100 for word in words)


def _choose(readings: _Readings) -> int:
    """The turn whose reading is best; the page as it came (0) unless a turn is measurably better."""
    best = max(readings, key=lambda rotation: _score(readings[rotation]))
    if best != 0 and 0 in readings:
        as_it_came = _score(readings[0])
        if _score(readings[best]) < as_it_came * _BETTER_RATIO + _BETTER_BY:
            return 0
    return best


@dataclass(frozen=True, slots=True)
class _Rendered:
    number: int
    image: Image.Image  # the page as rendered, straightened by skew: 8-bit grayscale
    dpi: int
    skew: float  # degrees of counter-clockwise tilt straightened (0.0: level enough as it came)
    sideways: bool  # its lines run up and down: guess which way up before reading it
    undrawn: str  # form fields' text the render leaves out (a chunk has no form to draw them)
    denoised: bool = False  # its sensor noise was smoothed before reading (_denoise)
    evened: bool = False  # its paper was evened out before reading: unevenly lit or banded (_shading)
    despeckled: bool = False  # lone specks of dust were painted out before reading (_specks)
    unruled: bool = False  # thin rules along its lines were taken off before reading (_rules)
    leaders: tuple[Leader, ...] = ()  # dotted leaders taken off before reading, put back after
    boxes: tuple[TickBox, ...] = ()  # empty boxes to tick taken off before reading, put back after


def takes_boxes_off(language: str) -> bool:
    """Whether pages read in language have their empty boxes to tick taken off: not in a CJK
    script, whose glyphs have empty squares of their own (口, "mouth")."""
    return not any(code.startswith(BOXED_SCRIPTS) for code in language.split("+"))


def _render(
    document: pdfium.PdfDocument, index: int, number: int, *, boxes: bool = True
) -> _Rendered | PageResult:
    """The page rendered, straightened (its empty boxes to tick taken off, unless boxes is
    False), or its result when it needs no OCR (blank) or cannot be read (a failed page)."""
    try:
        page = load_page(document, index, number)
        try:
            if is_empty(page):  # nothing drawn for tesseract: what its notes and fields show is its text
                shown = annotation_text(page)
                if not shown and (error := undecodable_content(document, index, number)) is not None:
                    raise error
                return PageResult(number, shown, 1.0 if shown else 0.0, "ocr")
            undrawn = undrawn_field_text(page)
            dpi = render_dpi(page, number)
            image = page_image(document, page, index, number, dpi)
        finally:
            page.close()
        image, smoothed = denoised(image)
        image, lit = evened(image, dpi)  # before the measure, whose own threshold is the page's
        image, dusty = despeckled(image, dpi)  # on even paper, with which the specks are painted
        lines = _measure(image, number, dpi)
        skew = lines.skew if abs(lines.skew) >= MIN_SKEW else 0.0
        if not skew and not lines.sideways and abs(lines.skew) >= SLANT and _has_rules(image, number, dpi):
            skew = lines.skew  # its rules are staircases at this tilt: level them (_rules)
        if skew:
            image = straighten(image, skew)
        image, ruled = _unruled(image, number, dpi, sideways=lines.sideways)
        image, leaders = (image, ()) if lines.sideways else _without_leaders(image, number, dpi)
        image, ticks = (image, ()) if lines.sideways or not boxes else _without_boxes(image, number, dpi)
    except (OCRError, MemoryError) as exc:
        return failed_page(number, exc)
    return _Rendered(
        number, image, dpi, skew, lines.sideways, undrawn, smoothed, lit, dusty, ruled, leaders, ticks
    )


def _has_rules(image: Image.Image, number: int, dpi: int) -> bool:
    """Whether the page has thin rules (_rules); False, logged, when looking fails."""
    try:
        return has_rules(image, dpi)
    except Exception as exc:  # as in _measure: the page itself is fine, and is read as it came
        log.warning(
            "rules_failed", page=number, error_code="rules_look_failed", error=f"{type(exc).__name__}: {exc}"
        )
        return False


def _unruled(image: Image.Image, number: int, dpi: int, *, sideways: bool) -> tuple[Image.Image, bool]:
    """The page with the rules that touch its text painted out (_rules), looked for up and down
    the image when its lines run that way; the page as it came, logged, when that fails."""
    try:
        if not sideways:
            return unruled(image, dpi)
        clean, ruled = unruled(image.transpose(Image.Transpose.ROTATE_90), dpi)
        return (clean.transpose(Image.Transpose.ROTATE_270), True) if ruled else (image, False)
    except Exception as exc:  # as in _measure: the page itself is fine, and is read as it came
        log.warning(
            "rules_failed", page=number, error_code="rules_paint_failed", error=f"{type(exc).__name__}: {exc}"
        )
        return image, False


def _without_leaders(image: Image.Image, number: int, dpi: int) -> tuple[Image.Image, tuple[Leader, ...]]:
    """The page with its dotted leaders taken off, and the leaders (_leaders)."""
    return _taken_off(without_leaders, image, number, dpi, "leaders")


def _without_boxes(image: Image.Image, number: int, dpi: int) -> tuple[Image.Image, tuple[TickBox, ...]]:
    """The page with its empty boxes to tick taken off, and the boxes (_tick_boxes)."""
    return _taken_off(without_boxes, image, number, dpi, "tick_boxes")


def _taken_off(
    step: Callable[[Image.Image, int], tuple[Image.Image, tuple[Marks, ...]]],
    image: Image.Image,
    number: int,
    dpi: int,
    name: str,
) -> tuple[Image.Image, tuple[Marks, ...]]:
    """What step takes off the page, and the page without it; the page as it came, logged as
    name_failed, when that fails."""
    try:
        return step(image, dpi)
    except Exception as exc:  # as in _measure: the page itself is fine, and is read as it came
        log.warning(
            f"{name}_failed",
            page=number,
            error_code=f"{name}_look_failed",
            error=f"{type(exc).__name__}: {exc}",
        )
        return image, ()


def _measure(image: Image.Image, number: int, dpi: int) -> Lines:
    """The page's lines as measured, or level when measuring fails (the page is read as it came)."""
    try:
        return measure(image, dpi)
    except Exception as exc:
        # Whatever goes wrong in measuring (memory under the process's limit, a flaw in the
        # measure), the page itself is fine: it is read as it came rather than lost.
        log.warning(
            "orientation_failed",
            page=number,
            error_code="skew_measure_failed",
            error=f"{type(exc).__name__}: {exc}",
        )
        return LEVEL


def _leaders_at(page: _Rendered, rotation: int) -> list[Leader]:
    """The page's leaders where they are on its image turned by rotation: upside down (the only
    turn of a page whose lines run across, where leaders are looked for) or as it came."""
    if rotation != 180:
        return list(page.leaders)
    return [leader.turned(*page.image.size) for leader in page.leaders]


def _turned(page: _Rendered, rotation: int) -> Image.Image | None:
    """The page's image turned clockwise by rotation; None (logged) when it cannot be made, so
    the page is read without that turn."""
    try:
        return turn(page.image, rotation)
    except (OSError, ValueError, MemoryError) as exc:
        log.warning("orientation_failed", page=page.number, error_code="turn_failed", error=str(exc))
        return None


def _page_result(page: _Rendered, words: list[TsvWord], rotation: int) -> PageResult:
    confidence = sum(w.confidence for w in words) / len(words) / 100 if words else 0.0
    return PageResult(
        page.number,
        joined_text(words_to_text(words), page.undrawn),  # what OCR could not see, from the form
        round(confidence, 4),
        "ocr",
        tuple(
            Word(w.text, round(w.confidence / 100, 4), (w.left, w.top, w.left + w.width, w.top + w.height))
            for w in words
        ),
        rotation=rotation,
        skew=page.skew,
        dpi=page.dpi if page.dpi != RENDER_DPI else None,
    )
