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
from dataclasses import dataclass, field
from typing import Literal, Protocol

PageSource = Literal["ocr", "text-layer"]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    confidence: float  # 0..1
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels of the 300 DPI render


# PDFium puts U+0002 (U+FFFE in older builds) where a line ended in a hyphen it took for a word
# broken across the line, and joins the two halves around it: "com\x02pile". The word reads
# whole without the mark (and without a line break right after it, where one is left).
_HYPHEN_MARK = re.compile("[\x02\ufffe](?:\r\n|\r|\n)?")
_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# C0 and C1 controls but tab and newline (line breaks are newlines by now), the soft hyphen
# U+00AD (invisible, and it splits a word for search), and noncharacters.
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\ufdd0-\ufdef\ufffe\uffff]")


def clean_page_text(text: str) -> str:
    """A page's text as plain text: hyphenation marks dropped, every kind of line or page
    break (a form feed from a TeX symbol font, a vertical tab, U+2028, ...) a newline, other
    control characters removed. Idempotent."""
    text = _HYPHEN_MARK.sub("", text)
    text = _LINE_BREAKS.sub("\n", text)
    return _NOT_TEXT.sub("", text)


@dataclass(frozen=True, slots=True)
class PageResult:
    page_number: int  # 1-based, in the whole document
    text: str
    confidence: float  # mean word confidence, 0..1 (1.0 for a text layer, 0.0 for a blank page)
    source: PageSource
    words: tuple[Word, ...] = field(default=())

    def __post_init__(self) -> None:
        # every engine's text meets the contract above, whatever the engine or the PDF gave
        object.__setattr__(self, "text", clean_page_text(self.text))


class OcrEngine(Protocol):
    name: str

    def version(self) -> str:
        """Engine and version, recorded in every result."""
        ...

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        """One PageResult per page of pdf_bytes, numbered from first_page_number."""
        ...
