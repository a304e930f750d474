"""What a PDF's bytes say before any PDF library reads it, in one pass over them: whether it may
have a text layer, whether it may have optional content (layers), and whether its compressed
object streams are a decompression bomb.

A page's text is drawn in a font, so a file that names no font anywhere (and has no compressed
object stream, which could hide one) has no text layer: a scanner's image-only file, which the
planner sends to OCR without a text pass.

A layer a viewer hides is named by the catalog's /OCProperties, in clear or inside a compressed
object stream: the planner opens a file with pikepdf (app.pdf.visible_copy) only when it names
one, and almost no file does. An object stream holds objects that are not streams (dictionaries,
arrays): a real one inflates to kilobytes or a few megabytes. PDFium and pikepdf inflate a whole
object stream to read one object of it, so a 1 MB file whose catalog sat in an object stream of
1 GiB took 2 GB to open; one that inflates past MAX_OBJECT_STREAM_BYTES, or all of them past
MAX_OBJECT_STREAMS_BYTES, is refused before either opens it (ObjectsTooLargeError), as is a file
of more than MAX_OBJECTS objects (counted by their "obj" keywords in clear, and by what each
object stream says it holds) or MAX_OBJECT_STREAMS object streams.

The file is read through one buffer of about a MiB (a mapping of the whole file left each page it
read resident: a 190 MB scan added 190 MB to the API's memory); each object stream is
inflated from its data up to the next /ObjStm mark at most, so no byte is read twice however the
marks are laid out. One that is not Flate-compressed cannot be measured here: the file may have
layers (pikepdf reads its catalog to tell).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from app.pdf.errors import ObjectsTooLargeError

LAYER_MARK = b"/OCProperties"
OBJECT_STREAM_MARK = b"/ObjStm"
TEXT_MARKS = (b"/Font", OBJECT_STREAM_MARK)
MAX_OBJECT_STREAM_BYTES = 64 * 1024 * 1024
MAX_OBJECT_STREAMS_BYTES = 256 * 1024 * 1024
MAX_OBJECT_STREAMS = 100_000
# PDFium holds each object it finds: opening a 108 MB file of 2,000,000 one-byte objects took it
# 187 MB, and cutting a page that reaches them all took 1 GB. The largest real documents (10,000
# tagged pages) hold under a million.
MAX_OBJECTS = 2_000_000
_OBJ, _ENDOBJ = b"obj", b"endobj"
_COUNT = re.compile(rb"/N\s+(\d{1,12})")
_WINDOW = 1 << 20
_PIECE = 1 << 16
_OVERLAP = len(LAYER_MARK) - 1
_STREAM_KEYWORD_WITHIN = 4096  # bytes after /ObjStm in which its dictionary ends and its data begins
_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ObjectScan:
    may_have_text: bool  # a font or an object stream is named (or the file is empty or unreadable)
    may_hide_layers: bool  # the file names /OCProperties, or may (what could not be read)
    objects: int = 0  # the objects the file holds, in clear and in object streams (0: unread)


def scan_objects(path: Path) -> ObjectScan:
    """The scan of the file at path; ObjectsTooLargeError for a decompression bomb, or for more
    than MAX_OBJECTS objects. A file that cannot be read may have text and layers (the planner
    says what is wrong with it)."""
    try:
        marks = _scan(path)
        if marks.object_streams is None:
            raise ObjectsTooLargeError(f"the PDF has more than {MAX_OBJECT_STREAMS:,} object streams")
        _check_count(marks.objects)
        named, in_streams = _in_object_streams(path, marks.object_streams, marks.size)
        _check_count(marks.objects + in_streams)
    except OSError:
        return ObjectScan(True, True)
    return ObjectScan(marks.text or marks.size == 0, marks.layers or named, marks.objects + in_streams)


def _check_count(objects: int) -> None:
    if objects > MAX_OBJECTS:
        raise ObjectsTooLargeError(f"the PDF has more than {MAX_OBJECTS:,} objects")


def may_have_text(path: Path) -> bool:
    return scan_objects(path).may_have_text


def may_hide_layers(path: Path) -> bool:
    return scan_objects(path).may_hide_layers


@dataclass(slots=True)
class _Marks:
    text: bool = False  # a TEXT_MARKS mark is in the file
    layers: bool = False  # LAYER_MARK is, in clear
    object_streams: list[int] | None = None  # where each /ObjStm mark is (None: past MAX_OBJECT_STREAMS)
    size: int = 0
    objects: int = 0  # objects in clear: each begins "N G obj" (and "endobj" ends it)


def _scan(path: Path) -> _Marks:
    buffer = bytearray(_WINDOW + _OVERLAP)
    view = memoryview(buffer)
    marks = _Marks(object_streams=[])
    positions: list[int] = []
    try:
        with path.open("rb", buffering=0) as handle:
            kept, offset = 0, 0  # offset: the file position of buffer[0]
            while read := handle.readinto(view[kept:]):
                marks.size += read
                end = kept + read
                marks.text = marks.text or any(buffer.find(mark, 0, end) != -1 for mark in TEXT_MARKS)
                marks.layers = marks.layers or buffer.find(LAYER_MARK, 0, end) != -1
                # each keyword counted once: those that end in the carried-over bytes were counted
                marks.objects += buffer.count(_OBJ, max(0, kept - len(_OBJ) + 1), end)
                marks.objects -= buffer.count(_ENDOBJ, max(0, kept - len(_ENDOBJ) + 1), end)
                at = buffer.find(OBJECT_STREAM_MARK, 0, end)
                while at != -1:
                    # a mark found in the carried-over bytes was found in the last window too
                    if at + len(OBJECT_STREAM_MARK) > kept:
                        positions.append(offset + at)
                    at = buffer.find(OBJECT_STREAM_MARK, at + 1, end)
                if len(positions) > MAX_OBJECT_STREAMS:
                    marks.object_streams = None
                    return marks
                new_kept = min(_OVERLAP, end)
                offset += end - new_kept
                buffer[:new_kept] = buffer[end - new_kept : end]
                kept = new_kept
    finally:
        view.release()
    marks.object_streams = positions
    return marks


def _in_object_streams(path: Path, positions: list[int], size: int) -> tuple[bool, int]:
    """Whether an object stream's data (each found after a /ObjStm mark, up to the next) names
    LAYER_MARK, or may (data that does not inflate), and how many objects the streams say they
    hold (/N); ObjectsTooLargeError past the limits."""
    total = 0
    objects = 0
    named = False
    with path.open("rb") as handle:
        for number, position in enumerate(positions):
            handle.seek(position)
            head = handle.read(_STREAM_KEYWORD_WITHIN)
            keyword = head.find(b"stream")
            if keyword == -1:
                continue  # not an object stream's dictionary (a name in some other object)
            if (count := _COUNT.search(head, 0, keyword)) is not None:
                objects += int(count.group(1))
                _check_count(objects)
            start = keyword + len(b"stream")
            start += 2 if head[start : start + 2] == b"\r\n" else 1
            until = positions[number + 1] if number + 1 < len(positions) else size
            if position + start >= until:
                continue
            handle.seek(position + start)
            found, inflated = _inflate(handle, until - position - start)
            if inflated > MAX_OBJECT_STREAM_BYTES:
                limit = MAX_OBJECT_STREAM_BYTES // _MIB
                raise ObjectsTooLargeError(
                    f"an object stream of the PDF decompresses to more than {limit} MiB"
                    " (a decompression bomb)"
                )
            total += inflated
            if total > MAX_OBJECT_STREAMS_BYTES:
                raise ObjectsTooLargeError(
                    f"the PDF's object streams decompress to more than {MAX_OBJECT_STREAMS_BYTES // _MIB} MiB"
                    " (a decompression bomb)"
                )
            named = named or found
    return named, objects


def _inflate(handle: BinaryIO, at_most: int) -> tuple[bool, int]:
    """(whether the Flate data at handle's position, of at most at_most bytes, names LAYER_MARK or
    does not inflate; the bytes it inflated to, counted up to MAX_OBJECT_STREAM_BYTES + 1)."""
    inflater = zlib.decompressobj()
    tail = b""
    inflated = 0
    found = False
    left = at_most
    while not inflater.eof and left > 0:
        piece = handle.read(min(_PIECE, left))
        if not piece:
            break
        left -= len(piece)
        while piece and not inflater.eof:
            try:
                out = inflater.decompress(piece, _PIECE)
            except zlib.error:
                return True, inflated
            inflated += len(out)
            if inflated > MAX_OBJECT_STREAM_BYTES:
                return found, inflated
            if not found:
                window = tail + out
                found = LAYER_MARK in window
                tail = window[-_OVERLAP:]
            piece = inflater.unconsumed_tail
    return found, inflated
