"""Whether a PDF may have optional content (layers), from its bytes alone: a layer a viewer hides
is named by the catalog's /OCProperties, in clear or inside a compressed object stream. Light
(no PDF library), so that the planner opens a file with pikepdf (app.pdf.optional_content) only
when it names one: almost no file does.

The file is read through one buffer of about a MiB, as text_marks reads it. Object streams are
inflated one after another, at most MAX_INFLATED bytes of them in all; past that, or when one is
not Flate-compressed, the file may have layers (pikepdf reads its catalog to tell).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import BinaryIO

LAYER_MARK = b"/OCProperties"
OBJECT_STREAM_MARK = b"/ObjStm"
MAX_INFLATED = 64 * 1024 * 1024
MAX_OBJECT_STREAMS = 100_000
_WINDOW = 1 << 20
_PIECE = 1 << 16
_OVERLAP = len(LAYER_MARK) - 1
_STREAM_KEYWORD_WITHIN = 4096  # bytes after /ObjStm in which its dictionary ends and its data begins


def may_hide_layers(path: Path) -> bool:
    """False when the file names no /OCProperties, in clear or in its object streams (True if it
    cannot be read: pikepdf says more)."""
    try:
        object_streams = _scan(path)
        if object_streams is None:
            return True
        return _in_object_streams(path, object_streams)
    except OSError:
        return True


def _scan(path: Path) -> list[int] | None:
    """None when LAYER_MARK is in clear; else where each /ObjStm mark is."""
    buffer = bytearray(_WINDOW + _OVERLAP)
    view = memoryview(buffer)
    object_streams: list[int] = []
    try:
        with path.open("rb", buffering=0) as handle:
            kept, offset = 0, 0  # offset: the file position of buffer[0]
            while read := handle.readinto(view[kept:]):
                end = kept + read
                if buffer.find(LAYER_MARK, 0, end) != -1:
                    return None
                at = buffer.find(OBJECT_STREAM_MARK, 0, end)
                while at != -1:
                    # a mark found in the carried-over bytes was found in the last window too
                    if at + len(OBJECT_STREAM_MARK) > kept:
                        object_streams.append(offset + at)
                    at = buffer.find(OBJECT_STREAM_MARK, at + 1, end)
                if len(object_streams) > MAX_OBJECT_STREAMS:
                    return None
                new_kept = min(_OVERLAP, end)
                offset += end - new_kept
                buffer[:new_kept] = buffer[end - new_kept : end]
                kept = new_kept
    finally:
        view.release()
    return object_streams


def _in_object_streams(path: Path, positions: list[int]) -> bool:
    """Whether an object stream's data (each found after a /ObjStm mark) names LAYER_MARK; True
    past MAX_INFLATED bytes or on data that does not inflate."""
    budget = MAX_INFLATED
    with path.open("rb") as handle:
        for position in positions:
            handle.seek(position)
            head = handle.read(_STREAM_KEYWORD_WITHIN)
            keyword = head.find(b"stream")
            if keyword == -1:
                continue  # not an object stream's dictionary (a name in some other object)
            start = keyword + len(b"stream")
            start += 2 if head[start : start + 2] == b"\r\n" else 1
            handle.seek(position + start)
            found, used = _inflated_names(handle, budget)
            if found:
                return True
            budget -= used
            if budget <= 0:
                return True
    return False


def _inflated_names(handle: BinaryIO, budget: int) -> tuple[bool, int]:
    """(whether the Flate data at handle's position names LAYER_MARK or cannot be read within
    budget, the bytes it inflated to)."""
    inflater = zlib.decompressobj()
    tail = b""
    used = 0
    while not inflater.eof:
        piece = handle.read(_PIECE)
        if not piece:
            return False, used
        while piece and not inflater.eof:
            try:
                out = inflater.decompress(piece, _PIECE)
            except zlib.error:
                return True, used
            used += len(out)
            if used > budget:
                return True, used
            window = tail + out
            if LAYER_MARK in window:
                return True, used
            tail = window[-_OVERLAP:]
            piece = inflater.unconsumed_tail
    return False, used
