"""The OCR engine interface.

An engine turns one chunk's PDF bytes into one PageResult per page. It is
synchronous and CPU-bound: it runs inside an OCR worker process (see
pool.py), is built there by name from the registry (so the engine object
itself never crosses a process boundary), and returns plain picklable
records.

Contract for implementations:

- one result per page of the chunk, in page order, numbered from
  first_page_number (the chunk's first page in the whole document);
- a page with nothing on it is a result with empty text, not an error;
- page text is plain text: lines end with a newline, and no other control
  character survives (PageResult cleans what an engine hands it, see
  clean_page_text), so the form feeds that separate pages in the merged text
  are never inside one;
- failures raise app.engines.errors classes, whose `retryable` says whether
  another attempt can succeed (a page PDFium cannot render or tesseract
  refuses: never; a timeout or an unreachable service: maybe); a missing
  binary, language or credential is EngineUnavailableError, raised when the
  engine is built, before any page.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal, Protocol

PageSource = Literal["ocr", "text-layer"]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    confidence: float  # 0..1
    # x0, y0, x1, y1 in pixels of the image OCR read: the page rendered at its dpi, turned clockwise
    # by its rotation and straightened by its skew.
    bbox: tuple[int, int, int, int]


# PDFium puts U+0002 where a line ended in a hyphen it took for a word broken across the line
# (its whole text has U+FFFE there, which app.engines._page_chars gives as U+0002 too), and
# joins the two halves around it: "com\x02pile". The word reads
# whole without the mark (and without a line break right after it, where one is left). PDFium
# takes every hyphen that ends a line so, the hyphen of a compound or a code too: before a
# capital or a digit the hyphen is kept ("Anglo-Saxon", "COVID-19", "RSASSA-PKCS1"; a word
# broken between syllables goes on in lower case).
_HYPHEN_MARK = re.compile("\x02(?:\r\n|\r|\n)?(?=(.?))", re.DOTALL)
_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# C0 and C1 controls but tab and newline (line breaks are newlines by now), the soft hyphen
# U+00AD (invisible, and it splits a word for search), noncharacters, the byte order mark U+FEFF
# (a text layer's strings may keep theirs, mid-text, where it splits a word for search too), and
# the bidirectional embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069: a page's
# text is in reading order by now, and these only change how a viewer shows it, so a line that
# reads "invoice 1234" could show as "4321 eciovni" or hide what follows it. The marks LRM, RLM
# and ALM (U+200E, U+200F, U+061C) stay: they belong to right-to-left writing.
# Spaces at a line's end: a text layer's producer may end each line with one (LibreOffice's
# justified lines do), which a reader does not see and pdftotext does not give.
_TRAILING_SPACES = re.compile(r"[ \t]+(?=\n|\Z)")
_NOT_TEXT = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufeff\ufffe\uffff]"
)
# Chinese and Japanese are written without spaces, but tesseract's chi_* and jpn models put one
# between every two characters they read, and so do text layers whose producer spaced the glyphs
# out. Han (with the radicals, the compatibility ideographs and the supplementary planes), kana,
# bopomofo, CJK punctuation and symbols, and the fullwidth and halfwidth forms; not Hangul:
# Korean puts spaces between words. Nor the ideographic space U+3000, which is meant.
_CJK = (
    "\u2e80-\u2fdf\u3001-\u303f\u3040-\u30ff\u3100-\u312f\u3190-\u31ef\u31f0-\u31ff\u3200-\u33ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff01-\uff9f\U00020000-\U0003134f"
)
# One space between two of them goes; a Latin word or a number among them keeps its spaces
# ("使用 Python 编程"), and so do two spaces or more (a gap between columns).
_CJK_SPACE = re.compile(f" (?<=[{_CJK}] )(?=[{_CJK}])")  # the space first: a fast scan


def _joined_at_hyphen(mark: re.Match[str]) -> str:
    following = mark.group(1)
    return "-" if following.isupper() or following.isdigit() else ""


def clean_page_text(text: str) -> str:
    """A page's text as plain text: hyphenation marks dropped, every kind of line or page
    break (a form feed from a TeX symbol font, a vertical tab, U+2028, ...) a newline, other
    control characters removed, spaces at a line's end removed, a single space between two CJK
    characters removed (spacing out is not a word break in Chinese or Japanese), and composed
    (Unicode NFC: a text layer may spell "café" as "e" and a combining accent, which a search
    for "café" misses; OCR gives the composed letter). Idempotent."""
    text = _HYPHEN_MARK.sub(_joined_at_hyphen, text)
    text = _LINE_BREAKS.sub("\n", text)
    text = _NOT_TEXT.sub("", text)
    if " \n" in text or "\t\n" in text or text.endswith((" ", "\t")):
        text = _TRAILING_SPACES.sub("", text)
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _CJK_SPACE.sub("", text)


@dataclass(frozen=True, slots=True)
class PageError:
    """Why one page has no text: the rest of its chunk, and of its document, goes on without it."""

    code: str  # the EngineError's code: page_too_large, page_render_failed, resource_limit, ...
    message: str


@dataclass(frozen=True, slots=True)
class PageResult:
    page_number: int  # 1-based, in the whole document
    text: str
    confidence: float  # mean word confidence, 0..1 (1.0 for a text layer, 0.0 for a blank page)
    source: PageSource
    words: tuple[Word, ...] = field(default=())
    error: PageError | None = None  # the page could not be read (its text is empty)
    rotation: int | None = None  # degrees the page image was turned clockwise before OCR: 0/90/180/270
    skew: float | None = None  # degrees of counter-clockwise tilt straightened before OCR (0.0: none)
    dpi: int | None = None  # the resolution it was OCR'd at, when not RENDER_DPI (a very large page)

    def __post_init__(self) -> None:
        # every engine's text meets the contract above, whatever the engine or the PDF gave
        object.__setattr__(self, "text", clean_page_text(self.text))

    @classmethod
    def failed(cls, page_number: int, code: str, message: str, source: PageSource = "ocr") -> PageResult:
        """A page that could not be read: empty text, and why."""
        return cls(page_number, "", 0.0, source, error=PageError(code, message))


class OcrEngine(Protocol):
    name: str

    def version(self) -> str:
        """Engine and version, recorded in every result."""
        ...

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        """One PageResult per page of pdf_bytes, numbered from first_page_number."""
        ...

    # Optional: `warm() -> None`, what the engine loads once for every page (tesseract's model),
    # called by a worker's OCR processes at start-up (pool.warm_up).
