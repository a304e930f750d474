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
- failures raise app.engines.errors classes, whose `retryable` says whether
  another attempt can succeed (a page PDFium cannot render or tesseract
  refuses: never; a timeout or an unreachable service: maybe); a missing
  binary, language or credential is EngineUnavailableError, raised when the
  engine is built, before any page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

PageSource = Literal["ocr", "text-layer"]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    confidence: float  # 0..1
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels of the 300 DPI render


@dataclass(frozen=True, slots=True)
class PageResult:
    page_number: int  # 1-based, in the whole document
    text: str
    confidence: float  # mean word confidence, 0..1 (1.0 for a text layer, 0.0 for a blank page)
    source: PageSource
    words: tuple[Word, ...] = field(default=())


class OcrEngine(Protocol):
    name: str

    def version(self) -> str:
        """Engine and version, recorded in every result."""
        ...

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        """One PageResult per page of pdf_bytes, numbered from first_page_number."""
        ...
