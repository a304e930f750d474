"""Whether a PDF may have a text layer, from its bytes alone: a page's text is drawn in a font,
so a file that names no font anywhere (and has no compressed object stream, which could hide
one) has none: a scanner's image-only file. Light: the command line asks it before importing
PDFium, to start its worker at once for files only OCR can read."""

from __future__ import annotations

import mmap
from pathlib import Path

TEXT_MARKS = (b"/Font", b"/ObjStm")


def may_have_text(path: Path) -> bool:
    """False when no byte of the file names a font or an object stream (True if unreadable:
    the planner says what is wrong with it)."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return any(data.find(mark) != -1 for mark in TEXT_MARKS)
    except (OSError, ValueError):  # missing, unreadable, or empty (mmap refuses length 0)
        return True
