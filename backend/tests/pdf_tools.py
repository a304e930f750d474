"""Other people's PDF tools, as tests use them to check our output: poppler's pdftotext, qpdf."""

from __future__ import annotations

import subprocess
from pathlib import Path


def pdftotext(pdf: Path, page: int | None = None) -> str:
    """The text pdftotext reads, of one page or (page None) of all, pages ended by form feeds."""
    pages = ["-f", str(page), "-l", str(page)] if page is not None else []
    done = subprocess.run(["pdftotext", *pages, str(pdf), "-"], check=True, capture_output=True, text=True)
    return done.stdout


def qpdf_check(pdf: Path) -> None:
    """qpdf --check: CalledProcessError (with qpdf's findings) unless the file's structure is sound."""
    subprocess.run(["qpdf", "--check", str(pdf)], check=True, capture_output=True, text=True)
