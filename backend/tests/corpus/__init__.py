"""A corpus of PDFs like the real documents OCR meets, generated here with the text each page
should give.

Each module builds one family (rotated and skewed scans, languages, text layers, annotations
and forms, damaged files, oversized pages), deterministically from code: nothing is
downloaded, and every fixture carries its expected text, so a test can score what came out
(pdf_factories.cer) instead of trusting it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Fixture:
    """One generated PDF and what each of its pages should read as."""

    name: str
    path: Path
    expected: tuple[str, ...]  # per page, in order: the page's text ("" when it has none)
    note: str = ""  # what makes the file hard
