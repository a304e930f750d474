"""Whether a PDF may have a text layer, from its bytes alone: a page's text is drawn in a font,
so a file that names no font anywhere (and has no compressed object stream, which could hide
one) has none: a scanner's image-only file. Light: the command line asks it before importing
PDFium, to start its worker at once for files only OCR can read."""

from __future__ import annotations

from pathlib import Path

TEXT_MARKS = (b"/Font", b"/ObjStm")
_WINDOW = 1 << 20
_OVERLAP = max(len(mark) for mark in TEXT_MARKS) - 1  # a mark cut by a window's end


def may_have_text(path: Path) -> bool:
    """False when no byte of the file names a font or an object stream (True if it is empty or
    unreadable: the planner says what is wrong with it).

    The file is read through one buffer of about a MiB. A mapping of the whole file (this
    used mmap) left each page it read resident in the process until it was unmapped: a
    190 MB scan, searched to its end, added 190 MB to the resident set of the API planning it."""
    buffer = bytearray(_WINDOW + _OVERLAP)
    view = memoryview(buffer)
    try:
        with path.open("rb", buffering=0) as handle:
            kept = 0  # bytes carried over from the end of the last window
            total = 0
            while read := handle.readinto(view[kept:]):
                total += read
                end = kept + read
                if any(buffer.find(mark, 0, end) != -1 for mark in TEXT_MARKS):
                    return True
                kept = min(_OVERLAP, end)
                buffer[:kept] = buffer[end - kept : end]
    except OSError:  # missing or unreadable
        return True
    finally:
        view.release()
    return total == 0
