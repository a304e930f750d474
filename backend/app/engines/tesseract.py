"""Tesseract on pages rendered at 300 DPI, with per-word confidences.

Pages are rendered to grayscale TIFF files and read by one tesseract process
per batch of BATCH_PAGES (see _tesseract_exec.py for the measurements), so a
chunk pays tesseract's start-up once per batch, not once per page. Pages with
nothing on them are answered without OCR.

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
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
from PIL import Image

from app.core.errors import OCRError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines._annotations import joined_text, undrawn_field_text
from app.engines._orientation import LEVEL, MIN_SKEW, Lines, measure, straighten, turn
from app.engines._pages import (
    RENDER_DPI,
    failed_page,
    is_empty,
    load_page,
    open_pdf,
    page_image,
    render_dpi,
)
from app.engines._tesseract_exec import (
    TsvWord,
    detect_orientation,
    run_tesseract,
    scratch_directory,
    tesseract_binary,
    tesseract_version,
    words_to_text,
)
from app.engines.base import PageResult, Word
from app.engines.errors import TesseractFailedError
from app.engines.languages import has_orientation_data, require_languages

log = get_logger(__name__)

BATCH_PAGES = 8  # pages per tesseract process: its start-up spread thin, its scratch images bounded


class TesseractEngine:
    name = "tesseract"

    def __init__(self, language: str = DEFAULT_LANGUAGE) -> None:
        self.language = language  # tesseract's -l: eng, rus, eng+deu
        # Fail at construction, not on the first page, when the binary or the language is missing.
        tesseract_binary()
        require_languages(language)
        # Without the osd data pages are still straightened, but never turned by OSD's guess.
        self._can_guess = has_orientation_data()
        if not self._can_guess:
            log.warning("orientation_unavailable", reason="tesseract has no osd language data")

    def version(self) -> str:
        return tesseract_version()

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        with open_pdf(pdf_bytes) as document:
            return self.recognize_pages(document, range(len(document)), first_page_number)

    def recognize_pages(
        self, document: pdfium.PdfDocument, indices: Iterable[int], first_page_number: int
    ) -> list[PageResult]:
        """OCR the pages at indices (0-based in document), numbered from first_page_number.

        A page that cannot be read (lost, too large, a render error, over a resource limit, or
        refused by tesseract) is a failed page; the others are read."""
        results: list[PageResult] = []
        with scratch_directory() as scratch:
            batch: list[_Rendered] = []
            for index in indices:
                rendered = _render(document, index, first_page_number + index, scratch)
                if isinstance(rendered, PageResult):
                    results.append(rendered)
                    continue
                # One resolution per tesseract process (--dpi); a page rendered lower goes alone.
                if batch and (len(batch) == BATCH_PAGES or batch[0].dpi != rendered.dpi):
                    results += self._ocr(batch)
                    batch = []
                batch.append(rendered)
            if batch:
                results += self._ocr(batch)
        return sorted(results, key=lambda result: result.page_number)

    def _ocr(self, batch: list[_Rendered]) -> list[PageResult]:
        """Read a batch: each page as it was rendered (straightened), or turned where tesseract's
        orientation guess says so and the page reads better for it."""
        started = time.perf_counter()
        dpi = batch[0].dpi
        try:
            # Pages whose lines run up and down: guess which way up before the first reading.
            first = {page.number: self._guess(page) if page.sideways else 0 for page in batch}
            readings = self._read_each(batch, {number: [turn] for number, turn in first.items()}, dpi)
            # A doubtful reading: read the page the other ways up its lines leave.
            retry: dict[int, list[int]] = {}
            for page in batch:
                # The page as it came when its turned image could not be made.
                turn = first[page.number] if first[page.number] in readings[page.number] else 0
                if not _doubtful(readings[page.number][turn], turn):
                    continue
                # Lines across the page leave upside down; lines up and down, the other quarter
                # turn, or none (vertical text), when the guess was wrong or there was none.
                if not page.sideways:
                    retry[page.number] = [180]
                else:
                    retry[page.number] = [0, (turn + 180) % 360] if turn else [90, 270]
            again = self._read_again(batch, retry, dpi)
        finally:
            for page in batch:
                page.path.unlink(missing_ok=True)  # scratch is in memory: free it batch by batch
        results = []
        for page in batch:
            found = {**readings[page.number], **again.get(page.number, {})}
            rotation = _choose(found)
            words = found[rotation]
            if isinstance(words, TesseractFailedError):
                failure = TesseractFailedError(f"page {page.number}: {words.message}", page=page.number)
                results.append(failed_page(page.number, failure))
            else:
                results.append(_page_result(page, words, rotation))
        log.debug(
            "tesseract_batch",
            pages=len(batch),
            first_page=batch[0].number,
            turned=sum(1 for result in results if result.rotation),
            straightened=sum(1 for result in results if result.skew),
            read_again=sum(len(rotations) for rotations in retry.values()),
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return results

    def _guess(self, page: _Rendered) -> int:
        """tesseract's guess of the clockwise turn that makes the page upright (0 without one)."""
        if not self._can_guess:
            return 0
        try:
            guess = detect_orientation(page.path, dpi=page.dpi)
        except OCRError as exc:
            log.warning("orientation_failed", page=page.number, error_code=exc.code, error=exc.message)
            return 0
        except OSError as exc:  # tesseract could not be started (no memory left to fork it, ...)
            log.warning("orientation_failed", page=page.number, error_code="osd_not_started", error=str(exc))
            return 0
        return guess.rotation if guess is not None and guess.confidence >= _MIN_GUESS_CONFIDENCE else 0

    def _read_again(
        self, batch: list[_Rendered], wanted: dict[int, list[int]], dpi: int
    ) -> dict[int, _Readings]:
        """The second readings: when they cannot be had (tesseract timed out), the pages keep
        their first."""
        try:
            return self._read_each(batch, wanted, dpi)
        except OCRError as exc:
            log.warning("orientation_failed", pages=sorted(wanted), error_code=exc.code, error=exc.message)
            return {}

    def _read_each(
        self, batch: list[_Rendered], wanted: dict[int, list[int]], dpi: int
    ) -> dict[int, _Readings]:
        """The readings of each page turned by each of the rotations wanted for it, all in one
        tesseract process. A turn whose image cannot be made is read as the page came instead
        (or left out, when that is wanted too)."""
        images: list[tuple[int, int, Path]] = []
        for page in batch:
            for rotation in wanted.get(page.number, []):
                path = _turned(page, rotation)
                if path is None and 0 not in wanted[page.number]:
                    rotation, path = 0, page.path
                if path is not None and (page.number, rotation, path) not in images:
                    images.append((page.number, rotation, path))
        if not images:
            return {}
        try:
            pages = run_tesseract([path for _, _, path in images], dpi=dpi, language=self.language)
        finally:
            for _, rotation, path in images:
                if rotation:
                    path.unlink(missing_ok=True)
        readings: dict[int, _Readings] = {}
        for (number, rotation, _), words in zip(images, pages, strict=True):
            readings.setdefault(number, {})[rotation] = words
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
    path: Path  # the page as rendered, straightened by skew
    dpi: int
    skew: float  # degrees of counter-clockwise tilt straightened (0.0: level enough as it came)
    sideways: bool  # its lines run up and down: guess which way up before reading it
    undrawn: str  # form fields' text the render leaves out (a chunk has no form to draw them)


def _render(document: pdfium.PdfDocument, index: int, number: int, scratch: Path) -> _Rendered | PageResult:
    """The page rendered to a TIFF in scratch, straightened, or its result when it needs no OCR
    (blank) or cannot be read (a failed page)."""
    try:
        page = load_page(document, index, number)
        try:
            undrawn = undrawn_field_text(page)
            if is_empty(page):  # nothing drawn: nothing for tesseract, but a field may hold text
                return PageResult(number, undrawn, 1.0 if undrawn else 0.0, "ocr")
            dpi = render_dpi(page, number)
            image = page_image(document, page, index, number, dpi)
        finally:
            page.close()
        lines = _measure(image, number, dpi)
        skew = lines.skew if abs(lines.skew) >= MIN_SKEW else 0.0
        if skew:
            image = straighten(image, skew)
        path = scratch / f"{number:06d}.tif"
        image.save(path, format="TIFF", dpi=(dpi, dpi))
    except (OCRError, MemoryError) as exc:
        return failed_page(number, exc)
    return _Rendered(number, path, dpi, skew, lines.sideways, undrawn)


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


def _turned(page: _Rendered, rotation: int) -> Path | None:
    """The page's image turned clockwise by rotation, as a file beside it; None (logged) when it
    cannot be made, so the page is read without that turn."""
    if rotation == 0:
        return page.path
    path = page.path.with_name(f"{page.number:06d}-{rotation}.tif")
    try:
        # Our own render, within MAX_RENDER_PIXELS: not a decompression bomb, however large.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(page.path)
        with image:
            turn(image, rotation).save(path, format="TIFF", dpi=(page.dpi, page.dpi))
    except (OSError, ValueError, MemoryError) as exc:
        log.warning("orientation_failed", page=page.number, error_code="turn_failed", error=str(exc))
        return None
    return path


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
