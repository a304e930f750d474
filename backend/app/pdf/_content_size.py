"""Whether a page's content is too large to parse, found out without decoding all of it.

QPDF decodes a content stream whole before it parses it, and pikepdf's instructions take about
80 times the content's size: an OCR'd page whose content is a Flate bomb (800 MB of spaces in
0.8 MB) cost the graft 1.6 GB and seven seconds before anything was written. The size of a
stream compressed with Flate alone is counted as it inflates, up to the limit and no further.
"""

from __future__ import annotations

import zlib

import pikepdf
from pikepdf import Name

_PIECE = 1 << 16  # compressed bytes fed to the inflater, and decoded bytes taken out, at a time


def content_exceeds(contents: object, limit: int) -> bool:
    """Whether contents (a content stream, or an array of them, as /Contents holds) decode to
    more than limit bytes. A stream that cannot be decoded counts as its encoded size."""
    return content_size(contents, limit) > limit


def content_size(contents: object, limit: int) -> int:
    """The size contents decode to, or a number over limit once it is known to be over."""
    total = 0
    for stream in _streams(contents):
        total += _decoded_size(stream, limit - total + 1)
        if total > limit:
            break
    return total


def _streams(contents: object) -> list[pikepdf.Stream]:
    if isinstance(contents, pikepdf.Stream):
        return [contents]
    if isinstance(contents, pikepdf.Array):
        return [item for item in contents if isinstance(item, pikepdf.Stream)]
    return []


def _decoded_size(stream: pikepdf.Stream, at_most: int) -> int:
    """stream's decoded size, or a number at least at_most once it reaches that."""
    filters = stream.get(Name.Filter)
    if isinstance(filters, pikepdf.Array) and len(filters) == 1:
        filters = filters[0]
    try:
        raw = stream.read_raw_bytes()
    except pikepdf.PdfError:
        return 0
    if filters is None:
        return len(raw)
    if filters != Name.FlateDecode:  # rare in content: decoded whole (QPDF will anyway)
        try:
            return len(stream.read_bytes())
        except pikepdf.PdfError:
            return len(raw)
    inflater = zlib.decompressobj()
    size = 0
    for start in range(0, len(raw), _PIECE):
        piece = raw[start : start + _PIECE]
        while piece and size < at_most:
            try:
                size += len(inflater.decompress(piece, min(at_most - size, _PIECE)))
            except zlib.error:
                return max(size, len(raw))
            piece = inflater.unconsumed_tail
        if size >= at_most:
            break
    return size
