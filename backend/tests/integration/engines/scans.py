"""A page image read through the tesseract engine, stored as a scan in a PDF at its resolution,
as a caller's file would come."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import DPI


def read_scan(image: Image.Image, path: Path, dpi: int = DPI) -> PageResult:
    """The engine's result for image, saved to path as a one-page PDF at dpi."""
    image.save(path, "PDF", resolution=dpi)
    (page,) = TesseractEngine().recognize(path.read_bytes(), 1)
    return page


def read_text(image: Image.Image, path: Path, dpi: int = DPI) -> str:
    """The text the engine reads from image (read_scan)."""
    return read_scan(image, path, dpi).text
